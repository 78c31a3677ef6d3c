#include "sql/functions/library.h"

namespace oxbow::sql {

const std::vector<FunctionInfo>& builtin_functions() {
  static const std::vector<FunctionInfo> all = [] {
    std::vector<FunctionInfo> out;
    using namespace functions;
    for (auto add : {add_string_functions, add_regex_functions, add_math_functions,
                     add_collection_functions, add_null_functions, add_bytes_functions,
                     add_json_functions, add_url_functions, add_date_time_functions,
                     add_lambda_functions, add_aggregate_functions, add_table_functions})
      add(out);
    return out;
  }();
  return all;
}

}  // namespace oxbow::sql

namespace oxbow::sql::functions {

FunctionInfo scalar(std::string name, std::string category, std::string description,
                    std::vector<FunctionVariant> variants) {
  FunctionInfo info;
  info.name = std::move(name);
  info.category = std::move(category);
  info.description = std::move(description);
  info.variants = std::move(variants);
  return info;
}

FunctionInfo scalar_seeing_nulls(std::string name, std::string category, std::string description,
                                 std::vector<FunctionVariant> variants) {
  for (auto& v : variants) v.sees_nulls = true;
  return scalar(std::move(name), std::move(category), std::move(description), std::move(variants));
}

void set_string(Value& out, std::string_view s) {
  out.set_text(Kind::kString, s.data(), s.size());
}

void set_bytes(Value& out, std::string_view s) {
  out.set_text(Kind::kBytes, s.data(), s.size());
}

void set_items(Value& out, Kind kind, std::vector<Value> items) {
  out.set_items(kind, std::make_shared<const std::vector<Value>>(std::move(items)));
}

Value string_value(std::string_view s) {
  Value v;
  set_string(v, s);
  return v;
}

std::string& scratch() {
  thread_local std::string buffer;
  buffer.clear();
  return buffer;
}

std::vector<char32_t> code_points(std::string_view s) {
  std::vector<char32_t> out;
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    int extra = c < 0x80 ? 0 : c < 0xE0 ? 1 : c < 0xF0 ? 2 : 3;
    char32_t cp = extra == 0 ? c : c & (0x3F >> extra);
    for (int k = 1; k <= extra && i + static_cast<size_t>(k) < s.size(); ++k)
      cp = (cp << 6) | (static_cast<unsigned char>(s[i + static_cast<size_t>(k)]) & 0x3F);
    out.push_back(cp);
    i += static_cast<size_t>(extra) + 1;
  }
  return out;
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

int32_t java_length(std::string_view s) {
  int32_t n = 0;
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if ((c & 0xC0) != 0x80) n += c >= 0xF0 ? 2 : 1;  // astral code points are two UTF-16 units
  }
  return n;
}

bool same_value(const Value& x, const Value& y) {
  if (x.is_null() || y.is_null()) return x.is_null() && y.is_null();
  if (x.kind() == Kind::kArray || x.kind() == Kind::kMap || x.kind() == Kind::kStruct) {
    if (y.kind() != x.kind() || x.items().size() != y.items().size()) return false;
    for (size_t k = 0; k < x.items().size(); ++k)
      if (!same_value(x.items()[k], y.items()[k])) return false;
    return true;
  }
  return ops::compare_values(x, y) == 0;
}

}  // namespace oxbow::sql::functions
