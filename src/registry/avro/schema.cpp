#include "registry/avro/schema.h"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace oxbow::registry::avro {

namespace {

using Json = nlohmann::ordered_json;

// A parse error; caught at the top and turned into ParseResult::error.
struct Invalid : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Deeper than this is refused rather than recursed into: a schema is data from the network.
constexpr int kMaxDepth = 200;

const std::map<std::string, Kind, std::less<>>& primitives() {
  static const std::map<std::string, Kind, std::less<>> names{
      {"null", Kind::kNull},   {"boolean", Kind::kBoolean}, {"int", Kind::kInt},
      {"long", Kind::kLong},   {"float", Kind::kFloat},     {"double", Kind::kDouble},
      {"bytes", Kind::kBytes}, {"string", Kind::kString}};
  return names;
}

bool valid_name(std::string_view name) {
  if (name.empty()) return false;
  auto letter = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
  if (!letter(name[0])) return false;
  return std::all_of(name.begin() + 1, name.end(),
                     [&](char c) { return letter(c) || (c >= '0' && c <= '9'); });
}

void check_name(const std::string& name) {
  if (!valid_name(name)) throw Invalid("Illegal name: \"" + name + "\"");
}

void check_full_name(const std::string& full) {
  size_t start = 0;
  while (true) {
    size_t dot = full.find('.', start);
    check_name(full.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) return;
    start = dot + 1;
  }
}

// The attributes each kind of schema defines; others are kept as properties.
bool reserved(Kind kind, const std::string& key) {
  static const std::set<std::string> common{"type", "name", "namespace", "doc", "aliases"};
  if (key == "type") return true;
  switch (kind) {
    case Kind::kRecord:
      return common.count(key) || key == "fields";
    case Kind::kEnum:
      return common.count(key) || key == "symbols" || key == "default";
    case Kind::kFixed:
      return common.count(key) || key == "size";
    case Kind::kArray:
      return key == "items";
    case Kind::kMap:
      return key == "values";
    default:
      return false;
  }
}

std::string json_text(const Json& j) {
  std::string text = j.dump();
  return text.size() > 200 ? text.substr(0, 200) + "..." : text;
}

bool is_int32(const Json& j) {
  if (j.is_number_unsigned()) return j.get<uint64_t>() <= INT32_MAX;
  if (j.is_number_integer()) {
    int64_t v = j.get<int64_t>();
    return v >= INT32_MIN && v <= INT32_MAX;
  }
  return false;
}

}  // namespace

class Parser {
 public:
  explicit Parser(const ParseOptions& options)
      : known_(options.known), validate_defaults_(options.validate_defaults) {}

  Schema run(const Json& json) {
    schema_.root_ = parse(json, "", 0);
    return std::move(schema_);
  }

 private:
  Node* add(Kind kind) {
    schema_.nodes_.push_back(std::make_unique<Node>());
    Node* n = schema_.nodes_.back().get();
    n->kind = kind;
    return n;
  }

  const Node* lookup(const std::string& name, const std::string& space) const {
    auto find = [&](const std::string& full) -> const Node* {
      if (auto it = schema_.named_.find(full); it != schema_.named_.end()) return it->second;
      for (const Schema* s : known_)
        if (const Node* n = s->named(full)) return n;
      return nullptr;
    };
    if (name.find('.') == std::string::npos && !space.empty())
      if (const Node* n = find(space + "." + name)) return n;
    return find(name);
  }

  const Node* parse(const Json& j, const std::string& space, int depth) {
    if (depth > kMaxDepth) throw Invalid("Schema nested too deeply");
    if (j.is_string()) return parse_name(j.get<std::string>(), space);
    if (j.is_array()) return parse_union(j, space, depth);
    if (!j.is_object())
      throw Invalid("Schema is not a JSON string, object or array: " + json_text(j));
    auto type = j.find("type");
    if (type == j.end()) throw Invalid("No type: " + json_text(j));
    if (!type->is_string()) throw Invalid("\"type\" is not a string: " + json_text(j));
    const std::string& t = type->get_ref<const std::string&>();
    if (auto p = primitives().find(t); p != primitives().end())
      return parse_primitive(j, p->second);
    if (t == "record" || t == "error") return parse_record(j, space, depth, t == "error");
    if (t == "enum") return parse_enum(j, space);
    if (t == "fixed") return parse_fixed(j, space);
    if (t == "array") return parse_container(j, Kind::kArray, "items", space, depth);
    if (t == "map") return parse_container(j, Kind::kMap, "values", space, depth);
    // {"type": "SomeRecord"}: a reference written as an object.
    return parse_name(t, space);
  }

