// Offsets bodies go through the schemaless JsonConverter, as Connect's REST layer and its
// internal converters read them: integers become INT64, so a FileStreamSource position is a long.
#include "connect/runtime/offsets_body.h"

#include "connect/runtime/standalone.h"
#include "oxbow/connect/errors.h"
#include "oxbow/connect/json_converter.h"

namespace oxbow::connect::runtime {

namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kTopicKey = "kafka_topic";
constexpr const char* kPartitionKey = "kafka_partition";
constexpr const char* kOffsetKey = "kafka_offset";

std::unique_ptr<JsonConverter> schemaless() {
  auto converter = std::make_unique<JsonConverter>();
  converter->configure({{"schemas.enable", "false"}}, false);
  return converter;
}

void checkPrimitives(const ValueMap& map) {
  for (const auto& [key, value] : map) {
    Value::Kind kind = value.kind();
    if (kind != Value::Kind::Array && kind != Value::Kind::Map && kind != Value::Kind::Struct) {
      continue;
    }
    throw DataException("Offsets may only contain primitive types as values, but field " +
                        key.asString() + " contains " +
                        (kind == Value::Kind::Array ? "ARRAY" : "MAP"));
  }
}

// A partition or offset object: nullopt for null or absent.
std::optional<ValueMap> mapField(JsonConverter& converter, const Json& entry, const char* name) {
  auto found = entry.find(name);
  if (found == entry.end() || found->is_null()) return std::nullopt;
  if (!found->is_object()) {
    throw BadRequestException(std::string("The ") + name + " of an offset must be a JSON object");
  }
  ValueMap map = converter.toConnectData("", found->dump()).value.asMap();
  checkPrimitives(map);
  return map;
}

const Value* field(const ValueMap& map, const std::string& name) {
  for (const auto& [key, value] : map) {
    if (key.kind() == Value::Kind::String && key.asString() == name) return &value;
  }
  return nullptr;
}

// What Java's String.valueOf writes for the value, which SinkUtils then parses as a number.
std::string javaText(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::String:
      return value.asString();
    case Value::Kind::Int64:
      return std::to_string(value.asInt64());
    case Value::Kind::Float64:
      return Json(value.asFloat64()).dump();
    case Value::Kind::Boolean:
      return value.asBoolean() ? "true" : "false";
    default:
      return "?";
  }
}

std::optional<int64_t> parseInteger(const std::string& text, int64_t min, int64_t max) {
  try {
    size_t used = 0;
    long long parsed = std::stoll(text, &used);
    if (used == text.size() && parsed >= min && parsed <= max) return parsed;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

TopicPartition sinkPartition(const std::optional<ValueMap>& partition) {
  if (!partition) {
    throw BadRequestException(
        "The partition for a sink connector offset cannot be null or missing");
  }
  const Value* topic = field(*partition, kTopicKey);
  const Value* number = field(*partition, kPartitionKey);
  if (topic == nullptr || number == nullptr) {
    throw BadRequestException(std::string("The partition for a sink connector offset must contain "
                                          "the keys '") +
                              kTopicKey + "' and '" + kPartitionKey + "'");
  }
  if (topic->kind() == Value::Kind::Null) {
    throw BadRequestException("Kafka topic names must be valid strings and may not be null");
  }
  if (number->kind() == Value::Kind::Null) {
    throw BadRequestException("Kafka partitions must be valid numbers and may not be null");
  }
  std::string text = javaText(*number);
  std::optional<int64_t> parsed = parseInteger(text, INT32_MIN, INT32_MAX);
  if (!parsed) {
    throw BadRequestException(
        "Failed to parse the following Kafka partition value in the "
        "provided offsets: '" +
        text + "'. Partition values for sink connectors need to be integers.");
  }
  return TopicPartition{javaText(*topic), static_cast<int32_t>(*parsed)};
}

std::optional<int64_t> sinkOffset(const std::optional<ValueMap>& offset) {
  if (!offset) return std::nullopt;
  const Value* at = field(*offset, kOffsetKey);
  if (at == nullptr) {
    throw BadRequestException(std::string("The offset for a sink connector should either be null "
                                          "or contain the key '") +
                              kOffsetKey + "'");
  }
  std::string text = at->kind() == Value::Kind::Null ? "null" : javaText(*at);
  std::optional<int64_t> parsed = parseInteger(text, INT64_MIN, INT64_MAX);
  if (!parsed) {
    throw BadRequestException(
        "Failed to parse the following Kafka offset value in the provided "
        "offsets: '" +
        text + "'. Offset values for sink connectors need to be integers.");
  }
  return parsed;
}

Json mapJson(JsonConverter& converter, const ValueMap& map) {
  return Json::parse(converter.fromConnectData("", nullptr, Value(map)).value_or("{}"));
}

}  // namespace

std::vector<OffsetEntry> parseOffsetsBody(const std::string& body) {
  Json document;
  try {
    document = Json::parse(body);
  } catch (const nlohmann::json::exception& e) {
    throw BadRequestException(std::string("Cannot parse the request body as JSON: ") + e.what());
  }
  const char* empty = "Partitions / offsets need to be provided for an alter offsets request";
  if (!document.is_object()) throw BadRequestException(empty);
  auto offsets = document.find("offsets");
  if (offsets == document.end() || offsets->is_null()) throw BadRequestException(empty);
  if (!offsets->is_array()) throw BadRequestException("\"offsets\" must be a JSON array");
  if (offsets->empty()) throw BadRequestException(empty);
  auto converter = schemaless();
  std::vector<OffsetEntry> entries;
  for (const Json& entry : *offsets) {
    if (!entry.is_object()) {
      throw BadRequestException(
          "Each of \"offsets\" must be a JSON object with a partition and "
          "an offset");
    }
    entries.push_back(
        {mapField(*converter, entry, "partition"), mapField(*converter, entry, "offset")});
  }
  return entries;
}

SourceOffsets sourceOffsets(const std::vector<OffsetEntry>& entries) {
  SourceOffsets out;
  for (const OffsetEntry& entry : entries) {
    if (!entry.partition) {
      throw BadRequestException(
          "The partition for a source connector offset cannot be null or "
          "missing");
    }
    out.emplace_back(*entry.partition, entry.offset);
  }
  return out;
}

std::map<TopicPartition, std::optional<int64_t>> sinkOffsets(
    const std::vector<OffsetEntry>& entries) {
  std::map<TopicPartition, std::optional<int64_t>> out;
  for (const OffsetEntry& entry : entries) {
    out[sinkPartition(entry.partition)] = sinkOffset(entry.offset);
  }
  return out;
}

nlohmann::ordered_json offsetsJson(const std::vector<std::pair<ValueMap, ValueMap>>& offsets) {
  auto converter = schemaless();
  Json list = Json::array();
  for (const auto& [partition, offset] : offsets) {
    list.push_back(Json{{"partition", mapJson(*converter, partition)},
                        {"offset", mapJson(*converter, offset)}});
  }
  return Json{{"offsets", std::move(list)}};
}

nlohmann::ordered_json sinkOffsetsJson(const std::map<TopicPartition, int64_t>& offsets) {
  Json list = Json::array();
  for (const auto& [tp, offset] : offsets) {
    list.push_back(Json{{"partition", Json{{kTopicKey, tp.topic}, {kPartitionKey, tp.partition}}},
                        {"offset", Json{{kOffsetKey, offset}}}});
  }
  return Json{{"offsets", std::move(list)}};
}

}  // namespace oxbow::connect::runtime
