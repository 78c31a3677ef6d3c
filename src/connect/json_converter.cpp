// JsonConverter: its configuration, the envelope, and its reading half (JSON parsed by nlohmann's
// parser, then turned into Connect's schemas and values by Connect's rules).
#include "oxbow/connect/json_converter.h"

#include <charconv>
#include <limits>

#include "common/base64.h"
#include "json_document.h"
#include "json_envelope.h"
#include "json_state.h"
#include "oxbow/connect/errors.h"
#include "oxbow/connect/logical.h"
#include "oxbow/connect/struct.h"

namespace oxbow::connect {
namespace {

using document::Json;
using document::kMaxDepth;

// Jackson's JsonNodeType names, which Connect's messages print.
std::string_view nodeType(const Json& node) {
  switch (node.type()) {
    case Json::value_t::null:
      return "NULL";
    case Json::value_t::object:
      return "OBJECT";
    case Json::value_t::array:
      return "ARRAY";
    case Json::value_t::string:
      return "STRING";
    case Json::value_t::boolean:
      return "BOOLEAN";
    case Json::value_t::binary:  // a number with a fraction or exponent
      return "NUMBER";
    case Json::value_t::discarded:
      return "MISSING";
    default:
      return "NUMBER";
  }
}

bool parseBoolean(std::string_view key, const std::string& text) {
  std::string lower;
  for (char c : text) {
    if (c != ' ' && c != '\t') lower.push_back(static_cast<char>(std::tolower(c)));
  }
  if (lower == "true") return true;
  if (lower == "false") return false;
  throw ConnectException("Invalid value " + text + " for configuration " + std::string(key) +
                         ": Expected value to be either true or false");
}

[[noreturn]] void mismatch(Type type, std::string_view expected, const Json& node) {
  throw DataException("Invalid value for " + std::string(typeName(type)) + ": expected " +
                      std::string(expected) + " but found " + std::string(nodeType(node)));
}

int64_t integerOf(Type type, const Json& node, int64_t min, int64_t max) {
  if (!node.is_number_integer()) mismatch(type, "a JSON integer", node);
  if (node.is_number_unsigned() &&
      node.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    throw DataException("Invalid value for " + std::string(typeName(type)) + ": " + node.dump() +
                        " is out of range");
  auto n = node.get<int64_t>();
  if (n < min || n > max)
    throw DataException("Invalid value for " + std::string(typeName(type)) + ": " +
                        std::to_string(n) + " is out of range");
  return n;
}

// A JSON number as BigDecimal reads its text: exact, at the text's own scale.
DecimalValue decimalOfNumber(const Json& node) {
  if (document::isFloat(node)) return DecimalValue::parse(document::floatText(node));
  return DecimalValue::parse(node.dump());
}

class Reader {
 public:
  explicit Reader(const JsonConverter::State& state) : state_(state) {}

  Value toConnect(const SchemaPtr& schema, const Json* node, int depth) const {
    if (depth > kMaxDepth)
      throw DataException("JSON nesting is deeper than " + std::to_string(kMaxDepth));
    Type type;
    if (schema) {
      type = schema->type();
      if (!node || node->is_null()) {
        if (!schema->defaultValue().isNull() && state_.replaceNullWithDefault)
          return schema->defaultValue();
        if (schema->isOptional()) return Value();
        throw DataException("Invalid null value for required " + std::string(typeName(type)) +
                            " field");
      }
      if (schema->name()) {
        if (auto logical = logicalToConnect(schema, *node)) return *logical;
      }
    } else {
      if (!node || node->is_null()) return Value();
      switch (node->type()) {
        case Json::value_t::boolean:
          type = Type::BOOLEAN;
          break;
        case Json::value_t::number_integer:
        case Json::value_t::number_unsigned:
          type = Type::INT64;
          break;
        case Json::value_t::number_float:
        case Json::value_t::binary:
          type = Type::FLOAT64;
          break;
        case Json::value_t::array:
          type = Type::ARRAY;
          break;
        case Json::value_t::object:
          type = Type::MAP;
          break;
        case Json::value_t::string:
          type = Type::STRING;
          break;
        default:
          throw DataException("Unknown schema type: null");
      }
    }
    const Json& json = *node;
    switch (type) {
      case Type::BOOLEAN:
        if (!json.is_boolean()) mismatch(type, "a JSON boolean", json);
        return json.get<bool>();
      case Type::INT8:
        return static_cast<int8_t>(integerOf(type, json, INT8_MIN, INT8_MAX));
      case Type::INT16:
        return static_cast<int16_t>(integerOf(type, json, INT16_MIN, INT16_MAX));
      case Type::INT32:
        return static_cast<int32_t>(integerOf(type, json, INT32_MIN, INT32_MAX));
      case Type::INT64:
        return integerOf(type, json, INT64_MIN, INT64_MAX);
      case Type::FLOAT32:
        if (!document::isNumber(json)) mismatch(type, "a JSON number", json);
        return static_cast<float>(document::doubleOf(json));
      case Type::FLOAT64:
        if (!document::isNumber(json)) mismatch(type, "a JSON number", json);
        return document::doubleOf(json);
      case Type::BYTES: {
        if (!json.is_string()) mismatch(type, "base64 text", json);
        auto bytes = oxbow::unbase64(json.get_ref<const std::string&>());
        if (!bytes) throw DataException("Invalid bytes field");
        return Bytes{std::move(*bytes)};
      }
      case Type::STRING:
        if (!json.is_string()) mismatch(type, "a JSON string", json);
        return json.get<std::string>();
      case Type::ARRAY: {
        if (!json.is_array()) mismatch(type, "a JSON array", json);
        SchemaPtr elementSchema = schema ? schema->valueSchema() : nullptr;
        ValueList list;
        list.reserve(json.size());
        for (const Json& element : json)
          list.push_back(toConnect(elementSchema, &element, depth + 1));
        return list;
      }
      case Type::MAP:
        return mapToConnect(schema, json, depth);
      case Type::STRUCT: {
        if (!json.is_object())
          throw DataException("Structs should be encoded as JSON objects, but found " +
                              std::string(nodeType(json)));
        auto result = std::make_shared<Struct>(schema);
        for (const Field& field : schema->fields()) {
          auto it = json.find(field.name());
          result->put(field,
                      toConnect(field.schema(), it == json.end() ? nullptr : &*it, depth + 1));
        }
        return result;
      }
    }
    return Value();
  }

 private:
  Value mapToConnect(const SchemaPtr& schema, const Json& json, int depth) const {
    SchemaPtr keySchema = schema ? schema->keySchema() : nullptr;
    SchemaPtr valueSchema = schema ? schema->valueSchema() : nullptr;
    ValueMap map;
    if (!schema || (keySchema && keySchema->type() == Type::STRING)) {
      if (!json.is_object())
        throw DataException(
            "Maps with string fields should be encoded as JSON objects, but found " +
            std::string(nodeType(json)));
      map.reserve(json.size());
      for (const auto& [key, value] : json.items())
        map.emplace_back(Value(key), toConnect(valueSchema, &value, depth + 1));
      return map;
    }
    if (!json.is_array())
      throw DataException(
          "Maps with non-string fields should be encoded as JSON array of tuples, but found " +
          std::string(nodeType(json)));
    map.reserve(json.size());
    for (const Json& entry : json) {
      if (!entry.is_array())
        throw DataException("Found invalid map entry instead of array tuple: " +
                            std::string(nodeType(entry)));
      if (entry.size() != 2)
        throw DataException("Found invalid map entry, expected length 2 but found :" +
                            std::to_string(entry.size()));
      map.emplace_back(toConnect(keySchema, &entry[0], depth + 1),
                       toConnect(valueSchema, &entry[1], depth + 1));
    }
    return map;
  }

  // A logical type's value, or nothing when the schema's name is no logical type's.
  static std::optional<Value> logicalToConnect(const SchemaPtr& schema, const Json& json) {
    const std::string& name = *schema->name();
    if (name == Decimal::LOGICAL_NAME) {
      if (document::isNumber(json)) {
        DecimalValue decimal = decimalOfNumber(json);
        try {
          return decimal.withScale(Decimal::scale(*schema));
        } catch (const DataException&) {
          return decimal;  // kept at its own scale, as Connect keeps it
        }
      }
      if (json.is_string()) {
        auto bytes = oxbow::unbase64(json.get_ref<const std::string&>());
        if (!bytes) throw DataException("Invalid bytes for Decimal field");
        return Decimal::toLogical(schema, *bytes);
      }
      throw DataException(
          "Invalid type for Decimal, underlying representation should be numeric or bytes but "
          "was " +
          std::string(nodeType(json)));
    }
    auto int32Of = [&](std::string_view what) {
      if (!json.is_number_integer() ||
          (json.is_number_unsigned() && json.get<uint64_t>() > INT32_MAX) ||
          json.get<int64_t>() < INT32_MIN || json.get<int64_t>() > INT32_MAX)
        throw DataException("Invalid type for " + std::string(what) +
                            ", underlying representation should be integer but was " +
                            std::string(nodeType(json)));
      return static_cast<int32_t>(json.get<int64_t>());
    };
    if (name == Date::LOGICAL_NAME) return Date::toLogical(schema, int32Of("Date"));
    if (name == Time::LOGICAL_NAME) return Time::toLogical(schema, int32Of("Time"));
    if (name == Timestamp::LOGICAL_NAME) {
      if (!json.is_number_integer())
        throw DataException(
            "Invalid type for Timestamp, underlying representation should be integral but was " +
            std::string(nodeType(json)));
      return Timestamp::toLogical(schema, integerOf(Type::INT64, json, INT64_MIN, INT64_MAX));
    }
    return std::nullopt;
  }

  const JsonConverter::State& state_;
};

std::string_view textOf(const Json& node) {
  return node.get_ref<const std::string&>();
}

SchemaPtr schemaOf(const JsonConverter::State& state, const Json& json, int depth) {
  if (json.is_null()) return nullptr;
  if (depth > kMaxDepth)
    throw DataException("JSON nesting is deeper than " + std::to_string(kMaxDepth));
  auto member = [&](std::string_view key) -> const Json* {
    if (!json.is_object()) return nullptr;
    auto it = json.find(key);
    return it == json.end() ? nullptr : &*it;
  };
  const Json* typeNode = member("type");
  if (!typeNode || !typeNode->is_string()) throw DataException("Schema must contain 'type' field");
  std::string_view type = textOf(*typeNode);
  std::optional<SchemaBuilder> builder;
  static constexpr std::pair<std::string_view, Type> kPrimitives[] = {
      {"boolean", Type::BOOLEAN}, {"int8", Type::INT8},   {"int16", Type::INT16},
      {"int32", Type::INT32},     {"int64", Type::INT64}, {"float", Type::FLOAT32},
      {"double", Type::FLOAT64},  {"bytes", Type::BYTES}, {"string", Type::STRING}};
  for (const auto& [name, primitive] : kPrimitives)
    if (type == name) builder.emplace(primitive);
  if (builder) {
  } else if (type == "array") {
    const Json* items = member("items");
    if (!items || items->is_null())
      throw DataException("Array schema did not specify the element type");
    builder = SchemaBuilder::array(schemaOf(state, *items, depth + 1));
  } else if (type == "map") {
    const Json* keys = member("keys");
    if (!keys) throw DataException("Map schema did not specify the key type");
    const Json* values = member("values");
    if (!values) throw DataException("Map schema did not specify the value type");
    builder =
        SchemaBuilder::map(schemaOf(state, *keys, depth + 1), schemaOf(state, *values, depth + 1));
  } else if (type == "struct") {
    builder = SchemaBuilder::struct_();
    const Json* fields = member("fields");
    if (!fields || !fields->is_array())
      throw DataException("Struct schema's \"fields\" argument is not an array.");
    for (const Json& field : *fields) {
      auto name = field.is_object() ? field.find("field") : field.end();
      if (!field.is_object() || name == field.end() || !name->is_string())
        throw DataException("Struct schema's field name not specified properly");
      builder->field(name->get<std::string>(), schemaOf(state, field, depth + 1));
    }
  } else {
    throw DataException("Unknown schema type: " + std::string(type));
  }
  const Json* optional = member("optional");
  if (optional && optional->is_boolean() && optional->get<bool>())
    builder->optional();
  else
    builder->required();
  if (const Json* name = member("name"); name && name->is_string())
    builder->name(name->get<std::string>());
  if (const Json* version = member("version"); version && version->is_number_integer())
    builder->version(static_cast<int32_t>(version->get<int64_t>()));
  if (const Json* doc = member("doc"); doc && doc->is_string())
    builder->doc(doc->get<std::string>());
  if (const Json* parameters = member("parameters"); parameters && parameters->is_object()) {
    for (const auto& [key, value] : parameters->items()) {
      if (!value.is_string()) throw DataException("Schema parameters must have string values.");
      builder->parameter(key, value.get<std::string>());
    }
  }
  if (const Json* defaultNode = member("default"))
    builder->defaultValue(Reader(state).toConnect(builder->build(), defaultNode, depth + 1));
  return builder->build();
}

// The schema whose JSON form has this compact text, from the cache or parsed.
SchemaPtr cachedSchemaOf(JsonConverter::State& state, const std::string& text) {
  if (text == "null") return nullptr;
  auto cached = state.connectSchemas.find(text);
  if (cached != state.connectSchemas.end()) return cached->second;
  SchemaPtr schema = schemaOf(state, document::parse(text, "Invalid schema JSON: "), 0);
  if (state.connectSchemas.size() >= state.cacheSize) state.connectSchemas.clear();
  state.connectSchemas.emplace(text, schema);
  return schema;
}

}  // namespace

JsonConverter::JsonConverter() : state_(std::make_unique<State>()) {}
JsonConverter::~JsonConverter() = default;

void JsonConverter::configure(const ConfigMap& configs, bool) {
  State fresh;
  if (auto it = configs.find(SCHEMAS_ENABLE_CONFIG); it != configs.end())
    fresh.schemasEnabled = parseBoolean(SCHEMAS_ENABLE_CONFIG, it->second);
  if (auto it = configs.find(REPLACE_NULL_WITH_DEFAULT_CONFIG); it != configs.end())
    fresh.replaceNullWithDefault = parseBoolean(REPLACE_NULL_WITH_DEFAULT_CONFIG, it->second);
  if (auto it = configs.find(SCHEMAS_CACHE_SIZE_CONFIG); it != configs.end()) {
    int32_t size = 0;
    const std::string& text = it->second;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), size);
    if (error != std::errc() || end != text.data() + text.size())
      throw ConnectException("Invalid value " + text + " for configuration " +
                             std::string(SCHEMAS_CACHE_SIZE_CONFIG) + ": Not a number of type INT");
    fresh.cacheSize = size > 0 ? static_cast<size_t>(size) : 1;
  }
  if (auto it = configs.find(DECIMAL_FORMAT_CONFIG); it != configs.end()) {
    std::string upper;
    for (char c : it->second) upper.push_back(static_cast<char>(std::toupper(c)));
    if (upper == "BASE64") {
      fresh.decimalFormat = DecimalFormat::BASE64;
    } else if (upper == "NUMERIC") {
      fresh.decimalFormat = DecimalFormat::NUMERIC;
    } else {
      throw ConnectException("Invalid value " + it->second + " for configuration " +
                             std::string(DECIMAL_FORMAT_CONFIG) +
                             ": String must be one of (case insensitive): BASE64, NUMERIC");
    }
  }
  *state_ = std::move(fresh);
}

