// The serdes' common part: Confluent's settings and subject names, the 5-byte header, and the
// serializer and deserializer over the formats of serde_formats.h.
#include "oxbow/registry/serdes.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <type_traits>

#include "registry/serde/serde_formats.h"

namespace oxbow::registry {

namespace serde_detail {

const char* type_name(Format format) {
  switch (format) {
    case Format::kAvro:
      return "AVRO";
    case Format::kJson:
      return "JSON";
    case Format::kProtobuf:
      return "PROTOBUF";
  }
  return "";
}

const char* display_name(Format format) {
  switch (format) {
    case Format::kAvro:
      return "Avro";
    case Format::kJson:
      return "JSON";
    case Format::kProtobuf:
      return "Protobuf";
  }
  return "";
}

namespace {

// A name already fetched is not fetched again, as Confluent's serdes resolve references: two
// schemas that reference a third (a diamond) have it defined once.
void fetch_into(SchemaRegistryClient& client, const std::vector<SchemaReference>& refs,
                std::vector<NamedInfo>& out, int depth) {
  if (depth > kMaxReferenceDepth) throw SerdeError("schema references nest too deep");
  for (const auto& ref : refs) {
    RegisteredSchema held;
    try {
      held = client.version(ref.subject, ref.version);
    } catch (const RegistryClientError& e) {
      throw SerdeError("Error retrieving the reference " + ref.name + " (subject " + ref.subject +
                       " version " + std::to_string(ref.version) + "): " + e.what());
    }
    if (std::any_of(out.begin(), out.end(), [&](const NamedInfo& n) { return n.name == ref.name; }))
      continue;
    fetch_into(client, held.info.references, out, depth + 1);
    out.push_back({ref.name, std::move(held.info)});
  }
}

}  // namespace

std::vector<NamedInfo> fetch_references(SchemaRegistryClient* client,
                                        const std::vector<SchemaReference>& refs) {
  std::vector<NamedInfo> out;
  if (refs.empty()) return out;
  if (!client) throw SerdeError("schema references need a registry client");
  fetch_into(*client, refs, out, 0);
  return out;
}

}  // namespace serde_detail

namespace {

using Json = nlohmann::json;
using OJson = nlohmann::ordered_json;
using serde_detail::Codec;
using serde_detail::display_name;

constexpr const char* kStrategyPackage = "io.confluent.kafka.serializers.subject.";

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

std::shared_ptr<const Codec> make_codec(Format format, SchemaRegistryClient* client,
                                        const SchemaInfo& info,
                                        const serde_detail::FormatSettings& settings) {
  switch (format) {
    case Format::kJson:
      return serde_detail::make_json_codec(client, info, settings);
    case Format::kProtobuf:
      return serde_detail::make_protobuf_codec(client, info, settings);
    case Format::kAvro:
      break;
  }
  return serde_detail::make_avro_codec(client, info);
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
  config.json_fail_invalid_schema = parse_bool(p, "json.fail.invalid.schema", false);
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
  Format format = Format::kAvro;
  serde_detail::FormatSettings settings;
  SchemaInfo info;
  bool is_key = false;

  std::mutex mutex;
  std::shared_ptr<const Codec> given;  // the given schema, parsed on first use
  bool references_resolved = false;
  struct Target {
    int id = 0;
    std::shared_ptr<const Codec> codec;
  };
  std::map<std::string, Target, std::less<>> by_subject;

  SubjectNameStrategy strategy() const {
    return is_key ? config.key_subject_name_strategy : config.value_subject_name_strategy;
  }

  // A Protobuf schema's imports without references: each is the latest version of the subject
  // named as the import (Confluent's DefaultReferenceSubjectNameStrategy), registered already.
  void resolve_imports() {
    if (references_resolved || format != Format::kProtobuf || !info.references.empty() ||
        info.schema.empty())
      return;
    for (const auto& import : serde_detail::protobuf_imports(info.schema)) {
      try {
        info.references.push_back({import, import, client->latest(import).version});
      } catch (const RegistryClientError& e) {
        throw SerdeError("Error retrieving the schema of import " + import + " (subject " + import +
                         "; register it first): " + e.what());
      }
    }
    references_resolved = true;
  }

  Target target(std::string_view topic) {
    std::lock_guard lock(mutex);
    if (!given && !info.schema.empty()) {
      resolve_imports();
      given = make_codec(format, client.get(), info, settings);
    }
    if (!given && !config.use_latest_version)
      throw SerdeError("no schema to write with (give one, or set use.latest.version)");
    const std::string subject =
        subject_name(strategy(), topic, is_key, given ? given->record_name() : std::string());
    if (auto it = by_subject.find(subject); it != by_subject.end()) return it->second;
    Target t;
    try {
      if (config.use_latest_version) {
        const RegisteredSchema latest = client->latest(subject);
        t = {latest.id, make_codec(format, client.get(), latest.info, settings)};
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
                       " " + display_name(format) + " schema for subject " + subject + ": " +
                       e.what());
    }
    by_subject.emplace(subject, t);
    return t;
  }
};

Serializer::Serializer(std::shared_ptr<SchemaRegistryClient> client, SerdeConfig config,
                       Format format, std::string schema, bool is_key,
                       std::vector<SchemaReference> references, std::string message)
    : impl_(std::make_unique<Impl>()) {
  impl_->client = std::move(client);
  impl_->config = std::move(config);
  impl_->format = format;
  impl_->settings = {impl_->config.json_fail_invalid_schema, std::move(message)};
  impl_->info = {std::move(schema), serde_detail::type_name(format), std::move(references)};
  impl_->is_key = is_key;
  // Without references the schema is checked at once, so that a bad one fails at construction.
  if (impl_->info.references.empty() && !impl_->info.schema.empty() &&
      (format != Format::kProtobuf || serde_detail::protobuf_imports(impl_->info.schema).empty()))
    impl_->given = make_codec(format, nullptr, impl_->info, impl_->settings);
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
    t.codec->encode(value, out);
  } catch (const SerdeError& e) {
    throw SerdeError(std::string("Error serializing ") + display_name(impl_->format) +
                     " message: " + e.what());
  }
  return out;
}

struct Deserializer::Impl {
  std::shared_ptr<SchemaRegistryClient> client;
  SerdeConfig config;
  Format format = Format::kAvro;
  serde_detail::FormatSettings settings;
  bool is_key = false;
  std::shared_ptr<const Codec> reader;

