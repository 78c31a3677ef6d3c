#include "oxbow/registry/serdes.h"

#include <cstring>
#include <map>
#include <mutex>
#include <type_traits>

#include "registry/avro/binary.h"
#include "registry/avro/schema.h"
#include "registry/serde/http_util.h"

namespace oxbow::registry {

namespace {

using Json = nlohmann::json;
using OJson = nlohmann::ordered_json;

constexpr const char* kStrategyPackage = "io.confluent.kafka.serializers.subject.";
constexpr int kMaxReferenceDepth = 32;

const char* strategy_class(SubjectNameStrategy s) {
  switch (s) {
    case SubjectNameStrategy::kTopicName:
      return "TopicNameStrategy";
    case SubjectNameStrategy::kRecordName:
      return "RecordNameStrategy";
    case SubjectNameStrategy::kTopicRecordName:
      return "TopicRecordNameStrategy";
  }
  return "";
}

bool parse_bool(const std::map<std::string, std::string>& p, const char* name, bool fallback) {
  auto it = p.find(name);
  if (it == p.end()) return fallback;
  if (it->second == "true") return true;
  if (it->second == "false") return false;
  throw SerdeError(std::string("Invalid value ") + it->second + " for configuration " + name +
                   ": Expected value to be either true or false");
}

void check_format(Format format) {
  if (format == Format::kJson) throw SerdeError("JSON Schema serdes are not supported yet");
  if (format == Format::kProtobuf) throw SerdeError("Protobuf serdes are not supported yet");
}

// An Avro schema parsed with the schemas it references (fetched by subject and version).
struct ParsedAvro {
  std::vector<std::unique_ptr<avro::Schema>> references;
  std::optional<avro::Schema> schema;
};

void parse_references(SchemaRegistryClient& client, const std::vector<SchemaReference>& refs,
                      ParsedAvro& into, int depth) {
  if (depth > kMaxReferenceDepth) throw SerdeError("schema references nest too deep");
  for (const auto& ref : refs) {
    const RegisteredSchema held = client.version(ref.subject, ref.version);
    parse_references(client, held.info.references, into, depth + 1);
    avro::ParseOptions options;
    for (const auto& known : into.references) options.known.push_back(known.get());
    options.validate_defaults = false;
    auto result = avro::parse(held.info.schema, options);
    if (!result)
      throw SerdeError("referenced schema " + ref.subject + " version " +
                       std::to_string(ref.version) + " does not parse: " + result.error);
    into.references.push_back(std::make_unique<avro::Schema>(std::move(*result.schema)));
  }
}

std::shared_ptr<ParsedAvro> parse_avro(SchemaRegistryClient* client, const SchemaInfo& info) {
  if (info.type != "AVRO") throw SerdeError("the schema is " + info.type + ", not AVRO");
  auto parsed = std::make_shared<ParsedAvro>();
  if (!info.references.empty()) {
    if (!client) throw SerdeError("schema references need a registry client");
    parse_references(*client, info.references, *parsed, 0);
  }
  avro::ParseOptions options;
  for (const auto& known : parsed->references) options.known.push_back(known.get());
  options.validate_defaults = false;  // the registry decides what it accepts
  auto result = avro::parse(info.schema, options);
  if (!result) throw SerdeError("Invalid Avro schema: " + result.error);
  parsed->schema.emplace(std::move(*result.schema));
  return parsed;
}

std::string record_name(const ParsedAvro& parsed) {
  const auto& root = parsed.schema->root();
  return root.kind == avro::Kind::kRecord ? root.full_name : std::string();
}

bool is_bytes(const ParsedAvro& parsed) {
  return parsed.schema->root().kind == avro::Kind::kBytes;
}

// Confluent writes a "bytes" schema's value as the raw bytes, without Avro's length prefix.
std::string raw_bytes(const avro::Schema& schema, const Json& value) {
  std::string encoded = avro::encode(schema, value);
  size_t prefix = 0;
  while (prefix < encoded.size() && (static_cast<unsigned char>(encoded[prefix]) & 0x80)) ++prefix;
  return encoded.substr(prefix + 1);
}

template <class J>
J raw_bytes_json(std::string_view bytes) {
  // Encoding the length first lets the Avro decoder turn bytes into code points.
  std::string framed;
  int64_t n = static_cast<int64_t>(bytes.size());
  uint64_t z = static_cast<uint64_t>(n) << 1;
  while (z >= 0x80) {
    framed += static_cast<char>((z & 0x7F) | 0x80);
    z >>= 7;
  }
  framed += static_cast<char>(z);
  framed += bytes;
  static const avro::Schema schema = std::move(*avro::parse(R"("bytes")").schema);
  if constexpr (std::is_same_v<J, OJson>)
    return avro::decode_ordered(schema, framed);
  else
    return avro::decode(schema, framed);
}

}  // namespace

std::optional<SubjectNameStrategy> parse_subject_name_strategy(std::string_view name) {
  if (name.rfind(kStrategyPackage, 0) == 0) name.remove_prefix(std::strlen(kStrategyPackage));
  for (auto s : {SubjectNameStrategy::kTopicName, SubjectNameStrategy::kRecordName,
                 SubjectNameStrategy::kTopicRecordName})
    if (name == strategy_class(s)) return s;
  return std::nullopt;
}

std::string subject_name(SubjectNameStrategy strategy, std::string_view topic, bool is_key,
                         std::string_view record_name) {
  if (strategy == SubjectNameStrategy::kTopicName)
    return std::string(topic) + (is_key ? "-key" : "-value");
  if (record_name.empty())
    throw SerdeError(std::string("In configuration ") + (is_key ? "key" : "value") +
                     ".subject.name.strategy = " + kStrategyPackage + strategy_class(strategy) +
                     ", the message " + (is_key ? "key" : "value") +
                     " must only be a record schema");
  if (strategy == SubjectNameStrategy::kRecordName) return std::string(record_name);
  return std::string(topic) + "-" + std::string(record_name);
}

SerdeConfig SerdeConfig::from_properties(const std::map<std::string, std::string>& p) {
  SerdeConfig config;
  try {
    config.client = ClientConfig::from_properties(p);
  } catch (const std::logic_error& e) {
    throw SerdeError(std::string("Invalid schema registry configuration: ") + e.what());
  }
  config.auto_register_schemas = parse_bool(p, "auto.register.schemas", true);
  config.use_latest_version = parse_bool(p, "use.latest.version", false);
  config.normalize_schemas = parse_bool(p, "normalize.schemas", false);
  for (auto [name, target] :
       {std::pair{"key.subject.name.strategy", &config.key_subject_name_strategy},
        std::pair{"value.subject.name.strategy", &config.value_subject_name_strategy}}) {
    auto it = p.find(name);
    if (it == p.end()) continue;
    auto strategy = parse_subject_name_strategy(it->second);
    if (!strategy) throw SerdeError("Unknown subject name strategy " + it->second + " for " + name);
    *target = *strategy;
  }
  return config;
}

namespace wire {

std::string header(int32_t schema_id) {
  const auto id = static_cast<uint32_t>(schema_id);
  return {static_cast<char>(kMagicByte), static_cast<char>(id >> 24), static_cast<char>(id >> 16),
          static_cast<char>(id >> 8), static_cast<char>(id)};
}

Framed parse(std::string_view bytes) {
  if (bytes.empty() || static_cast<uint8_t>(bytes[0]) != kMagicByte)
    throw SerdeError("Unknown magic byte!");
  if (bytes.size() < kHeaderSize)
    throw SerdeError("Invalid message: " + std::to_string(bytes.size()) +
                     " bytes, shorter than the 5-byte header");
  uint32_t id = 0;
  for (size_t i = 1; i < kHeaderSize; ++i) id = id << 8 | static_cast<uint8_t>(bytes[i]);
  return {static_cast<int32_t>(id), bytes.substr(kHeaderSize)};
}

}  // namespace wire

struct Serializer::Impl {
  std::shared_ptr<SchemaRegistryClient> client;
  SerdeConfig config;
  SchemaInfo info;
  bool is_key = false;

