// PROTOBUF for the registry: registry/protobuf/'s schemas behind ParsedSchema.
#include "registry/protobuf/schema.h"
#include "registry/schema_providers.h"

namespace oxbow::registry {

namespace {

class ProtobufParsed final : public ParsedSchema {
 public:
  explicit ProtobufParsed(protobuf::Schema schema) : schema_(std::move(schema)) {}

  const std::string& type() const override {
    static const std::string kType = "PROTOBUF";
    return kType;
  }
  const std::string& canonical() const override { return schema_.canonical(); }
  std::string normalized() const override { return schema_.normalized(); }
  std::optional<std::string> formatted(std::string_view format) const override {
    if (format != "serialized") return std::nullopt;
    return schema_.serialized();
  }
  std::vector<std::string> reader_problems(const ParsedSchema& writer,
                                           const std::string& reader_label,
                                           const std::string& writer_label) const override {
    const auto& w = static_cast<const ProtobufParsed&>(writer);
    return protobuf::reader_problems(schema_, w.schema_, reader_label, writer_label);
  }
  const protobuf::Schema& schema() const { return schema_; }

 private:
  protobuf::Schema schema_;
};

}  // namespace

SchemaParse parse_protobuf_schema(std::string_view text,
                                  const std::vector<NamedSchema>& references) {
  SchemaParse out;
  std::vector<protobuf::Reference> refs;
  for (const NamedSchema& named : references) {
    if (named.schema == nullptr) continue;
    if (named.schema->type() != "PROTOBUF") {
      out.error = "Invalid reference type " + named.schema->type() + " for a PROTOBUF schema";
      return out;
    }
    refs.push_back({named.name, &static_cast<const ProtobufParsed*>(named.schema)->schema()});
  }
  auto parsed = protobuf::parse(text, refs);
  if (!parsed) {
    out.error = parsed.error;
    return out;
  }
  out.schema = std::make_unique<ProtobufParsed>(std::move(*parsed.schema));
  return out;
}

}  // namespace oxbow::registry
