// PROTOBUF in the serdes: message indexes, then the message's binary encoding. Values are the
// message in Protobuf's JSON mapping, converted by registry/protobuf/ (libprotobuf behind it).
#include <optional>

#include "registry/protobuf/schema.h"
#include "registry/serde/serde_formats.h"

namespace oxbow::registry::serde_detail {

namespace {

std::string indexes_text(const std::vector<int32_t>& indexes) {
  std::string out = "[";
  for (size_t i = 0; i < indexes.size(); ++i)
    out += (i > 0 ? ", " : "") + std::to_string(indexes[i]);
  return out + "]";
}

class ProtobufCodec final : public Codec {
 public:
  ProtobufCodec(protobuf::Schema schema, std::string message, std::string indexes)
      : schema_(std::move(schema)), message_(std::move(message)), indexes_(std::move(indexes)) {}

  std::string record_name() const override { return message_; }

  void encode(const Json& value, std::string& out) const override {
    if (message_.empty()) throw SerdeError("the schema has no message to write");
    if (!value.is_object())
      throw SerdeError("a " + message_ + " is written from a JSON object, not " +
                       std::string(value.type_name()));
    std::string text;
    try {
      text = value.dump(-1, ' ', false, Json::error_handler_t::strict);
    } catch (const Json::exception& e) {
      throw SerdeError(std::string("the value cannot be written as JSON: ") + e.what());
    }
    auto converted = protobuf::json_to_binary(schema_, message_, text);
    if (!converted) throw SerdeError(converted.error);
    out += indexes_;
    out += *converted.value;
  }

  Json decode(std::string_view payload, const Codec*) const override {
    return Json::parse(to_json(payload));
  }
  OJson decode_ordered(std::string_view payload, const Codec*) const override {
    return OJson::parse(to_json(payload));
  }

 private:
  std::string to_json(std::string_view payload) const {
    size_t used = 0;
    auto indexes = protobuf::decode_message_indexes(payload, &used);
    if (!indexes) throw SerdeError("Invalid message indexes: they do not decode");
    auto name = protobuf::message_name(schema_, *indexes);
    if (!name)
      throw SerdeError("Invalid message indexes: " + indexes_text(*indexes) +
                       " name no message of the schema");
    protobuf::JsonOptions options;
    options.include_defaults = true;
    auto converted = protobuf::binary_to_json(schema_, *name, payload.substr(used), options);
    if (!converted) throw SerdeError(converted.error);
    return std::move(*converted.value);
  }

  protobuf::Schema schema_;
  std::string message_;  // the message written; empty when the schema has none
  std::string indexes_;  // its encoded message indexes
};

// The message a serializer writes: `wanted` by its full name, or without its package; empty
// `wanted`: the first message.
std::string pick_message(const protobuf::Schema& schema, const std::string& wanted) {
  if (wanted.empty()) return protobuf::message_name(schema, {0}).value_or(std::string());
  const std::string name = wanted[0] == '.' ? wanted.substr(1) : wanted;
  const auto names = schema.message_names();
  for (const auto& n : names)
    if (n == name) return n;
  for (const auto& n : names)
    if (n.size() > name.size() && n.ends_with(name) && n[n.size() - name.size() - 1] == '.')
      return n;
  std::string known;
  for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
  throw SerdeError("the schema has no message " + wanted + " (it has " + known + ")");
}

}  // namespace

std::vector<std::string> protobuf_imports(const std::string& text) {
  auto imports = protobuf::unresolved_imports(text);
  if (!imports) {
    auto result = protobuf::parse(text, {});
    throw SerdeError("Invalid Protobuf schema: " +
                     (result ? std::string("unreadable imports") : result.error));
  }
  return *imports;
}

std::shared_ptr<const Codec> make_protobuf_codec(SchemaRegistryClient* client,
                                                 const SchemaInfo& info,
                                                 const FormatSettings& settings) {
  if (info.type != "PROTOBUF") throw SerdeError("the schema is " + info.type + ", not PROTOBUF");
  // Each referenced file is parsed with those before it (its own imports among them).
  std::vector<std::unique_ptr<protobuf::Schema>> parsed;
  std::vector<protobuf::Reference> known;
  for (auto& ref : fetch_references(client, info.references)) {
    if (ref.info.type != "PROTOBUF")
      throw SerdeError("referenced schema " + ref.name + " is " + ref.info.type + ", not PROTOBUF");
    auto result = protobuf::parse(ref.info.schema, known);
    if (!result)
      throw SerdeError("referenced schema " + ref.name + " does not parse: " + result.error);
    parsed.push_back(std::make_unique<protobuf::Schema>(std::move(*result.schema)));
    known.push_back({ref.name, parsed.back().get()});
  }
  auto result = protobuf::parse(info.schema, known);
  if (!result) throw SerdeError("Invalid Protobuf schema: " + result.error);
  protobuf::Schema schema = std::move(*result.schema);
  std::string message = pick_message(schema, settings.message);
  std::string indexes;
  if (!message.empty()) {
    auto path = protobuf::message_indexes(schema, message);
    if (!path) throw SerdeError("the message " + message + " cannot be addressed (a map entry?)");
    indexes = protobuf::encode_message_indexes(*path);
  }
  return std::make_shared<ProtobufCodec>(std::move(schema), std::move(message), std::move(indexes));
}

}  // namespace oxbow::registry::serde_detail
