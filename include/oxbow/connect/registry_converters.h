#pragma once
// Confluent's Schema Registry converters under their class names: AvroConverter,
// ProtobufConverter and JsonSchemaConverter. Connect data goes out in Confluent's wire format
// (magic byte 0, the 4-byte schema id, the payload), its schema derived from the Connect schema
// as Confluent's AvroData, ProtobufData and JsonSchemaData derive it and registered (or looked up)
// under the subject its strategy names; records any Confluent producer wrote come back as the
// Connect schema and value Confluent's converter would give. Configured with Confluent's names:
// schema.registry.url, auto.register.schemas, use.latest.version, normalize.schemas,
// key.subject.name.strategy, value.subject.name.strategy, basic.auth.user.info,
// schema.registry.request.timeout.ms (docs/connect/data.md).
#include <memory>
#include <string_view>

#include "oxbow/connect/converter.h"

namespace oxbow::connect {

// What the three share: the registry client, the serdes and the schemas derived so far.
class RegistryConverter : public Converter {
 public:
  ~RegistryConverter() override;
  void configure(const ConfigMap& configs, bool isKey) override;

  struct Impl;

 protected:
  enum class Kind { AVRO, PROTOBUF, JSON_SCHEMA };
  explicit RegistryConverter(Kind kind);
  bool write(std::string_view topic, const SchemaPtr& schema, const Value& value,
             std::string& out) override;
  SchemaAndValue read(std::string_view topic, std::optional<std::string_view> value) override;

 private:
  Kind kind_;
  std::unique_ptr<Impl> impl_;
};

class AvroConverter : public RegistryConverter {
 public:
  static constexpr std::string_view CLASS_NAME = "io.confluent.connect.avro.AvroConverter";
  AvroConverter() : RegistryConverter(Kind::AVRO) {}
};

class ProtobufConverter : public RegistryConverter {
 public:
  static constexpr std::string_view CLASS_NAME = "io.confluent.connect.protobuf.ProtobufConverter";
  ProtobufConverter() : RegistryConverter(Kind::PROTOBUF) {}
};

class JsonSchemaConverter : public RegistryConverter {
 public:
  static constexpr std::string_view CLASS_NAME = "io.confluent.connect.json.JsonSchemaConverter";
  JsonSchemaConverter() : RegistryConverter(Kind::JSON_SCHEMA) {}
};

}  // namespace oxbow::connect
