#pragma once
// The loaded form of a JSON schema: one Node per schema object, shaped like everit's classes
// (Confluent's diff dispatches on those classes, so the kinds here are exactly them).
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "registry/json/schema.h"

namespace re2 {
class RE2;
}

namespace oxbow::registry::json::detail {

// Schema text as read: key order kept, as Jackson keeps it.
using Tree = nlohmann::ordered_json;

enum class Kind : uint8_t {
  kEmpty,  // {} and objects with only annotations
  kTrue,
  kFalse,
  kRef,
  kString,
  kNumber,
  kBoolean,
  kNull,
  kObject,
  kArray,
  kEnum,
  kConst,
  kCombined,
  kNot,
  kConditional,
};

enum class Criterion : uint8_t { kAll, kAny, kOne };
const char* criterion_name(Criterion c);

// A pattern as Java's regex would take it: RE2 when it can (linear time), std::regex for the
// constructs RE2 lacks (lookaround, backreferences).
class Pattern {
 public:
  static std::shared_ptr<const Pattern> compile(const std::string& source, std::string* error);
  ~Pattern();
  const std::string& source() const { return source_; }
  // Java's Matcher.find(): matches anywhere in `subject`. Nothing when it cannot tell.
  std::optional<bool> find(std::string_view subject) const;

 private:
  Pattern() = default;
  std::string source_;
  std::unique_ptr<re2::RE2> re2_;
};

struct Node {
  Kind kind = Kind::kEmpty;
  // The text it came from and, for one of several kinds read from one object, which kind:
  // Confluent de-duplicates a combination's subschemas by their text.
  const Tree* raw = nullptr;
  const char* tag = "";

  // Common to every kind, as everit loads them onto the schema it returns.
  std::optional<std::string> id, title, description;
  std::optional<nlohmann::json> default_value;
  bool connect_bytes = false;  // "connect.type":"bytes"

  // kRef
  std::string ref;
  const Node* target = nullptr;

  // kString
  std::optional<int64_t> min_length, max_length;
  std::shared_ptr<const Pattern> pattern;
  bool requires_string = false;

  // kNumber
  std::optional<double> minimum, maximum, exclusive_minimum, exclusive_maximum;
  bool minimum_exclusive = false, maximum_exclusive = false;  // draft 4's boolean forms
  std::optional<double> multiple_of;
  bool requires_integer = false, requires_number = false;

  // kObject
  std::vector<std::pair<std::string, const Node*>> properties;
  std::vector<std::string> required;
  bool permits_additional = true;
  const Node* additional = nullptr;
  std::vector<std::pair<std::shared_ptr<const Pattern>, const Node*>> pattern_properties;
  std::vector<std::pair<std::string, std::vector<std::string>>> property_dependencies;
  std::vector<std::pair<std::string, const Node*>> schema_dependencies;
  std::optional<int64_t> min_properties, max_properties;
  const Node* property_names = nullptr;
  bool requires_object = false;

  // kArray
  const Node* all_items = nullptr;
  std::vector<const Node*> item_schemas;
  bool permits_additional_items = true;
  const Node* additional_items = nullptr;
  std::optional<int64_t> min_items, max_items;
  bool unique_items = false;
  const Node* contains = nullptr;
  bool requires_array = false;

  // kEnum (values), kConst (values[0])
  std::vector<nlohmann::json> values;

  // kCombined, kNot (subschemas[0]), kConditional (if, then, else; each may be null)
  Criterion criterion = Criterion::kAll;
  bool synthetic = false;
  std::vector<const Node*> subschemas;
};

struct Graph {
  std::shared_ptr<const Tree> tree;
  std::string canonical, normalized;
  Draft draft = Draft::k7;
  std::optional<std::string> title;
  std::deque<Node> nodes;
  const Node* root = nullptr;
  // Documents `$ref`s reached, kept alive with this schema.
  std::vector<std::shared_ptr<const Tree>> referenced;
};

// Reading the text (text.cpp).
struct TextParse {
  std::shared_ptr<Tree> tree;
  std::string canonical, normalized;
  std::string error;
};
TextParse parse_text(std::string_view text);

// Loading the nodes (loader.cpp). Fills graph.nodes and graph.root; throws LoadError.
struct LoadError {
  std::string message;
};
struct NamedTree {
  std::string name;
  std::shared_ptr<const Tree> tree;
};
void load(Graph& graph, const std::vector<NamedTree>& references);

// Validation (validate.cpp).
std::optional<std::string> validate(const Node& schema, const nlohmann::json& doc);

}  // namespace oxbow::registry::json::detail
