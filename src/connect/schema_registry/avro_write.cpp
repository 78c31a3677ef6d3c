// Connect schemas and values to Avro, as Confluent's AvroData.fromConnectSchema and
// fromConnectData make them (its default settings: connect.meta.data on, names not scrubbed,
// enhanced schema support off): the schema text is Avro's Java printing of that schema, which is
// what Confluent's converter registers.
#include <map>
#include <utility>

#include "connect/schema_registry/avro_names.h"
#include "connect/schema_registry/format_data.h"
#include "oxbow/connect/errors.h"
#include "oxbow/connect/logical.h"
#include "oxbow/connect/struct.h"

namespace oxbow::connect::registry_detail {
namespace {

constexpr int kDefaultDecimalPrecision = 64;

// A copy of the schema that is not optional (Confluent's nonOptional).
SchemaPtr nonOptional(const Schema& s) {
  return std::make_shared<Schema>(
      s.type(), false, s.defaultValue(), s.name(), s.version(), s.doc(), s.parameters(),
      s.type() == Type::STRUCT ? s.fields() : std::vector<Field>{},
      s.type() == Type::MAP ? s.keySchema() : nullptr,
      s.type() == Type::MAP || s.type() == Type::ARRAY ? s.valueSchema() : nullptr);
}

// The value in Avro's JSON encoding, a union's value unwrapped (the serializer finds its branch;
// for Connect's unions of null and one type only one branch fits).
Json toAvro(const SchemaPtr& schema, const Value& value) {
  static constexpr JsonStyle kStyle{&latin1ToUtf8, false, kAvroUnionName};
  return valueJson(schema, value, kStyle);
}

class SchemaMaker {
 public:
  OJson make(const SchemaPtr& schema, const std::string& space, bool ignoreOptional);

 private:
  OJson base(const Schema& s, const std::string& space);
  OJson record(const Schema& s, const std::string& space);
  OJson mapEntries(const Schema& s, const std::string& space);
  void addField(OJson& fields, const std::string& name, const SchemaPtr& schema,
                const std::optional<std::string>& doc, const std::string& space);
  static void addMetadata(OJson& out, const Schema& s);
  // The name of a named type as Java prints a reference to it from `space`.
  static std::string reference(const AvroName& name, const std::string& space) {
    return name.space == space ? name.name : name.full();
  }
  AvroName nameOrDefault(const std::optional<std::string>& name) {
    if (name) return AvroName::split(*name);
    ++nameIndex_;
    return {std::string(kAvroNamespace),
            std::string(kDefaultSchemaName) + (nameIndex_ > 1 ? std::to_string(nameIndex_) : "")};
  }

