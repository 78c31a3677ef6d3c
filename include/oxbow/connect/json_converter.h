#pragma once
// org.apache.kafka.connect.json.JsonConverter: Connect data as JSON, by default in the envelope
// {"schema": ..., "payload": ...} whose schema is Connect's JSON form of a schema; with
// `schemas.enable=false` the bare payload, read back as schemaless maps, lists and primitives.
// Configs: schemas.enable (true), schemas.cache.size (1000), decimal.format (BASE64 | NUMERIC),
// replace.null.with.default (true).
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "oxbow/connect/converter.h"

namespace oxbow::connect {

class JsonConverter : public Converter {
 public:
  static constexpr std::string_view CLASS_NAME = "org.apache.kafka.connect.json.JsonConverter";
  static constexpr std::string_view SCHEMAS_ENABLE_CONFIG = "schemas.enable";
  static constexpr std::string_view SCHEMAS_CACHE_SIZE_CONFIG = "schemas.cache.size";
  static constexpr std::string_view DECIMAL_FORMAT_CONFIG = "decimal.format";
  static constexpr std::string_view REPLACE_NULL_WITH_DEFAULT_CONFIG = "replace.null.with.default";

  enum class DecimalFormat { BASE64, NUMERIC };

  JsonConverter();
  ~JsonConverter() override;
  // ConnectException with Kafka's ConfigException text for a value that does not parse.
  void configure(const ConfigMap& configs, bool isKey) override;

  // A schema's JSON form (the envelope's "schema") as text, and a schema from JSON text;
  // DataException for JSON that is not a schema.
  std::string asJsonSchema(const SchemaPtr& schema);
  SchemaPtr asConnectSchema(std::string_view json);

  // The number of schemas each way held in the caches (for tests).
  size_t sizeOfFromConnectSchemaCache() const;
  size_t sizeOfToConnectSchemaCache() const;

  struct State;

 protected:
  bool write(std::string_view topic, const SchemaPtr& schema, const Value& value,
             std::string& out) override;
  SchemaAndValue read(std::string_view topic, std::optional<std::string_view> value) override;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace oxbow::connect
