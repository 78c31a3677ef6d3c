// JsonConverter's writing half: Connect data and schemas as JSON text, written straight into the
// output buffer in the order Connect writes its fields.
#include <charconv>
#include <cmath>

#include "common/base64.h"
#include "json_state.h"
#include "oxbow/connect/errors.h"
#include "oxbow/connect/logical.h"
#include "oxbow/connect/struct.h"

namespace oxbow::connect {
namespace {

std::string_view jsonTypeName(Type type) {
  switch (type) {
    case Type::INT8:
      return "int8";
    case Type::INT16:
      return "int16";
    case Type::INT32:
      return "int32";
    case Type::INT64:
      return "int64";
    case Type::FLOAT32:
      return "float";
    case Type::FLOAT64:
      return "double";
    case Type::BOOLEAN:
      return "boolean";
    case Type::STRING:
      return "string";
    case Type::BYTES:
      return "bytes";
    case Type::ARRAY:
      return "array";
    case Type::MAP:
      return "map";
    case Type::STRUCT:
      return "struct";
  }
  return {};
}

template <class Integer>
void appendInteger(Integer n, std::string& out) {
  char buffer[24];
  out.append(buffer, std::to_chars(buffer, buffer + sizeof buffer, n).ptr);
}

// A float or double as Jackson writes one: the shortest text that reads back the same, always
// with a fraction or exponent (so that it reads back as a floating-point number), and the
// non-finite values as Jackson's quoted names.
template <class Floating>
void appendFloating(Floating v, std::string& out) {
  if (std::isnan(v)) {
    out += "\"NaN\"";
    return;
  }
  if (std::isinf(v)) {
    out += v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
    return;
  }
  char buffer[64];
  char* end = std::to_chars(buffer, buffer + sizeof buffer, v).ptr;
  std::string_view text(buffer, static_cast<size_t>(end - buffer));
  out += text;
  if (text.find_first_of(".e") == std::string_view::npos) out += ".0";
}

[[noreturn]] void invalidType(const SchemaPtr& schema, const Value& value) {
  std::string type = schema ? std::string(typeName(schema->type())) : "unknown schema";
  throw DataException("Invalid type for " + type + ": " + std::string(value.javaClass()));
}

// The schema type of a value written without a schema (ConnectSchema.schemaType).
Type typeOfSchemaless(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::Boolean:
      return Type::BOOLEAN;
    case Value::Kind::Int8:
      return Type::INT8;
    case Value::Kind::Int16:
      return Type::INT16;
    case Value::Kind::Int32:
      return Type::INT32;
    case Value::Kind::Int64:
      return Type::INT64;
    case Value::Kind::Float32:
      return Type::FLOAT32;
    case Value::Kind::Float64:
      return Type::FLOAT64;
    case Value::Kind::String:
      return Type::STRING;
    case Value::Kind::Bytes:
      return Type::BYTES;
    case Value::Kind::Array:
      return Type::ARRAY;
    case Value::Kind::Map:
      return Type::MAP;
    case Value::Kind::Struct:
      return Type::STRUCT;
    default:
      throw DataException("Java class " + std::string(value.javaClass()) +
                          " does not have corresponding schema type.");
  }
}

void requireKind(const SchemaPtr& schema, const Value& value, Value::Kind kind) {
  if (value.kind() != kind) invalidType(schema, value);
}

// A logical type's value; false when the schema names no logical type.
bool writeLogical(const SchemaPtr& schema, const Value& value, JsonConverter::DecimalFormat format,
                  std::string& out) {
  const std::string& name = *schema->name();
  auto expectDate = [&](std::string_view what) {
    if (value.kind() != Value::Kind::DateTime)
      throw DataException("Invalid type for " + std::string(what) + ", expected Date but was " +
                          std::string(value.javaClass()));
  };
  if (name == Decimal::LOGICAL_NAME) {
    if (value.kind() != Value::Kind::Decimal)
      throw DataException("Invalid type for Decimal, expected BigDecimal but was " +
                          std::string(value.javaClass()));
    if (format == JsonConverter::DecimalFormat::NUMERIC) {
      out += value.asDecimal().toString();
    } else {
      appendJsonString(oxbow::base64(Decimal::fromLogical(schema, value.asDecimal()).data), out);
    }
    return true;
  }
  if (name == Date::LOGICAL_NAME) {
    expectDate("Date");
    appendInteger(Date::fromLogical(schema, value.asDateTime()), out);
    return true;
  }
  if (name == Time::LOGICAL_NAME) {
    expectDate("Time");
    appendInteger(Time::fromLogical(schema, value.asDateTime()), out);
    return true;
  }
  if (name == Timestamp::LOGICAL_NAME) {
    expectDate("Timestamp");
    appendInteger(Timestamp::fromLogical(schema, value.asDateTime()), out);
    return true;
  }
  return false;
}

}  // namespace

