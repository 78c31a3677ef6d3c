#include "registry/avro/compatibility.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <utility>

namespace oxbow::registry::avro {

namespace {

using Problems = std::vector<Incompatibility>;

// Java's Schema.Type names, as its messages print them.
std::string upper(Kind kind) {
  std::string name = kind_name(kind);
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return std::toupper(c); });
  return name;
}

std::string short_name(const Node& n) {
  return n.full_name.substr(n.full_name.rfind('.') + 1);
}

class Checker {
 public:
  Problems check(const Node& reader, const Node& writer) {
    location_ = {""};
    return compatibility(reader, writer);
  }

 private:
  // Memoized by the pair, so that recursive types end: a pair being checked counts as compatible.
  Problems compatibility(const Node& reader, const Node& writer) {
    auto key = std::make_pair(&reader, &writer);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    memo_[key] = {};
    Problems result = calculate(reader, writer);
    memo_[key] = result;
    return result;
  }

  Problems compatibility(const char* token, const Node& reader, const Node& writer) {
    location_.push_back(token);
    Problems result = compatibility(reader, writer);
    location_.pop_back();
    return result;
  }

  Problems incompatible(const char* type, std::string message) const {
    return {{type, path(), std::move(message)}};
  }

  std::string path() const {
    std::string out = "/";
    for (size_t i = 1; i < location_.size(); ++i) {
      if (i > 1) out += '/';
      for (char c : location_[i]) {
        if (c == '~')
          out += "~0";
        else if (c == '/')
          out += "~1";
        else
          out += c;
      }
    }
    return out;
  }

  Problems type_mismatch(const Node& reader, const Node& writer) const {
    return incompatible("TYPE_MISMATCH",
                        "reader type: " + upper(reader.kind) +
                            " not compatible with writer type: " + upper(writer.kind));
  }

  static void merge(Problems& into, Problems more) {
    into.insert(into.end(), std::make_move_iterator(more.begin()),
                std::make_move_iterator(more.end()));
  }

  Problems calculate(const Node& reader, const Node& writer) {
    if (reader.kind == writer.kind) return same_kind(reader, writer);
    if (writer.kind == Kind::kUnion) {
      // Each branch from the top, as Java does: its path starts again.
      Problems result;
      auto saved = location_;
      for (const Node* branch : writer.branches) {
        location_ = {""};
        merge(result, compatibility(reader, *branch));
      }
      location_ = saved;
      return result;
    }
    Kind w = writer.kind;
    switch (reader.kind) {
      case Kind::kLong:
        return w == Kind::kInt ? Problems{} : type_mismatch(reader, writer);
      case Kind::kFloat:
        return w == Kind::kInt || w == Kind::kLong ? Problems{} : type_mismatch(reader, writer);
      case Kind::kDouble:
        return w == Kind::kInt || w == Kind::kLong || w == Kind::kFloat
                   ? Problems{}
                   : type_mismatch(reader, writer);
      case Kind::kBytes:
        return w == Kind::kString ? Problems{} : type_mismatch(reader, writer);
      case Kind::kString:
        return w == Kind::kBytes ? Problems{} : type_mismatch(reader, writer);
      case Kind::kUnion:
        for (const Node* branch : reader.branches)
          if (compatibility(*branch, writer).empty()) return {};
        return incompatible("MISSING_UNION_BRANCH",
                            "reader union lacking writer type: " + upper(writer.kind));
      default:
        return type_mismatch(reader, writer);
    }
  }

  Problems same_kind(const Node& reader, const Node& writer) {
    Problems result;
    switch (reader.kind) {
      case Kind::kArray:
        return compatibility("items", *reader.items, *writer.items);
      case Kind::kMap:
        return compatibility("values", *reader.values, *writer.values);
      case Kind::kFixed:
        result = names(reader, writer);
        merge(result, fixed_size(reader, writer));
        return result;
      case Kind::kEnum:
        result = names(reader, writer);
        merge(result, enum_symbols(reader, writer));
        return result;
      case Kind::kRecord:
        result = names(reader, writer);
        merge(result, record_fields(reader, writer));
        return result;
      case Kind::kUnion:
        for (size_t i = 0; i < writer.branches.size(); ++i) {
          location_.push_back(std::to_string(i));
          if (!compatibility(reader, *writer.branches[i]).empty())
            merge(result,
                  incompatible("MISSING_UNION_BRANCH", "reader union lacking writer type: " +
                                                           upper(writer.branches[i]->kind)));
          location_.pop_back();
        }
        return result;
      default:
        return {};
    }
  }

