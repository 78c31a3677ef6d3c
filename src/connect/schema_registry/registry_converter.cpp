// What the registry converters share: their configuration, the registry client and serdes, the
// writers and readers derived per schema, and Confluent's messages for failures.
#include <map>
#include <mutex>
#include <utility>

#include "connect/schema_registry/format_data.h"
#include "oxbow/connect/errors.h"
#include "oxbow/connect/registry_converters.h"
#include "oxbow/registry/serdes.h"

namespace oxbow::connect {

using registry_detail::FormatData;
using registry_detail::Reader;
using registry_detail::Writer;

namespace {

// Derived writers are kept for this many schemas, so that a task building a new (equal) schema
// for every record does not grow the cache without bound.
constexpr size_t kMaxCachedSchemas = 1000;

const char* displayName(registry::Format format) {
  switch (format) {
    case registry::Format::kAvro:
      return "Avro";
    case registry::Format::kProtobuf:
      return "Protobuf";
    case registry::Format::kJson:
      return "JSON";
  }
  return "";
}

uint64_t readVarint(std::string_view bytes, size_t& pos) {
  uint64_t result = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos >= bytes.size()) throw DataException("Invalid message indexes");
    const auto b = static_cast<uint8_t>(bytes[pos++]);
    result |= static_cast<uint64_t>(b & 0x7F) << shift;
    if (!(b & 0x80)) return result;
  }
  throw DataException("Invalid message indexes");
}

int readZigzag(std::string_view bytes, size_t& pos) {
  const uint64_t z = readVarint(bytes, pos);
  return static_cast<int>(static_cast<int64_t>(z >> 1) ^ -static_cast<int64_t>(z & 1));
}

// Confluent's message indexes at the start of a Protobuf payload ([0] written as one 0 byte).
std::vector<int> messageIndexes(std::string_view payload) {
  size_t pos = 0;
  const int count = readZigzag(payload, pos);
  if (count == 0) return {0};
  if (count < 0 || static_cast<size_t>(count) > payload.size())
    throw DataException("Invalid message indexes");
  std::vector<int> indexes;
  for (int i = 0; i < count; ++i) indexes.push_back(readZigzag(payload, pos));
  return indexes;
}

std::map<std::string, std::string> plainMap(const ConfigMap& configs) {
  return {configs.begin(), configs.end()};
}

}  // namespace

namespace registry_detail {

Value Reader::readPayload(std::string_view) const {
  throw DataException("This format is read from its JSON");
}

std::string latin1ToUtf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (char c : bytes) {
    const auto b = static_cast<uint8_t>(c);
    if (b < 0x80) {
      out += c;
    } else {
      out += static_cast<char>(0xC0 | (b >> 6));
      out += static_cast<char>(0x80 | (b & 0x3F));
    }
  }
  return out;
}

std::string utf8ToLatin1(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const auto b = static_cast<uint8_t>(text[i]);
    if (b < 0x80) {
      out += text[i];
    } else if ((b & 0xE0) == 0xC0 && b <= 0xC3 && i + 1 < text.size()) {
      out += static_cast<char>(((b & 0x03) << 6) | (static_cast<uint8_t>(text[++i]) & 0x3F));
    } else {
      throw DataException("Avro bytes hold a code point above 255");
    }
  }
  return out;
}

}  // namespace registry_detail

struct RegistryConverter::Impl {
  registry::Format format = registry::Format::kAvro;
  bool isKey = false;
  registry::SerdeConfig config;
  std::shared_ptr<registry::SchemaRegistryClient> client;
  std::unique_ptr<FormatData> data;
  std::unique_ptr<registry::Deserializer> deserializer;

  struct WriterEntry {
    SchemaPtr schema;
    std::unique_ptr<Writer> writer;
    std::unique_ptr<registry::Serializer> serializer;
  };
  std::vector<WriterEntry> writers;
  std::map<std::tuple<std::string, int32_t, std::vector<int>>, std::shared_ptr<Reader>> readers;

  WriterEntry& writerFor(const SchemaPtr& schema) {
    for (auto& entry : writers)
      if (entry.schema == schema) return entry;
    for (auto& entry : writers)
      if (*entry.schema == *schema) return entry;
    if (writers.size() >= kMaxCachedSchemas) writers.erase(writers.begin());
    WriterEntry entry{schema, data->writer(schema), nullptr};
    entry.serializer = std::make_unique<registry::Serializer>(
        client, config, format, entry.writer->schemaText, isKey,
        std::vector<registry::SchemaReference>{}, entry.writer->message);
    writers.push_back(std::move(entry));
    return writers.back();
  }