void appendJsonString(std::string_view text, std::string& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  size_t plain = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(text.data() + plain, i - plain);
    plain = i + 1;
    out.push_back('\\');
    switch (c) {
      case '"':
      case '\\':
        out.push_back(static_cast<char>(c));
        break;
      case '\n':
        out.push_back('n');
        break;
      case '\r':
        out.push_back('r');
        break;
      case '\t':
        out.push_back('t');
        break;
      case '\b':
        out.push_back('b');
        break;
      case '\f':
        out.push_back('f');
        break;
      default:
        out += "u00";
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 0xf]);
    }
  }
  out.append(text.data() + plain, text.size() - plain);
  out.push_back('"');
}

size_t SchemaContentHash::operator()(const SchemaPtr& schema) const {
  if (!schema) return 0;
  size_t hash = static_cast<size_t>(schema->type()) * 31 + (schema->isOptional() ? 1 : 0);
  if (schema->name()) hash = hash * 31 + std::hash<std::string>()(*schema->name());
  if (schema->type() == Type::STRUCT) hash = hash * 31 + schema->fields().size();
  return hash;
}

const std::string& JsonConverter::State::jsonSchema(const SchemaPtr& schema) {
  auto cached = jsonSchemas.find(schema);
  if (cached != jsonSchemas.end()) return cached->second;
  std::string out = "{\"type\":\"";
  out += jsonTypeName(schema->type());
  out += '"';
  auto appendSchema = [&](std::string_view key, const SchemaPtr& inner) {
    out += ",\"";
    out += key;
    out += "\":";
    out += inner ? jsonSchema(inner) : "null";
  };
  switch (schema->type()) {
    case Type::ARRAY:
      appendSchema("items", schema->valueSchema());
      break;
    case Type::MAP:
      appendSchema("keys", schema->keySchema());
      appendSchema("values", schema->valueSchema());
      break;
    case Type::STRUCT: {
      out += ",\"fields\":[";
      bool first = true;
      for (const Field& field : schema->fields()) {
        if (!first) out += ',';
        first = false;
        // The field's own schema with its name added last, as Connect adds it.
        const std::string& fieldSchema = jsonSchema(field.schema());
        out.append(fieldSchema, 0, fieldSchema.size() - 1);
        out += ",\"field\":";
        appendJsonString(field.name(), out);
        out += '}';
      }
      out += ']';
      break;
    }
    default:
      break;
  }
  out += schema->isOptional() ? ",\"optional\":true" : ",\"optional\":false";
  if (schema->name()) {
    out += ",\"name\":";
    appendJsonString(*schema->name(), out);
  }
  if (schema->version()) {
    out += ",\"version\":";
    appendInteger(*schema->version(), out);
  }
  if (schema->doc()) {
    out += ",\"doc\":";
    appendJsonString(*schema->doc(), out);
  }
  if (schema->parameters()) {
    out += ",\"parameters\":{";
    bool first = true;
    for (const auto& [key, value] : *schema->parameters()) {
      if (!first) out += ',';
      first = false;
      appendJsonString(key, out);
      out += ':';
      appendJsonString(value, out);
    }
    out += '}';
  }
  if (!schema->defaultValue().isNull()) {
    out += ",\"default\":";
    writeValue(schema, schema->defaultValue(), out);
  }
  out += '}';
  if (jsonSchemas.size() >= cacheSize) jsonSchemas.clear();
  return jsonSchemas.emplace(schema, std::move(out)).first->second;
}

