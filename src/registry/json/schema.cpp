#include "registry/json/schema.h"

#include "registry/json/node.h"

namespace oxbow::registry::json {

using detail::Graph;
using detail::Tree;

struct SchemaAccess {
  static Schema make(std::shared_ptr<const Graph> graph) {
    Schema s;
    s.graph_ = std::move(graph);
    return s;
  }
  static const std::shared_ptr<const Graph>& graph(const Schema& s) { return s.graph_; }
};

namespace {

// Jackson's JsonNodeType, which Confluent's root check names.
const char* node_type(const Tree& v) {
  switch (v.type()) {
    case Tree::value_t::array:
      return "ARRAY";
    case Tree::value_t::string:
      return "STRING";
    case Tree::value_t::null:
      return "NULL";
    case Tree::value_t::boolean:
      return "BOOLEAN";
    case Tree::value_t::object:
      return "OBJECT";
    default:
      return "NUMBER";
  }
}

Draft draft_of(const Tree& root) {
  if (!root.is_object()) return Draft::k7;
  auto it = root.find("$schema");
  if (it == root.end() || !it->is_string()) return Draft::k7;
  std::string url = it->get<std::string>();
  if (!url.empty() && url.back() == '#') url.pop_back();
  for (const char* scheme : {"http://", "https://"}) {
    if (url.rfind(scheme, 0) != 0) continue;
    std::string rest = url.substr(std::string(scheme).size());
    if (rest == "json-schema.org/draft-04/schema" || rest == "json-schema.org/schema")
      return Draft::k4;
    if (rest == "json-schema.org/draft-06/schema") return Draft::k6;
    if (rest == "json-schema.org/draft-07/schema") return Draft::k7;
    if (rest == "json-schema.org/draft/2019-09/schema") return Draft::k2019_09;
    if (rest == "json-schema.org/draft/2020-12/schema") return Draft::k2020_12;
  }
  return Draft::k7;
}

}  // namespace

const std::string& Schema::canonical() const {
  return graph_->canonical;
}
const std::string& Schema::normalized() const {
  return graph_->normalized;
}
Draft Schema::draft() const {
  return graph_->draft;
}
const std::optional<std::string>& Schema::title() const {
  return graph_->title;
}
const detail::Node& Schema::root() const {
  return *graph_->root;
}
std::optional<std::string> Schema::validate(const nlohmann::json& doc) const {
  return detail::validate(*graph_->root, doc);
}

ParseResult parse(std::string_view text, const std::vector<Reference>& references) {
  ParseResult out;
  auto read = detail::parse_text(text);
  if (!read.tree) {
    out.error = read.error;
    return out;
  }
  const Tree& root = *read.tree;
  if (!root.is_object() && !root.is_boolean()) {
    out.error =
        std::string("Invalid JSON schema: expected an object or boolean at the root, found ") +
        node_type(root);
    return out;
  }
  auto graph = std::make_shared<Graph>();
  graph->tree = read.tree;
  graph->canonical = std::move(read.canonical);
  graph->normalized = std::move(read.normalized);
  graph->draft = draft_of(root);
  if (root.is_object() && root.contains("title") && root["title"].is_string())
    graph->title = root["title"].get<std::string>();
  std::vector<detail::NamedTree> named;
  for (const auto& r : references) {
    if (!r.schema) continue;
    const auto& tree = SchemaAccess::graph(*r.schema)->tree;
    named.push_back({r.name, tree});
    graph->referenced.push_back(tree);
  }
  try {
    detail::load(*graph, named);
  } catch (const detail::LoadError& e) {
    out.error = e.message;
    return out;
  }
  out.schema = SchemaAccess::make(std::move(graph));
  return out;
}

}  // namespace oxbow::registry::json
