// Schema objects to Nodes by everit's SchemaLoader rules, since Confluent's diff sees everit's
// classes: which keywords make which kind, and when one object yields several (a synthetic allOf).
#include <cctype>
#include <cmath>
#include <map>
#include <regex>
#include <set>

#include <re2/re2.h>

#include "registry/json/node.h"

namespace oxbow::registry::json::detail {

const char* criterion_name(Criterion c) {
  switch (c) {
    case Criterion::kAll:
      return "allOf";
    case Criterion::kAny:
      return "anyOf";
    case Criterion::kOne:
      return "oneOf";
  }
  return "";
}

Pattern::~Pattern() = default;

std::shared_ptr<const Pattern> Pattern::compile(const std::string& source, std::string* error) {
  std::shared_ptr<Pattern> p(new Pattern());
  p->source_ = source;
  RE2::Options options;
  options.set_log_errors(false);
  p->re2_ = std::make_unique<RE2>(source, options);
  if (p->re2_->ok()) return p;
  p->re2_.reset();
  // RE2 lacks lookaround and backreferences, which Java has: such patterns are kept (and compared
  // by their text) when ECMAScript takes them.
  try {
    std::regex check(source, std::regex::ECMAScript);
  } catch (const std::regex_error&) {
    *error = "invalid regular expression: " + source;
    return nullptr;
  }
  return p;
}

std::optional<bool> Pattern::find(std::string_view subject) const {
  if (re2_) return RE2::PartialMatch(re2::StringPiece(subject.data(), subject.size()), *re2_);
  // libstdc++'s matcher recurses per character: only short subjects are safe.
  if (subject.size() > 1000) return std::nullopt;
  std::regex re(source_, std::regex::ECMAScript);
  return std::regex_search(subject.begin(), subject.end(), re);
}

namespace {

const std::vector<std::string> kNumberKeywords = {"minimum", "maximum", "exclusiveMinimum",
                                                  "exclusiveMaximum", "multipleOf"};
const std::vector<std::string> kStringKeywords = {"minLength", "maxLength", "pattern", "format"};

std::string type_name(const Tree& v) {
  switch (v.type()) {
    case Tree::value_t::object:
      return "object";
    case Tree::value_t::array:
      return "array";
    case Tree::value_t::string:
      return "string";
    case Tree::value_t::boolean:
      return "boolean";
    case Tree::value_t::null:
      return "null";
    default:
      return "number";
  }
}

bool at_least(Draft d, Draft min) {
  return static_cast<int>(d) >= static_cast<int>(min);
}

class Loader {
 public:
  Loader(Graph& g, const std::vector<NamedTree>& references) : g_(g) {
    docs_.push_back({"", g.tree.get(), base_of(*g.tree)});
    for (const auto& r : references) docs_.push_back({r.name, r.tree.get(), base_of(*r.tree)});
  }

  void run() {
    g_.root = schema(*g_.tree, 0, "#");
    // Targets are loaded here, not where the $ref is, so that a long chain of references does
    // not become a deep recursion.
    while (!pending_.empty()) {
      auto [node, doc] = pending_.back();
      pending_.pop_back();
      size_t target_doc = doc;
      const Tree* target = resolve(node->ref, doc, &target_doc);
      node->target = schema(*target, target_doc, node->ref);
    }
  }

 private:
  struct Doc {
    std::string name;
    const Tree* tree;
    std::string base;  // its root id, which relative $refs resolve against
  };

  std::string id_keyword() const { return g_.draft == Draft::k4 ? "id" : "$id"; }

  std::string base_of(const Tree& t) const {
    if (!t.is_object()) return "";
    auto it = t.find(id_keyword());
    if (it == t.end() || !it->is_string()) return "";
    std::string id = it->get<std::string>();
    return id.substr(0, id.find('#'));
  }

  [[noreturn]] static void fail(const std::string& at, const std::string& what) {
    throw LoadError{"Invalid JSON: " + at + ": " + what};
  }

  Node& make(Kind kind, const Tree& raw, const char* tag = "") {
    Node& n = g_.nodes.emplace_back();
    n.kind = kind;
    n.raw = &raw;
    n.tag = tag;
    return n;
  }

