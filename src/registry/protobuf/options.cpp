// Option values as Confluent prints them. An aggregate (`{ a: 1 b { c: "x" } }`) reaches us from
// libprotobuf's parser as its tokens joined by spaces; it is read back into the key/value tree
// Confluent's parser (wire) builds, so that it prints one `key: value` per line as Confluent does.
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "registry/protobuf/options.h"

namespace oxbow::registry::protobuf {

void indent_lines(std::string& out, const std::string& value) {
  size_t start = 0;
  while (start < value.size()) {
    size_t end = value.find('\n', start);
    if (end == std::string::npos) end = value.size();
    out += "  ";
    out.append(value, start, end - start);
    out += '\n';
    start = end + 1;
  }
}

namespace {

struct Value {
  enum Kind { kString, kPrimitive, kMap, kList } kind = kPrimitive;
  std::string text;               // kString: the unescaped string; kPrimitive: the token(s)
  std::vector<std::string> keys;  // kMap: keys[i] holds values[i]
  std::vector<Value> values;
  std::vector<Value> list;
};

struct Quiet : pb::io::ErrorCollector {
  void AddError(int, int, const std::string&) override {}
};

class AggregateReader {
 public:
  explicit AggregateReader(const std::string& text)
      : in_(text.data(), static_cast<int>(text.size())), tok_(&in_, &quiet_) {
    tok_.Next();
  }

  // Fails on anything wire would not read; the caller then prints the text as it came.
  bool read_map(std::string_view close, Value* out, int depth) {
    out->kind = Value::kMap;
    if (depth > kMaxNesting) return false;
    while (!at(close)) {
      if (done()) return close.empty();
      std::string key;
      if (at("[")) {
        tok_.Next();
        key = "[";
        while (!at("]")) {
          if (done()) return false;
          key += tok_.current().text;
          tok_.Next();
        }
        key += "]";
        tok_.Next();
      } else if (tok_.current().type == pb::io::Tokenizer::TYPE_IDENTIFIER) {
        key = tok_.current().text;
        tok_.Next();
      } else {
        return false;
      }
      if (at(":")) tok_.Next();
      Value v;
      if (!read_value(&v, depth)) return false;
      add(out, key, std::move(v));
      if (at(",") || at(";")) tok_.Next();
    }
    tok_.Next();
    return true;
  }

 private:
  bool done() { return tok_.current().type == pb::io::Tokenizer::TYPE_END; }
  bool at(std::string_view s) { return !s.empty() && !done() && tok_.current().text == s; }

  bool read_value(Value* v, int depth) {
    if (at("{")) return tok_.Next(), read_map("}", v, depth + 1);
    if (at("<")) return tok_.Next(), read_map(">", v, depth + 1);
    if (at("[")) {
      tok_.Next();
      v->kind = Value::kList;
      while (!at("]")) {
        if (done()) return false;
        Value item;
        if (!read_value(&item, depth + 1)) return false;
        v->list.push_back(std::move(item));
        if (at(",")) tok_.Next();
      }
      tok_.Next();
      return true;
    }
    using T = pb::io::Tokenizer;
    if (tok_.current().type == T::TYPE_STRING) {
      v->kind = Value::kString;
      while (tok_.current().type == T::TYPE_STRING) {
        std::string part;
        T::ParseStringAppend(tok_.current().text, &part);
        v->text += part;
        tok_.Next();
      }
      return true;
    }
    std::string sign;
    if (at("-")) {
      sign = "-";
      tok_.Next();
    }
    auto type = tok_.current().type;
    if (type != T::TYPE_IDENTIFIER && type != T::TYPE_INTEGER && type != T::TYPE_FLOAT)
      return false;
    v->kind = Value::kPrimitive;
    v->text = sign + tok_.current().text;
    tok_.Next();
    return true;
  }

  // wire keeps a repeated key once, its values gathered in a list.
  static void add(Value* map, const std::string& key, Value v) {
    for (size_t i = 0; i < map->keys.size(); ++i) {
      if (map->keys[i] != key) continue;
      Value& existing = map->values[i];
      if (existing.kind != Value::kList) {
        Value list;
        list.kind = Value::kList;
        list.list.push_back(std::move(existing));
        existing = std::move(list);
      }
      existing.list.push_back(std::move(v));
      return;
    }
    map->keys.push_back(key);
    map->values.push_back(std::move(v));
  }

