// Connect schemas to the .proto text Confluent's ProtobufData derives, and Connect values to the
// message in Protobuf's JSON mapping that the registry's serializer encodes.
#include <cstdio>
#include <set>

#include "common/base64.h"
#include "connect/civil_date.h"
#include "connect/schema_registry/protobuf_names.h"
#include "oxbow/connect/errors.h"
#include "oxbow/connect/logical.h"
#include "oxbow/connect/struct.h"

namespace oxbow::connect::registry_detail {
namespace {

struct ProtoText {
  std::set<std::string> imports;
  int nameIndex = 0;
};

std::string unqualified(ProtoText& ctx, const std::optional<std::string>& name) {
  std::string full =
      name && !name->empty() ? *name : "ConnectDefault" + std::to_string(++ctx.nameIndex);
  return full.substr(full.rfind('.') + 1);
}

std::string quotedText(std::string_view s) {
  return Json(std::string(s)).dump();
}

std::string fieldMeta(ProtoText& ctx,
                      const std::vector<std::pair<std::string, std::string>>& params) {
  if (params.empty()) return "";
  ctx.imports.insert("confluent/meta.proto");
  std::string out = " [(confluent.field_meta) = { ";
  for (const auto& [k, v] : params)
    out += "params: [{ key: " + quotedText(k) + ", value: " + quotedText(v) + " }] ";
  return out + "}]";
}

class MessageWriter {
 public:
  MessageWriter(ProtoText& ctx) : ctx_(ctx) {}
  std::string message(const std::string& name, const Schema& s, int indent, int depth);

