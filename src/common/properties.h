#pragma once
// Kafka-style `key=value` properties (server.properties): parsing and typed look-ups.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace oxbow {

// Ordered so that printing a configuration is stable.
using Properties = std::map<std::string, std::string>;

// Parses properties text: `key=value` or `key: value` lines, `#`/`!` comments, surrounding blanks
// trimmed. Returns an error message naming the line when a line has no separator.
std::optional<std::string> parse_properties(std::string_view text, Properties& out);

// Splits "key=value"; returns nullopt when there is no '='.
std::optional<std::pair<std::string, std::string>> split_assignment(std::string_view text);

// Strict conversions: the whole text must be the number. Kafka's duration and size values are
// plain integers (ms, bytes).
std::optional<int64_t> parse_int64(std::string_view text);
std::optional<double> parse_double(std::string_view text);
std::optional<bool> parse_bool(std::string_view text);

std::string_view trim(std::string_view text);
// Splits at `separator`, each part trimmed.
std::vector<std::string> split(std::string_view text, char separator);
// ASCII case mapping, for names such as listener names and config values.
std::string ascii_lower(std::string text);
std::string ascii_upper(std::string text);

}  // namespace oxbow
