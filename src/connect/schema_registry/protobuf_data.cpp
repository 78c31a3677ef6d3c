// ProtobufData: writers' Protobuf schemas to Connect schemas as Confluent's ProtobufData reads them
// (its defaults: no wrappers or `optional` for nullable fields, enums as strings, oneofs as structs
// named io.confluent.connect.protobuf.Union.NAME, every field optional and tagged with its number),
// values read from the payload with libprotobuf's reflection over the writer's descriptors; the
// writing side is protobuf_write.cpp.
#include <google/protobuf/dynamic_message.h>

#include <cctype>
#include <map>

#include "connect/civil_date.h"
#include "connect/schema_registry/protobuf_names.h"
#include "oxbow/connect/errors.h"
#include "oxbow/connect/logical.h"
#include "oxbow/connect/struct.h"
#include "registry/protobuf/schema.h"
#include "registry/protobuf/schema_data.h"

namespace oxbow::connect::registry_detail {
namespace {

namespace pb = google::protobuf;

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
  if (depth > kMaxProtobufDepth)
    throw DataException("Protobuf schema nested too deeply (or recursive)");
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
    return protobufWriter(schema);
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