 private:
  std::string fieldLine(const Field& field, int tag, std::string& nested, int indent, int depth);
  std::string typeOf(const SchemaPtr& schema, const std::string& fieldName,
                     std::vector<std::pair<std::string, std::string>>& params, std::string& nested,
                     int indent, int depth);
  ProtoText& ctx_;
};

std::string MessageWriter::message(const std::string& name, const Schema& s, int indent,
                                   int depth) {
  if (depth > kMaxProtobufDepth) throw DataException("Connect schema nested too deeply");
  const std::string pad(indent, ' ');
  std::string body, nested;
  int next = 1;
  for (const Field& field : s.fields()) {
    const std::string* tagText = field.schema()->parameter(kTagParameter);
    const int tag = tagText ? std::stoi(*tagText) : next++;
    if (field.schema()->type() == Type::STRUCT && field.schema()->name() &&
        field.schema()->name()->starts_with(kUnionPrefix)) {
      body += pad + "  oneof " + field.schema()->name()->substr(kUnionPrefix.size()) + " {\n";
      for (const Field& member : field.schema()->fields()) {
        const std::string* memberTag = member.schema()->parameter(kTagParameter);
        body += "  " + fieldLine(member, memberTag ? std::stoi(*memberTag) : next++, nested,
                                 indent + 2, depth);
      }
      body += pad + "  }\n";
      continue;
    }
    body += fieldLine(field, tag, nested, indent, depth);
  }
  return pad + "message " + name + " {\n" + body + nested + pad + "}\n";
}

std::string MessageWriter::fieldLine(const Field& field, int tag, std::string& nested, int indent,
                                     int depth) {
  SchemaPtr schema = field.schema();
  std::string label;
  if (schema->type() == Type::ARRAY) {
    label = "repeated ";
    schema = schema->valueSchema();
    if (schema->type() == Type::ARRAY) throw DataException("Array cannot be nested");
  }
  std::vector<std::pair<std::string, std::string>> params;
  const std::string type = typeOf(schema, field.name(), params, nested, indent, depth);
  return std::string(indent + 2, ' ') + label + type + " " + field.name() + " = " +
         std::to_string(tag) + fieldMeta(ctx_, params) + ";\n";
}

bool mapKeyType(Type t) {
  return t == Type::STRING || t == Type::INT32 || t == Type::INT64 || t == Type::BOOLEAN ||
         t == Type::INT8 || t == Type::INT16;
}

std::string MessageWriter::typeOf(const SchemaPtr& schema, const std::string& fieldName,
                                  std::vector<std::pair<std::string, std::string>>& params,
                                  std::string& nested, int indent, int depth) {
  const Schema& s = *schema;
  if (hasName(s, Decimal::LOGICAL_NAME)) {
    if (const std::string* p = s.parameter("connect.decimal.precision"))
      params.emplace_back("precision", *p);
    if (const std::string* sc = s.parameter("scale")) params.emplace_back("scale", *sc);
    ctx_.imports.insert("confluent/type/decimal.proto");
    return "confluent.type.Decimal";
  }
  if (hasName(s, Date::LOGICAL_NAME)) {
    ctx_.imports.insert("google/type/date.proto");
    return "google.type.Date";
  }
  if (hasName(s, Time::LOGICAL_NAME)) {
    ctx_.imports.insert("google/type/timeofday.proto");
    return "google.type.TimeOfDay";
  }
  if (hasName(s, Timestamp::LOGICAL_NAME)) {
    ctx_.imports.insert("google/protobuf/timestamp.proto");
    return "google.protobuf.Timestamp";
  }
  const std::string* protoType = s.parameter(kTypeParameter);
  switch (s.type()) {
    case Type::INT8:
      params.emplace_back("connect.type", "int8");
      return "int32";
    case Type::INT16:
      params.emplace_back("connect.type", "int16");
      return "int32";
    case Type::INT32:
      return protoType ? *protoType : "int32";
    case Type::INT64:
      return protoType ? *protoType : "int64";
    case Type::FLOAT32:
      return "float";
    case Type::FLOAT64:
      return "double";
    case Type::BOOLEAN:
      return "bool";
    case Type::STRING:
      return "string";
    case Type::BYTES:
      return "bytes";
    case Type::ARRAY:
      throw DataException("Array cannot be nested");
    case Type::MAP: {
      std::vector<std::pair<std::string, std::string>> ignored;
      if (!mapKeyType(s.keySchema()->type()) || s.valueSchema()->type() == Type::ARRAY ||
          s.valueSchema()->type() == Type::MAP)
        throw DataException(
            "Protobuf maps take integer, boolean or string keys and no list or map "
            "values");
      const std::string key = typeOf(s.keySchema(), "key", ignored, nested, indent, depth + 1);
      const std::string value =
          typeOf(s.valueSchema(), "value", ignored, nested, indent, depth + 1);
      return "map<" + key + ", " + value + ">";
    }
    case Type::STRUCT: {
      std::string name = unqualified(ctx_, s.name());
      if (name == fieldName) name += "Message";
      nested += message(name, s, indent + 2, depth + 1);
      return name;
    }
  }
  throw DataException("Unknown schema type");
}

Json dateJson(int64_t days) {
  const CivilDate date = civilFromDays(days);
  return {{"year", date.year}, {"month", date.month}, {"day", date.day}};
}

std::string timestampText(int64_t millis) {
  int64_t days =
      millis >= 0 ? millis / kMillisPerDay : (millis - kMillisPerDay + 1) / kMillisPerDay;
  int64_t rest = millis - days * kMillisPerDay;
  const CivilDate date = civilFromDays(days);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lld.%03lldZ",
                static_cast<long long>(date.year), static_cast<long long>(date.month),
                static_cast<long long>(date.day), static_cast<long long>(rest / 3600000),
                static_cast<long long>(rest / 60000 % 60), static_cast<long long>(rest / 1000 % 60),
                static_cast<long long>(rest % 1000));
  return buf;
}

Json toProtoJson(const SchemaPtr& schema, const Value& value) {
  if (value.isNull()) return nullptr;
  const Schema& s = *schema;
  if (hasName(s, Decimal::LOGICAL_NAME)) {
    const DecimalValue& d = value.asDecimal();
    std::string digits = d.unscaledDigits();
    if (!digits.empty() && digits[0] == '-') digits.erase(0, 1);
    return {
        {"value", base64(d.unscaledBytes())}, {"precision", digits.size()}, {"scale", d.scale()}};
  }
  if (hasName(s, Date::LOGICAL_NAME))
    return dateJson(Date::fromLogical(schema, value.asDateTime()));
  if (hasName(s, Time::LOGICAL_NAME)) {
    const int32_t ms = Time::fromLogical(schema, value.asDateTime());
    return {{"hours", ms / 3600000},
            {"minutes", ms / 60000 % 60},
            {"seconds", ms / 1000 % 60},
            {"nanos", ms % 1000 * 1000000}};
  }
  if (hasName(s, Timestamp::LOGICAL_NAME))
    return timestampText(Timestamp::fromLogical(schema, value.asDateTime()));
  if (std::optional<Json> primitive = primitiveJson(schema, value)) return *primitive;
  switch (s.type()) {
    case Type::BYTES:
      return base64(value.asBytes().data);
    case Type::ARRAY: {
      Json out = Json::array();
      for (const Value& e : value.asList()) out.push_back(toProtoJson(s.valueSchema(), e));
      return out;
    }
    case Type::MAP: {
      Json out = Json::object();
      for (const auto& [k, v] : value.asMap()) {
        const Json key = toProtoJson(s.keySchema(), k);
        out[key.is_string() ? key.get<std::string>() : key.dump()] =
            toProtoJson(s.valueSchema(), v);
      }
      return out;
    }
    case Type::STRUCT: {
      const Struct& record = value.asStruct();
      Json out = Json::object();
      for (const Field& f : s.fields()) {
        const Value& v = record.get(f);
        if (v.isNull()) continue;
        if (f.schema()->type() == Type::STRUCT && f.schema()->name() &&
            f.schema()->name()->starts_with(kUnionPrefix)) {
          out.update(toProtoJson(f.schema(), v));  // a oneof's member sits in the message itself
          continue;
        }
        out[f.name()] = toProtoJson(f.schema(), v);
      }
      return out;
    }
    default:
      break;
  }
  throw DataException("Unknown schema type");
}

class ProtobufWriter : public Writer {
 public:
  explicit ProtobufWriter(SchemaPtr schema) : schema_(std::move(schema)) {
    if (schema_->type() != Type::STRUCT)
      throw DataException("Only struct schemas can be written as Protobuf here, not " +
                          std::string(typeName(schema_->type())));
    ProtoText ctx;
    const std::string full =
        schema_->name() && !schema_->name()->empty() ? *schema_->name() : "ConnectDefault1";
    if (!schema_->name() || schema_->name()->empty()) ctx.nameIndex = 1;
    const auto dot = full.rfind('.');
    const std::string name = full.substr(dot == std::string::npos ? 0 : dot + 1);
    MessageWriter writer(ctx);
    const std::string body = writer.message(name, *schema_, 0, 0);
    schemaText = "syntax = \"proto3\";\n";
    if (dot != std::string::npos) schemaText += "package " + full.substr(0, dot) + ";\n";
    for (const std::string& import : ctx.imports) schemaText += "import \"" + import + "\";\n";
    schemaText += "\n" + body;
    message = dot == std::string::npos ? name : full;
  }
  Json write(const Value& value) const override { return toProtoJson(schema_, value); }

 private:
  SchemaPtr schema_;
};

}  // namespace

std::unique_ptr<Writer> protobufWriter(const SchemaPtr& schema) {
  return std::make_unique<ProtobufWriter>(schema);
}

}  // namespace oxbow::connect::registry_detail
