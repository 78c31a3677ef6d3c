#pragma once
// The WITH clause of CREATE STREAM|TABLE, checked and typed (docs/sql/ksqldb-facts.md §1.7):
// known names only, values of the right kind, formats ksqlDB knows, delimiters, durations.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sql/catalog/data_source.h"
#include "sql/parser/ast.h"

namespace oxbow::sql {

struct WithProperties {
  std::map<std::string, std::string> values;  // name (upper-cased) -> the literal's text
  std::map<std::string, parser::Position> positions;

  bool has(const std::string& name) const { return values.count(name) > 0; }
  std::optional<std::string> text(const std::string& name) const;
  std::optional<int64_t> integer(const std::string& name) const;  // throws SqlError if not one
  std::optional<bool> boolean(const std::string& name) const;
};

// Throws SqlError "Invalid config variable(s) in the WITH clause: A,B" for names CREATE does not
// take, and for values that are not literals.
WithProperties read_create_properties(const std::vector<parser::Property>& properties);

// A format's name upper-cased, or SqlError "Unknown format: X".
std::string checked_format(const std::string& name);

// `,`, `TAB` (a tab), `SPACE` (a space) or any one character; SqlError otherwise, naming the
// property.
std::string checked_delimiter(const std::string& property, const std::string& value);

// The Schema Registry formats' properties of a CREATE or a C*AS sink named `source_name` into
// `formats` (whose key and value formats are set): *_SCHEMA_FULL_NAME and
// VALUE_AVRO_SCHEMA_FULL_NAME (an AVRO key's default, as ksqlDB's,
// io.confluent.ksql.avro_schemas.<SourceName>Key), *_PROTOBUF_NULLABLE_REPRESENTATION and
// *_SCHEMA_ID, with ksqlDB's refusals (a property the side's format does not take, an empty
// name, an unknown representation).
void bind_registry_properties(Formats& formats, const WithProperties& with,
                              const std::string& source_name);

// "30 SECONDS", "1 HOUR" to milliseconds; SqlError naming the property otherwise.
int64_t parse_duration_ms(const std::string& property, const std::string& text);

}  // namespace oxbow::sql