  int nameIndex_ = 0;
  // Named types already written (a non-optional Connect schema written again is a reference).
  std::vector<std::pair<SchemaPtr, AvroName>> named_;
};

OJson SchemaMaker::make(const SchemaPtr& schema, const std::string& space, bool ignoreOptional) {
  const Schema& s = *schema;
  if (s.type() == Type::STRUCT && hasName(s, kAvroUnionName)) {
    // A union read from Avro: its members' types again, null first when it is optional.
    OJson members = OJson::array();
    if (s.isOptional()) members.push_back("null");
    for (const Field& f : s.fields())
      members.push_back(make(nonOptional(*f.schema()), space, true));
    return members;
  }
  if (s.type() == Type::STRUCT && s.isOptional()) {
    // No metadata on a union: it is on the record inside.
    return OJson::array({"null", make(nonOptional(s), space, false)});
  }
  OJson out = base(s, space);
  if (out.is_string() && !isAvroPrimitive(out.get<std::string>())) return out;  // a reference
  addMetadata(out, s);
  if (out.is_object() && out.size() == 1) out = out["type"];
  if (ignoreOptional || !s.isOptional()) return out;
  if (!s.defaultValue().isNull()) return OJson::array({out, "null"});
  return OJson::array({"null", out});
}

OJson SchemaMaker::base(const Schema& s, const std::string& space) {
  if (!s.isOptional() && (s.type() == Type::STRUCT || (s.type() == Type::MAP && !stringKeyed(s))))
    for (const auto& [known, name] : named_)
      if (*known == s) {
        if (s.type() == Type::STRUCT) return reference(name, space);
        return OJson{{"type", "array"}, {"items", reference(name, space)}};
      }
  switch (s.type()) {
    case Type::INT8:
      return {{"type", "int"}, {"connect.type", "int8"}};
    case Type::INT16:
      return {{"type", "int"}, {"connect.type", "int16"}};
    case Type::INT32:
      return {{"type", "int"}};
    case Type::INT64:
      return {{"type", "long"}};
    case Type::FLOAT32:
      return {{"type", "float"}};
    case Type::FLOAT64:
      return {{"type", "double"}};
    case Type::BOOLEAN:
      return {{"type", "boolean"}};
    case Type::STRING:
      return {{"type", "string"}};
    case Type::BYTES: {
      OJson out = {{"type", "bytes"}};
      if (hasName(s, Decimal::LOGICAL_NAME)) {
        out["scale"] = Decimal::scale(s);
        const std::string* precision = s.parameter(kDecimalPrecisionParameter);
        out["precision"] = precision ? std::stoi(*precision) : kDefaultDecimalPrecision;
      }
      return out;
    }
    case Type::ARRAY:
      return {{"type", "array"}, {"items", make(s.valueSchema(), space, false)}};
    case Type::MAP:
      if (stringKeyed(s)) return {{"type", "map"}, {"values", make(s.valueSchema(), space, false)}};
      return mapEntries(s, space);
    case Type::STRUCT:
      return record(s, space);
  }
  throw DataException("Unknown schema type: " + std::string(typeName(s.type())));
}

// Java prints a named type's namespace when it is not the enclosing one.
void writeName(OJson& out, const AvroName& name, const std::string& space) {
  out["name"] = name.name;
  if (name.space != space) out["namespace"] = name.space;
}

OJson SchemaMaker::record(const Schema& s, const std::string& space) {
  const AvroName name = nameOrDefault(s.name());
  OJson out = {{"type", "record"}};
  writeName(out, name, space);
  if (const std::string* doc = s.parameter(kRecordDocParameter)) out["doc"] = *doc;
  named_.emplace_back(nonOptional(s), name);
  OJson fields = OJson::array();
  for (const Field& field : s.fields()) {
    const std::string* doc = s.parameter(std::string(kFieldDocPrefix) + field.name());
    addField(fields, field.name(), field.schema(),
             doc ? std::optional<std::string>(*doc) : std::nullopt, name.space);
  }
  out["fields"] = std::move(fields);
  return out;
}

OJson SchemaMaker::mapEntries(const Schema& s, const std::string& space) {
  const AvroName name =
      s.name() ? nameOrDefault(s.name()) : AvroName{std::string(kAvroNamespace), "MapEntry"};
  OJson entry = {{"type", "record"}};
  writeName(entry, name, space);
  OJson fields = OJson::array();
  addField(fields, "key", s.keySchema(), std::nullopt, name.space);
  addField(fields, "value", s.valueSchema(), std::nullopt, name.space);
  entry["fields"] = std::move(fields);
  if (s.name()) entry["connect.internal.type"] = "MapEntry";
  named_.emplace_back(nonOptional(s), name);
  return {{"type", "array"}, {"items", std::move(entry)}};
}

void SchemaMaker::addField(OJson& fields, const std::string& name, const SchemaPtr& schema,
                           const std::optional<std::string>& doc, const std::string& space) {
  OJson field = {{"name", name}, {"type", make(schema, space, false)}};
  if (doc) field["doc"] = *doc;
  if (!schema->defaultValue().isNull())
    field["default"] = OJson(toAvro(schema, schema->defaultValue()));
  else if (schema->isOptional())
    field["default"] = nullptr;
  fields.push_back(std::move(field));
}

void SchemaMaker::addMetadata(OJson& out, const Schema& s) {
  if (s.doc()) out["connect.doc"] = *s.doc();
  if (s.version()) out["connect.version"] = *s.version();
  if (s.parameters()) {
    OJson params = OJson::object();
    for (const auto& [k, v] : *s.parameters())
      if (k != kFieldDefaultFlag) params[k] = v;
    if (!params.empty()) out["connect.parameters"] = std::move(params);
  }
  if (!s.defaultValue().isNull() && !s.parameter(kFieldDefaultFlag)) {
    SchemaPtr self = nonOptional(s);
    out["connect.default"] = OJson(toAvro(self, s.defaultValue()));
  }
  if (s.name()) out["connect.name"] = *s.name();
  // connect.type (int8, int16) was set with the type, so that it comes after the others here.
  if (out.contains("connect.type")) {
    OJson type = out["connect.type"];
    out.erase("connect.type");
    out["connect.type"] = type;
  }
  if (hasName(s, Decimal::LOGICAL_NAME)) {
    out["logicalType"] = "decimal";
  } else if (hasName(s, Time::LOGICAL_NAME)) {
    out["logicalType"] = "time-millis";
  } else if (hasName(s, Timestamp::LOGICAL_NAME)) {
    out["logicalType"] = "timestamp-millis";
  } else if (hasName(s, Date::LOGICAL_NAME)) {
    out["logicalType"] = "date";
  }
  if (s.parameters())
    for (const auto& [k, v] : *s.parameters())
      if (k.starts_with("avro")) out[k] = v;
}

class AvroWriter : public Writer {
 public:
  explicit AvroWriter(SchemaPtr schema) : schema_(std::move(schema)) {
    SchemaMaker maker;
    schemaText = maker.make(schema_, "", false).dump();
  }
  Json write(const Value& value) const override { return toAvro(schema_, value); }

 private:
  SchemaPtr schema_;
};

}  // namespace

std::unique_ptr<Writer> avroWriter(const SchemaPtr& schema) {
  return std::make_unique<AvroWriter>(schema);
}

}  // namespace oxbow::connect::registry_detail
