// What the serdes need of a schema: the message indexes of the wire format (§2.7) and a message's
// JSON <-> binary conversion through a DynamicMessage of the schema's pool.
#include <google/protobuf/util/json_util.h>

#include "registry/protobuf/schema_data.h"

namespace oxbow::registry::protobuf {

namespace {

// Kafka's ByteUtils.writeVarint: zig-zag, then base 128, low group first.
void put_varint(std::string& out, int32_t v) {
  uint32_t z = (static_cast<uint32_t>(v) << 1) ^ static_cast<uint32_t>(v >> 31);
  while (z >= 0x80) {
    out.push_back(static_cast<char>((z & 0x7f) | 0x80));
    z >>= 7;
  }
  out.push_back(static_cast<char>(z));
}

std::optional<int32_t> get_varint(std::string_view in, size_t* pos) {
  uint32_t z = 0;
  for (int shift = 0; shift < 35; shift += 7) {
    if (*pos >= in.size()) return std::nullopt;
    auto b = static_cast<uint8_t>(in[(*pos)++]);
    if (shift == 28 && (b & 0xf0) != 0) return std::nullopt;  // more than 32 bits
    z |= static_cast<uint32_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return static_cast<int32_t>((z >> 1) ^ (~(z & 1) + 1));
  }
  return std::nullopt;
}

// The messages of a scope that the indexes count, in order (Confluent's tree: no map entries or
// groups of a text).
std::vector<const pb::Descriptor*> counted(
    const FileSource& file, const pb::RepeatedPtrField<pb::DescriptorProto>& src,
    const pb::RepeatedPtrField<pb::FieldDescriptorProto>* fields, const pb::Descriptor* parent,
    const pb::FileDescriptor* f) {
  std::vector<const pb::Descriptor*> out;
  for (int i = 0; i < src.size(); ++i)
    if (!hidden_message(file, src[i], fields))
      out.push_back(parent ? parent->nested_type(i) : f->message_type(i));
  return out;
}

const pb::Descriptor* find_message(const SchemaData& s, std::string_view name) {
  if (!name.empty() && name[0] == '.') name.remove_prefix(1);
  return s.pool->FindMessageTypeByName(std::string(name));
}

}  // namespace

std::string encode_message_indexes(const std::vector<int32_t>& indexes) {
  if (indexes.size() == 1 && indexes[0] == 0) return std::string(1, '\0');
  std::string out;
  put_varint(out, static_cast<int32_t>(indexes.size()));
  for (int32_t i : indexes) put_varint(out, i);
  return out;
}

std::optional<std::vector<int32_t>> decode_message_indexes(std::string_view bytes,
                                                           size_t* consumed) {
  size_t pos = 0;
  auto count = get_varint(bytes, &pos);
  if (!count || *count < 0) return std::nullopt;
  std::vector<int32_t> out;
  if (*count == 0) {
    out.push_back(0);
  } else {
    // Each index takes a byte at least: a larger count is garbage, not a reason to allocate.
    if (static_cast<size_t>(*count) > bytes.size() - pos) return std::nullopt;
    for (int32_t i = 0; i < *count; ++i) {
      auto v = get_varint(bytes, &pos);
      if (!v) return std::nullopt;
      out.push_back(*v);
    }
  }
  if (consumed != nullptr) *consumed = pos;
  return out;
}

std::optional<std::string> message_name(const Schema& schema, const std::vector<int32_t>& indexes) {
  const SchemaData& s = *schema.data();
  const pb::DescriptorProto* src = nullptr;
  const pb::Descriptor* d = nullptr;
  for (int32_t index : indexes) {
    auto list = src == nullptr
                    ? counted(s.source, s.source.proto.message_type(), nullptr, nullptr, s.file)
                    : counted(s.source, src->nested_type(), &src->field(), d, s.file);
    if (index < 0 || static_cast<size_t>(index) >= list.size()) return std::nullopt;
    d = list[index];
    // The source of d: same position among the unfiltered siblings.
    src = d->containing_type() == nullptr ? &s.source.proto.message_type(d->index())
                                          : &src->nested_type(d->index());
  }
  if (d == nullptr) return std::nullopt;
  return d->full_name();
}

std::optional<std::vector<int32_t>> message_indexes(const Schema& schema,
                                                    std::string_view full_name) {
  const SchemaData& s = *schema.data();
  const pb::Descriptor* d = find_message(s, full_name);
  if (d == nullptr || d->file() != s.file) return std::nullopt;
  std::vector<const pb::Descriptor*> chain;
  for (const pb::Descriptor* p = d; p != nullptr; p = p->containing_type()) chain.push_back(p);
  std::vector<int32_t> out;
  const pb::DescriptorProto* src = nullptr;
  const pb::Descriptor* parent = nullptr;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    auto list = src == nullptr
                    ? counted(s.source, s.source.proto.message_type(), nullptr, nullptr, s.file)
                    : counted(s.source, src->nested_type(), &src->field(), parent, s.file);
    auto pos = std::find(list.begin(), list.end(), *it);
    if (pos == list.end()) return std::nullopt;  // a map entry of a text: not addressable
    out.push_back(static_cast<int32_t>(pos - list.begin()));
    src = src == nullptr ? &s.source.proto.message_type((*it)->index())
                         : &src->nested_type((*it)->index());
    parent = *it;
  }
  return out;
}

Converted json_to_binary(const Schema& schema, std::string_view message, std::string_view json) {
  Converted out;
  const SchemaData& s = *schema.data();
  const pb::Descriptor* d = find_message(s, message);
  if (d == nullptr) {
    out.error = "Unknown message " + std::string(message);
    return out;
  }
  std::unique_ptr<pb::Message> m(s.factory->GetPrototype(d)->New());
  pb::util::JsonParseOptions options;
  auto status =
      pb::util::JsonStringToMessage(pb::StringPiece(json.data(), json.size()), m.get(), options);
  if (!status.ok()) {
    out.error = "Invalid JSON for " + d->full_name() + ": " + std::string(status.message());
    return out;
  }
  std::string bytes;
  if (!m->SerializeToString(&bytes)) {
    out.error = "Cannot encode " + d->full_name() + " (a required field is missing?)";
    return out;
  }
  out.value = std::move(bytes);
  return out;
}

Converted binary_to_json(const Schema& schema, std::string_view message, std::string_view binary,
                         const JsonOptions& options) {
  Converted out;
  const SchemaData& s = *schema.data();
  const pb::Descriptor* d = find_message(s, message);
  if (d == nullptr) {
    out.error = "Unknown message " + std::string(message);
    return out;
  }
  std::unique_ptr<pb::Message> m(s.factory->GetPrototype(d)->New());
  if (!m->ParsePartialFromArray(binary.data(), static_cast<int>(binary.size()))) {
    out.error = "Invalid Protobuf binary for " + d->full_name();
    return out;
  }
  pb::util::JsonPrintOptions print;
  print.preserve_proto_field_names = options.preserve_field_names;
  print.always_print_primitive_fields = options.include_defaults;
  std::string json;
  auto status = pb::util::MessageToJsonString(*m, &json, print);
  if (!status.ok()) {
    out.error = "Cannot print " + d->full_name() + " as JSON: " + std::string(status.message());
    return out;
  }
  out.value = std::move(json);
  return out;
}

}  // namespace oxbow::registry::protobuf
