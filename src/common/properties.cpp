#include "common/properties.h"

#include <cctype>
#include <charconv>
#include <cstdlib>

namespace oxbow {

std::string_view trim(std::string_view text) {
  const char* blanks = " \t\r\n";
  auto first = text.find_first_not_of(blanks);
  if (first == std::string_view::npos) return {};
  auto last = text.find_last_not_of(blanks);
  return text.substr(first, last - first + 1);
}

std::string ascii_lower(std::string text) {
  for (auto& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

std::string ascii_upper(std::string text) {
  for (auto& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    auto end = text.find(separator, start);
    parts.emplace_back(trim(text.substr(start, end - start)));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return parts;
}

std::optional<std::pair<std::string, std::string>> split_assignment(std::string_view text) {
  auto eq = text.find('=');
  if (eq == std::string_view::npos) return std::nullopt;
  return std::make_pair(std::string(trim(text.substr(0, eq))),
                        std::string(trim(text.substr(eq + 1))));
}

std::optional<std::string> parse_properties(std::string_view text, Properties& out) {
  int line_number = 0;
  size_t start = 0;
  while (start <= text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    auto line = trim(text.substr(start, end - start));
    start = end + 1;
    ++line_number;
    if (line.empty() || line[0] == '#' || line[0] == '!') continue;
    auto separator = line.find_first_of("=:");
    if (separator == std::string_view::npos) {
      return "line " + std::to_string(line_number) + ": expected key=value, got '" +
             std::string(line) + "'";
    }
    out[std::string(trim(line.substr(0, separator)))] =
        std::string(trim(line.substr(separator + 1)));
  }
  return std::nullopt;
}

std::optional<int64_t> parse_int64(std::string_view text) {
  text = trim(text);
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

std::optional<double> parse_double(std::string_view text) {
  std::string copy(trim(text));
  if (copy.empty()) return std::nullopt;
  char* end = nullptr;
  double value = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size()) return std::nullopt;
  return value;
}

std::optional<bool> parse_bool(std::string_view text) {
  text = trim(text);
  if (text == "true" || text == "TRUE" || text == "True") return true;
  if (text == "false" || text == "FALSE" || text == "False") return false;
  return std::nullopt;
}

}  // namespace oxbow
