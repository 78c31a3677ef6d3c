#include "connect/transforms/transform_util.h"

#include <algorithm>

#include "oxbow/connect/errors.h"

namespace oxbow::connect::transforms {

namespace {

// "java.util.HashMap" for a map: Java's getClass().getName(), "null" for null.
std::string nullSafeClassName(const Value& value) {
  if (value.isNull()) return "null";
  std::string_view name = value.javaClass();
  constexpr std::string_view prefix = "class ";
  if (name.substr(0, prefix.size()) == prefix) name.remove_prefix(prefix.size());
  return std::string(name);
}

}  // namespace

// The helpers read one config as ConfigDef does, so that the parsing rules and messages are
// ConfigDef's own.
std::string requiredString(const TransformConfig& config, const std::string& name) {
  auto found = config.find(name);
  if (found == config.end()) {
    throw ConfigException("Missing required configuration \"" + name +
                          "\" which has no default value.");
  }
  return std::get<std::string>(ConfigDef::parseType(name, found->second, ConfigDef::Type::STRING));
}

std::optional<std::string> optionalString(const TransformConfig& config, const std::string& name) {
  if (!config.contains(name)) return std::nullopt;
  return requiredString(config, name);
}

bool booleanConfig(const TransformConfig& config, const std::string& name, bool defaultValue) {
  auto found = config.find(name);
  if (found == config.end()) return defaultValue;
  return std::get<bool>(ConfigDef::parseType(name, found->second, ConfigDef::Type::BOOLEAN));
}

std::vector<std::string> listConfig(const TransformConfig& config, const std::string& name,
                                    std::vector<std::string> defaultValue) {
  auto found = config.find(name);
  if (found == config.end()) return defaultValue;
  return std::get<std::vector<std::string>>(
      ConfigDef::parseType(name, found->second, ConfigDef::Type::LIST));
}

ConfigDef& defineReplaceNullWithDefault(ConfigDef& definition) {
  return definition.define("replace.null.with.default", ConfigDef::Type::BOOLEAN, true,
                           ConfigDef::Importance::MEDIUM,
                           "Whether a null field that has a default value takes that default "
                           "(true) or stays null (false).");
}

const ValueMap& requireMap(const Value& value, std::string_view purpose) {
  if (value.kind() != Value::Kind::Map) {
    throw DataException("Only Map objects supported in absence of schema for [" +
                        std::string(purpose) + "], found: " + nullSafeClassName(value));
  }
  return value.asMap();
}

const Struct& requireStruct(const Value& value, std::string_view purpose) {
  if (value.kind() != Value::Kind::Struct) {
    std::string found = value.isNull() ? "null" : nullSafeClassName(value);
    throw DataException("Only Struct objects supported for [" + std::string(purpose) +
                        "], found: " + found);
  }
  return value.asStruct();
}

void requireSchema(const SchemaPtr& schema, std::string_view purpose) {
  if (!schema) throw DataException("Schema required for [" + std::string(purpose) + "]");
}

SchemaBuilder copySchemaBasics(const Schema& source, SchemaBuilder builder) {
  if (source.name()) builder.name(*source.name());
  if (source.version()) builder.version(*source.version());
  if (source.doc()) builder.doc(*source.doc());
  if (source.parameters()) builder.parameters(*source.parameters());
  return builder;
}

void mapPut(ValueMap& map, std::string_view key, Value value) {
  for (auto& [entryKey, entryValue] : map) {
    if (entryKey.kind() == Value::Kind::String && entryKey.asString() == key) {
      entryValue = std::move(value);
      return;
    }
  }
  map.emplace_back(Value(key), std::move(value));
}

const SchemaPtr& operatingSchema(const ConnectRecord& record, Operand operand) {
  return operand == Operand::Key ? record.keySchema() : record.valueSchema();
}

const Value& operatingValue(const ConnectRecord& record, Operand operand) {
  return operand == Operand::Key ? record.key() : record.value();
}

ConnectRecord rebuild(const ConnectRecord& record, std::string topic, SchemaPtr keySchema,
                      Value key, SchemaPtr valueSchema, Value value, Headers headers) {
  return ConnectRecord(std::move(topic), record.kafkaPartition(), std::move(keySchema),
                       std::move(key), std::move(valueSchema), std::move(value), record.timestamp(),
                       std::move(headers));
}

ConnectRecord withOperand(const ConnectRecord& record, Operand operand, SchemaPtr schema,
                          Value value) {
  if (operand == Operand::Key) {
    return rebuild(record, record.topic(), std::move(schema), std::move(value),
                   record.valueSchema(), record.value(), record.headers());
  }
  return rebuild(record, record.topic(), record.keySchema(), record.key(), std::move(schema),
                 std::move(value), record.headers());
}

}  // namespace oxbow::connect::transforms