  static int64_t integer(const Tree& v, const std::string& at, const std::string& key) {
    if (v.is_number_integer()) return v.get<int64_t>();
    if (v.is_number_float()) {
      double d = v.get<double>();
      if (std::fabs(d) < 9e18 && d == std::floor(d)) return static_cast<int64_t>(d);
    }
    fail(at, key + ": expected an integer, found " + type_name(v));
  }
  static double number(const Tree& v, const std::string& at, const std::string& key) {
    if (!v.is_number()) fail(at, key + ": expected a number, found " + type_name(v));
    return v.get<double>();
  }
  static bool boolean(const Tree& v, const std::string& at, const std::string& key) {
    if (!v.is_boolean()) fail(at, key + ": expected a boolean, found " + type_name(v));
    return v.get<bool>();
  }
  static std::string string(const Tree& v, const std::string& at, const std::string& key) {
    if (!v.is_string()) fail(at, key + ": expected a string, found " + type_name(v));
    return v.get<std::string>();
  }
  static const Tree& array(const Tree& v, const std::string& at, const std::string& key) {
    if (!v.is_array()) fail(at, key + ": expected an array, found " + type_name(v));
    return v;
  }
  static const Tree& object(const Tree& v, const std::string& at, const std::string& key) {
    if (!v.is_object()) fail(at, key + ": expected an object, found " + type_name(v));
    return v;
  }
  static std::vector<std::string> strings(const Tree& v, const std::string& at,
                                          const std::string& key) {
    std::vector<std::string> out;
    for (const auto& s : array(v, at, key)) out.push_back(string(s, at, key));
    return out;
  }
  std::shared_ptr<const Pattern> pattern(const std::string& source, const std::string& at) {
    std::string error;
    auto p = Pattern::compile(source, &error);
    if (!p) fail(at, error);
    return p;
  }

  const Node* schema(const Tree& v, size_t doc, const std::string& at) {
    if (auto it = loaded_.find(&v); it != loaded_.end()) return it->second;
    const Node* out;
    if (v.is_boolean()) {
      out = &make(v.get<bool>() ? Kind::kTrue : Kind::kFalse, v);
    } else if (!v.is_object()) {
      fail(at, "expected a schema (an object or a boolean), found " + type_name(v));
    } else {
      out = schema_object(v, doc, at);
    }
    loaded_[&v] = out;
    return out;
  }

  const Node* child(const Tree& o, const std::string& key, size_t doc, const std::string& at) {
    return schema(o.at(key), doc, at + "/" + key);
  }

  const Node* schema_object(const Tree& o, size_t doc, const std::string& at) {
    if (o.contains("$ref")) {
      Node& n = make(Kind::kRef, o);
      n.ref = string(o["$ref"], at, "$ref");
      pending_.push_back({&n, doc});
      common(n, o, at);
      return &n;
    }
    std::vector<const Node*> pieces;
    if (o.contains("enum")) {
      Node& n = make(Kind::kEnum, o, "enum");
      for (const auto& value : array(o["enum"], at, "enum")) n.values.emplace_back(value);
      pieces.push_back(&n);
    }
    // Everit builds these in its hash order of the keywords.
    for (Criterion c : {Criterion::kAll, Criterion::kOne, Criterion::kAny}) {
      const char* key = criterion_name(c);
      if (!o.contains(key)) continue;
      Node& n = make(Kind::kCombined, o, key);
      n.criterion = c;
      const Tree& items = array(o[key], at, key);
      for (size_t i = 0; i < items.size(); ++i)
        n.subschemas.push_back(schema(items[i], doc, at + "/" + key + "/" + std::to_string(i)));
      pieces.push_back(&n);
    }
    if (o.contains("not")) {
      Node& n = make(Kind::kNot, o, "not");
      n.subschemas.push_back(child(o, "not", doc, at));
      pieces.push_back(&n);
    }
    if (g_.draft != Draft::k4 && o.contains("const")) {
      Node& n = make(Kind::kConst, o, "const");
      n.values.emplace_back(o["const"]);
      pieces.push_back(&n);
    }
    bool typed_array = false, typed_object = false, typed_number = false, typed_string = false;
    if (o.contains("type")) {
      const Tree& type = o["type"];
      auto typed = [&](const Tree& name) -> Node* {
        std::string t = string(name, at, "type");
        if (t == "string") return typed_string = true, &string_piece(o, at, true);
        if (t == "integer" || t == "number") {
          typed_number = true;
          Node& n = number_piece(o, at, true);
          n.requires_integer = t == "integer";
          return &n;
        }
        if (t == "boolean") return &make(Kind::kBoolean, o, "boolean");
        if (t == "null") return &make(Kind::kNull, o, "null");
        if (t == "array") return typed_array = true, &array_piece(o, doc, at, true);
        if (t == "object") return typed_object = true, &object_piece(o, doc, at, true);
        fail(at, "unknown type: [" + t + "]");
      };
      if (type.is_array()) {
        Node& n = make(Kind::kCombined, o, "type");
        n.criterion = Criterion::kAny;
        for (const auto& t : type) n.subschemas.push_back(typed(t));
        pieces.push_back(&n);
      } else {
        pieces.push_back(typed(type));
      }
    }
    // Keywords no type claimed still make their kind, which then does not require the type.
    if (!typed_array && any_of(o, array_keywords()))
      pieces.push_back(&array_piece(o, doc, at, false));
    if (!typed_object && any_of(o, object_keywords()))
      pieces.push_back(&object_piece(o, doc, at, false));
    if (!typed_number && any_of(o, kNumberKeywords)) pieces.push_back(&number_piece(o, at, false));
    if (!typed_string && any_of(o, kStringKeywords)) pieces.push_back(&string_piece(o, at, false));
    if (at_least(g_.draft, Draft::k7) && any_of(o, {"if", "then", "else"})) {
      Node& n = make(Kind::kConditional, o, "if");
      for (const char* key : {"if", "then", "else"})
        n.subschemas.push_back(o.contains(key) ? child(o, key, doc, at) : nullptr);
      pieces.push_back(&n);
    }
    Node* out;
    if (pieces.empty()) {
      out = &make(Kind::kEmpty, o);
    } else if (pieces.size() == 1) {
      out = const_cast<Node*>(pieces[0]);
    } else {
      out = &make(Kind::kCombined, o);
      out->criterion = Criterion::kAll;
      out->synthetic = true;
      out->subschemas = pieces;
    }
    common(*out, o, at);
    return out;
  }

