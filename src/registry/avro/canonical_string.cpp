// Avro Java's Schema.toString(): the text Confluent's registry keeps for an Avro schema.
#include <algorithm>
#include <map>
#include <set>

#include "registry/avro/schema.h"

namespace oxbow::registry::avro {

namespace {

using Json = nlohmann::ordered_json;

class Printer {
 public:
  Printer(const std::vector<const Schema*>& known, bool normalize) : normalize_(normalize) {
    for (const Schema* s : known)
      for (const Node* n : s->named_types()) written_.insert(n);
  }

  void write(const Node& n) {
    switch (n.kind) {
      case Kind::kRecord:
      case Kind::kEnum:
      case Kind::kFixed:
        return written_.count(&n) ? reference(n) : named(n);
      case Kind::kArray:
        out_ += R"({"type":"array","items":)";
        write(*n.items);
        properties(n.properties);
        out_ += '}';
        return;
      case Kind::kMap:
        out_ += R"({"type":"map","values":)";
        write(*n.values);
        properties(n.properties);
        out_ += '}';
        return;
      case Kind::kUnion:
        out_ += '[';
        for (size_t i = 0; i < n.branches.size(); ++i) {
          if (i > 0) out_ += ',';
          write(*n.branches[i]);
        }
        out_ += ']';
        return;
      default:
        if (n.properties.empty()) return string(kind_name(n.kind));
        out_ += "{\"type\":";
        string(kind_name(n.kind));
        properties(n.properties);
        out_ += '}';
    }
  }

  std::string take() { return std::move(out_); }

 private:
  void string(const std::string& s) {
    out_ += Json(s).dump(-1, ' ', false, Json::error_handler_t::replace);
  }
  void key(const char* k) {
    out_ += ",\"";
    out_ += k;
    out_ += "\":";
  }
  void properties(const Properties& props) {
    if (!normalize_) {
      for (auto it = props.begin(); it != props.end(); ++it) property(it.key(), it.value());
      return;
    }
    // Normalized: a logical type's attributes first, as Avro writes them, then the rest by key.
    std::map<std::string, const Json*> rest;
    for (auto it = props.begin(); it != props.end(); ++it) rest[it.key()] = &it.value();
    for (const char* k : {"logicalType", "precision", "scale"})
      if (auto it = rest.find(k); it != rest.end()) {
        if (std::string(k) != "scale" || *it->second != 0) property(k, *it->second);
        rest.erase(it);
      }
    for (const auto& [k, v] : rest) property(k, *v);
  }
  void property(const std::string& k, const Json& v) {
    out_ += ',';
    string(k);
    out_ += ':';
    out_ += v.dump(-1, ' ', false, Json::error_handler_t::replace);
  }
  std::vector<std::string> aliases(std::vector<std::string> list) const {
    if (normalize_) {
      std::sort(list.begin(), list.end());
      list.erase(std::unique(list.begin(), list.end()), list.end());
    }
    return list;
  }

  // Its full name when it lies outside the enclosing namespace, else its short name.
  std::string relative(const std::string& full, const std::string& space) const {
    if (space.empty() || space != space_) return full;
    return full.substr(space.size() + 1);
  }

  void reference(const Node& n) { string(relative(n.full_name, n.space)); }

  // An alias in the type's own namespace is written short, as Java's getQualified writes it.
  static std::string alias(const std::string& full, const std::string& type_space) {
    auto dot = full.rfind('.');
    std::string space = dot == std::string::npos ? "" : full.substr(0, dot);
    return !space.empty() && space == type_space ? full.substr(dot + 1) : full;
  }

  void named(const Node& n) {
    written_.insert(&n);
    out_ += "{\"type\":";
    string(n.kind == Kind::kRecord && n.is_error ? "error" : kind_name(n.kind));
    key("name");
    string(n.full_name.substr(n.space.empty() ? 0 : n.space.size() + 1));
    if (n.space != space_) {
      key("namespace");
      string(n.space);
    }
    if (n.doc && !(normalize_ && n.doc->empty())) {
      key("doc");
      string(*n.doc);
    }
    std::string saved = space_;
    space_ = n.space;
    if (n.kind == Kind::kRecord) {
      key("fields");
      out_ += '[';
      for (size_t i = 0; i < n.fields.size(); ++i) {
        if (i > 0) out_ += ',';
        field(n.fields[i]);
      }
      out_ += ']';
    } else if (n.kind == Kind::kEnum) {
      key("symbols");
      out_ += Json(n.symbols).dump();
      if (n.enum_default) {
        key("default");
        string(*n.enum_default);
      }
    } else {
      key("size");
      out_ += std::to_string(n.size);
    }
    properties(n.properties);
    if (!n.aliases.empty()) {
      key("aliases");
      out_ += '[';
      auto list = aliases(n.aliases);
      for (size_t i = 0; i < list.size(); ++i) {
        if (i > 0) out_ += ',';
        string(alias(list[i], n.space));
      }
      out_ += ']';
    }
    space_ = saved;
    out_ += '}';
  }

  void field(const Field& f) {
    out_ += "{\"name\":";
    string(f.name);
    key("type");
    write(*f.type);
    if (f.doc) {
      key("doc");
      string(*f.doc);
    }
    if (f.default_value) {
      key("default");
      out_ += f.default_value->dump(-1, ' ', false, Json::error_handler_t::replace);
    }
    if (f.order && *f.order != "ascending") {
      key("order");
      string(*f.order);
    }
    if (!f.aliases.empty()) {
      key("aliases");
      out_ += Json(aliases(f.aliases)).dump(-1, ' ', false, Json::error_handler_t::replace);
    }
    properties(f.properties);
    out_ += '}';
  }

  bool normalize_;
  std::set<const Node*> written_;
  std::string space_;  // the enclosing namespace
  std::string out_;
};

}  // namespace

std::string canonical_string(const Schema& schema, const std::vector<const Schema*>& known,
                             bool normalize) {
  Printer printer(known, normalize);
  printer.write(schema.root());
  return printer.take();
}

}  // namespace oxbow::registry::avro
