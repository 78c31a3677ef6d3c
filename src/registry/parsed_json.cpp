// JSON Schema as a ParsedSchema: json::Schema (registry/json/) adapted to what the registry asks.
#include "registry/json/diff.h"
#include "registry/json/schema.h"
#include "registry/schema_providers.h"

namespace oxbow::registry {

namespace {

class JsonParsed final : public ParsedSchema {
 public:
  explicit JsonParsed(json::Schema schema) : schema_(std::move(schema)) {}

  const std::string& type() const override {
    static const std::string kType = "JSON";
    return kType;
  }
  const std::string& canonical() const override { return schema_.canonical(); }
  std::string normalized() const override { return schema_.normalized(); }
  // Confluent compares original = the writer's schema with update = the reader's, and names the
  // reader first in its texts.
  std::vector<std::string> reader_problems(const ParsedSchema& writer,
                                           const std::string& reader_label,
                                           const std::string& writer_label) const override {
    const auto& w = static_cast<const JsonParsed&>(writer);
    return json::incompatibilities(w.schema_, schema_, reader_label, writer_label);
  }
  const json::Schema& schema() const { return schema_; }

 private:
  json::Schema schema_;
};

}  // namespace

SchemaParse parse_json_schema(std::string_view text, const std::vector<NamedSchema>& references) {
  SchemaParse out;
  std::vector<json::Reference> refs;
  for (const NamedSchema& named : references) {
    if (!named.schema) continue;
    if (named.schema->type() != "JSON") {
      out.error = "Invalid reference type " + named.schema->type() + " for a JSON schema";
      return out;
    }
    refs.push_back({named.name, &static_cast<const JsonParsed*>(named.schema)->schema()});
  }
  auto parsed = json::parse(text, refs);
  if (!parsed) {
    out.error = parsed.error;
    return out;
  }
  out.schema = std::make_unique<JsonParsed>(std::move(*parsed.schema));
  return out;
}

}  // namespace oxbow::registry