  static bool any_of(const Tree& o, const std::vector<std::string>& keys) {
    for (const auto& k : keys)
      if (o.contains(k)) return true;
    return false;
  }

  std::vector<std::string> array_keywords() const {
    std::vector<std::string> k = {"items", "additionalItems", "minItems", "maxItems",
                                  "uniqueItems"};
    if (g_.draft != Draft::k4) k.push_back("contains");
    if (g_.draft == Draft::k2020_12) k.push_back("prefixItems");
    return k;
  }
  std::vector<std::string> object_keywords() const {
    std::vector<std::string> k = {"properties",          "required",     "minProperties",
                                  "maxProperties",       "dependencies", "patternProperties",
                                  "additionalProperties"};
    if (g_.draft != Draft::k4) k.push_back("propertyNames");
    if (at_least(g_.draft, Draft::k2019_09)) {
      k.push_back("dependentRequired");
      k.push_back("dependentSchemas");
    }
    return k;
  }

  void common(Node& n, const Tree& o, const std::string& at) {
    if (o.contains(id_keyword())) n.id = string(o[id_keyword()], at, id_keyword());
    if (o.contains("title")) n.title = string(o["title"], at, "title");
    if (o.contains("description")) n.description = string(o["description"], at, "description");
    if (o.contains("default")) n.default_value = nlohmann::json(o["default"]);
    auto connect = o.find("connect.type");
    n.connect_bytes = connect != o.end() && *connect == "bytes";
  }

  Node& string_piece(const Tree& o, const std::string& at, bool typed) {
    Node& n = make(Kind::kString, o, "string");
    n.requires_string = typed;
    if (o.contains("minLength")) n.min_length = integer(o["minLength"], at, "minLength");
    if (o.contains("maxLength")) n.max_length = integer(o["maxLength"], at, "maxLength");
    if (o.contains("pattern")) n.pattern = pattern(string(o["pattern"], at, "pattern"), at);
    if (o.contains("format")) string(o["format"], at, "format");
    return n;
  }

  Node& number_piece(const Tree& o, const std::string& at, bool typed) {
    Node& n = make(Kind::kNumber, o, "number");
    n.requires_number = typed;
    if (o.contains("minimum")) n.minimum = number(o["minimum"], at, "minimum");
    if (o.contains("maximum")) n.maximum = number(o["maximum"], at, "maximum");
    if (o.contains("multipleOf")) n.multiple_of = number(o["multipleOf"], at, "multipleOf");
    // Draft 4's exclusive limits are flags on minimum/maximum, later ones limits of their own.
    if (o.contains("exclusiveMinimum")) {
      if (g_.draft == Draft::k4)
        n.minimum_exclusive = boolean(o["exclusiveMinimum"], at, "exclusiveMinimum");
      else
        n.exclusive_minimum = number(o["exclusiveMinimum"], at, "exclusiveMinimum");
    }
    if (o.contains("exclusiveMaximum")) {
      if (g_.draft == Draft::k4)
        n.maximum_exclusive = boolean(o["exclusiveMaximum"], at, "exclusiveMaximum");
      else
        n.exclusive_maximum = number(o["exclusiveMaximum"], at, "exclusiveMaximum");
    }
    return n;
  }