bool JsonConverter::write(std::string_view, const SchemaPtr& schema, const Value& value,
                          std::string& out) {
  if (!schema && value.isNull()) return false;
  if (!state_->schemasEnabled) {
    state_->writeValue(schema, value, out);
    return true;
  }
  out += "{\"schema\":";
  out += schema ? state_->jsonSchema(schema) : "null";
  out += ",\"payload\":";
  state_->writeValue(schema, value, out);
  out += '}';
  return true;
}

SchemaAndValue JsonConverter::read(std::string_view, std::optional<std::string_view> value) {
  // A null record, and empty bytes (which Kafka's JSON deserializer reads as null), are nulls.
  if (!value || value->empty()) return {};
  document::EnvelopeTexts texts;
  if (state_->schemasEnabled && document::splitEnvelope(*value, state_->envelopeBuffer, texts)) {
    state_->schemaText.assign(texts.schema);
    SchemaPtr schema = cachedSchemaOf(*state_, state_->schemaText);
    Json payload = document::parse(
        texts.payload,
        "Converting byte[] to Kafka Connect data failed due to serialization error: ");
    return {schema, Reader(*state_).toConnect(schema, &payload, 0)};
  }
  std::string& schemaText = state_->schemaText;
  schemaText.clear();
  Json json = document::parse(
      *value, "Converting byte[] to Kafka Connect data failed due to serialization error: ",
      state_->schemasEnabled ? &schemaText : nullptr);
  if (!state_->schemasEnabled) return {nullptr, Reader(*state_).toConnect(nullptr, &json, 0)};
  if (!json.is_object() || json.size() != 2 || !json.contains("schema") ||
      !json.contains("payload"))
    throw DataException(
        "JsonConverter with schemas.enable requires \"schema\" and \"payload\" fields and may not "
        "contain additional fields. If you are trying to deserialize plain JSON data, set "
        "schemas.enable=false in your converter configuration.");
  SchemaPtr schema = cachedSchemaOf(*state_, schemaText);
  return {schema, Reader(*state_).toConnect(schema, &json["payload"], 0)};
}

std::string JsonConverter::asJsonSchema(const SchemaPtr& schema) {
  return schema ? state_->jsonSchema(schema) : "null";
}

SchemaPtr JsonConverter::asConnectSchema(std::string_view json) {
  std::string text;
  document::appendCompact(document::parse(json, "Invalid schema JSON: "), text);
  return cachedSchemaOf(*state_, text);
}

size_t JsonConverter::sizeOfFromConnectSchemaCache() const {
  return state_->jsonSchemas.size();
}
size_t JsonConverter::sizeOfToConnectSchemaCache() const {
  return state_->connectSchemas.size();
}

}  // namespace oxbow::connect
