#include "sql/engine/variables.h"

#include <cctype>

namespace oxbow::sql {

namespace {

bool same_name(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

const std::string* lookup(const std::map<std::string, std::string>& variables,
                          std::string_view name) {
  for (const auto& [n, value] : variables)
    if (same_name(n, name)) return &value;
  return nullptr;
}

}  // namespace

std::string substitute_variables(std::string_view text,
                                 const std::map<std::string, std::string>& variables) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    if (text.substr(i, 3) == "$${") {  // escaped: the reference's text, unsubstituted
      out += "${";
      i += 3;
      continue;
    }
    size_t end = text.substr(i, 2) == "${" ? text.find('}', i + 2) : std::string_view::npos;
    const std::string* value = end == std::string_view::npos
                                   ? nullptr
                                   : lookup(variables, text.substr(i + 2, end - i - 2));
    if (!value) {
      out += text[i++];
      continue;
    }
    out += *value;
    i = end + 1;
  }
  return out;
}

std::vector<std::string> split_statements(std::string_view text) {
  std::vector<std::string> out;
  std::string current;
  char quote = 0;  // ', " or ` while inside one
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    current += c;
    if (quote) {
      if (c == quote) quote = 0;  // a doubled quote closes and reopens: same effect
    } else if (c == '\'' || c == '"' || c == '`') {
      quote = c;
    } else if (c == '-' && i + 1 < text.size() && text[i + 1] == '-') {
      size_t eol = text.find('\n', i);
      if (eol == std::string_view::npos) eol = text.size();
      current += text.substr(i + 1, eol - i - 1);
      i = eol - 1;
    } else if (c == ';') {
      out.push_back(std::move(current));
      current.clear();
    }
  }
  bool blank = true;
  for (char c : current) blank = blank && std::isspace(static_cast<unsigned char>(c));
  if (!blank) out.push_back(std::move(current));
  return out;
}

}  // namespace oxbow::sql