void JsonConverter::State::writeValue(const SchemaPtr& schema, const Value& value,
                                      std::string& out) {
  if (value.isNull()) {
    if (schema && !schema->defaultValue().isNull() && replaceNullWithDefault) {
      writeValue(schema, schema->defaultValue(), out);
    } else if (!schema || schema->isOptional()) {
      out += "null";
    } else {
      throw DataException(
          "Conversion error: null value for field that is required and has no default value");
    }
    return;
  }
  if (schema && schema->name() && writeLogical(schema, value, decimalFormat, out)) return;
  Type type = schema ? schema->type() : typeOfSchemaless(value);
  switch (type) {
    case Type::INT8:
      requireKind(schema, value, Value::Kind::Int8);
      appendInteger(static_cast<int>(value.asInt8()), out);
      return;
    case Type::INT16:
      requireKind(schema, value, Value::Kind::Int16);
      appendInteger(value.asInt16(), out);
      return;
    case Type::INT32:
      requireKind(schema, value, Value::Kind::Int32);
      appendInteger(value.asInt32(), out);
      return;
    case Type::INT64:
      requireKind(schema, value, Value::Kind::Int64);
      appendInteger(value.asInt64(), out);
      return;
    case Type::FLOAT32:
      requireKind(schema, value, Value::Kind::Float32);
      appendFloating(value.asFloat32(), out);
      return;
    case Type::FLOAT64:
      requireKind(schema, value, Value::Kind::Float64);
      appendFloating(value.asFloat64(), out);
      return;
    case Type::BOOLEAN:
      requireKind(schema, value, Value::Kind::Boolean);
      out += value.asBoolean() ? "true" : "false";
      return;
    case Type::STRING:
      requireKind(schema, value, Value::Kind::String);
      appendJsonString(value.asString(), out);
      return;
    case Type::BYTES:
      if (value.kind() != Value::Kind::Bytes)
        throw DataException("Invalid type for bytes type: " + std::string(value.javaClass()));
      appendJsonString(oxbow::base64(value.asBytes().data), out);
      return;
    case Type::ARRAY: {
      requireKind(schema, value, Value::Kind::Array);
      const SchemaPtr* elementSchema = schema ? &schema->valueSchema() : nullptr;
      out += '[';
      bool first = true;
      for (const Value& element : value.asList()) {
        if (!first) out += ',';
        first = false;
        writeValue(elementSchema ? *elementSchema : nullptr, element, out);
      }
      out += ']';
      return;
    }
    case Type::MAP: {
      requireKind(schema, value, Value::Kind::Map);
      const ValueMap& map = value.asMap();
      SchemaPtr keySchema = schema ? schema->keySchema() : nullptr;
      SchemaPtr valueSchema = schema ? schema->valueSchema() : nullptr;
      // String keys make a JSON object; other keys an array of [key, value] pairs.
      bool objectMode = true;
      if (schema) {
        objectMode = keySchema && keySchema->type() == Type::STRING;
      } else {
        for (const auto& entry : map)
          if (entry.first.kind() != Value::Kind::String) objectMode = false;
      }
      out += objectMode ? '{' : '[';
      bool first = true;
      std::string key;
      for (const auto& [k, v] : map) {
        if (!first) out += ',';
        first = false;
        if (objectMode) {
          key.clear();
          writeValue(keySchema, k, key);  // validates the key against its schema
          appendJsonString(k.kind() == Value::Kind::String ? std::string_view(k.asString())
                                                           : std::string_view(key),
                           out);
          out += ':';
          writeValue(valueSchema, v, out);
        } else {
          out += '[';
          writeValue(keySchema, k, out);
          out += ',';
          writeValue(valueSchema, v, out);
          out += ']';
        }
      }
      out += objectMode ? '}' : ']';
      return;
    }
    case Type::STRUCT: {
      requireKind(schema, value, Value::Kind::Struct);
      const Struct& s = value.asStruct();
      if (!schemasEqual(s.schema(), schema)) throw DataException("Mismatching schema.");
      out += '{';
      bool first = true;
      for (const Field& field : schema->fields()) {
        if (!first) out += ',';
        first = false;
        appendJsonString(field.name(), out);
        out += ':';
        writeValue(field.schema(), s.getWithoutDefault(field.name()), out);
      }
      out += '}';
      return;
    }
  }
}

}  // namespace oxbow::connect