  Problems names(const Node& reader, const Node& writer) {
    location_.push_back("name");
    Problems result;
    bool same = short_name(reader) == short_name(writer) ||
                std::count(reader.aliases.begin(), reader.aliases.end(), writer.full_name) > 0;
    if (!same) result = incompatible("NAME_MISMATCH", "expected: " + writer.full_name);
    location_.pop_back();
    return result;
  }

  Problems fixed_size(const Node& reader, const Node& writer) {
    location_.push_back("size");
    Problems result;
    if (reader.size != writer.size)
      result = incompatible("FIXED_SIZE_MISMATCH", "expected: " + std::to_string(writer.size) +
                                                       ", found: " + std::to_string(reader.size));
    location_.pop_back();
    return result;
  }

  Problems enum_symbols(const Node& reader, const Node& writer) {
    location_.push_back("symbols");
    Problems result;
    std::set<std::string> missing(writer.symbols.begin(), writer.symbols.end());
    for (const auto& s : reader.symbols) missing.erase(s);
    if (!missing.empty() && !reader.enum_default) {
      std::string list = "[";
      for (const auto& s : missing) list += (list.size() > 1 ? ", " : "") + s;
      result = incompatible("MISSING_ENUM_SYMBOLS", list + "]");
    }
    location_.pop_back();
    return result;
  }

  static const Field* writer_field(const Node& writer, const Field& reader_field) {
    auto named = [&](const std::string& name) -> const Field* {
      for (const auto& f : writer.fields)
        if (f.name == name) return &f;
      return nullptr;
    };
    if (const Field* f = named(reader_field.name)) return f;
    for (const auto& alias : reader_field.aliases)
      if (const Field* f = named(alias)) return f;
    return nullptr;
  }

  Problems record_fields(const Node& reader, const Node& writer) {
    location_.push_back("fields");
    Problems result;
    for (size_t i = 0; i < reader.fields.size(); ++i) {
      const Field& field = reader.fields[i];
      location_.push_back(std::to_string(i));
      if (const Field* w = writer_field(writer, field)) {
        merge(result, compatibility("type", *field.type, *w->type));
      } else if (!field.default_value) {
        // Java's quirk: an enum with a default symbol is compared with the writer record itself.
        if (field.type->kind == Kind::kEnum && field.type->enum_default)
          merge(result, compatibility("type", *field.type, writer));
        else
          merge(result, incompatible("READER_FIELD_MISSING_DEFAULT_VALUE", field.name));
      }
      location_.pop_back();
    }
    location_.pop_back();
    return result;
  }

  std::vector<std::string> location_;
  std::map<std::pair<const Node*, const Node*>, Problems> memo_;
};

}  // namespace

std::vector<Incompatibility> reader_writer_problems(const Schema& reader, const Schema& writer) {
  return Checker().check(reader.root(), writer.root());
}

std::string confluent_text(const Incompatibility& p, const std::string& reader_label,
                           const std::string& writer_label) {
  const std::string at = "path '" + p.path + "'";
  std::string description;
  if (p.type == "READER_FIELD_MISSING_DEFAULT_VALUE")
    description = "The field '" + p.message + "' at " + at + " in the " + reader_label +
                  " schema has no default value and is missing in the " + writer_label + " schema";
  else if (p.type == "TYPE_MISMATCH")
    description = "The type (" + at + ") of a field in the " + reader_label +
                  " schema does not match with the " + writer_label + " schema";
  else if (p.type == "NAME_MISMATCH")
    description = "The name of the schema has changed (" + at + ")";
  else if (p.type == "MISSING_ENUM_SYMBOLS")
    description = "The " + reader_label + " schema is missing enum symbols '" + p.message +
                  "' at " + at + " in the " + writer_label + " schema";
  else if (p.type == "MISSING_UNION_BRANCH")
    description = "The " + reader_label + " schema is missing a type inside a union field at " +
                  at + " in the " + writer_label + " schema";
  else if (p.type == "FIXED_SIZE_MISMATCH")
    description = "The size of FIXED type field at " + at + " in the " + reader_label +
                  " schema does not match with the " + writer_label + " schema";
  return "{errorType:'" + p.type + "', description:'" + description + "', additionalInfo:'" +
         p.message + "'}";
}

}  // namespace oxbow::registry::avro