  std::mutex mutex;
  std::map<int32_t, std::shared_ptr<const Codec>> by_id;

  std::shared_ptr<const Codec> writer(int32_t id) {
    {
      std::lock_guard lock(mutex);
      if (auto it = by_id.find(id); it != by_id.end()) return it->second;
    }
    std::shared_ptr<const Codec> parsed;
    try {
      parsed = make_codec(format, client.get(), client->schema_by_id(id), settings);
    } catch (const std::exception& e) {
      throw SerdeError(std::string("Error retrieving ") + display_name(format) + " schema for id " +
                       std::to_string(id) + ": " + e.what());
    }
    std::lock_guard lock(mutex);
    return by_id.emplace(id, parsed).first->second;
  }

  template <class J>
  J read(std::string_view bytes) {
    const auto framed = wire::parse(bytes);
    const auto w = writer(framed.schema_id);
    try {
      if constexpr (std::is_same_v<J, OJson>)
        return w->decode_ordered(framed.payload, reader.get());
      else
        return w->decode(framed.payload, reader.get());
    } catch (const std::exception& e) {
      throw SerdeError(std::string("Error deserializing ") + display_name(format) +
                       " message for id " + std::to_string(framed.schema_id) + ": " + e.what());
    }
  }
};

Deserializer::Deserializer(std::shared_ptr<SchemaRegistryClient> client, SerdeConfig config,
                           Format format, bool is_key, std::string reader_schema)
    : impl_(std::make_unique<Impl>()) {
  impl_->client = std::move(client);
  impl_->config = std::move(config);
  impl_->format = format;
  impl_->settings.validate = impl_->config.json_fail_invalid_schema;
  impl_->is_key = is_key;
  if (!reader_schema.empty()) {
    if (format == Format::kProtobuf)
      throw SerdeError("a Protobuf deserializer takes no reader schema");
    impl_->reader = make_codec(
        format, nullptr, {reader_schema, serde_detail::type_name(format), {}}, impl_->settings);
  }
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