  pb::io::ArrayInputStream in_;
  Quiet quiet_;
  pb::io::Tokenizer tok_;
};

void append_indented(std::string& out, const std::string& value) {
  indent_lines(out, value);
  if (value.empty()) out += "  \n";
}

std::string format_value(const Value& v, bool normalize);

std::string format_map(const Value& v, bool normalize) {
  std::vector<std::pair<std::string, const Value*>> entries;
  for (size_t i = 0; i < v.keys.size(); ++i) {
    const Value& val = v.values[i];
    if (normalize && val.kind == Value::kList && val.list.empty()) continue;
    entries.emplace_back(v.keys[i], &val);
  }
  if (normalize)
    std::stable_sort(entries.begin(), entries.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out;
  for (size_t i = 0; i < entries.size(); ++i)
    append_indented(out, entries[i].first + ": " + format_value(*entries[i].second, normalize) +
                             (i + 1 < entries.size() ? "," : ""));
  return out;
}

std::string format_value(const Value& v, bool normalize) {
  switch (v.kind) {
    case Value::kString:
      return "\"" + escape_chars(v.text) + "\"";
    case Value::kMap:
      return "{\n" + format_map(v, normalize) + "}";
    case Value::kList: {
      if (normalize && v.list.size() == 1) return format_value(v.list[0], normalize);
      std::string out = "[\n";
      for (size_t i = 0; i < v.list.size(); ++i)
        append_indented(out,
                        format_value(v.list[i], normalize) + (i + 1 < v.list.size() ? "," : ""));
      return out + "]";
    }
    case Value::kPrimitive:
      break;
  }
  return format_number(v.text, normalize);
}

std::string double_text(double d) {
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  if (std::isnan(d)) return "nan";
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  std::string s = buf;
  // wire keeps `1.0` as written; libprotobuf hands us the double, so keep it looking like one.
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::string uninterpreted_value(const pb::UninterpretedOption& o, bool normalize) {
  if (o.has_identifier_value()) return o.identifier_value();
  if (o.has_positive_int_value())
    return format_number(std::to_string(o.positive_int_value()), normalize);
  if (o.has_negative_int_value())
    return format_number(std::to_string(o.negative_int_value()), normalize);
  if (o.has_double_value()) return format_number(double_text(o.double_value()), normalize);
  if (o.has_string_value()) return "\"" + escape_chars(o.string_value()) + "\"";
  if (o.has_aggregate_value()) {
    AggregateReader reader(o.aggregate_value());
    Value v;
    if (reader.read_map("", &v, 0)) return "{\n" + format_map(v, normalize) + "}";
    return "{" + o.aggregate_value() + "}";
  }
  return "";
}

// The standard options Confluent copies from a descriptor, in its order, per options type.
const std::vector<std::string>& descriptor_option_names(const std::string& type) {
  static const std::map<std::string, std::vector<std::string>> names = {
      {"google.protobuf.FileOptions",
       {"java_package",
        "java_outer_classname",
        "java_multiple_files",
        "java_generate_equals_and_hash",
        "java_string_check_utf8",
        "optimize_for",
        "go_package",
        "cc_generic_services",
        "java_generic_services",
        "py_generic_services",
        "php_generic_services",
        "deprecated",
        "cc_enable_arenas",
        "objc_class_prefix",
        "csharp_namespace",
        "swift_prefix",
        "php_class_prefix",
        "php_namespace",
        "php_metadata_namespace",
        "ruby_package"}},
      {"google.protobuf.MessageOptions",
       {"no_standard_descriptor_accessor", "deprecated", "map_entry"}},
      {"google.protobuf.FieldOptions", {"ctype", "packed", "jstype", "deprecated"}},
      {"google.protobuf.EnumOptions", {"allow_alias", "deprecated"}},
      {"google.protobuf.EnumValueOptions", {"deprecated"}},
      {"google.protobuf.ServiceOptions", {"deprecated"}},
      {"google.protobuf.MethodOptions", {"deprecated", "idempotency_level"}},
  };
  static const std::vector<std::string> none;
  auto it = names.find(type);
  return it == names.end() ? none : it->second;
}

std::string reflected_value(const pb::Message& m, const pb::FieldDescriptor* f) {
  const pb::Reflection* r = m.GetReflection();
  using C = pb::FieldDescriptor;
  switch (f->cpp_type()) {
    case C::CPPTYPE_STRING:
      return "\"" + escape_chars(r->GetString(m, f)) + "\"";
    case C::CPPTYPE_BOOL:
      return r->GetBool(m, f) ? "true" : "false";
    case C::CPPTYPE_ENUM:
      return r->GetEnum(m, f)->name();
    case C::CPPTYPE_INT32:
      return std::to_string(r->GetInt32(m, f));
    case C::CPPTYPE_INT64:
      return std::to_string(r->GetInt64(m, f));
    case C::CPPTYPE_UINT32:
      return std::to_string(r->GetUInt32(m, f));
    case C::CPPTYPE_UINT64:
      return std::to_string(r->GetUInt64(m, f));
    default:
      return "";
  }
}

}  // namespace

std::string format_number(const std::string& text, bool normalize) {
  if (!normalize || text.empty()) return text;
  const char* s = text.c_str();
  char* end = nullptr;
  bool integer = text.find_first_of(".eE") == std::string::npos || text.starts_with("0x") ||
                 text.starts_with("-0x");
  if (integer) {
    long long v = std::strtoll(s, &end, 0);
    if (end != s && *end == '\0') return std::to_string(v);
    return text;
  }
  double d = std::strtod(s, &end);
  if (end == s || *end != '\0' || !std::isfinite(d)) return text;
  char buf[400];
  std::snprintf(buf, sizeof buf, "%.3f", d);
  std::string out = buf;
  while (out.back() == '0') out.pop_back();
  if (out.back() == '.') out.pop_back();
  if (out == "-0") out = "-0";
  return out;
}

PrintedOption pseudo_option(const std::string& name, const std::string& value) {
  return {name, name + " = " + value};
}

std::vector<PrintedOption> element_options(const pb::Message& options, bool from_text,
                                           bool normalize, const ExtensionResolver& resolve) {
  std::vector<PrintedOption> out;
  const pb::Descriptor* d = options.GetDescriptor();
  const pb::Reflection* r = options.GetReflection();
  if (!from_text) {
    for (const std::string& n : descriptor_option_names(d->full_name())) {
      const pb::FieldDescriptor* f = d->FindFieldByName(n);
      if (f == nullptr || f->is_repeated() || !r->HasField(options, f)) continue;
      out.push_back({n, n + " = " + reflected_value(options, f)});
    }
  }
  const pb::FieldDescriptor* uninterpreted = d->FindFieldByName("uninterpreted_option");
  if (uninterpreted != nullptr) {
    for (int i = 0; i < r->FieldSize(options, uninterpreted); ++i) {
      const auto& o = static_cast<const pb::UninterpretedOption&>(
          r->GetRepeatedMessage(options, uninterpreted, i));
      PrintedOption p;
      std::string printed;
      for (int k = 0; k < o.name_size(); ++k) {
        const auto& part = o.name(k);
        std::string n = part.name_part();
        if (part.is_extension() && k == 0 && normalize) n = resolve(n);
        if (k == 0) p.name = n;
        printed += (k ? "." : "") + (part.is_extension() ? "(" + n + ")" : n);
      }
      p.text = printed + " = " + uninterpreted_value(o, normalize);
      out.push_back(std::move(p));
    }
  }
  if (normalize)
    std::stable_sort(out.begin(), out.end(),
                     [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

std::string escape_chars(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (char c : in) {
    switch (c) {
      case '\a':
        out += "\\a";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\v':
        out += "\\v";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\'':
        out += "\\'";
        break;
      case '"':
        out += "\\\"";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace oxbow::registry::protobuf
