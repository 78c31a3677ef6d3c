// Connect values as the JSON that the Avro and JSON Schema serdes take (see format_data.h).
#include "connect/schema_registry/format_data.h"
#include "oxbow/connect/errors.h"
#include "oxbow/connect/logical.h"
#include "oxbow/connect/struct.h"

namespace oxbow::connect::registry_detail {

bool hasName(const Schema& schema, std::string_view name) {
  return schema.name() && *schema.name() == name;
}

bool stringKeyed(const Schema& map) {
  return map.keySchema()->type() == Type::STRING && !map.keySchema()->isOptional();
}

std::optional<Json> primitiveJson(const SchemaPtr& schema, const Value& value) {
  const Schema& s = *schema;
  switch (s.type()) {
    case Type::INT8:
      return value.asInt8();
    case Type::INT16:
      return value.asInt16();
    case Type::INT32:
      if (hasName(s, Date::LOGICAL_NAME)) return Date::fromLogical(schema, value.asDateTime());
      if (hasName(s, Time::LOGICAL_NAME)) return Time::fromLogical(schema, value.asDateTime());
      return value.asInt32();
    case Type::INT64:
      if (hasName(s, Timestamp::LOGICAL_NAME))
        return Timestamp::fromLogical(schema, value.asDateTime());
      return value.asInt64();
    case Type::FLOAT32:
      return value.asFloat32();
    case Type::FLOAT64:
      return value.asFloat64();
    case Type::BOOLEAN:
      return value.asBoolean();
    case Type::STRING:
      return value.asString();
    default:
      return std::nullopt;
  }
}

Json valueJson(const SchemaPtr& schema, const Value& value, const JsonStyle& style) {
  if (value.isNull()) {
    if (style.nullTakesDefault && !schema->defaultValue().isNull())
      return valueJson(schema, schema->defaultValue(), style);
    if (!schema->isOptional()) throw DataException("Found null value for non-optional schema");
    return nullptr;
  }
  if (std::optional<Json> primitive = primitiveJson(schema, value)) return *primitive;
  const Schema& s = *schema;
  switch (s.type()) {
    case Type::BYTES:
      if (hasName(s, Decimal::LOGICAL_NAME))
        return style.bytes(Decimal::fromLogical(schema, value.asDecimal()).data);
      return style.bytes(value.asBytes().data);
    case Type::ARRAY: {
      Json out = Json::array();
      for (const Value& e : value.asList()) out.push_back(valueJson(s.valueSchema(), e, style));
      return out;
    }
    case Type::MAP: {
      if (stringKeyed(s)) {
        Json out = Json::object();
        for (const auto& [k, v] : value.asMap())
          out[k.asString()] = valueJson(s.valueSchema(), v, style);
        return out;
      }
      Json out = Json::array();
      for (const auto& [k, v] : value.asMap())
        out.push_back({{"key", valueJson(s.keySchema(), k, style)},
                       {"value", valueJson(s.valueSchema(), v, style)}});
      return out;
    }
    case Type::STRUCT: {
      const Struct& record = value.asStruct();
      if (!style.unionName.empty() && hasName(s, style.unionName)) {
        for (const Field& f : s.fields())
          if (!record.get(f).isNull()) return valueJson(f.schema(), record.get(f), style);
        return nullptr;
      }
      Json out = Json::object();
      for (const Field& f : s.fields()) out[f.name()] = valueJson(f.schema(), record.get(f), style);
      return out;
    }
    default:
      throw DataException("Unknown schema type: " + std::string(typeName(s.type())));
  }
}

}  // namespace oxbow::connect::registry_detail
