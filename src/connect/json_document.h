#pragma once
// JsonConverter's parsed documents: nlohmann's ordered tree, except that a number with a fraction
// or an exponent keeps its text, so that a NUMERIC decimal reads exactly, as Connect reads it
// through BigDecimal. Such a number is held as a binary node (which JSON text never produces)
// whose bytes are the number's text.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace oxbow::connect::document {

using Json = nlohmann::ordered_json;

// Jackson's default limit on nesting (StreamReadConstraints): deeper documents are refused while
// parsing, before anything recurses over them.
constexpr int kMaxDepth = 1000;

// The document in `text`; DataException for malformed JSON (the parser's message after
// `prefix`) or nesting past kMaxDepth. With `schemaText`, the top-level object's "schema" member
// is left null in the tree and its compact text (appendCompact's) written to `schemaText`
// instead, which is left alone when there is no such member.
Json parse(std::string_view text, std::string_view prefix, std::string* schemaText = nullptr);

inline bool isFloat(const Json& node) {
  return node.is_binary();
}
inline bool isNumber(const Json& node) {
  return node.is_number() || isFloat(node);
}
// A floating-point number's text as written.
inline std::string_view floatText(const Json& node) {
  const auto& bytes = node.get_binary();
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}
// Any number as a double.
double doubleOf(const Json& node);
// A compact JSON text of the node (floats as written): equal for documents that differ only in
// whitespace, different otherwise.
void appendCompact(const Json& node, std::string& out);

}  // namespace oxbow::connect::document
