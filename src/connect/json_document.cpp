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
//
// With a `captured` string, the value of the top-level object's "schema" member is not built:
// its compact text is written there instead (as appendCompact writes it) and the member is left
// null. A converter then looks the text up in its cache, and builds the schema's tree only for a
// schema it has not seen: the tree of a schema is most of what parsing an envelope would cost.
class TreeBuilder {
 public:
  TreeBuilder(Json& root, std::string_view prefix, std::string* captured)
      : root_(root), prefix_(prefix), captured_(captured) {}

  bool null() { return capturing_ ? scalar("null") : add(Json(nullptr)); }
  bool boolean(bool v) { return capturing_ ? scalar(v ? "true" : "false") : add(Json(v)); }
  bool number_integer(Json::number_integer_t v) {
    return capturing_ ? scalar(std::to_string(v)) : add(Json(v));
  }
  bool number_unsigned(Json::number_unsigned_t v) {
    return capturing_ ? scalar(std::to_string(v)) : add(Json(v));
  }
  bool number_float(Json::number_float_t, const Json::string_t& text) {
    if (capturing_) return scalar(text);
    return add(Json::binary(Json::binary_t::container_type(text.begin(), text.end())));
  }
  bool string(Json::string_t& v) {
    if (!capturing_) return add(Json(std::move(v)));
    beforeCapturedValue();
    appendJsonString(v, *captured_);
    return afterCapturedValue();
  }
  bool binary(Json::binary_t& v) { return add(Json::binary(std::move(v))); }
  bool start_object(std::size_t) {
    return capturing_ ? openCaptured('{', false) : open(Json::object());
  }
  bool key(Json::string_t& key) {
    if (capturing_) {
      if (!capturedFirst_.back()) *captured_ += ',';
      capturedFirst_.back() = false;
      appendJsonString(key, *captured_);
      *captured_ += ':';
      return true;
    }
    member_ = &(*open_.back())[key];
    if (captured_ && open_.size() == 1 && key == "schema") {
      captured_->clear();
      capturing_ = true;
    }
    return true;
  }
  bool end_object() { return capturing_ ? closeCaptured('}') : close(); }
  bool start_array(std::size_t) {
    return capturing_ ? openCaptured('[', true) : open(Json::array());
  }
  bool end_array() { return capturing_ ? closeCaptured(']') : close(); }
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
  void checkDepth() const {
    if (open_.size() + capturedFirst_.size() >= static_cast<size_t>(kMaxDepth))
      throw DataException("JSON nesting is deeper than " + std::to_string(kMaxDepth));
  }
  bool open(Json container) {
    checkDepth();
    open_.push_back(place(std::move(container)));
    return true;
  }
  bool close() {
    open_.pop_back();
    return true;
  }

  // The captured text: a comma before an array's later elements (an object's keys write theirs).
  void beforeCapturedValue() {
    if (capturedArray_.empty() || !capturedArray_.back()) return;
    if (!capturedFirst_.back()) *captured_ += ',';
    capturedFirst_.back() = false;
  }
  // The member's value is complete when no captured container is open.
  bool afterCapturedValue() {
    if (capturedFirst_.empty()) {
      capturing_ = false;
      *member_ = Json(nullptr);
    }
    return true;
  }
  bool scalar(std::string_view text) {
    beforeCapturedValue();
    *captured_ += text;
    return afterCapturedValue();
  }
  bool openCaptured(char bracket, bool array) {
    checkDepth();
    beforeCapturedValue();
    *captured_ += bracket;
    capturedFirst_.push_back(true);
    capturedArray_.push_back(array);
    return true;
  }
  bool closeCaptured(char bracket) {
    *captured_ += bracket;
    capturedFirst_.pop_back();
    capturedArray_.pop_back();
    return afterCapturedValue();
  }

  Json& root_;
  std::string_view prefix_;
  std::vector<Json*> open_;
  Json* member_ = nullptr;
  std::string* captured_;
  bool capturing_ = false;
  std::vector<bool> capturedFirst_;  // per open captured container: nothing written in it yet
  std::vector<bool> capturedArray_;  // per open captured container: an array
};

}  // namespace

Json parse(std::string_view text, std::string_view prefix, std::string* schemaText) {
  Json root;
  TreeBuilder builder(root, prefix, schemaText);
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
