#pragma once
// Avro in Confluent's wire format as a Streams serde, so that an application reads and writes
// the topics Confluent's KafkaAvroSerde (and oxbow produce/consume --value-format avro) use.
// Values are nlohmann::json in Avro's JSON encoding (see oxbow/registry/serdes.h). It needs the
// registry client library beside oxbow-streams: find_package(OxbowRegistry) and link
// OxbowRegistry::registry (pkg-config: oxbow-registry).
//
//   auto orders = serdes::Avro({{"schema.registry.url", "http://localhost:8081"}}, schema, false);
//
// Bytes that do not decode (wrong magic byte, unknown schema id, a datum that does not fit its
// schema) throw SerializationException, which the deserialization-exception handler turns into
// a skipped record or a failed task.
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "oxbow/registry/serdes.h"
#include "oxbow/streams/serde.h"

namespace oxbow::streams::serdes {

// `config` holds Confluent's serde settings (schema.registry.url, auto.register.schemas,
// use.latest.version, *.subject.name.strategy, basic.auth.user.info, ...). `schema` is the
// schema values are written with; empty, the serde writes with the subject's latest schema when
// use.latest.version is set, and otherwise only reads. Serdes may share one `client` (and so its
// caches); without one, each gets its own. A bad setting throws std::invalid_argument.
inline Serde<nlohmann::json> Avro(
    const std::map<std::string, std::string>& config, const std::string& schema, bool is_key,
    std::shared_ptr<registry::SchemaRegistryClient> client = nullptr) {
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
      serializer = std::make_shared<registry::Serializer>(client, settings, registry::Format::kAvro,
                                                          schema, is_key);
    } catch (const registry::SerdeError& e) {
      throw std::invalid_argument(e.what());
    }
  }
  auto deserializer =
      std::make_shared<registry::Deserializer>(client, settings, registry::Format::kAvro, is_key);

  Serde<nlohmann::json> serde;
  serde.name = "KafkaAvroSerde";
  serde.serialize = [serializer](std::string_view topic, const nlohmann::json& value) {
    if (!serializer)
      throw SerializationException(
          "this Avro serde has no schema to write with (give one, or "
          "set use.latest.version)");
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

}  // namespace oxbow::streams::serdes
