#pragma once
// Connect's Struct: the values of a STRUCT schema's fields, each checked against its field's
// schema when put. Reads fall back to a field's default (get), or not (getWithoutDefault).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "oxbow/connect/schema.h"
#include "oxbow/connect/value.h"

namespace oxbow::connect {

class Struct {
 public:
  // DataException "Not a struct schema: ..." for a schema of another type.
  explicit Struct(SchemaPtr schema);

  const SchemaPtr& schema() const { return schema_; }

  // The field's value, or its default when the value is null. DataException for an unknown
  // name ("NAME is not a valid field name").
  const Value& get(std::string_view fieldName) const;
  const Value& get(const Field& field) const;
  const Value& getWithoutDefault(std::string_view fieldName) const;

  // Typed reads, without defaults as Connect's; DataException when the field's schema is of
  // another type ("Field 'NAME' is not of type INT32"). Empty for a null value.
  std::optional<int8_t> getInt8(std::string_view fieldName) const;
  std::optional<int16_t> getInt16(std::string_view fieldName) const;
  std::optional<int32_t> getInt32(std::string_view fieldName) const;
  std::optional<int64_t> getInt64(std::string_view fieldName) const;
  std::optional<float> getFloat32(std::string_view fieldName) const;
  std::optional<double> getFloat64(std::string_view fieldName) const;
  std::optional<bool> getBoolean(std::string_view fieldName) const;
  std::optional<std::string> getString(std::string_view fieldName) const;
  std::optional<Bytes> getBytes(std::string_view fieldName) const;
  const ValueList* getArray(std::string_view fieldName) const;
  const ValueMap* getMap(std::string_view fieldName) const;
  std::shared_ptr<Struct> getStruct(std::string_view fieldName) const;

  // Validates the value against the field's schema, then sets it.
  Struct& put(std::string_view fieldName, Value value);
  Struct& put(const Field& field, Value value);

  // Every field's value fits its schema (a required field without a default has a value).
  void validate() const;

  bool operator==(const Struct& other) const;
  // "Struct{a=1,b=x}": the fields that are not null.
  std::string toString() const;

 private:
  const Field& lookupField(std::string_view fieldName) const;
  const Value& getCheckType(std::string_view fieldName, Type type) const;

  SchemaPtr schema_;
  std::vector<Value> values_;
};

}  // namespace oxbow::connect