  const Node* parse_name(const std::string& name, const std::string& space) {
    if (auto p = primitives().find(name); p != primitives().end()) return add(p->second);
    if (const Node* n = lookup(name, space)) return n;
    throw Invalid("Undefined name: \"" + name + "\"");
  }

  const Node* parse_union(const Json& j, const std::string& space, int depth) {
    Node* n = add(Kind::kUnion);
    std::set<std::string> seen;
    for (const auto& branch : j) {
      const Node* b = parse(branch, space, depth + 1);
      if (b->kind == Kind::kUnion) throw Invalid("Nested union: " + json_text(j));
      std::string key = is_named(b->kind) ? b->full_name : kind_name(b->kind);
      if (!seen.insert(key).second) throw Invalid("Duplicate in union: " + key);
      n->branches.push_back(b);
    }
    return n;
  }

  Node* parse_primitive(const Json& j, Kind kind) {
    Node* n = add(kind);
    keep_properties(n, j);
    set_logical_type(n);
    return n;
  }

  // Name, namespace, doc and aliases of a named type, which is then defined (before its fields,
  // so that they may refer to it).
  Node* define(const Json& j, Kind kind, const std::string& enclosing) {
    auto name = j.find("name");
    if (name == j.end() || !name->is_string()) throw Invalid("No name in schema: " + json_text(j));
    std::string n = name->get<std::string>();
    std::string space = enclosing;
    if (auto ns = j.find("namespace"); ns != j.end() && !ns->is_null()) {
      if (!ns->is_string()) throw Invalid("\"namespace\" is not a string: " + json_text(j));
      space = ns->get<std::string>();
    }
    std::string full = n;
    if (auto dot = n.rfind('.'); dot != std::string::npos)
      space = n.substr(0, dot);
    else if (!space.empty())
      full = space + "." + n;
    check_full_name(full);
    std::string simple = full.substr(full.rfind('.') + 1);
    if (primitives().count(simple))
      throw Invalid("Schemas may not be named after primitives: " + full);
    if (schema_.named_.count(full) || owned_by_known(full))
      throw Invalid("Can't redefine: " + full);
    Node* node = add(kind);
    node->full_name = full;
    node->space = space;
    if (auto doc = j.find("doc"); doc != j.end() && doc->is_string())
      node->doc = doc->get<std::string>();
    node->aliases = aliases(j, space);
    schema_.named_[full] = node;
    schema_.named_order_.push_back(node);
    return node;
  }

  bool owned_by_known(const std::string& full) const {
    return std::any_of(known_.begin(), known_.end(),
                       [&](const Schema* s) { return s->named(full) != nullptr; });
  }

  static std::vector<std::string> aliases(const Json& j, const std::string& space) {
    std::vector<std::string> out;
    auto a = j.find("aliases");
    if (a == j.end()) return out;
    if (!a->is_array()) throw Invalid("aliases not an array: " + json_text(j));
    for (const auto& alias : *a) {
      if (!alias.is_string()) throw Invalid("alias not a string: " + json_text(alias));
      std::string name = alias.get<std::string>();
      std::string full =
          name.find('.') != std::string::npos || space.empty() ? name : space + "." + name;
      check_full_name(full);
      out.push_back(full);
    }
    return out;
  }

  const Node* parse_record(const Json& j, const std::string& enclosing, int depth, bool error) {
    Node* n = define(j, Kind::kRecord, enclosing);
    n->is_error = error;
    auto fields = j.find("fields");
    if (fields == j.end() || !fields->is_array())
      throw Invalid("Record has no fields: " + json_text(j));
    std::set<std::string> names;
    for (const auto& f : *fields) {
      if (!f.is_object()) throw Invalid("Field is not an object: " + json_text(f));
      n->fields.push_back(parse_field(f, n->space, depth));
      if (!names.insert(n->fields.back().name).second)
        throw Invalid("Duplicate field " + n->fields.back().name + " in record " + n->full_name);
    }
    keep_properties(n, j);
    return n;
  }

