#pragma once
// Confluent's wire format as Streams serdes, so that an application reads and writes the topics
// Confluent's KafkaAvroSerde, KafkaJsonSchemaSerde and KafkaProtobufSerde (and oxbow
// produce/consume --value-format avro|json|protobuf) use. Values are nlohmann::json: Avro's JSON
// encoding, the JSON document, or the Protobuf message in Protobuf's JSON mapping (see
// oxbow/registry/serdes.h). It needs the registry client library beside oxbow-streams:
// find_package(OxbowRegistry) and link OxbowRegistry::registry (pkg-config: oxbow-registry).
//
//   auto orders = serdes::Avro({{"schema.registry.url", "http://localhost:8081"}}, schema, false);
//   auto events = serdes::JsonSchema(config, json_schema, false);
//   auto trades = serdes::Protobuf(config, proto_text, false, "shop.Trade");
//
// Bytes that do not decode (wrong magic byte, unknown schema id, a value that does not fit its
// schema) throw SerializationException, which the deserialization-exception handler turns into
// a skipped record or a failed task.
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "oxbow/registry/serdes.h"
#include "oxbow/streams/serde.h"

namespace oxbow::streams::serdes {

namespace detail {

inline Serde<nlohmann::json> registry_serde(const std::map<std::string, std::string>& config,
                                            registry::Format format, const std::string& schema,
                                            bool is_key,
                                            std::shared_ptr<registry::SchemaRegistryClient> client,
                                            const std::string& message, const char* name) {
  registry::SerdeConfig settings;
  try {
    settings = registry::SerdeConfig::from_properties(config);
    if (!client) client = std::make_shared<registry::SchemaRegistryClient>(settings.client);
  } catch (const std::runtime_error& e) {
    throw std::invalid_argument(e.what());
  }
  std::shared_ptr<registry::Serializer> serializer;
  if (!schema.empty() || settings.use_latest_version) {
    try {
      serializer =
          std::make_shared<registry::Serializer>(client, settings, format, schema, is_key,
                                                 std::vector<registry::SchemaReference>{}, message);
    } catch (const registry::SerdeError& e) {
      throw std::invalid_argument(e.what());
    }
  }
  auto deserializer = std::make_shared<registry::Deserializer>(client, settings, format, is_key);

  Serde<nlohmann::json> serde;
  serde.name = name;
  serde.serialize = [serializer, name](std::string_view topic, const nlohmann::json& value) {
    if (!serializer)
      throw SerializationException(std::string("this ") + name +
                                   " has no schema to write with (give one, or set "
                                   "use.latest.version)");
    try {
      return serializer->serialize(topic, value);
    } catch (const registry::SerdeError& e) {
      throw SerializationException(e.what());
    }
  };
  serde.deserialize = [deserializer](std::string_view topic, std::string_view bytes) {
    try {
      return deserializer->deserialize(topic, bytes);
    } catch (const registry::SerdeError& e) {
      throw SerializationException(e.what());
    }
  };
  return serde;
}

}  // namespace detail

// `config` holds Confluent's serde settings (schema.registry.url, auto.register.schemas,
// use.latest.version, *.subject.name.strategy, basic.auth.user.info, json.fail.invalid.schema,
// ...). `schema` is the schema values are written with; empty, the serde writes with the
// subject's latest schema when use.latest.version is set, and otherwise only reads. Serdes may
// share one `client` (and so its caches); without one, each gets its own. A bad setting or
// schema throws std::invalid_argument.
inline Serde<nlohmann::json> Avro(
    const std::map<std::string, std::string>& config, const std::string& schema, bool is_key,
    std::shared_ptr<registry::SchemaRegistryClient> client = nullptr) {
  return detail::registry_serde(config, registry::Format::kAvro, schema, is_key, std::move(client),
                                "", "KafkaAvroSerde");
}

// JSON Schema: values are the JSON documents themselves.
inline Serde<nlohmann::json> JsonSchema(
    const std::map<std::string, std::string>& config, const std::string& schema, bool is_key,
    std::shared_ptr<registry::SchemaRegistryClient> client = nullptr) {
  return detail::registry_serde(config, registry::Format::kJson, schema, is_key, std::move(client),
                                "", "KafkaJsonSchemaSerde");
}

// Protobuf: `schema` is the .proto text; values are written as `message_name` (its full name;
// empty: the schema's first message) from Protobuf's JSON mapping, and read as whichever message
// the record's indexes name.
inline Serde<nlohmann::json> Protobuf(
    const std::map<std::string, std::string>& config, const std::string& schema, bool is_key,
    const std::string& message_name = "",
    std::shared_ptr<registry::SchemaRegistryClient> client = nullptr) {
  return detail::registry_serde(config, registry::Format::kProtobuf, schema, is_key,
                                std::move(client), message_name, "KafkaProtobufSerde");
}

}  // namespace oxbow::streams::serdes