  std::mutex mutex;
  std::shared_ptr<ParsedAvro> given;  // the given schema, parsed on first use
  struct Target {
    int id = 0;
    std::shared_ptr<ParsedAvro> schema;
  };
  std::map<std::string, Target, std::less<>> by_subject;

  SubjectNameStrategy strategy() const {
    return is_key ? config.key_subject_name_strategy : config.value_subject_name_strategy;
  }

  Target target(std::string_view topic) {
    std::lock_guard lock(mutex);
    if (!given && !info.schema.empty()) given = parse_avro(client.get(), info);
    if (!given && !config.use_latest_version)
      throw SerdeError("no schema to write with (give one, or set use.latest.version)");
    const std::string subject =
        subject_name(strategy(), topic, is_key, given ? record_name(*given) : std::string());
    if (auto it = by_subject.find(subject); it != by_subject.end()) return it->second;
    Target t;
    try {
      if (config.use_latest_version) {
        const RegisteredSchema latest = client->latest(subject);
        t = {latest.id, parse_avro(client.get(), latest.info)};
      } else if (config.auto_register_schemas) {
        t = {client->register_schema(subject, info, config.normalize_schemas), given};
      } else {
        t = {client->lookup(subject, info, config.normalize_schemas).id, given};
      }
    } catch (const RegistryClientError& e) {
      throw SerdeError(std::string("Error ") +
                       (config.use_latest_version      ? "retrieving the latest"
                        : config.auto_register_schemas ? "registering"
                                                       : "retrieving") +
                       " Avro schema for subject " + subject + ": " + e.what());
    }
    by_subject.emplace(subject, t);
    return t;
  }
};

Serializer::Serializer(std::shared_ptr<SchemaRegistryClient> client, SerdeConfig config,
                       Format format, std::string schema, bool is_key,
                       std::vector<SchemaReference> references)
    : impl_(std::make_unique<Impl>()) {
  check_format(format);
  impl_->client = std::move(client);
  impl_->config = std::move(config);
  impl_->info = {std::move(schema), "AVRO", std::move(references)};
  impl_->is_key = is_key;
  // Without references the schema is checked at once, so that a bad one fails at construction.
  if (impl_->info.references.empty() && !impl_->info.schema.empty())
    impl_->given = parse_avro(nullptr, impl_->info);
}
Serializer::~Serializer() = default;
Serializer::Serializer(Serializer&&) noexcept = default;
Serializer& Serializer::operator=(Serializer&&) noexcept = default;

int32_t Serializer::schema_id(std::string_view topic) {
  return impl_->target(topic).id;
}

std::string Serializer::serialize(std::string_view topic, const Json& value) {
  const auto t = impl_->target(topic);
  std::string out = wire::header(t.id);
  try {
    if (is_bytes(*t.schema))
      out += raw_bytes(*t.schema->schema, value);
    else
      avro::encode(t.schema->schema->root(), value, out);
  } catch (const avro::BinaryError& e) {
    throw SerdeError(std::string("Error serializing Avro message: ") + e.what());
  }
  return out;
}

struct Deserializer::Impl {
  std::shared_ptr<SchemaRegistryClient> client;
  SerdeConfig config;
  bool is_key = false;
  std::shared_ptr<ParsedAvro> reader;

