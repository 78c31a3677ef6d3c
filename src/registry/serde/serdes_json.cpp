// JSON Schema in the serdes: the value's compact UTF-8 JSON text, validated against the schema
// only with json.fail.invalid.schema=true (Confluent's KafkaJsonSchemaSerializer and
// KafkaJsonSchemaDeserializer, whose default is false).
#include <optional>

#include "registry/json/schema.h"
#include "registry/serde/serde_formats.h"

namespace oxbow::registry::serde_detail {

namespace {

class JsonCodec final : public Codec {
 public:
  JsonCodec(json::Schema schema, bool validate) : schema_(std::move(schema)), validate_(validate) {}

  std::string record_name() const override { return schema_.title().value_or(std::string()); }

  void encode(const Json& value, std::string& out) const override {
    check(value, *this);
    try {
      out += value.dump(-1, ' ', false, Json::error_handler_t::strict);
    } catch (const Json::exception& e) {
      throw SerdeError(std::string("the value cannot be written as JSON: ") + e.what());
    }
  }

  Json decode(std::string_view payload, const Codec* reader) const override {
    Json value = Json::parse(payload, nullptr, false);
    if (value.is_discarded()) throw SerdeError("the payload is not JSON");
    check(value, reader ? *static_cast<const JsonCodec*>(reader) : *this);
    return value;
  }

  OJson decode_ordered(std::string_view payload, const Codec* reader) const override {
    OJson value = OJson::parse(payload, nullptr, false);
    if (value.is_discarded()) throw SerdeError("the payload is not JSON");
    if (validate_)
      check(Json::parse(payload), reader ? *static_cast<const JsonCodec*>(reader) : *this);
    return value;
  }

 private:
  void check(const Json& value, const JsonCodec& against) const {
    if (!validate_) return;
    if (auto problem = against.schema_.validate(value))
      throw SerdeError("Validation error in JSON " +
                       value.dump(-1, ' ', false, Json::error_handler_t::replace) + ": " +
                       *problem);
  }

  json::Schema schema_;
  bool validate_;
};

}  // namespace

std::shared_ptr<const Codec> make_json_codec(SchemaRegistryClient* client, const SchemaInfo& info,
                                             const FormatSettings& settings) {
  if (info.type != "JSON") throw SerdeError("the schema is " + info.type + ", not JSON");
  // Each referenced schema is parsed with those before it, as the registry parses them; the
  // graph of the last keeps what it needs.
  std::vector<json::Schema> parsed;
  std::vector<std::string> names;
  for (auto& ref : fetch_references(client, info.references)) {
    if (ref.info.type != "JSON")
      throw SerdeError("referenced schema " + ref.name + " is " + ref.info.type + ", not JSON");
    std::vector<json::Reference> known;
    for (size_t i = 0; i < parsed.size(); ++i) known.push_back({names[i], &parsed[i]});
    auto result = json::parse(ref.info.schema, known);
    if (!result)
      throw SerdeError("referenced schema " + ref.name + " does not parse: " + result.error);
    parsed.push_back(std::move(*result.schema));
    names.push_back(ref.name);
  }
  std::vector<json::Reference> known;
  for (size_t i = 0; i < parsed.size(); ++i) known.push_back({names[i], &parsed[i]});
  auto result = json::parse(info.schema, known);
  if (!result) throw SerdeError("Invalid JSON schema: " + result.error);
  return std::make_shared<JsonCodec>(std::move(*result.schema), settings.validate);
}

}  // namespace oxbow::registry::serde_detail
