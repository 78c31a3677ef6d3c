#include "registry/parsed_schema.h"

#include "registry/avro/compatibility.h"
#include "registry/avro/schema.h"
#include "registry/schema_providers.h"

namespace oxbow::registry {

namespace {

class AvroParsed final : public ParsedSchema {
 public:
  AvroParsed(avro::Schema schema, std::vector<const avro::Schema*> known)
      : schema_(std::move(schema)),
        canonical_(avro::canonical_string(schema_, known)),
        normalized_(avro::canonical_string(schema_, known, true)) {}

  const std::string& type() const override {
    static const std::string kType = "AVRO";
    return kType;
  }
  const std::string& canonical() const override { return canonical_; }
  std::string normalized() const override { return normalized_; }
  std::optional<std::string> formatted(std::string_view format) const override {
    if (format != "resolved") return std::nullopt;
    return avro::canonical_string(schema_);  // no type known beforehand: all written in place
  }
  std::vector<std::string> reader_problems(const ParsedSchema& writer,
                                           const std::string& reader_label,
                                           const std::string& writer_label) const override {
    const auto& w = static_cast<const AvroParsed&>(writer);
    std::vector<std::string> out;
    for (const auto& p : avro::reader_writer_problems(schema_, w.schema_))
      out.push_back(avro::confluent_text(p, reader_label, writer_label));
    return out;
  }
  const avro::Schema& schema() const { return schema_; }

 private:
  avro::Schema schema_;
  std::string canonical_, normalized_;
};

}  // namespace

SchemaParse parse_schema(std::string_view type, std::string_view text,
                         const std::vector<NamedSchema>& references, bool validate_defaults) {
  if (type == "JSON") return parse_json_schema(text, references);
  if (type == "PROTOBUF") return parse_protobuf_schema(text, references);
  SchemaParse out;
  if (!type.empty() && type != "AVRO") {
    out.error = "Invalid schema type " + std::string(type);
    return out;
  }
  avro::ParseOptions options;
  options.validate_defaults = validate_defaults;
  for (const NamedSchema& named : references) {
    const ParsedSchema* r = named.schema;
    if (r->type() != "AVRO") {
      out.error = "Invalid reference type " + r->type() + " for an AVRO schema";
      return out;
    }
    options.known.push_back(&static_cast<const AvroParsed*>(r)->schema());
  }
  auto parsed = avro::parse(text, options);
  if (!parsed) {
    out.error = parsed.error;
    return out;
  }
  out.schema = std::make_unique<AvroParsed>(std::move(*parsed.schema), options.known);
  return out;
}

std::vector<std::string> schema_types() {
  // As Confluent's GET /schemas/types lists them (docs/registry/confluent.md).
  return {"JSON", "PROTOBUF", "AVRO"};
}

}  // namespace oxbow::registry
