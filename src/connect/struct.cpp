// Struct: field values checked against their schemas as they are put.
#include "oxbow/connect/struct.h"

#include "oxbow/connect/errors.h"

namespace oxbow::connect {

Struct::Struct(SchemaPtr schema) : schema_(std::move(schema)) {
  if (!schema_ || schema_->type() != Type::STRUCT)
    throw DataException("Not a struct schema: " + (schema_ ? schema_->toString() : "null"));
  values_.resize(schema_->fields().size());
}

const Field& Struct::lookupField(std::string_view fieldName) const {
  const Field* field = schema_->field(fieldName);
  if (!field) throw DataException(std::string(fieldName) + " is not a valid field name");
  return *field;
}

const Value& Struct::get(std::string_view fieldName) const {
  return get(lookupField(fieldName));
}

const Value& Struct::get(const Field& field) const {
  const Value& value = values_.at(static_cast<size_t>(field.index()));
  if (value.isNull() && !field.schema()->defaultValue().isNull())
    return field.schema()->defaultValue();
  return value;
}

const Value& Struct::getWithoutDefault(std::string_view fieldName) const {
  return values_[static_cast<size_t>(lookupField(fieldName).index())];
}

const Value& Struct::getCheckType(std::string_view fieldName, Type type) const {
  const Field& field = lookupField(fieldName);
  if (field.schema()->type() != type)
    throw DataException("Field '" + std::string(fieldName) + "' is not of type " +
                        std::string(typeName(type)));
  return values_[static_cast<size_t>(field.index())];
}

namespace {
template <class T, class Read>
std::optional<T> optionalOf(const Value& value, Read read) {
  if (value.isNull()) return std::nullopt;
  return read(value);
}
}  // namespace

std::optional<int8_t> Struct::getInt8(std::string_view name) const {
  return optionalOf<int8_t>(getCheckType(name, Type::INT8),
                            [](const Value& v) { return v.asInt8(); });
}
std::optional<int16_t> Struct::getInt16(std::string_view name) const {
  return optionalOf<int16_t>(getCheckType(name, Type::INT16),
                             [](const Value& v) { return v.asInt16(); });
}
std::optional<int32_t> Struct::getInt32(std::string_view name) const {
  return optionalOf<int32_t>(getCheckType(name, Type::INT32),
                             [](const Value& v) { return v.asInt32(); });
}
std::optional<int64_t> Struct::getInt64(std::string_view name) const {
  return optionalOf<int64_t>(getCheckType(name, Type::INT64),
                             [](const Value& v) { return v.asInt64(); });
}
std::optional<float> Struct::getFloat32(std::string_view name) const {
  return optionalOf<float>(getCheckType(name, Type::FLOAT32),
                           [](const Value& v) { return v.asFloat32(); });
}
std::optional<double> Struct::getFloat64(std::string_view name) const {
  return optionalOf<double>(getCheckType(name, Type::FLOAT64),
                            [](const Value& v) { return v.asFloat64(); });
}
std::optional<bool> Struct::getBoolean(std::string_view name) const {
  return optionalOf<bool>(getCheckType(name, Type::BOOLEAN),
                          [](const Value& v) { return v.asBoolean(); });
}
std::optional<std::string> Struct::getString(std::string_view name) const {
  return optionalOf<std::string>(getCheckType(name, Type::STRING),
                                 [](const Value& v) { return v.asString(); });
}
std::optional<Bytes> Struct::getBytes(std::string_view name) const {
  return optionalOf<Bytes>(getCheckType(name, Type::BYTES),
                           [](const Value& v) { return v.asBytes(); });
}
const ValueList* Struct::getArray(std::string_view name) const {
  const Value& value = getCheckType(name, Type::ARRAY);
  return value.isNull() ? nullptr : &value.asList();
}
const ValueMap* Struct::getMap(std::string_view name) const {
  const Value& value = getCheckType(name, Type::MAP);
  return value.isNull() ? nullptr : &value.asMap();
}
std::shared_ptr<Struct> Struct::getStruct(std::string_view name) const {
  const Value& value = getCheckType(name, Type::STRUCT);
  return value.isNull() ? nullptr : value.structPtr();
}

Struct& Struct::put(std::string_view fieldName, Value value) {
  return put(lookupField(fieldName), std::move(value));
}

Struct& Struct::put(const Field& field, Value value) {
  Schema::validateValue(field.name(), field.schema(), value);
  values_.at(static_cast<size_t>(field.index())) = std::move(value);
  return *this;
}

void Struct::validate() const {
  for (const Field& field : schema_->fields()) {
    const SchemaPtr& fieldSchema = field.schema();
    const Value& value = values_[static_cast<size_t>(field.index())];
    if (value.isNull() && (fieldSchema->isOptional() || !fieldSchema->defaultValue().isNull()))
      continue;
    Schema::validateValue(field.name(), fieldSchema, value);
  }
}

bool Struct::operator==(const Struct& other) const {
  return schemasEqual(schema_, other.schema_) && values_ == other.values_;
}

std::string Struct::toString() const {
  std::string text = "Struct{";
  bool first = true;
  for (size_t i = 0; i < values_.size(); ++i) {
    if (values_[i].isNull()) continue;
    if (!first) text += ",";
    first = false;
    text += schema_->fields()[i].name() + "=" + values_[i].toString();
  }
  return text + "}";
}

}  // namespace oxbow::connect
