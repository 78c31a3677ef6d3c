// Connect schemas and values to Protobuf and back, as Confluent's ProtobufData converts them (its
// defaults: no wrappers or `optional` for nullable fields, enums as strings, oneofs as structs
// named io.confluent.connect.protobuf.Union.NAME, every field optional and tagged with its number).
// The schema written is a .proto text; values are read from the payload with libprotobuf's
// reflection over the writer's descriptors.
#include <google/protobuf/dynamic_message.h>

#include <cctype>
#include <map>
#include <set>

#include "common/base64.h"
#include "connect/schema_registry/format_data.h"
#include "oxbow/connect/errors.h"
#include "oxbow/connect/logical.h"
#include "oxbow/connect/struct.h"
#include "registry/protobuf/schema.h"
#include "registry/protobuf/schema_data.h"

namespace oxbow::connect::registry_detail {
namespace {

namespace pb = google::protobuf;

constexpr std::string_view kTagParameter = "io.confluent.connect.protobuf.Tag";
constexpr std::string_view kTypeParameter = "io.confluent.connect.protobuf.Type";
constexpr std::string_view kEnumParameter = "io.confluent.connect.protobuf.Enum";
constexpr std::string_view kUnionPrefix = "io.confluent.connect.protobuf.Union.";
constexpr int kMaxDepth = 64;
constexpr int64_t kMillisPerDay = 86400000;

// ---- writing ----

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
  if (depth > kMaxDepth) throw DataException("Connect schema nested too deeply");
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

// google.type.Date from days since the epoch (the civil calendar, proleptic Gregorian).
Json dateJson(int64_t days) {
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const int64_t doe = days - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const int64_t m = mp < 10 ? mp + 3 : mp - 9;
  const int64_t y = yoe + era * 400 + (m <= 2);
  return {{"year", y}, {"month", m}, {"day", d}};
}

int64_t daysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

std::string timestampText(int64_t millis) {
  int64_t days =
      millis >= 0 ? millis / kMillisPerDay : (millis - kMillisPerDay + 1) / kMillisPerDay;
  int64_t rest = millis - days * kMillisPerDay;
  Json date = dateJson(days);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lld.%03lldZ",
                static_cast<long long>(date["year"].get<int64_t>()),
                static_cast<long long>(date["month"].get<int64_t>()),
                static_cast<long long>(date["day"].get<int64_t>()),
                static_cast<long long>(rest / 3600000), static_cast<long long>(rest / 60000 % 60),
                static_cast<long long>(rest / 1000 % 60), static_cast<long long>(rest % 1000));
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

// ---- reading ----

// The writer's own text of the message (the pool's copy has no custom options).
const pb::DescriptorProto* sourceMessage(const pb::FileDescriptorProto& file,
                                         const pb::Descriptor& d) {
  std::vector<const pb::Descriptor*> chain;
  for (const pb::Descriptor* p = &d; p != nullptr; p = p->containing_type()) chain.push_back(p);
  const pb::RepeatedPtrField<pb::DescriptorProto>* list = &file.message_type();
  const pb::DescriptorProto* found = nullptr;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    found = nullptr;
    for (const pb::DescriptorProto& m : *list)
      if (m.name() == (*it)->name()) found = &m;
    if (!found) return nullptr;
    list = &found->nested_type();
  }
  return found;
}

// A quoted string of protobuf's text format at `pos` (which it moves past it).
std::optional<std::string> quotedAt(const std::string& text, size_t& pos) {
  while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
  if (pos >= text.size() || (text[pos] != '"' && text[pos] != '\'')) return std::nullopt;
  const char quote = text[pos++];
  std::string out;
  while (pos < text.size() && text[pos] != quote) {
    if (text[pos] == '\\' && pos + 1 < text.size()) ++pos;
    out += text[pos++];
  }
  ++pos;
  return out;
}

// confluent.field_meta's params, read from the option's text as the writer gave it.
std::map<std::string, std::string> metaParams(const pb::FieldDescriptor& field,
                                              const registry::protobuf::SchemaData& data) {
  std::map<std::string, std::string> out;
  const pb::DescriptorProto* message =
      field.file() == data.file ? sourceMessage(data.source.proto, *field.containing_type())
                                : nullptr;
  if (!message) return out;
  for (const pb::FieldDescriptorProto& f : message->field()) {
    if (f.name() != field.name()) continue;
    for (const pb::UninterpretedOption& o : f.options().uninterpreted_option()) {
      if (o.name_size() != 1 || o.name(0).name_part() != "confluent.field_meta") continue;
      const std::string& text = o.aggregate_value();
      size_t pos = 0;
      while ((pos = text.find("key", pos)) != std::string::npos) {
        pos = text.find(':', pos);
        if (pos == std::string::npos) break;
        ++pos;
        auto key = quotedAt(text, pos);
        size_t v = text.find("value", pos);
        if (!key || v == std::string::npos) break;
        pos = text.find(':', v);
        if (pos == std::string::npos) break;
        ++pos;
        if (auto value = quotedAt(text, pos)) out[*key] = *value;
      }
    }
  }
  return out;
}

using Data = registry::protobuf::SchemaData;

SchemaPtr messageSchema(const Data& data, const pb::Descriptor& d, std::optional<int> version,
                        int depth);

bool isMapField(const pb::FieldDescriptor& f) {
  return f.is_map();
}

SchemaPtr fieldSchema(const Data& data, const pb::FieldDescriptor& f, bool oneofMember, int depth) {
  using T = pb::FieldDescriptor;
  if (depth > kMaxDepth) throw DataException("Protobuf schema nested too deeply (or recursive)");
  SchemaBuilder builder = SchemaBuilder::int32();
  switch (f.type()) {
    case T::TYPE_INT32:
    case T::TYPE_SINT32:
    case T::TYPE_SFIXED32: {
      const auto params = metaParams(f, data);
      auto ct = params.find("connect.type");
      if (ct != params.end() && ct->second == "int8") {
        builder = SchemaBuilder::int8();
      } else if (ct != params.end() && ct->second == "int16") {
        builder = SchemaBuilder::int16();
      } else {
        builder = SchemaBuilder::int32();
        if (f.type() != T::TYPE_INT32)
          builder.parameter(std::string(kTypeParameter), f.type_name());
      }
      break;
    }
    case T::TYPE_UINT32:
    case T::TYPE_FIXED32:
    case T::TYPE_INT64:
    case T::TYPE_UINT64:
    case T::TYPE_SINT64:
    case T::TYPE_FIXED64:
    case T::TYPE_SFIXED64:
      builder = SchemaBuilder::int64();
      if (f.type() != T::TYPE_INT64) builder.parameter(std::string(kTypeParameter), f.type_name());
      break;
    case T::TYPE_FLOAT:
      builder = SchemaBuilder::float32();
      break;
    case T::TYPE_DOUBLE:
      builder = SchemaBuilder::float64();
      break;
    case T::TYPE_BOOL:
      builder = SchemaBuilder::bool_();
      break;
    case T::TYPE_STRING:
      builder = SchemaBuilder::string();
      break;
    case T::TYPE_BYTES:
      builder = SchemaBuilder::bytes();
      break;
    case T::TYPE_ENUM: {
      const pb::EnumDescriptor& e = *f.enum_type();
      builder = SchemaBuilder::string();
      builder.name(e.name());
      builder.parameter(std::string(kEnumParameter), e.name());
      for (int i = 0; i < e.value_count(); ++i)
        builder.parameter(std::string(kEnumParameter) + "." + e.value(i)->name(),
                          std::to_string(e.value(i)->number()));
      break;
    }
    case T::TYPE_MESSAGE:
    case T::TYPE_GROUP: {
      const pb::Descriptor& m = *f.message_type();
      const std::string& full = m.full_name();
      if (full == "confluent.type.Decimal") {
        const auto params = metaParams(f, data);
        auto scale = params.find("scale");
        builder = Decimal::builder(scale != params.end() ? std::stoi(scale->second) : 0);
        if (auto p = params.find("precision"); p != params.end())
          builder.parameter("connect.decimal.precision", p->second);
      } else if (full == "google.type.Date") {
        builder = Date::builder();
      } else if (full == "google.type.TimeOfDay") {
        builder = Time::builder();
      } else if (full == "google.protobuf.Timestamp") {
        builder = Timestamp::builder();
      } else if (isMapField(f)) {
        builder = SchemaBuilder::map(fieldSchema(data, *m.field(0), false, depth + 1),
                                     fieldSchema(data, *m.field(1), false, depth + 1));
      } else {
        SchemaPtr inner = messageSchema(data, m, std::nullopt, depth + 1);
        builder = SchemaBuilder::struct_();
        builder.name(*inner->name());
        for (const Field& field : inner->fields()) builder.field(field.name(), field.schema());
      }
      break;
    }
  }
  builder.optional();
  if (f.is_repeated() && !isMapField(f)) {
    SchemaPtr element = builder.build();
    builder = SchemaBuilder::array(element);
    builder.optional();
  }
  (void)oneofMember;
  builder.parameter(std::string(kTagParameter), std::to_string(f.number()));
  return builder.build();
}

SchemaPtr messageSchema(const Data& data, const pb::Descriptor& d, std::optional<int> version,
                        int depth) {
  SchemaBuilder builder = SchemaBuilder::struct_();
  builder.name(d.name());
  for (int i = 0; i < d.real_oneof_decl_count(); ++i) {
    const pb::OneofDescriptor& oneof = *d.oneof_decl(i);
    SchemaBuilder u = SchemaBuilder::struct_();
    u.name(std::string(kUnionPrefix) + oneof.name());
    for (int j = 0; j < oneof.field_count(); ++j)
      u.field(oneof.field(j)->name(), fieldSchema(data, *oneof.field(j), true, depth + 1));
    u.optional();
    builder.field(oneof.name(), u.build());
  }
  for (int i = 0; i < d.field_count(); ++i) {
    const pb::FieldDescriptor& f = *d.field(i);
    if (f.real_containing_oneof()) continue;
    builder.field(f.name(), fieldSchema(data, f, false, depth + 1));
  }
  if (version) builder.version(*version);
  return builder.build();
}

Value readMessage(const SchemaPtr& schema, const pb::Message& m);

Value readSingle(const SchemaPtr& schema, const pb::Message& m, const pb::FieldDescriptor& f,
                 int index) {
  using C = pb::FieldDescriptor;
  const pb::Reflection& r = *m.GetReflection();
  const bool rep = index >= 0;
  switch (f.cpp_type()) {
    case C::CPPTYPE_INT32: {
      const int32_t v = rep ? r.GetRepeatedInt32(m, &f, index) : r.GetInt32(m, &f);
      if (schema->type() == Type::INT8) return static_cast<int8_t>(v);
      if (schema->type() == Type::INT16) return static_cast<int16_t>(v);
      return v;
    }
    case C::CPPTYPE_INT64:
      return rep ? r.GetRepeatedInt64(m, &f, index) : r.GetInt64(m, &f);
    case C::CPPTYPE_UINT32:
      return static_cast<int64_t>(rep ? r.GetRepeatedUInt32(m, &f, index) : r.GetUInt32(m, &f));
    case C::CPPTYPE_UINT64:
      return static_cast<int64_t>(rep ? r.GetRepeatedUInt64(m, &f, index) : r.GetUInt64(m, &f));
    case C::CPPTYPE_FLOAT:
      return rep ? r.GetRepeatedFloat(m, &f, index) : r.GetFloat(m, &f);
    case C::CPPTYPE_DOUBLE:
      return rep ? r.GetRepeatedDouble(m, &f, index) : r.GetDouble(m, &f);
    case C::CPPTYPE_BOOL:
      return rep ? r.GetRepeatedBool(m, &f, index) : r.GetBool(m, &f);
    case C::CPPTYPE_STRING: {
      std::string v = rep ? r.GetRepeatedString(m, &f, index) : r.GetString(m, &f);
      if (f.type() == C::TYPE_BYTES) return Bytes{std::move(v)};
      return v;
    }
    case C::CPPTYPE_ENUM:
      return (rep ? r.GetRepeatedEnum(m, &f, index) : r.GetEnum(m, &f))->name();
    case C::CPPTYPE_MESSAGE:
      return readMessage(schema, rep ? r.GetRepeatedMessage(m, &f, index) : r.GetMessage(m, &f));
  }
  return Value();
}

int64_t intField(const pb::Message& m, const char* name) {
  const pb::FieldDescriptor* f = m.GetDescriptor()->FindFieldByName(name);
  if (!f) return 0;
  const pb::Reflection& r = *m.GetReflection();
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_INT32:
      return r.GetInt32(m, f);
    case pb::FieldDescriptor::CPPTYPE_UINT32:
      return r.GetUInt32(m, f);
    case pb::FieldDescriptor::CPPTYPE_INT64:
      return r.GetInt64(m, f);
    default:
      return 0;
  }
}

