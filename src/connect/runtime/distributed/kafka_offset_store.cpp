#include "connect/runtime/distributed/kafka_offset_store.h"

#include <spdlog/spdlog.h>

#include "oxbow/connect/errors.h"
#include "oxbow/connect/json_converter.h"

namespace oxbow::connect::runtime::distributed {

namespace {

// One converter per call: converters are single-threaded and offsets are not a hot path.
std::unique_ptr<JsonConverter> schemaless() {
  auto converter = std::make_unique<JsonConverter>();
  converter->configure({{"schemas.enable", "false"}}, true);
  return converter;
}

std::optional<Value> read(const std::string& text) {
  try {
    return schemaless()->toConnectData("", text).value;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

TopicSettings offsetsTopic(const WorkerConfig& worker, TopicSettings topic) {
  topic.readCommitted = topic.readCommitted || exactlyOnceSourceEnabled(worker);
  if (topic.workerProperty.empty()) topic.workerProperty = "offset.storage.topic";
  if (topic.purpose.empty()) topic.purpose = "source connector offsets";
  return topic;
}

}  // namespace

namespace offset_records {

std::string key(const std::string& connector, const ValueMap& partition) {
  ValueList key{Value(connector), Value(partition)};
  return schemaless()->fromConnectData("", nullptr, Value(std::move(key))).value_or("null");
}

std::string value(const ValueMap& offset) {
  return schemaless()->fromConnectData("", nullptr, Value(offset)).value_or("null");
}

std::optional<std::string> canonical(const std::string& text) {
  auto data = read(text);
  if (!data) return std::nullopt;
  return schemaless()->fromConnectData("", nullptr, *data).value_or("null");
}

std::optional<ValueMap> partitionOf(const std::string& key, const std::string& connector) {
  auto data = read(key);
  if (!data || data->kind() != Value::Kind::Array) return std::nullopt;
  const ValueList& parts = data->asList();
  if (parts.size() != 2 || parts[0].kind() != Value::Kind::String ||
      parts[0].asString() != connector || parts[1].kind() != Value::Kind::Map) {
    return std::nullopt;
  }
  return parts[1].asMap();
}

std::optional<ValueMap> offsetOf(const std::string& value) {
  auto data = read(value);
  if (!data || data->kind() != Value::Kind::Map) return std::nullopt;
  return data->asMap();
}

}  // namespace offset_records

KafkaOffsetBackingStore::KafkaOffsetBackingStore(const WorkerConfig& worker, TopicSettings topic)
    : log_(worker, offsetsTopic(worker, std::move(topic)), "connect-offsets-",
           [this](const std::string& key, const std::optional<std::string>& value, int32_t,
                  int64_t) { consumed(key, value); }) {}

void KafkaOffsetBackingStore::start() {
  log_.start();
}

void KafkaOffsetBackingStore::stop() {
  log_.stop();
}

void KafkaOffsetBackingStore::consumed(const std::string& key,
                                       const std::optional<std::string>& value) {
  auto canonicalKey = offset_records::canonical(key);
  if (!canonicalKey) {
    spdlog::error("connect: ignoring an offset whose key is not JSON: {}", key);
    return;
  }
  std::lock_guard lock(mutex_);
  if (value) {
    entries_[*canonicalKey] = *value;
  } else {
    entries_.erase(*canonicalKey);
  }
}

std::optional<ValueMap> KafkaOffsetBackingStore::offset(const std::string& connector,
                                                        const ValueMap& partition) const {
  log_.readToEnd();
  std::string key = offset_records::key(connector, partition);
  std::string value;
  {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return std::nullopt;
    value = it->second;
  }
  auto offset = offset_records::offsetOf(value);
  if (!offset) spdlog::error("connect: ignoring an offset that is not a JSON object: {}", value);
  return offset;
}

void KafkaOffsetBackingStore::commit(const std::string& connector,
                                     const std::vector<std::pair<ValueMap, ValueMap>>& offsets) {
  std::vector<KafkaBasedLog::Record> records;
  for (const auto& [partition, offset] : offsets) {
    records.emplace_back(offset_records::key(connector, partition), offset_records::value(offset));
  }
  log_.write(records);
}

std::vector<std::pair<ValueMap, ValueMap>> KafkaOffsetBackingStore::connectorOffsets(
    const std::string& connector) const {
  log_.readToEnd();
  std::map<std::string, std::string> entries;
  {
    std::lock_guard lock(mutex_);
    entries = entries_;
  }
  std::vector<std::pair<ValueMap, ValueMap>> out;
  for (const auto& [key, value] : entries) {
    auto partition = offset_records::partitionOf(key, connector);
    auto offset = partition ? offset_records::offsetOf(value) : std::nullopt;
    if (offset) out.emplace_back(std::move(*partition), std::move(*offset));
  }
  return out;
}

void KafkaOffsetBackingStore::alter(const std::string& connector, const SourceOffsets& offsets) {
  std::vector<KafkaBasedLog::Record> records;
  for (const auto& [partition, offset] : offsets) {
    std::optional<std::string> value;
    if (offset) value = offset_records::value(*offset);
    records.emplace_back(offset_records::key(connector, partition), value);
  }
  log_.write(records);
  log_.readToEnd();
}

}  // namespace oxbow::connect::runtime::distributed