  Field parse_field(const Json& f, const std::string& space, int depth) {
    Field field;
    auto name = f.find("name");
    if (name == f.end() || !name->is_string()) throw Invalid("No field name: " + json_text(f));
    field.name = name->get<std::string>();
    check_name(field.name);
    auto type = f.find("type");
    if (type == f.end()) throw Invalid("No field type: " + json_text(f));
    field.type = parse(*type, space, depth + 1);
    if (auto doc = f.find("doc"); doc != f.end() && doc->is_string())
      field.doc = doc->get<std::string>();
    if (auto d = f.find("default"); d != f.end()) {
      if (validate_defaults_ && !valid_default(*field.type, *d, 0))
        throw Invalid("Invalid default for field " + field.name + ": " + json_text(*d) + " not a " +
                      describe(*field.type));
      field.default_value = *d;
    }
    if (auto order = f.find("order"); order != f.end()) {
      std::string o = order->is_string() ? order->get<std::string>() : "";
      if (o != "ascending" && o != "descending" && o != "ignore")
        throw Invalid("Illegal field order: " + json_text(*order));
      field.order = o;
    }
    field.aliases = aliases(f, "");
    for (auto it = f.begin(); it != f.end(); ++it)
      if (it.key() != "name" && it.key() != "type" && it.key() != "doc" && it.key() != "default" &&
          it.key() != "order" && it.key() != "aliases")
        field.properties[it.key()] = it.value();
    return field;
  }

  const Node* parse_enum(const Json& j, const std::string& enclosing) {
    Node* n = define(j, Kind::kEnum, enclosing);
    auto symbols = j.find("symbols");
    if (symbols == j.end() || !symbols->is_array())
      throw Invalid("Enum has no symbols: " + json_text(j));
    std::set<std::string> seen;
    for (const auto& s : *symbols) {
      if (!s.is_string()) throw Invalid("Enum symbol is not a string: " + json_text(s));
      std::string symbol = s.get<std::string>();
      check_name(symbol);
      if (!seen.insert(symbol).second) throw Invalid("Duplicate enum symbol: " + symbol);
      n->symbols.push_back(symbol);
    }
    if (auto d = j.find("default"); d != j.end()) {
      if (!d->is_string() || !seen.count(d->get<std::string>()))
        throw Invalid("The Enum Default: " + json_text(*d) +
                      " is not in the enum symbol set: " + json_text(*symbols));
      n->enum_default = d->get<std::string>();
    }
    keep_properties(n, j);
    return n;
  }

  const Node* parse_fixed(const Json& j, const std::string& enclosing) {
    Node* n = define(j, Kind::kFixed, enclosing);
    auto size = j.find("size");
    if (size == j.end() || !is_int32(*size) || size->get<int64_t>() < 0)
      throw Invalid("Invalid or no size: " + json_text(j));
    n->size = size->get<int64_t>();
    keep_properties(n, j);
    set_logical_type(n);
    return n;
  }

  const Node* parse_container(const Json& j, Kind kind, const char* child, const std::string& space,
                              int depth) {
    auto c = j.find(child);
    if (c == j.end())
      throw Invalid(std::string(kind_name(kind)) + " has no " + child + ": " + json_text(j));
    Node* n = add(kind);
    (kind == Kind::kArray ? n->items : n->values) = parse(*c, space, depth + 1);
    keep_properties(n, j);
    return n;
  }

  static void keep_properties(Node* n, const Json& j) {
    for (auto it = j.begin(); it != j.end(); ++it)
      if (!reserved(n->kind, it.key())) n->properties[it.key()] = it.value();
  }

  // Java's LogicalTypes.fromSchemaIgnoreInvalid: a logical type invalid for its base is ignored.
  static void set_logical_type(Node* n) {
    auto lt = n->properties.find("logicalType");
    if (lt == n->properties.end() || !lt->is_string()) return;
    const std::string& t = lt->get_ref<const std::string&>();
    Kind k = n->kind;
    bool ok = false;
    if (t == "decimal") {
      ok = decimal(n);
    } else if (t == "uuid") {
      ok = k == Kind::kString;
    } else if (t == "date" || t == "time-millis") {
      ok = k == Kind::kInt;
    } else if (t == "time-micros" || t == "timestamp-millis" || t == "timestamp-micros" ||
               t == "local-timestamp-millis" || t == "local-timestamp-micros") {
      ok = k == Kind::kLong;
    } else if (t == "duration") {
      ok = k == Kind::kFixed && n->size == 12;
    }
    if (ok) n->logical_type = t;
  }

