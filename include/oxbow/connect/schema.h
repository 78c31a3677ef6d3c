#pragma once
// Connect's schemas (org.apache.kafka.connect.data.Schema, ConnectSchema, Field, SchemaBuilder):
// a type, whether null is allowed, a default, a name, a version, documentation and string
// parameters; a struct's fields, an array's and a map's element schemas. A Schema is immutable
// and shared (SchemaPtr); a null SchemaPtr stands for Java's null schema (schemaless data).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "oxbow/connect/value.h"

namespace oxbow::connect {

class Schema;
using SchemaPtr = std::shared_ptr<const Schema>;
// A schema's parameters in the order they were set (Connect keeps a LinkedHashMap).
using Parameters = std::vector<std::pair<std::string, std::string>>;

enum class Type : uint8_t {
  INT8,
  INT16,
  INT32,
  INT64,
  FLOAT32,
  FLOAT64,
  BOOLEAN,
  STRING,
  BYTES,
  ARRAY,
  MAP,
  STRUCT
};
// "INT8", ... as Java prints the enum.
std::string_view typeName(Type type);
// The kind of value a schema of this type holds when it names no logical type.
Value::Kind valueKindOf(Type type);
// Whether a type holds no other schemas.
inline bool isPrimitive(Type type) {
  return type < Type::ARRAY;
}

class Field {
 public:
  Field(std::string name, int32_t index, SchemaPtr schema)
      : name_(std::move(name)), index_(index), schema_(std::move(schema)) {}
  const std::string& name() const { return name_; }
  int32_t index() const { return index_; }
  const SchemaPtr& schema() const { return schema_; }
  bool operator==(const Field& other) const;
  std::string toString() const;

 private:
  std::string name_;
  int32_t index_;
  SchemaPtr schema_;
};

class Schema {
 public:
  // As ConnectSchema's constructor; SchemaBuilder is the usual way to make one.
  Schema(Type type, bool optional, Value defaultValue, std::optional<std::string> name,
         std::optional<int32_t> version, std::optional<std::string> doc,
         std::optional<Parameters> parameters, std::vector<Field> fields, SchemaPtr keySchema,
         SchemaPtr valueSchema);

  Type type() const { return type_; }
  bool isOptional() const { return optional_; }
  // Null when the schema has no default.
  const Value& defaultValue() const { return defaultValue_; }
  const std::optional<std::string>& name() const { return name_; }
  const std::optional<int32_t>& version() const { return version_; }
  const std::optional<std::string>& doc() const { return doc_; }
  const std::optional<Parameters>& parameters() const { return parameters_; }
  // The parameter of that name, or null.
  const std::string* parameter(std::string_view key) const;

  // A struct's fields; DataException on other types, as Connect.
  const std::vector<Field>& fields() const;
  // The field of that name or null; DataException on other types.
  const Field* field(std::string_view name) const;
  // A map's key schema; DataException on other types.
  const SchemaPtr& keySchema() const;
  // An array's or a map's value schema; DataException on other types.
  const SchemaPtr& valueSchema() const;

  // Deep equality, as ConnectSchema.equals.
  bool operator==(const Schema& other) const;
  // "Schema{INT32}" or "Schema{name:STRUCT}".
  std::string toString() const;

  // ConnectSchema.validateValue: throws DataException with Connect's message when `value` does
  // not fit `schema` (a null where none is allowed, a value of another type, a struct of another
  // schema or missing a required field, an element of a list or map that does not fit).
  static void validateValue(const SchemaPtr& schema, const Value& value);
  static void validateValue(std::string_view field, const SchemaPtr& schema, const Value& value);

  // Schema's constants.
  static const SchemaPtr INT8_SCHEMA;
  static const SchemaPtr INT16_SCHEMA;
  static const SchemaPtr INT32_SCHEMA;
  static const SchemaPtr INT64_SCHEMA;
  static const SchemaPtr FLOAT32_SCHEMA;
  static const SchemaPtr FLOAT64_SCHEMA;
  static const SchemaPtr BOOLEAN_SCHEMA;
  static const SchemaPtr STRING_SCHEMA;
  static const SchemaPtr BYTES_SCHEMA;
  static const SchemaPtr OPTIONAL_INT8_SCHEMA;
  static const SchemaPtr OPTIONAL_INT16_SCHEMA;
  static const SchemaPtr OPTIONAL_INT32_SCHEMA;
  static const SchemaPtr OPTIONAL_INT64_SCHEMA;
  static const SchemaPtr OPTIONAL_FLOAT32_SCHEMA;
  static const SchemaPtr OPTIONAL_FLOAT64_SCHEMA;
  static const SchemaPtr OPTIONAL_BOOLEAN_SCHEMA;
  static const SchemaPtr OPTIONAL_STRING_SCHEMA;
  static const SchemaPtr OPTIONAL_BYTES_SCHEMA;

