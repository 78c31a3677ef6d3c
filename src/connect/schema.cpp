// Schemas, their builder and ConnectSchema.validateValue, with Connect's messages.
#include "oxbow/connect/schema.h"

#include "oxbow/connect/errors.h"
#include "oxbow/connect/logical.h"
#include "oxbow/connect/struct.h"

namespace oxbow::connect {
namespace {

// The kind of value a schema takes: its logical type's, else its type's.
Value::Kind expectedKind(const Schema& schema) {
  if (const auto& name = schema.name()) {
    if (*name == Decimal::LOGICAL_NAME) return Value::Kind::Decimal;
    if (*name == Date::LOGICAL_NAME || *name == Time::LOGICAL_NAME ||
        *name == Timestamp::LOGICAL_NAME)
      return Value::Kind::DateTime;
  }
  return valueKindOf(schema.type());
}

const SchemaPtr& schemaFor(const SchemaPtr& schema, const std::string& location) {
  if (!schema) throw DataException("No schema defined for " + location);
  return schema;
}

void validate(const SchemaPtr& schema, const Value& value, const std::string& location) {
  if (value.isNull()) {
    if (!schema->isOptional())
      throw DataException("Invalid value: null used for required " + location +
                          ", schema type: " + std::string(typeName(schema->type())));
    return;
  }
  if (value.kind() != expectedKind(*schema)) {
    std::string message = "Invalid Java object for schema";
    if (schema->name()) message += " \"" + *schema->name() + "\"";
    message += " with type " + std::string(typeName(schema->type())) + ": " +
               std::string(value.javaClass()) + " for " + location;
    throw DataException(message);
  }
  switch (schema->type()) {
    case Type::STRUCT: {
      const Struct& s = value.asStruct();
      if (!schemasEqual(s.schema(), schema)) throw DataException("Struct schemas do not match.");
      s.validate();
      break;
    }
    case Type::ARRAY: {
      std::string entryLocation = "element of array " + location;
      const SchemaPtr& elementSchema = schemaFor(schema->valueSchema(), entryLocation);
      for (const Value& element : value.asList()) validate(elementSchema, element, entryLocation);
      break;
    }
    case Type::MAP: {
      std::string keyLocation = "key of map " + location;
      std::string valueLocation = "value of map " + location;
      const SchemaPtr& keySchema = schemaFor(schema->keySchema(), keyLocation);
      const SchemaPtr& valueSchema = schemaFor(schema->valueSchema(), valueLocation);
      for (const auto& [k, v] : value.asMap()) {
        validate(keySchema, k, keyLocation);
        validate(valueSchema, v, valueLocation);
      }
      break;
    }
    default:
      break;
  }
}

[[noreturn]] void alreadySet(std::string_view property) {
  throw SchemaBuilderException("Invalid SchemaBuilder call: " + std::string(property) +
                               " has already been set.");
}

SchemaPtr primitive(Type type, bool optional) {
  return std::make_shared<const Schema>(type, optional, Value(), std::nullopt, std::nullopt,
                                        std::nullopt, std::nullopt, std::vector<Field>{}, nullptr,
                                        nullptr);
}

}  // namespace

Value::Kind valueKindOf(Type type) {
  static constexpr Value::Kind kKinds[] = {
      Value::Kind::Int8,    Value::Kind::Int16,   Value::Kind::Int32,   Value::Kind::Int64,
      Value::Kind::Float32, Value::Kind::Float64, Value::Kind::Boolean, Value::Kind::String,
      Value::Kind::Bytes,   Value::Kind::Array,   Value::Kind::Map,     Value::Kind::Struct};
  return kKinds[static_cast<size_t>(type)];
}

std::string_view typeName(Type type) {
  static constexpr std::string_view kNames[] = {"INT8",    "INT16",   "INT32",   "INT64",
                                                "FLOAT32", "FLOAT64", "BOOLEAN", "STRING",
                                                "BYTES",   "ARRAY",   "MAP",     "STRUCT"};
  return kNames[static_cast<size_t>(type)];
}

bool Field::operator==(const Field& other) const {
  return index_ == other.index_ && name_ == other.name_ && schemasEqual(schema_, other.schema_);
}

std::string Field::toString() const {
  return "Field{name=" + name_ + ", index=" + std::to_string(index_) +
         ", schema=" + (schema_ ? schema_->toString() : "null") + "}";
}

Schema::Schema(Type type, bool optional, Value defaultValue, std::optional<std::string> name,
               std::optional<int32_t> version, std::optional<std::string> doc,
               std::optional<Parameters> parameters, std::vector<Field> fields, SchemaPtr keySchema,
               SchemaPtr valueSchema)
    : type_(type),
      optional_(optional),
      defaultValue_(std::move(defaultValue)),
      name_(std::move(name)),
      version_(version),
      doc_(std::move(doc)),
      parameters_(std::move(parameters)),
      fields_(std::move(fields)),
      keySchema_(std::move(keySchema)),
      valueSchema_(std::move(valueSchema)) {}

const std::string* Schema::parameter(std::string_view key) const {
  if (!parameters_) return nullptr;
  for (const auto& [k, v] : *parameters_)
    if (k == key) return &v;
  return nullptr;
}

const std::vector<Field>& Schema::fields() const {
  if (type_ != Type::STRUCT) throw DataException("Cannot list fields on non-struct type");
  return fields_;
}

const Field* Schema::field(std::string_view name) const {
  if (type_ != Type::STRUCT) throw DataException("Cannot look up fields on non-struct type");
  for (const Field& f : fields_)
    if (f.name() == name) return &f;
  return nullptr;
}

const SchemaPtr& Schema::keySchema() const {
  if (type_ != Type::MAP) throw DataException("Cannot look up key schema on non-map type");
  return keySchema_;
}

const SchemaPtr& Schema::valueSchema() const {
  if (type_ != Type::MAP && type_ != Type::ARRAY)
    throw DataException("Cannot look up value schema on non-array and non-map type");
  return valueSchema_;
}

bool Schema::operator==(const Schema& other) const {
  return optional_ == other.optional_ && version_ == other.version_ && name_ == other.name_ &&
         doc_ == other.doc_ && type_ == other.type_ && defaultValue_ == other.defaultValue_ &&
         fields_ == other.fields_ && schemasEqual(keySchema_, other.keySchema_) &&
         schemasEqual(valueSchema_, other.valueSchema_) && parameters_ == other.parameters_;
}

std::string Schema::toString() const {
  if (name_) return "Schema{" + *name_ + ":" + std::string(typeName(type_)) + "}";
  return "Schema{" + std::string(typeName(type_)) + "}";
}

void Schema::validateValue(const SchemaPtr& schema, const Value& value) {
  validate(schema, value, "value");
}

void Schema::validateValue(std::string_view field, const SchemaPtr& schema, const Value& value) {
  validate(schema, value, "field: \"" + std::string(field) + "\"");
}

bool schemasEqual(const SchemaPtr& a, const SchemaPtr& b) {
  if (a == b) return true;
  if (!a || !b) return false;
  return *a == *b;
}

const SchemaPtr Schema::INT8_SCHEMA = primitive(Type::INT8, false);
const SchemaPtr Schema::INT16_SCHEMA = primitive(Type::INT16, false);
const SchemaPtr Schema::INT32_SCHEMA = primitive(Type::INT32, false);
const SchemaPtr Schema::INT64_SCHEMA = primitive(Type::INT64, false);
const SchemaPtr Schema::FLOAT32_SCHEMA = primitive(Type::FLOAT32, false);
const SchemaPtr Schema::FLOAT64_SCHEMA = primitive(Type::FLOAT64, false);
const SchemaPtr Schema::BOOLEAN_SCHEMA = primitive(Type::BOOLEAN, false);
const SchemaPtr Schema::STRING_SCHEMA = primitive(Type::STRING, false);
const SchemaPtr Schema::BYTES_SCHEMA = primitive(Type::BYTES, false);
const SchemaPtr Schema::OPTIONAL_INT8_SCHEMA = primitive(Type::INT8, true);
const SchemaPtr Schema::OPTIONAL_INT16_SCHEMA = primitive(Type::INT16, true);
const SchemaPtr Schema::OPTIONAL_INT32_SCHEMA = primitive(Type::INT32, true);
const SchemaPtr Schema::OPTIONAL_INT64_SCHEMA = primitive(Type::INT64, true);
const SchemaPtr Schema::OPTIONAL_FLOAT32_SCHEMA = primitive(Type::FLOAT32, true);
const SchemaPtr Schema::OPTIONAL_FLOAT64_SCHEMA = primitive(Type::FLOAT64, true);
const SchemaPtr Schema::OPTIONAL_BOOLEAN_SCHEMA = primitive(Type::BOOLEAN, true);
const SchemaPtr Schema::OPTIONAL_STRING_SCHEMA = primitive(Type::STRING, true);
const SchemaPtr Schema::OPTIONAL_BYTES_SCHEMA = primitive(Type::BYTES, true);

SchemaBuilder::SchemaBuilder(Type type) : type_(type) {}

SchemaBuilder SchemaBuilder::array(SchemaPtr valueSchema) {
  if (!valueSchema) throw SchemaBuilderException("valueSchema cannot be null.");
  SchemaBuilder builder(Type::ARRAY);
  builder.valueSchema_ = std::move(valueSchema);
  return builder;
}

SchemaBuilder SchemaBuilder::map(SchemaPtr keySchema, SchemaPtr valueSchema) {
  if (!keySchema) throw SchemaBuilderException("keySchema cannot be null.");
  if (!valueSchema) throw SchemaBuilderException("valueSchema cannot be null.");
  SchemaBuilder builder(Type::MAP);
  builder.keySchema_ = std::move(keySchema);
  builder.valueSchema_ = std::move(valueSchema);
  return builder;
}

SchemaBuilder& SchemaBuilder::optional() {
  if (optional_ && !*optional_) alreadySet("optional");
  optional_ = true;
  return *this;
}

SchemaBuilder& SchemaBuilder::required() {
  if (optional_ && *optional_) alreadySet("optional");
  optional_ = false;
  return *this;
}

SchemaBuilder& SchemaBuilder::defaultValue(Value value) {
  if (!defaultValue_.isNull() && !(defaultValue_ == value)) alreadySet("default");
  try {
    Schema::validateValue(build(), value);
  } catch (const DataException& e) {
    throw SchemaBuilderException(std::string("Invalid default value: ") + e.what());
  }
  defaultValue_ = std::move(value);
  return *this;
}

SchemaBuilder& SchemaBuilder::name(std::string name) {
  if (name_ && *name_ != name) alreadySet("name");
  name_ = std::move(name);
  return *this;
}

SchemaBuilder& SchemaBuilder::version(int32_t version) {
  if (version_ && *version_ != version) alreadySet("version");
  version_ = version;
  return *this;
}

SchemaBuilder& SchemaBuilder::doc(std::string doc) {
  if (doc_ && *doc_ != doc) alreadySet("doc");
  doc_ = std::move(doc);
  return *this;
}

SchemaBuilder& SchemaBuilder::parameter(std::string key, std::string value) {
  if (!parameters_) parameters_.emplace();
  for (auto& [k, v] : *parameters_) {
    if (k == key) {
      v = std::move(value);
      return *this;
    }
  }
  parameters_->emplace_back(std::move(key), std::move(value));
  return *this;
}

SchemaBuilder& SchemaBuilder::parameters(const Parameters& parameters) {
  for (const auto& [k, v] : parameters) parameter(k, v);
  return *this;
}

SchemaBuilder& SchemaBuilder::field(std::string name, SchemaPtr schema) {
  if (type_ != Type::STRUCT)
    throw SchemaBuilderException("Cannot create fields on type " + std::string(typeName(type_)));
  if (name.empty()) throw SchemaBuilderException("fieldName cannot be null.");
  if (!schema) throw SchemaBuilderException("fieldSchema for field " + name + " cannot be null.");
  for (const Field& f : fields_)
    if (f.name() == name)
      throw SchemaBuilderException("Cannot create field because of field name duplication " + name);
  auto index = static_cast<int32_t>(fields_.size());
  fields_.emplace_back(std::move(name), index, std::move(schema));
  return *this;
}

SchemaPtr SchemaBuilder::build() const {
  return std::make_shared<const Schema>(type_, isOptional(), defaultValue_, name_, version_, doc_,
                                        parameters_, fields_, keySchema_, valueSchema_);
}

}  // namespace oxbow::connect