  // The registry's version of the writer's schema under the record's subject, when it has one.
  std::optional<int> versionOf(std::string_view topic, const registry::SchemaInfo& info,
                               const std::vector<int>& indexes) {
    try {
      const auto strategy =
          isKey ? config.key_subject_name_strategy : config.value_subject_name_strategy;
      const std::string subject =
          registry::subject_name(strategy, topic, isKey, data->recordName(info, indexes));
      return client->lookup(subject, info).version;
    } catch (const std::exception&) {
      return std::nullopt;  // not under that subject: the schema keeps no version
    }
  }

  std::shared_ptr<Reader> readerFor(std::string_view topic, const registry::wire::Framed& framed) {
    std::vector<int> indexes;
    if (format == registry::Format::kProtobuf) indexes = messageIndexes(framed.payload);
    auto key = std::make_tuple(std::string(topic), framed.schema_id, indexes);
    if (auto it = readers.find(key); it != readers.end()) return it->second;
    const registry::SchemaInfo info = client->schema_by_id(framed.schema_id);
    std::shared_ptr<Reader> reader = data->reader(info, indexes, versionOf(topic, info, indexes));
    if (readers.size() >= kMaxCachedSchemas) readers.clear();
    readers.emplace(std::move(key), reader);
    return reader;
  }
};

RegistryConverter::RegistryConverter(Kind kind) : kind_(kind), impl_(std::make_unique<Impl>()) {}
RegistryConverter::~RegistryConverter() = default;

void RegistryConverter::configure(const ConfigMap& configs, bool isKey) {
  if (!configs.contains("schema.registry.url"))
    throw ConnectException(
        "Missing required configuration \"schema.registry.url\" which has no default value.");
  impl_ = std::make_unique<Impl>();
  impl_->isKey = isKey;
  switch (kind_) {
    case Kind::AVRO:
      impl_->format = registry::Format::kAvro;
      impl_->data = registry_detail::avroData();
      break;
    case Kind::PROTOBUF:
      impl_->format = registry::Format::kProtobuf;
      impl_->data = registry_detail::protobufData();
      break;
    case Kind::JSON_SCHEMA:
      impl_->format = registry::Format::kJson;
      impl_->data = registry_detail::jsonSchemaData();
      break;
  }
  try {
    impl_->config = registry::SerdeConfig::from_properties(plainMap(configs));
  } catch (const std::exception& e) {
    throw ConnectException(e.what());
  }
  impl_->client = std::make_shared<registry::SchemaRegistryClient>(impl_->config.client);
  impl_->deserializer =
      std::make_unique<registry::Deserializer>(impl_->client, impl_->config, impl_->format, isKey);
}

bool RegistryConverter::write(std::string_view topic, const SchemaPtr& schema, const Value& value,
                              std::string& out) {
  if (!impl_->client) throw ConnectException("The converter is not configured");
  if (value.isNull()) {
    if (schema && !schema->isOptional())
      throw DataException("Found null value for non-optional schema");
    return false;
  }
  if (!schema)
    throw DataException(std::string("Schemaless data cannot be written as ") +
                        displayName(impl_->format) + " (the record has no schema)");
  try {
    auto& entry = impl_->writerFor(schema);
    out = entry.serializer->serialize(topic, entry.writer->write(value));
    return true;
  } catch (const registry::SerdeError& e) {
    throw DataException("Failed to serialize " + std::string(displayName(impl_->format)) +
                        " data from topic " + std::string(topic) + ": " + e.what());
  } catch (const std::invalid_argument& e) {
    throw DataException(e.what());
  }
}

SchemaAndValue RegistryConverter::read(std::string_view topic,
                                       std::optional<std::string_view> value) {
  if (!impl_->client) throw ConnectException("The converter is not configured");
  if (!value) return {};
  const std::string prefix = "Failed to deserialize data for topic " + std::string(topic) + " to " +
                             displayName(impl_->format) + ": ";
  try {
    const registry::wire::Framed framed = registry::wire::parse(*value);
    std::shared_ptr<Reader> reader = impl_->readerFor(topic, framed);
    if (reader->readsPayload) return {reader->schema, reader->readPayload(framed.payload)};
    return {reader->schema, reader->read(impl_->deserializer->deserialize(topic, *value))};
  } catch (const registry::SerdeError& e) {
    throw DataException(prefix + e.what());
  } catch (const registry::RegistryClientError& e) {
    throw DataException(prefix + e.what());
  } catch (const DataException& e) {
    throw DataException(prefix + e.what());
  } catch (const nlohmann::json::exception& e) {
    throw DataException(prefix + e.what());
  }
}

}  // namespace oxbow::connect