  static bool decimal(Node* n) {
    if (n->kind != Kind::kBytes && n->kind != Kind::kFixed) return false;
    auto p = n->properties.find("precision");
    auto s = n->properties.find("scale");
    if (p == n->properties.end() || !is_int32(*p) || p->get<int64_t>() <= 0) return false;
    int64_t scale = 0;
    if (s != n->properties.end()) {
      if (!is_int32(*s) || s->get<int64_t>() < 0) return false;
      scale = s->get<int64_t>();
    }
    int64_t precision = p->get<int64_t>();
    if (scale > precision) return false;
    // A fixed of n bytes holds at most floor(log10(2^(8n - 1) - 1)) digits.
    if (n->kind == Kind::kFixed && static_cast<double>(precision) >
                                       (8.0 * static_cast<double>(n->size) - 1) * 0.30102999566398)
      return false;
    n->precision = static_cast<int32_t>(precision);
    n->scale = static_cast<int32_t>(scale);
    return true;
  }

  // Java's Schema.isValidDefault.
  static bool valid_default(const Node& t, const Json& d, int depth) {
    if (depth > kMaxDepth) return false;
    switch (t.kind) {
      case Kind::kNull:
        return d.is_null();
      case Kind::kBoolean:
        return d.is_boolean();
      case Kind::kInt:
        return is_int32(d);
      case Kind::kLong:
        return d.is_number_integer() &&
               (!d.is_number_unsigned() || d.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX));
      case Kind::kFloat:
      case Kind::kDouble:
        return d.is_number();
      case Kind::kBytes:
      case Kind::kString:
      case Kind::kFixed:
        return d.is_string();
      case Kind::kEnum:
        return d.is_string() && std::find(t.symbols.begin(), t.symbols.end(),
                                          d.get<std::string>()) != t.symbols.end();
      case Kind::kArray:
        return d.is_array() && std::all_of(d.begin(), d.end(), [&](const Json& e) {
                 return valid_default(*t.items, e, depth + 1);
               });
      case Kind::kMap:
        return d.is_object() && std::all_of(d.begin(), d.end(), [&](const Json& e) {
                 return valid_default(*t.values, e, depth + 1);
               });
      case Kind::kUnion:
        return !t.branches.empty() && valid_default(*t.branches.front(), d, depth + 1);
      case Kind::kRecord:
        if (!d.is_object()) return false;
        for (const auto& f : t.fields) {
          auto v = d.find(f.name);
          const Json* value = v != d.end() ? &*v : f.default_value ? &*f.default_value : nullptr;
          if (!value || !valid_default(*f.type, *value, depth + 1)) return false;
        }
        return true;
    }
    return false;
  }

  static std::string describe(const Node& t) {
    return is_named(t.kind) ? t.full_name : kind_name(t.kind);
  }

  const std::vector<const Schema*>& known_;
  bool validate_defaults_;
  Schema schema_;
};

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::kNull:
      return "null";
    case Kind::kBoolean:
      return "boolean";
    case Kind::kInt:
      return "int";
    case Kind::kLong:
      return "long";
    case Kind::kFloat:
      return "float";
    case Kind::kDouble:
      return "double";
    case Kind::kBytes:
      return "bytes";
    case Kind::kString:
      return "string";
    case Kind::kRecord:
      return "record";
    case Kind::kEnum:
      return "enum";
    case Kind::kArray:
      return "array";
    case Kind::kMap:
      return "map";
    case Kind::kUnion:
      return "union";
    case Kind::kFixed:
      return "fixed";
  }
  return "?";
}

bool is_named(Kind kind) {
  return kind == Kind::kRecord || kind == Kind::kEnum || kind == Kind::kFixed;
}

const Node* Schema::named(const std::string& full_name) const {
  auto it = named_.find(full_name);
  return it == named_.end() ? nullptr : it->second;
}

ParseResult parse(std::string_view json, const ParseOptions& options) {
  ParseResult result;
  Json j = Json::parse(json, nullptr, false);
  if (j.is_discarded()) {
    result.error = "Invalid JSON";
    return result;
  }
  try {
    result.schema.emplace(Parser(options).run(j));
  } catch (const Invalid& e) {
    result.error = e.what();
  } catch (const nlohmann::json::exception& e) {
    result.error = e.what();
  }
  return result;
}

}  // namespace oxbow::registry::avro