 private:
  Type type_;
  bool optional_;
  Value defaultValue_;
  std::optional<std::string> name_;
  std::optional<int32_t> version_;
  std::optional<std::string> doc_;
  std::optional<Parameters> parameters_;
  std::vector<Field> fields_;
  SchemaPtr keySchema_;
  SchemaPtr valueSchema_;
};

// Connect's ConnectSchema is the Schema above.
using ConnectSchema = Schema;

// Equality of possibly-null schemas (Objects.equals).
bool schemasEqual(const SchemaPtr& a, const SchemaPtr& b);

// SchemaBuilder: a schema made step by step, each property settable once
// (SchemaBuilderException otherwise). `struct_()` and `bool_()` stand for Java's struct() and
// bool(), whose names C++ reserves. A builder converts to the SchemaPtr it builds.
class SchemaBuilder {
 public:
  explicit SchemaBuilder(Type type);

  static SchemaBuilder type(Type type) { return SchemaBuilder(type); }
  static SchemaBuilder int8() { return SchemaBuilder(Type::INT8); }
  static SchemaBuilder int16() { return SchemaBuilder(Type::INT16); }
  static SchemaBuilder int32() { return SchemaBuilder(Type::INT32); }
  static SchemaBuilder int64() { return SchemaBuilder(Type::INT64); }
  static SchemaBuilder float32() { return SchemaBuilder(Type::FLOAT32); }
  static SchemaBuilder float64() { return SchemaBuilder(Type::FLOAT64); }
  static SchemaBuilder bool_() { return SchemaBuilder(Type::BOOLEAN); }
  static SchemaBuilder string() { return SchemaBuilder(Type::STRING); }
  static SchemaBuilder bytes() { return SchemaBuilder(Type::BYTES); }
  static SchemaBuilder struct_() { return SchemaBuilder(Type::STRUCT); }
  static SchemaBuilder array(SchemaPtr valueSchema);
  static SchemaBuilder map(SchemaPtr keySchema, SchemaPtr valueSchema);

  SchemaBuilder& optional();
  SchemaBuilder& required();
  // Validated against the schema built so far (SchemaBuilderException "Invalid default value").
  SchemaBuilder& defaultValue(Value value);
  SchemaBuilder& name(std::string name);
  SchemaBuilder& version(int32_t version);
  SchemaBuilder& doc(std::string doc);
  SchemaBuilder& parameter(std::string key, std::string value);
  SchemaBuilder& parameters(const Parameters& parameters);
  SchemaBuilder& field(std::string name, SchemaPtr schema);

  Type type() const { return type_; }
  bool isOptional() const { return optional_.value_or(false); }
  const std::optional<std::string>& name() const { return name_; }
  const std::optional<Parameters>& parameters() const { return parameters_; }

  SchemaPtr build() const;
  operator SchemaPtr() const { return build(); }  // NOLINT: Java passes a builder as a Schema

 private:
  Type type_;
  std::optional<bool> optional_;
  Value defaultValue_;
  std::optional<std::string> name_;
  std::optional<int32_t> version_;
  std::optional<std::string> doc_;
  std::optional<Parameters> parameters_;
  std::vector<Field> fields_;
  SchemaPtr keySchema_;
  SchemaPtr valueSchema_;
};

// A schema and a value of it (SchemaAndValue); SchemaAndValue{} is Connect's SchemaAndValue.NULL.
struct SchemaAndValue {
  SchemaPtr schema;
  Value value;
  bool operator==(const SchemaAndValue& other) const {
    return schemasEqual(schema, other.schema) && value == other.value;
  }
};

}  // namespace oxbow::connect
