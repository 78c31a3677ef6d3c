#pragma once
// JSON Schema as Confluent's registry handles it (its json-schema-provider: documents read with
// Jackson, drafts 4/6/7 loaded by everit, schemas compared by its own diff). See
// docs/registry/confluent-json-protobuf.md §1 for the facts this follows.
//
// - The text must be JSON whose root is an object or a boolean. Nesting deeper than kMaxNesting
//   is refused, so that nothing here recurses without bound.
// - The draft comes from the root `$schema` (one trailing `#` ignored); anything else is draft 7.
// - Schemas are loaded by everit's rules: `$ref` hides its siblings, `"type":[...]` is an anyOf,
//   several kinds of keyword on one object become a synthetic allOf, an object without keywords
//   is the empty schema. 2019-09 and 2020-12 are loaded by the same rules, with `prefixItems`,
//   `dependentRequired` and `dependentSchemas` read as their draft-7 forms.
// - `$ref` resolves JSON pointers (`#/definitions/..`, `#/$defs/..`), `$id`/`$anchor` fragments,
//   and the references given to parse, whose name is the URL before the `#`.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace oxbow::registry::json {

// Deepest nesting of arrays and objects accepted in a schema's text.
inline constexpr int kMaxNesting = 256;

enum class Draft { k4, k6, k7, k2019_09, k2020_12 };

namespace detail {
struct Graph;
struct Node;
}  // namespace detail

class Schema {
 public:
  // What the registry stores: Jackson's compact re-print, keys in the order written.
  const std::string& canonical() const;
  // The canonical text with every object's keys sorted (Confluent's `normalize`).
  const std::string& normalized() const;
  Draft draft() const;
  // The root `title` (Confluent's ParsedSchema.name()).
  const std::optional<std::string>& title() const;
  // Nothing when `doc` is valid; else the first violation, as "#/path: what is wrong".
  std::optional<std::string> validate(const nlohmann::json& doc) const;

  const detail::Node& root() const;
  const detail::Graph& graph() const { return *graph_; }

 private:
  friend struct SchemaAccess;
  std::shared_ptr<const detail::Graph> graph_;
};

// A schema that `$ref`s may name: `name` is the URL they use (before any `#` fragment).
struct Reference {
  std::string name;
  const Schema* schema = nullptr;
};

struct ParseResult {
  std::optional<Schema> schema;
  std::string error;  // Confluent's 42201 details when there is no schema
  explicit operator bool() const { return schema.has_value(); }
};

// `references`: every schema reachable through `$ref`, directly or through one another.
ParseResult parse(std::string_view text, const std::vector<Reference>& references = {});

}  // namespace oxbow::registry::json