  std::mutex mutex;
  std::map<int32_t, std::shared_ptr<ParsedAvro>> by_id;

  std::shared_ptr<ParsedAvro> writer(int32_t id) {
    {
      std::lock_guard lock(mutex);
      if (auto it = by_id.find(id); it != by_id.end()) return it->second;
    }
    std::shared_ptr<ParsedAvro> parsed;
    try {
      parsed = parse_avro(client.get(), client->schema_by_id(id));
    } catch (const std::exception& e) {
      throw SerdeError("Error retrieving Avro schema for id " + std::to_string(id) + ": " +
                       e.what());
    }
    std::lock_guard lock(mutex);
    return by_id.emplace(id, parsed).first->second;
  }

  template <class J>
  J read(std::string_view bytes) {
    const auto framed = wire::parse(bytes);
    const auto w = writer(framed.schema_id);
    try {
      if (is_bytes(*w)) return raw_bytes_json<J>(framed.payload);
      if constexpr (std::is_same_v<J, OJson>)
        return reader ? avro::decode_ordered(*w->schema, *reader->schema, framed.payload)
                      : avro::decode_ordered(*w->schema, framed.payload);
      else
        return reader ? avro::decode(*w->schema, *reader->schema, framed.payload)
                      : avro::decode(*w->schema, framed.payload);
    } catch (const avro::BinaryError& e) {
      throw SerdeError("Error deserializing Avro message for id " +
                       std::to_string(framed.schema_id) + ": " + e.what());
    }
  }
};

Deserializer::Deserializer(std::shared_ptr<SchemaRegistryClient> client, SerdeConfig config,
                           Format format, bool is_key, std::string reader_schema)
    : impl_(std::make_unique<Impl>()) {
  check_format(format);
  impl_->client = std::move(client);
  impl_->config = std::move(config);
  impl_->is_key = is_key;
  if (!reader_schema.empty()) impl_->reader = parse_avro(nullptr, {reader_schema, "AVRO", {}});
}
Deserializer::~Deserializer() = default;
Deserializer::Deserializer(Deserializer&&) noexcept = default;
Deserializer& Deserializer::operator=(Deserializer&&) noexcept = default;

Json Deserializer::deserialize(std::string_view, std::string_view bytes) {
  return impl_->read<Json>(bytes);
}

OJson Deserializer::deserialize_ordered(std::string_view, std::string_view bytes) {
  return impl_->read<OJson>(bytes);
}

}  // namespace oxbow::registry
