#include "cli/sql_statement_text.h"

#include <cctype>
#include <sstream>
#include <vector>

#include "common/properties.h"

namespace oxbow::cli {

std::string upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string_view without_leading_comments(std::string_view statement) {
  std::string_view rest = trim(statement);
  while (rest.starts_with("--")) {
    size_t eol = rest.find('\n');
    rest = eol == std::string_view::npos ? "" : trim(rest.substr(eol));
  }
  return rest;
}

namespace {

bool first_word_is(std::string_view statement, std::string_view word) {
  std::string_view rest = without_leading_comments(statement);
  const size_t n = word.size();
  return upper(rest.substr(0, n)) == word &&
         (rest.size() == n || !std::isalnum(static_cast<unsigned char>(rest[n])));
}

}  // namespace

bool is_query(std::string_view statement) {
  return first_word_is(statement, "SELECT");
}

bool is_print(std::string_view statement) {
  return first_word_is(statement, "PRINT");
}

std::optional<std::string> quoted(std::string_view& text) {
  text = trim(text);
  if (text.empty() || text.front() != '\'') return std::nullopt;
  std::string out;
  for (size_t i = 1; i < text.size(); ++i) {
    if (text[i] != '\'') {
      out += text[i];
    } else if (i + 1 < text.size() && text[i + 1] == '\'') {
      out += '\'';
      ++i;
    } else {
      text = text.substr(i + 1);
      return out;
    }
  }
  return std::nullopt;
}

std::optional<LocalProperty> local_property(std::string_view statement) {
  std::string_view rest = without_leading_comments(statement);
  bool unset = upper(rest.substr(0, 6)) == "UNSET ";
  if (!unset && upper(rest.substr(0, 4)) != "SET ") return std::nullopt;
  rest = rest.substr(unset ? 6 : 4);
  auto name = quoted(rest);
  if (!name) return std::nullopt;
  LocalProperty property{*name, std::nullopt};
  if (!unset) {
    rest = trim(rest);
    if (rest.empty() || rest.front() != '=') return std::nullopt;
    rest = rest.substr(1);
    property.value = quoted(rest);
    if (!property.value) return std::nullopt;
  }
  if (trim(rest) != ";" && !trim(rest).empty()) return std::nullopt;
  return property;
}

std::optional<std::string> script_path(std::string_view statement) {
  std::string_view rest = without_leading_comments(statement);
  if (upper(rest.substr(0, 3)) != "RUN") return std::nullopt;
  rest = trim(rest.substr(3));
  if (upper(rest.substr(0, 6)) != "SCRIPT") return std::nullopt;
  rest = trim(rest.substr(6));
  return quoted(rest);
}

namespace {

bool is_identifier(std::string_view word) {
  if (word.empty() || std::isdigit(static_cast<unsigned char>(word[0]))) return false;
  for (char c : word)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

}  // namespace

std::vector<std::string> line_words(std::string_view line) {
  line = trim(line);
  while (line.ends_with(';')) line = trim(line.substr(0, line.size() - 1));
  std::vector<std::string> words;
  std::istringstream in{std::string(line)};
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

std::optional<VariableStatement> variable_statement(std::string_view statement) {
  std::string_view rest = without_leading_comments(statement);
  std::string first = upper(rest.substr(0, rest.find_first_of(" \t\r\n;")));
  if (first == "SHOW" || first == "LIST") {
    auto words = line_words(rest);
    if (words.size() == 2 && upper(words[1]) == "VARIABLES") return VariableStatement{};
    return std::nullopt;
  }
  if (first != "DEFINE" && first != "UNDEFINE") return std::nullopt;
  rest = trim(rest.substr(first.size()));
  size_t name_end = rest.find_first_of(" \t\r\n=;");
  std::string name(rest.substr(0, name_end));
  if (!is_identifier(name)) return std::nullopt;
  rest = trim(rest.substr(name.size()));
  VariableStatement variable{name, std::nullopt};
  if (first == "DEFINE") {
    if (!rest.starts_with('=')) return std::nullopt;
    rest = rest.substr(1);
    variable.value = quoted(rest);
    if (!variable.value) return std::nullopt;
  }
  if (!trim(rest).empty() && trim(rest) != ";") return std::nullopt;
  return variable;
}

}  // namespace oxbow::cli
