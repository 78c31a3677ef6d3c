#pragma once
// Avro schemas as the registry reads them: parsed by the rules of the Avro specification (1.11)
// as Avro's Java implementation applies them, since that is what Confluent's registry runs.
//
// - Names are [A-Za-z_][A-Za-z0-9_]* (Java also takes non-ASCII letters; this parser does not).
//   A named type's full name is its name when that holds a dot, else its "namespace" attribute
//   (which may be "") or, without one, the enclosing namespace, then a dot, then its name. A
//   named type may not be named after a primitive type, nor defined twice.
// - A type given by name is a primitive, or a named type already defined: looked up by full name
//   in the enclosing namespace, then in the null namespace.
// - Defaults are checked against their field's type as Java's validation does (unless
//   ParseOptions::validate_defaults is off): a union's default matches its first branch; a
//   record's names every field that has no default of its own.
// - Logical types are kept when valid for their base type; an invalid one is ignored, as Java
//   ignores it, and stays among the attributes.
// - Attributes the specification does not define are kept, in order, as properties.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace oxbow::registry::avro {

enum class Kind : uint8_t {
  kNull,
  kBoolean,
  kInt,
  kLong,
  kFloat,
  kDouble,
  kBytes,
  kString,
  kRecord,
  kEnum,
  kArray,
  kMap,
  kUnion,
  kFixed,
};
const char* kind_name(Kind kind);
bool is_named(Kind kind);

// Custom attributes in the order written (nlohmann's ordered_json keeps it).
using Properties = nlohmann::ordered_json;

struct Node;

struct Field {
  std::string name;
  const Node* type = nullptr;
  std::optional<nlohmann::ordered_json> default_value;
  std::optional<std::string> doc;
  std::vector<std::string> aliases;
  std::optional<std::string> order;  // "ascending", "descending" or "ignore"
  Properties properties = Properties::object();
};

// One schema node. Named types (record, enum, fixed) are defined once and referred to by their
// nodes elsewhere, so a recursive record refers to itself.
struct Node {
  Kind kind = Kind::kNull;
  std::string full_name, space;  // named types; space may be empty
  std::optional<std::string> doc;
  std::vector<std::string> aliases;  // full names
  bool is_error = false;             // a record declared "error"
  std::vector<Field> fields;         // record
  std::vector<std::string> symbols;  // enum
  std::optional<std::string> enum_default;
  const Node* items = nullptr;        // array
  const Node* values = nullptr;       // map
  std::vector<const Node*> branches;  // union
  int64_t size = 0;                   // fixed
  std::string logical_type;           // a valid one, else empty
  int32_t precision = 0, scale = 0;   // decimal
  Properties properties = Properties::object();
};

class Schema {
 public:
  Schema(Schema&&) = default;
  Schema& operator=(Schema&&) = default;
  Schema(const Schema&) = delete;
  Schema& operator=(const Schema&) = delete;

  const Node& root() const { return *root_; }
  // A named type by full name, nullptr when the schema defines none.
  const Node* named(const std::string& full_name) const;
  // Named types in the order they were defined.
  const std::vector<const Node*>& named_types() const { return named_order_; }

 private:
  friend class Parser;
  Schema() = default;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::map<std::string, const Node*> named_;
  std::vector<const Node*> named_order_;
  const Node* root_ = nullptr;
};

// A parse's outcome: the schema, or why there is none (one line).
struct ParseResult {
  std::optional<Schema> schema;
  std::string error;
  explicit operator bool() const { return schema.has_value(); }
};

struct ParseOptions {
  // Schemas referenced by this one (Confluent's schema references), whose named types it may use
  // by name.
  std::vector<const Schema*> known;
  // Check each default against its type. Confluent's registry does so only with
  // schema.providers.avro.validate.defaults=true (or when normalizing); a bad default otherwise
  // fails readers later, when they need it.
  bool validate_defaults = true;
};
ParseResult parse(std::string_view json, const ParseOptions& options = {});

// The specification's Parsing Canonical Form: full names, only the attributes that matter for
// reading (name, type, fields, symbols, items, values, size, in that order), no whitespace.
std::string parsing_canonical_form(const Schema& schema);

// The schema as Avro's Java implementation prints it (Schema.toString()), which is what Confluent's
// registry stores, returns and compares: no whitespace; a named type spelled out where it first
// appears, with its name relative to the enclosing namespace, and referred to by name after that
// (and always, for the types of `known` schemas); docs, aliases, defaults, non-ascending orders,
// logical types and custom properties kept, in Java's key order. `normalize`: Confluent's
// normalization (normalize=true): custom properties sorted by key after a logical type's own,
// aliases sorted, empty docs of named types left out.
std::string canonical_string(const Schema& schema, const std::vector<const Schema*>& known = {},
                             bool normalize = false);

// The 64-bit Rabin fingerprint (CRC-64-AVRO) of `text`, as the specification defines it.
uint64_t fingerprint64(std::string_view text);

}  // namespace oxbow::registry::avro
