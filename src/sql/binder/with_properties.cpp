#include "sql/binder/with_properties.h"

#include <cctype>
#include <charconv>
#include <climits>
#include <cstdint>
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

namespace {

bool takes_schema_properties(const std::string& format) {
  return format == "AVRO" || format == "JSON_SR" || format == "PROTOBUF";
}

// Guava's UPPER_UNDERSCORE to UPPER_CAMEL, as ksqlDB names an AVRO key's record: MY_SINK ->
// MySink.
std::string upper_camel(const std::string& name) {
  std::string out;
  bool word_start = true;
  for (char c : name) {
    if (c == '_') {
      word_start = true;
      continue;
    }
    const auto u = static_cast<unsigned char>(c);
    out += static_cast<char>(word_start ? std::toupper(u) : std::tolower(u));
    word_start = false;
  }
  return out;
}

// One side's full schema name: ksqlDB's format properties refuse it for a format without a
// schema, and an empty one.
std::string bound_full_name(const std::optional<std::string>& name, const std::string& format) {
  if (!name) return "";
  if (!takes_schema_properties(format))
    throw SqlError(format + " does not support the following configs: [fullSchemaName]");
  const std::string trimmed = trim(*name);
  if (trimmed.empty())
    throw SqlError("fullSchemaName cannot be empty. Format configuration: {fullSchemaName=}");
  return trimmed;
}

std::string bound_nullable(const WithProperties& with, const std::string& property,
                           const std::string& format) {
  const auto value = with.text(property);
  if (!value) return "";
  const std::string u = upper(*value);
  if (u != "OPTIONAL" && u != "WRAPPER")
    throw SqlError("Invalid value " + *value + " for configuration " + property +
                   ": String must be one of: OPTIONAL, WRAPPER, null");
  if (format != "PROTOBUF" && format != "PROTOBUF_NOSR")
    throw SqlError("Property " + property + " can only be enabled with protobuf format");
  return u;
}

std::optional<int32_t> bound_schema_id(const WithProperties& with, const std::string& side,
                                       const std::string& format) {
  const auto id = with.integer(side + "_SCHEMA_ID");
  if (!id) return std::nullopt;
  if (!takes_schema_properties(format))
    throw SqlError(side + "_FORMAT should support schema inference when " + side +
                   "_SCHEMA_ID is provided. Current format is " + format + ".");
  if (*id < 0 || *id > INT32_MAX)
    throw SqlError("Invalid value for " + side + "_SCHEMA_ID: " + std::to_string(*id));
  return static_cast<int32_t>(*id);
}

}  // namespace

void bind_registry_properties(Formats& formats, const WithProperties& with,
                              const std::string& source_name) {
  if (with.has("VALUE_AVRO_SCHEMA_FULL_NAME") && with.has("VALUE_SCHEMA_FULL_NAME"))
    throw SqlError(
        "Cannot supply both 'VALUE_AVRO_SCHEMA_FULL_NAME' and 'VALUE_SCHEMA_FULL_NAME' "
        "properties. Please only set 'VALUE_SCHEMA_FULL_NAME'.");
  const auto value_name = with.has("VALUE_AVRO_SCHEMA_FULL_NAME")
                              ? with.text("VALUE_AVRO_SCHEMA_FULL_NAME")
                              : with.text("VALUE_SCHEMA_FULL_NAME");
  formats.key_schema_full_name =
      bound_full_name(with.text("KEY_SCHEMA_FULL_NAME"), formats.key_format);
  formats.value_schema_full_name = bound_full_name(value_name, formats.value_format);
  // A key record's name is the source's own, so that generated classes do not clash
  // (ksqlDB's issue 6465).
  if (formats.key_schema_full_name.empty() && formats.key_format == "AVRO")
    formats.key_schema_full_name =
        "io.confluent.ksql.avro_schemas." + upper_camel(source_name) + "Key";
  formats.key_protobuf_nullable =
      bound_nullable(with, "KEY_PROTOBUF_NULLABLE_REPRESENTATION", formats.key_format);
  formats.value_protobuf_nullable =
      bound_nullable(with, "VALUE_PROTOBUF_NULLABLE_REPRESENTATION", formats.value_format);
  formats.key_schema_id = bound_schema_id(with, "KEY", formats.key_format);
  formats.value_schema_id = bound_schema_id(with, "VALUE", formats.value_format);
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