Value readLogical(const SchemaPtr& schema, const pb::Message& m) {
  const Schema& s = *schema;
  if (hasName(s, Decimal::LOGICAL_NAME)) {
    const pb::FieldDescriptor* value = m.GetDescriptor()->FindFieldByName("value");
    const std::string bytes = m.GetReflection()->GetString(m, value);
    return DecimalValue::fromUnscaledBytes(bytes, static_cast<int32_t>(intField(m, "scale")));
  }
  if (hasName(s, Date::LOGICAL_NAME))
    return DateTime{daysFromCivil(intField(m, "year"), intField(m, "month"), intField(m, "day")) *
                    kMillisPerDay};
  if (hasName(s, Time::LOGICAL_NAME))
    return DateTime{intField(m, "hours") * 3600000 + intField(m, "minutes") * 60000 +
                    intField(m, "seconds") * 1000 + intField(m, "nanos") / 1000000};
  return DateTime{intField(m, "seconds") * 1000 + intField(m, "nanos") / 1000000};
}

Value readField(const SchemaPtr& schema, const pb::Message& m, const pb::FieldDescriptor& f) {
  const pb::Reflection& r = *m.GetReflection();
  if (f.is_map()) {
    ValueMap out;
    for (int i = 0; i < r.FieldSize(m, &f); ++i) {
      const pb::Message& entry = r.GetRepeatedMessage(m, &f, i);
      const pb::Descriptor& d = *entry.GetDescriptor();
      out.emplace_back(readSingle(schema->keySchema(), entry, *d.field(0), -1),
                       readField(schema->valueSchema(), entry, *d.field(1)));
    }
    return out;
  }
  if (f.is_repeated()) {
    ValueList out;
    for (int i = 0; i < r.FieldSize(m, &f); ++i)
      out.push_back(readSingle(schema->valueSchema(), m, f, i));
    return out;
  }
  if (f.cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE && !r.HasField(m, &f)) return Value();
  if (f.has_presence() && f.cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE &&
      f.real_containing_oneof() && !r.HasField(m, &f))
    return Value();
  return readSingle(schema, m, f, -1);
}

