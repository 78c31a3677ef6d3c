// Parsing through nlohmann's SAX interface into its tree, floats kept as their text.
#include "json_document.h"

#include <charconv>
#include <vector>

#include "json_state.h"
#include "oxbow/connect/errors.h"

namespace oxbow::connect::document {
namespace {

// Builds the tree as nlohmann's own DOM parser does; the containers being filled are on a
// stack, and only the innermost grows, so the pointers to the outer ones stay valid.
class TreeBuilder {
 public:
  TreeBuilder(Json& root, std::string_view prefix) : root_(root), prefix_(prefix) {}

  bool null() { return add(Json(nullptr)); }
  bool boolean(bool v) { return add(Json(v)); }
  bool number_integer(Json::number_integer_t v) { return add(Json(v)); }
  bool number_unsigned(Json::number_unsigned_t v) { return add(Json(v)); }
  bool number_float(Json::number_float_t, const Json::string_t& text) {
    return add(Json::binary(Json::binary_t::container_type(text.begin(), text.end())));
  }
  bool string(Json::string_t& v) { return add(Json(std::move(v))); }
  bool binary(Json::binary_t& v) { return add(Json::binary(std::move(v))); }
  bool start_object(std::size_t) { return open(Json::object()); }
  bool key(Json::string_t& key) {
    member_ = &(*open_.back())[key];
    return true;
  }
  bool end_object() { return close(); }
  bool start_array(std::size_t) { return open(Json::array()); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    throw DataException(std::string(prefix_) + e.what());
  }

 private:
  Json* place(Json value) {
    if (open_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    Json& container = *open_.back();
    if (container.is_array()) {
      container.push_back(std::move(value));
      return &container.back();
    }
    *member_ = std::move(value);
    return member_;
  }
  bool add(Json value) {
    place(std::move(value));
    return true;
  }
  bool open(Json container) {
    if (open_.size() >= static_cast<size_t>(kMaxDepth))
      throw DataException("JSON nesting is deeper than " + std::to_string(kMaxDepth));
    open_.push_back(place(std::move(container)));
    return true;
  }
  bool close() {
    open_.pop_back();
    return true;
  }

  Json& root_;
  std::string_view prefix_;
  std::vector<Json*> open_;
  Json* member_ = nullptr;
};

}  // namespace

Json parse(std::string_view text, std::string_view prefix) {
  Json root;
  TreeBuilder builder(root, prefix);
  Json::sax_parse(text.begin(), text.end(), &builder);
  return root;
}

double doubleOf(const Json& node) {
  if (!isFloat(node)) return node.get<double>();
  std::string_view text = floatText(node);
  double value = 0;
  auto error = std::from_chars(text.data(), text.data() + text.size(), value).ec;
  // The parser has refused numbers too large for a double; one too small to be told from zero
  // (1e-400) is zero, as Java reads it.
  if (error == std::errc::result_out_of_range) return text[0] == '-' ? -0.0 : 0.0;
  return value;
}

void appendCompact(const Json& node, std::string& out) {
  switch (node.type()) {
    case Json::value_t::object: {
      out += '{';
      bool first = true;
      for (const auto& [key, value] : node.items()) {
        if (!first) out += ',';
        first = false;
        appendJsonString(key, out);
        out += ':';
        appendCompact(value, out);
      }
      out += '}';
      return;
    }
    case Json::value_t::array: {
      out += '[';
      bool first = true;
      for (const Json& element : node) {
        if (!first) out += ',';
        first = false;
        appendCompact(element, out);
      }
      out += ']';
      return;
    }
    case Json::value_t::string:
      appendJsonString(node.get_ref<const std::string&>(), out);
      return;
    case Json::value_t::binary:
      out += floatText(node);
      return;
    default:
      out += node.dump();
  }
}

}  // namespace oxbow::connect::document
