#pragma once
// A registered schema of any type, as the registry handles it: its type, the canonical text it
// stores, returns and compares, and what it cannot read of another's data. One implementation per
// schema type (Confluent's "schema providers"); AVRO today, JSON and PROTOBUF to follow.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace oxbow::registry {

class ParsedSchema {
 public:
  virtual ~ParsedSchema() = default;
  // "AVRO", "JSON" or "PROTOBUF".
  virtual const std::string& type() const = 0;
  // The text Confluent's registry keeps for it: two schemas are the same when these are equal.
  virtual const std::string& canonical() const = 0;
  // Confluent's detail items for what this schema, reading, cannot read of data written with
  // `writer` (of the same type); empty when it reads all of it. The labels name the two schemas
  // in the texts: "new" for the one being registered, "old" for a registered one.
  // The canonical text after Confluent's normalization (`normalize=true`); the canonical text for
  // types with nothing to normalize.
  virtual std::string normalized() const { return canonical(); }
  // The text for GET ...?format=F (Confluent's "resolved" for Avro: references written in
  // place; "serialized" for Protobuf: the descriptor, base64); nullopt for a format the type does
  // not have, which is answered with the canonical text.
  virtual std::optional<std::string> formatted(std::string_view) const { return std::nullopt; }
  virtual std::vector<std::string> reader_problems(const ParsedSchema& writer,
                                                   const std::string& reader_label,
                                                   const std::string& writer_label) const = 0;

  // The schemas this one references, which its own may point into (an Avro record naming a
  // referenced type): kept for as long as it lives.
  void keep(std::vector<std::unique_ptr<ParsedSchema>> references) {
    for (auto& r : references) kept_.push_back(std::move(r));
  }

 private:
  std::vector<std::unique_ptr<ParsedSchema>> kept_;
};

// A schema a new one references, with the name the reference gives it (an Avro reference's name
// is the referenced type's full name; a Protobuf one the import path; a JSON Schema one the URL
// `$ref` uses).
struct NamedSchema {
  std::string name;
  const ParsedSchema* schema = nullptr;
};

struct SchemaParse {
  std::unique_ptr<ParsedSchema> schema;
  std::string error;  // Confluent's "details" for a 42201 when there is no schema
};

// `type` as the request gives it (empty: AVRO). `references`: the parsed schemas it references,
// directly or through one another.
// `validate_defaults`: schema.providers.avro.validate.defaults (see avro/schema.h).
SchemaParse parse_schema(std::string_view type, std::string_view text,
                         const std::vector<NamedSchema>& references, bool validate_defaults);

// The types parse_schema knows, as GET /schemas/types lists them.
std::vector<std::string> schema_types();

}  // namespace oxbow::registry
