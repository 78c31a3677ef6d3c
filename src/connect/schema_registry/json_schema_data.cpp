// Connect schemas and values to JSON Schema and JSON documents and back, as Confluent's
// JsonSchemaData converts them (its defaults: decimals as base64 of the unscaled bytes, objects
// closed with additionalProperties false, properties required unless their schema allows null).
#include <map>

#include "common/base64.h"
#include "connect/schema_registry/format_data.h"
#include "oxbow/connect/errors.h"
#include "oxbow/connect/logical.h"
#include "oxbow/connect/struct.h"

namespace oxbow::connect::registry_detail {
namespace {

constexpr std::string_view kOneOfName = "io.confluent.connect.json.OneOf";
constexpr std::string_view kNamespace = "io.confluent.connect.json";
constexpr int kMaxDepth = 64;

std::string base64Text(std::string_view bytes) {
  return base64(bytes);
}

// Bytes (and Decimals' unscaled bytes) as base64; a struct named OneOf as its one set member.
Json toJson(const SchemaPtr& schema, const Value& value) {
  static constexpr JsonStyle kStyle{&base64Text, true, kOneOfName};
  return valueJson(schema, value, kStyle);
}

// JsonSchemaData.fromConnectSchema; `index` is a struct field's position (connect.index).
OJson fromConnect(const SchemaPtr& schema, std::optional<int> index, bool ignoreOptional) {
  const Schema& s = *schema;
  OJson props = OJson::object();
  OJson out = OJson::object();
  auto typed = [&](const char* type, const char* connectType) {
    out["type"] = type;
    if (connectType) props["connect.type"] = connectType;
  };
  switch (s.type()) {
    case Type::INT8:
      typed("integer", "int8");
      break;
    case Type::INT16:
      typed("integer", "int16");
      break;
    case Type::INT32:
      typed("integer", "int32");
      break;
    case Type::INT64:
      typed("integer", "int64");
      break;
    case Type::FLOAT32:
      typed("number", "float32");
      break;
    case Type::FLOAT64:
      typed("number", "float64");
      break;
    case Type::BOOLEAN:
      typed("boolean", nullptr);
      break;
    case Type::STRING:
      typed("string", nullptr);
      break;
    case Type::BYTES:
      typed("string", "bytes");
      break;
    case Type::ARRAY:
      out["type"] = "array";
      out["items"] = fromConnect(s.valueSchema(), std::nullopt, false);
      break;
    case Type::MAP:
      if (stringKeyed(s)) {
        out["type"] = "object";
        out["additionalProperties"] = fromConnect(s.valueSchema(), std::nullopt, false);
      } else {
        OJson entry = {{"type", "object"}, {"properties", OJson::object()}};
        entry["properties"]["key"] = fromConnect(s.keySchema(), 0, false);
        entry["properties"]["value"] = fromConnect(s.valueSchema(), 1, false);
        out["type"] = "array";
        out["items"] = std::move(entry);
      }
      props["connect.type"] = "map";
      break;
    case Type::STRUCT:
      if (hasName(s, kOneOfName)) {
        OJson members = OJson::array();
        if (s.isOptional()) members.push_back({{"type", "null"}});
        for (const Field& f : s.fields())
          members.push_back(fromConnect(f.schema(), f.index(), true));
        out["oneOf"] = std::move(members);
        if (index) out["connect.index"] = *index;
        return out;
      }
      if (s.isOptional() && !ignoreOptional) break;  // the oneOf below wraps the object
      out["type"] = "object";
      out["properties"] = OJson::object();
      for (const Field& f : s.fields())
        out["properties"][f.name()] = fromConnect(f.schema(), f.index(), false);
      out["additionalProperties"] = false;
      break;
  }
  if (s.type() == Type::STRUCT && s.isOptional() && !ignoreOptional) {
    // Confluent wraps the object (made without optionality) in a oneOf with null.
    auto required =
        std::make_shared<Schema>(s.type(), false, s.defaultValue(), s.name(), s.version(), s.doc(),
                                 s.parameters(), s.fields(), nullptr, nullptr);
    OJson wrapped = {
        {"oneOf", OJson::array({{{"type", "null"}}, fromConnect(required, std::nullopt, false)})}};
    if (index) wrapped["connect.index"] = *index;
    return wrapped;
  }
  OJson described = OJson::object();
  if (s.name()) described["title"] = *s.name();
  if (s.doc()) described["description"] = *s.doc();
  if (!s.defaultValue().isNull()) described["default"] = OJson(toJson(schema, s.defaultValue()));
  described.update(out);
  if (s.version()) props["connect.version"] = *s.version();
  if (s.parameters()) {
    OJson params = OJson::object();
    for (const auto& [k, v] : *s.parameters())
      if (!k.starts_with(kNamespace)) params[k] = v;
    if (!params.empty()) props["connect.parameters"] = std::move(params);
  }
  if (s.isOptional() && !ignoreOptional) {
    described.update(props);
    OJson wrapped = {{"oneOf", OJson::array({{{"type", "null"}}, described})}};
    if (index) wrapped["connect.index"] = *index;
    return wrapped;
  }
  described.update(props);
  if (index) described["connect.index"] = *index;
  return described;
}

// ---- reading ----

struct Resolver {
  const OJson& root;
  // A local $ref ("#", "#/definitions/X", "#/$defs/X"); others are not supported.
  const OJson& resolve(const OJson& schema, int depth) const {
    if (depth > kMaxDepth) throw DataException("JSON schema nested too deeply (or recursive)");
    auto ref = schema.find("$ref");
    if (ref == schema.end()) return schema;
    const std::string text = ref->get<std::string>();
    if (!text.starts_with("#")) throw DataException("Unsupported $ref " + text);
    const OJson& target = root.at(OJson::json_pointer(text.substr(1)));
    return resolve(target, depth + 1);
  }
};

std::string connectType(const OJson& s) {
  auto it = s.find("connect.type");
  return it != s.end() && it->is_string() ? it->get<std::string>() : std::string();
}

SchemaPtr toConnect(const Resolver& r, const OJson& given, std::optional<int> version,
                    bool forceOptional, int depth);

// A list of alternatives (oneOf, anyOf, a list of types): an optional type, or Confluent's
// OneOf struct.
SchemaPtr alternatives(const Resolver& r, const std::vector<OJson>& members,
                       std::optional<int> version, bool forceOptional, int depth) {
  auto isNull = [](const OJson& m) { return m.is_object() && m.value("type", OJson()) == "null"; };
  if (members.size() == 1) return toConnect(r, members[0], version, forceOptional, depth + 1);
  if (members.size() == 2 && (isNull(members[0]) || isNull(members[1])))
    return toConnect(r, isNull(members[0]) ? members[1] : members[0], version, true, depth + 1);
  SchemaBuilder builder = SchemaBuilder::struct_();
  builder.name(std::string(kOneOfName));
  int index = 0;
  for (const OJson& m : members) {
    if (isNull(m)) {
      builder.optional();
      continue;
    }
    builder.field(std::string(kOneOfName) + ".field." + std::to_string(index++),
                  toConnect(r, m, std::nullopt, true, depth + 1));
  }
  if (forceOptional) builder.optional();
  return builder.build();
}

SchemaBuilder typedBuilder(const Resolver& r, const OJson& s, const std::string& type, int depth) {
  const std::string ct = connectType(s);
  if (type == "boolean") return SchemaBuilder::bool_();
  if (type == "integer" || type == "number") {
    if (ct == "int8") return SchemaBuilder::int8();
    if (ct == "int16") return SchemaBuilder::int16();
    if (ct == "int32") return SchemaBuilder::int32();
    if (ct == "int64") return SchemaBuilder::int64();
    if (ct == "float32") return SchemaBuilder::float32();
    if (ct == "float64") return SchemaBuilder::float64();
    if (ct == "bytes") return SchemaBuilder::bytes();
    if (!ct.empty()) throw DataException("Unsupported type " + ct);
    return type == "integer" ? SchemaBuilder::int64() : SchemaBuilder::float64();
  }
  if (type == "string") return ct == "bytes" ? SchemaBuilder::bytes() : SchemaBuilder::string();
  if (type == "array") {
    auto items = s.find("items");
    if (items == s.end()) throw DataException("Array schema did not specify the items type");
    const OJson& item = r.resolve(*items, depth);
    if (ct == "map" && item.is_object() && item.contains("properties")) {
      const OJson& p = item.at("properties");
      return SchemaBuilder::map(toConnect(r, p.at("key"), std::nullopt, false, depth + 1),
                                toConnect(r, p.at("value"), std::nullopt, false, depth + 1));
    }
    return SchemaBuilder::array(toConnect(r, *items, std::nullopt, false, depth + 1));
  }
  if (type == "object") {
    if (ct == "map") {
      auto values = s.find("additionalProperties");
      if (values == s.end() || !values->is_object())
        throw DataException("A map's schema has no additionalProperties schema");
      return SchemaBuilder::map(Schema::STRING_SCHEMA,
                                toConnect(r, *values, std::nullopt, false, depth + 1));
    }
    SchemaBuilder builder = SchemaBuilder::struct_();
    std::map<int, std::pair<std::string, const OJson*>> ordered;
    if (auto props = s.find("properties"); props != s.end()) {
      // nlohmann keeps object keys sorted; connect.index restores Connect's order.
      for (const auto& [name, sub] : props->items()) {
        const OJson& resolved = r.resolve(sub, depth);
        auto idx = resolved.find("connect.index");
        auto own = sub.find("connect.index");
        int i = own != sub.end()        ? own->get<int>()
                : idx != resolved.end() ? idx->get<int>()
                                        : static_cast<int>(ordered.size()) + 100000;
        while (ordered.contains(i)) ++i;
        ordered[i] = {name, &sub};
      }
    }
    for (const auto& [i, entry] : ordered)
      builder.field(entry.first, toConnect(r, *entry.second, std::nullopt, false, depth + 1));
    return builder;
  }
  throw DataException("Unsupported schema type " + type);
}

Value toConnectValue(const SchemaPtr& schema, const Json& json);

SchemaPtr toConnect(const Resolver& r, const OJson& given, std::optional<int> version,
                    bool forceOptional, int depth) {
  if (depth > kMaxDepth) throw DataException("JSON schema nested too deeply (or recursive)");
  const OJson& s = r.resolve(given, depth);
  if (s.is_boolean()) throw DataException("Unsupported schema type: a boolean schema");
  for (const char* combinator : {"oneOf", "anyOf"})
    if (auto it = s.find(combinator); it != s.end())
      return alternatives(r, std::vector<OJson>(it->begin(), it->end()), version, forceOptional,
                          depth);
  SchemaBuilder builder = SchemaBuilder::string();
  if (auto e = s.find("enum"); e != s.end()) {
    builder.parameter(std::string(kNamespace) + ".Enum", "");
    for (const OJson& v : *e) {
      const std::string symbol = v.is_null()     ? "<NULL>"
                                 : v.is_string() ? v.get<std::string>()
                                                 : v.dump();
      builder.parameter(std::string(kNamespace) + ".Enum." + symbol, symbol);
    }
  } else {
    auto type = s.find("type");
    std::string typeName;
    if (type != s.end() && type->is_array()) {
      std::vector<OJson> members;
      for (const OJson& t : *type) {
        OJson member = s;
        member["type"] = t;
        members.push_back(std::move(member));
      }
      return alternatives(r, members, version, forceOptional, depth);
    }
    if (type != s.end())
      typeName = type->get<std::string>();
    else if (s.contains("properties"))
      typeName = "object";
    else if (s.contains("items"))
      typeName = "array";
    else
      throw DataException("Unsupported schema type: a schema without a type");
    builder = typedBuilder(r, s, typeName, depth);
  }
  if (auto title = s.find("title"); title != s.end() && title->is_string() && !builder.name())
    builder.name(title->get<std::string>());
  if (auto v = s.find("connect.version"); v != s.end() && v->is_number_integer())
    builder.version(v->get<int32_t>());
  else if (version)
    builder.version(*version);
  if (auto d = s.find("description"); d != s.end() && d->is_string())
    builder.doc(d->get<std::string>());
  if (auto p = s.find("connect.parameters"); p != s.end() && p->is_object())
    for (const auto& [k, v] : p->items()) builder.parameter(k, v.get<std::string>());
  if (auto d = s.find("default"); d != s.end() && !d->is_null()) {
    try {
      builder.defaultValue(toConnectValue(builder.build(), Json::parse(d->dump())));
    } catch (const DataException&) {
    }
  }
  if (forceOptional) builder.optional();
  return builder.build();
}

bool fitsSimple(const Schema& s, const Json& json) {
  switch (s.type()) {
    case Type::BOOLEAN:
      return json.is_boolean();
    case Type::INT8:
    case Type::INT16:
    case Type::INT32:
    case Type::INT64:
      return json.is_number_integer();
    case Type::FLOAT32:
    case Type::FLOAT64:
      return json.is_number();
    case Type::STRING:
    case Type::BYTES:
      return json.is_string();
    case Type::ARRAY:
      return json.is_array();
    case Type::MAP:
    case Type::STRUCT:
      return json.is_object() || json.is_array();
  }
  return false;
}

Value toConnectValue(const SchemaPtr& schema, const Json& json) {
  if (json.is_null()) {
    if (!schema->defaultValue().isNull()) return schema->defaultValue();
    if (schema->isOptional()) return Value();
    throw DataException("Invalid null value for required field");
  }
  const Schema& s = *schema;
  auto bytesOf = [&](const Json& j) {
    auto decoded = unbase64(j.get<std::string>());
    if (!decoded) throw DataException("Invalid base64 bytes");
    return *decoded;
  };
  switch (s.type()) {
    case Type::INT8:
      return static_cast<int8_t>(json.get<int64_t>());
    case Type::INT16:
      return static_cast<int16_t>(json.get<int64_t>());
    case Type::INT32:
      if (hasName(s, Date::LOGICAL_NAME)) return Date::toLogical(schema, json.get<int32_t>());
      if (hasName(s, Time::LOGICAL_NAME)) return Time::toLogical(schema, json.get<int32_t>());
      return json.get<int32_t>();
    case Type::INT64:
      if (hasName(s, Timestamp::LOGICAL_NAME))
        return Timestamp::toLogical(schema, json.get<int64_t>());
      return json.get<int64_t>();
    case Type::FLOAT32:
      return json.get<float>();
    case Type::FLOAT64:
      return json.get<double>();
    case Type::BOOLEAN:
      return json.get<bool>();
    case Type::STRING:
      return json.is_string() ? Value(json.get<std::string>()) : Value(json.dump());
    case Type::BYTES:
      if (hasName(s, Decimal::LOGICAL_NAME)) {
        if (json.is_number()) return DecimalValue::parse(json.dump()).withScale(Decimal::scale(s));
        return Decimal::toLogical(schema, bytesOf(json));
      }
      return Bytes{bytesOf(json)};
    case Type::ARRAY: {
      ValueList out;
      for (const Json& e : json) out.push_back(toConnectValue(s.valueSchema(), e));
      return out;
    }
    case Type::MAP: {
      ValueMap out;
      if (json.is_object()) {
        for (const auto& [k, v] : json.items())
          out.emplace_back(Value(k), toConnectValue(s.valueSchema(), v));
      } else {
        for (const Json& e : json)
          out.emplace_back(toConnectValue(s.keySchema(), e.at("key")),
                           toConnectValue(s.valueSchema(), e.at("value")));
      }
      return out;
    }
    case Type::STRUCT: {
      auto out = std::make_shared<Struct>(schema);
      if (hasName(s, kOneOfName)) {
        for (const Field& f : s.fields())
          if (fitsSimple(*f.schema(), json)) {
            out->put(f, toConnectValue(f.schema(), json));
            return Value(out);
          }
        throw DataException("No oneOf branch fits the value");
      }
      for (const Field& f : s.fields()) {
        auto it = json.find(f.name());
        out->put(f, toConnectValue(f.schema(), it == json.end() ? Json() : *it));
      }
      return Value(out);
    }
  }
  return Value();
}

class JsonWriter : public Writer {
 public:
  explicit JsonWriter(SchemaPtr schema) : schema_(std::move(schema)) {
    schemaText = fromConnect(schema_, std::nullopt, false).dump();
  }
  Json write(const Value& value) const override { return toJson(schema_, value); }

 private:
  SchemaPtr schema_;
};

class JsonReader : public Reader {
 public:
  explicit JsonReader(SchemaPtr s) { schema = std::move(s); }
  Value read(const Json& value) const override { return toConnectValue(schema, value); }
};

class JsonSchemaData : public FormatData {
 public:
  std::unique_ptr<Writer> writer(const SchemaPtr& schema) const override {
    return std::make_unique<JsonWriter>(schema);
  }
  std::unique_ptr<Reader> reader(const registry::SchemaInfo& writer, const std::vector<int>&,
                                 std::optional<int> version) const override {
    // In the order written: Connect's field order when connect.index is absent.
    const OJson root = OJson::parse(writer.schema);
    Resolver resolver{root};
    return std::make_unique<JsonReader>(toConnect(resolver, root, version, false, 0));
  }
  std::string recordName(const registry::SchemaInfo& writer,
                         const std::vector<int>&) const override {
    const Json root = Json::parse(writer.schema);
    return root.is_object() ? root.value("title", std::string()) : std::string();
  }
};

}  // namespace

std::unique_ptr<FormatData> jsonSchemaData() {
  return std::make_unique<JsonSchemaData>();
}

}  // namespace oxbow::connect::registry_detail