Value readMessage(const SchemaPtr& schema, const pb::Message& m) {
  if (schema->name() &&
      (hasName(*schema, Decimal::LOGICAL_NAME) || hasName(*schema, Date::LOGICAL_NAME) ||
       hasName(*schema, Time::LOGICAL_NAME) || hasName(*schema, Timestamp::LOGICAL_NAME)))
    return readLogical(schema, m);
  auto out = std::make_shared<Struct>(schema);
  const pb::Descriptor& d = *m.GetDescriptor();
  for (const Field& field : schema->fields()) {
    if (field.schema()->type() == Type::STRUCT && field.schema()->name() &&
        field.schema()->name()->starts_with(kUnionPrefix)) {
      auto member = std::make_shared<Struct>(field.schema());
      bool set = false;
      for (const Field& mf : field.schema()->fields()) {
        const pb::FieldDescriptor* f = d.FindFieldByName(mf.name());
        if (f && m.GetReflection()->HasField(m, f)) {
          member->put(mf, readField(mf.schema(), m, *f));
          set = true;
        }
      }
      if (set) out->put(field, Value(member));
      continue;
    }
    const pb::FieldDescriptor* f = d.FindFieldByName(field.name());
    if (f) out->put(field, readField(field.schema(), m, *f));
  }
  return Value(out);
}