  Node& array_piece(const Tree& o, size_t doc, const std::string& at, bool typed) {
    Node& n = make(Kind::kArray, o, "array");
    n.requires_array = typed;
    if (o.contains("minItems")) n.min_items = integer(o["minItems"], at, "minItems");
    if (o.contains("maxItems")) n.max_items = integer(o["maxItems"], at, "maxItems");
    if (o.contains("uniqueItems")) n.unique_items = boolean(o["uniqueItems"], at, "uniqueItems");
    if (o.contains("additionalItems")) {
      const Tree& a = o["additionalItems"];
      if (a.is_boolean())
        n.permits_additional_items = a.get<bool>();
      else
        n.additional_items = schema(object(a, at, "additionalItems"), doc, at + "/additionalItems");
    }
    bool prefix = g_.draft == Draft::k2020_12 && o.contains("prefixItems");
    if (prefix) {
      const Tree& items = array(o["prefixItems"], at, "prefixItems");
      for (size_t i = 0; i < items.size(); ++i)
        n.item_schemas.push_back(schema(items[i], doc, at + "/prefixItems/" + std::to_string(i)));
    }
    if (o.contains("items")) {
      const Tree& items = o["items"];
      if (prefix && items.is_boolean()) {
        n.permits_additional_items = items.get<bool>();
      } else if (prefix) {
        n.additional_items = child(o, "items", doc, at);
      } else if (items.is_array() && g_.draft != Draft::k2020_12) {
        for (size_t i = 0; i < items.size(); ++i)
          n.item_schemas.push_back(schema(items[i], doc, at + "/items/" + std::to_string(i)));
      } else {
        n.all_items = child(o, "items", doc, at);
      }
    }
    if (g_.draft != Draft::k4 && o.contains("contains")) n.contains = child(o, "contains", doc, at);
    return n;
  }

  Node& object_piece(const Tree& o, size_t doc, const std::string& at, bool typed) {
    Node& n = make(Kind::kObject, o, "object");
    n.requires_object = typed;
    if (o.contains("minProperties"))
      n.min_properties = integer(o["minProperties"], at, "minProperties");
    if (o.contains("maxProperties"))
      n.max_properties = integer(o["maxProperties"], at, "maxProperties");
    if (o.contains("properties")) {
      for (const auto& [name, value] : object(o["properties"], at, "properties").items()) {
        // Everit skips an id keyword among the names unless it holds a schema object.
        if (name == id_keyword() && !value.is_object()) continue;
        n.properties.emplace_back(name, schema(value, doc, at + "/properties/" + name));
      }
    }
    if (o.contains("additionalProperties")) {
      const Tree& a = o["additionalProperties"];
      if (a.is_boolean())
        n.permits_additional = a.get<bool>();
      else
        n.additional =
            schema(object(a, at, "additionalProperties"), doc, at + "/additionalProperties");
    }
    if (o.contains("required")) n.required = strings(o["required"], at, "required");
    if (o.contains("patternProperties")) {
      for (const auto& [source, value] :
           object(o["patternProperties"], at, "patternProperties").items())
        n.pattern_properties.emplace_back(pattern(source, at),
                                          schema(value, doc, at + "/patternProperties/" + source));
    }
    auto dependencies = [&](const std::string& key, bool arrays, bool schemas) {
      if (!o.contains(key)) return;
      for (const auto& [name, value] : object(o[key], at, key).items()) {
        if (value.is_array() && arrays)
          n.property_dependencies.emplace_back(name, strings(value, at, key + "/" + name));
        else if (schemas)
          n.schema_dependencies.emplace_back(name, schema(value, doc, at + "/" + key + "/" + name));
        else
          fail(at, key + "/" + name + ": expected an array, found " + type_name(value));
      }
    };
    dependencies("dependencies", true, true);
    if (at_least(g_.draft, Draft::k2019_09)) {
      dependencies("dependentRequired", true, false);
      dependencies("dependentSchemas", false, true);
    }
    if (g_.draft != Draft::k4 && o.contains("propertyNames"))
      n.property_names = child(o, "propertyNames", doc, at);
    return n;
  }

