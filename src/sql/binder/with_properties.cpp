#include "sql/binder/with_properties.h"

#include <cctype>
#include <charconv>
#include <set>

#include "sql/binder/sql_error.h"
#include "sql/parser/parser.h"

namespace oxbow::sql {

namespace {

const std::set<std::string>& create_property_names() {
  static const std::set<std::string> names = {"KAFKA_TOPIC",
                                              "PARTITIONS",
                                              "REPLICAS",
                                              "RETENTION_MS",
                                              "FORMAT",
                                              "KEY_FORMAT",
                                              "VALUE_FORMAT",
                                              "WRAP_SINGLE_VALUE",
                                              "KEY_DELIMITER",
                                              "VALUE_DELIMITER",
                                              "TIMESTAMP",
                                              "TIMESTAMP_FORMAT",
                                              "WINDOW_TYPE",
                                              "WINDOW_SIZE",
                                              "KEY_SCHEMA_ID",
                                              "VALUE_SCHEMA_ID",
                                              "KEY_SCHEMA_FULL_NAME",
                                              "VALUE_SCHEMA_FULL_NAME",
                                              "VALUE_AVRO_SCHEMA_FULL_NAME",
                                              "KEY_PROTOBUF_NULLABLE_REPRESENTATION",
                                              "VALUE_PROTOBUF_NULLABLE_REPRESENTATION",
                                              "SOURCE_CONNECTOR",
                                              "SOURCED_BY_CONNECTOR"};
  return names;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\n"), e = s.find_last_not_of(" \t\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

}  // namespace

std::optional<std::string> WithProperties::text(const std::string& name) const {
  auto it = values.find(name);
  if (it == values.end()) return std::nullopt;
  return it->second;
}

std::optional<int64_t> WithProperties::integer(const std::string& name) const {
  auto value = text(name);
  if (!value) return std::nullopt;
  int64_t n = 0;
  auto [end, error] = std::from_chars(value->data(), value->data() + value->size(), n);
  if (error != std::errc() || end != value->data() + value->size())
    throw SqlError("Invalid value for " + name + ": " + *value + " is not an integer");
  return n;
}

std::optional<bool> WithProperties::boolean(const std::string& name) const {
  auto value = text(name);
  if (!value) return std::nullopt;
  std::string v = upper(*value);
  if (v == "TRUE") return true;
  if (v == "FALSE") return false;
  throw SqlError("Invalid value for " + name + ": " + *value + " is not a boolean");
}

WithProperties read_create_properties(const std::vector<parser::Property>& properties) {
  WithProperties out;
  std::string unknown;
  for (const auto& p : properties) {
    if (!create_property_names().count(p.name)) {
      unknown += (unknown.empty() ? "" : ",") + p.name;
      continue;
    }
    using parser::ExprKind;
    const parser::Expr& v = *p.value;
    if (v.kind != ExprKind::kString && v.kind != ExprKind::kInteger &&
        v.kind != ExprKind::kBoolean && v.kind != ExprKind::kDecimal && v.kind != ExprKind::kDouble)
      throw SqlError(p.position, "Invalid value for " + p.name + ": a literal is expected");
    out.values[p.name] = v.text;
    out.positions[p.name] = p.position;
  }
  if (!unknown.empty()) throw SqlError("Invalid config variable(s) in the WITH clause: " + unknown);
  return out;
}

std::string checked_format(const std::string& name) {
  static const std::set<std::string> formats = {"KAFKA",    "JSON",          "JSON_SR",   "AVRO",
                                                "PROTOBUF", "PROTOBUF_NOSR", "DELIMITED", "NONE"};
  std::string u = upper(name);
  if (!formats.count(u)) throw SqlError("Unknown format: " + u);
  return u;
}

std::string checked_delimiter(const std::string& property, const std::string& value) {
  std::string prefix = "Configuration " + property + " is invalid: ";
  if (value.empty())
    throw SqlError(prefix +
                   "Delimiter cannot be empty, if you meant to have a tab or space for delimiter, "
                   "please use the special values 'TAB' or 'SPACE'\nExample valid value: ';'");
  if (upper(value) == "TAB") return "\t";
  if (upper(value) == "SPACE") return " ";
  if (value.size() != 1)
    throw SqlError(prefix + "Invalid delimiter value: '" + value +
                   "'. Delimiter must be a single character or TAB,SPACE\nExample valid value: "
                   "';'");
  return value;
}

int64_t parse_duration_ms(const std::string& property, const std::string& text) {
  std::string prefix =
      "Configuration " + property + " is invalid: Invalid duration: '" + text + "'. ";
  std::string t = trim(text);
  size_t space = t.find_first_of(" \t");
  if (space == std::string::npos) throw SqlError(prefix + "Not recognizable as a duration");
  int64_t n = 0;
  std::string number = t.substr(0, space);
  auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), n);
  if (error != std::errc() || end != number.data() + number.size() || n < 0)
    throw SqlError(prefix + "Not recognizable as a duration");
  std::string unit = upper(trim(t.substr(space)));
  if (auto ms = parser::time_unit_ms(unit)) return n * *ms;
  throw SqlError(prefix + "Unknown time unit: '" + unit + "'");
}

}  // namespace oxbow::sql