class ProtobufReader : public Reader {
 public:
  ProtobufReader(std::shared_ptr<const registry::protobuf::SchemaData> data,
                 const pb::Descriptor* descriptor, std::optional<int> version)
      : data_(std::move(data)), descriptor_(descriptor) {
    schema = messageSchema(*data_, *descriptor_, version, 0);
    readsPayload = true;
  }
  Value read(const Json&) const override { throw DataException("Protobuf is read from bytes"); }
  Value readPayload(std::string_view payload) const override {
    size_t used = 0;
    if (!registry::protobuf::decode_message_indexes(payload, &used))
      throw DataException("Invalid message indexes");
    std::unique_ptr<pb::Message> m(data_->factory->GetPrototype(descriptor_)->New());
    payload.remove_prefix(used);
    if (!m->ParsePartialFromArray(payload.data(), static_cast<int>(payload.size())))
      throw DataException("Invalid Protobuf binary for " + descriptor_->full_name());
    return readMessage(schema, *m);
  }

 private:
  std::shared_ptr<const registry::protobuf::SchemaData> data_;
  const pb::Descriptor* descriptor_;
};

registry::protobuf::Schema parsed(const registry::SchemaInfo& info) {
  // Confluent's serializers register well-known imports as references too; those are built in.
  for (const registry::SchemaReference& ref : info.references)
    if (!registry::protobuf::builtin_file(ref.name))
      throw DataException("Protobuf schemas with references (" + ref.name +
                          ") cannot be read by this converter yet");
  auto result = registry::protobuf::parse(info.schema, {});
  if (!result) throw DataException("Invalid Protobuf schema: " + result.error);
  return *result.schema;
}

class ProtobufData : public FormatData {
 public:
  std::unique_ptr<Writer> writer(const SchemaPtr& schema) const override {
    return std::make_unique<ProtobufWriter>(schema);
  }
  std::unique_ptr<Reader> reader(const registry::SchemaInfo& writer,
                                 const std::vector<int>& indexes,
                                 std::optional<int> version) const override {
    const registry::protobuf::Schema schema = parsed(writer);
    const std::string name = recordName(writer, indexes);
    const pb::Descriptor* d = schema.data()->pool->FindMessageTypeByName(name);
    if (!d) throw DataException("No message " + name + " in the writer's schema");
    return std::make_unique<ProtobufReader>(schema.data(), d, version);
  }
  std::string recordName(const registry::SchemaInfo& writer,
                         const std::vector<int>& indexes) const override {
    const registry::protobuf::Schema schema = parsed(writer);
    auto name = registry::protobuf::message_name(
        schema, std::vector<int32_t>(indexes.begin(), indexes.end()));
    if (!name) throw DataException("The message indexes name no message of the schema");
    return *name;
  }
};

}  // namespace

std::unique_ptr<FormatData> protobufData() {
  return std::make_unique<ProtobufData>();
}

}  // namespace oxbow::connect::registry_detail