  // The document a $ref names and the value its fragment points to.
  const Tree* resolve(const std::string& ref, size_t doc, size_t* target_doc) {
    size_t hash = ref.find('#');
    std::string base = ref.substr(0, hash);
    std::string fragment = hash == std::string::npos ? "" : ref.substr(hash + 1);
    if (auto d = find_doc(ref); d && hash != std::string::npos) {
      *target_doc = *d;  // a reference named with its fragment
      return docs_[*d].tree;
    }
    if (base.empty() || base == docs_[doc].base) {
      *target_doc = doc;
    } else if (auto d = find_doc(base)) {
      *target_doc = *d;
    } else if (auto r = find_doc(relative(docs_[doc].base, base))) {
      *target_doc = *r;
    } else {
      fail("#", "could not resolve $ref '" + ref + "': no reference named '" + base + "'");
    }
    const Tree* t = docs_[*target_doc].tree;
    if (fragment.empty()) return t;
    if (fragment[0] == '/') {
      if (const Tree* found = pointer(*t, fragment)) return found;
    } else if (const Tree* found = anchor(*t, fragment, 0)) {
      return found;
    }
    fail("#", "could not resolve $ref '" + ref + "'");
  }

  std::optional<size_t> find_doc(const std::string& name) const {
    if (name.empty()) return std::nullopt;
    for (size_t i = 1; i < docs_.size(); ++i)
      if (docs_[i].name == name) return i;
    for (size_t i = 0; i < docs_.size(); ++i)
      if (docs_[i].base == name) return i;
    return std::nullopt;
  }

  static std::string relative(const std::string& base, const std::string& ref) {
    if (ref.find("://") != std::string::npos || base.empty()) return ref;
    size_t slash = base.rfind('/');
    return slash == std::string::npos ? ref : base.substr(0, slash + 1) + ref;
  }

  static const Tree* pointer(const Tree& root, const std::string& fragment) {
    const Tree* at = &root;
    size_t pos = 1;
    while (pos <= fragment.size()) {
      size_t next = fragment.find('/', pos);
      if (next == std::string::npos) next = fragment.size();
      std::string token;
      for (size_t i = pos; i < next; ++i) {
        char c = fragment[i];
        if (c == '~' && i + 1 < next) {
          token += fragment[i + 1] == '1' ? '/' : '~';
          ++i;
        } else if (c == '%' && i + 2 < next &&
                   std::isxdigit(static_cast<unsigned char>(fragment[i + 1])) &&
                   std::isxdigit(static_cast<unsigned char>(fragment[i + 2]))) {
          token += static_cast<char>(std::stoi(fragment.substr(i + 1, 2), nullptr, 16));
          i += 2;
        } else {
          token += c;
        }
      }
      if (at->is_object()) {
        auto it = at->find(token);
        if (it == at->end()) return nullptr;
        at = &*it;
      } else if (at->is_array() && !token.empty() &&
                 token.find_first_not_of("0123456789") == std::string::npos && token.size() < 10 &&
                 std::stoul(token) < at->size()) {
        at = &(*at)[std::stoul(token)];
      } else {
        return nullptr;
      }
      pos = next + 1;
    }
    return at;
  }

  // A subschema named by `"$id":"#name"` (or ending so), or by 2019-09's `$anchor`.
  const Tree* anchor(const Tree& t, const std::string& name, int depth) const {
    if (depth > kMaxNesting) return nullptr;
    if (t.is_object()) {
      auto id = t.find(id_keyword());
      if (id != t.end() && id->is_string()) {
        const std::string& s = id->get_ref<const std::string&>();
        if (s.size() > name.size() && s.compare(s.size() - name.size(), name.size(), name) == 0 &&
            s[s.size() - name.size() - 1] == '#')
          return &t;
      }
      auto a = t.find("$anchor");
      if (a != t.end() && *a == name) return &t;
    }
    if (t.is_object() || t.is_array()) {
      for (const auto& item : t)
        if (const Tree* found = anchor(item, name, depth + 1)) return found;
    }
    return nullptr;
  }

  Graph& g_;
  std::vector<Doc> docs_;
  std::map<const Tree*, const Node*> loaded_;
  std::vector<std::pair<Node*, size_t>> pending_;
};

}  // namespace

void load(Graph& graph, const std::vector<NamedTree>& references) {
  Loader loader(graph, references);
  loader.run();
}

}  // namespace oxbow::registry::json::detail
