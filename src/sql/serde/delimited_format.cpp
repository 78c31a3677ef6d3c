#include <cmath>

#include "common/base64.h"
#include "sql/binder/sql_error.h"
#include "sql/serde/formats.h"

namespace oxbow::sql::formats {

namespace {

using Kind = Value::Kind;

// DELIMITED (ksqlDB's, over Commons CSV): one field a column, in order, split on `delimiter`;
// a field with the delimiter, a quote or a line break, or that starts with a character Commons
// CSV quotes, is quoted with '"' (a quote inside doubled). An empty field is NULL.
std::string delimited_field(const Value& v) {
  switch (v.kind()) {
    case Kind::kNull:
      return "";
    case Kind::kBoolean:
      return v.boolean() ? "true" : "false";
    case Kind::kInteger:
      return std::to_string(v.integer());
    case Kind::kDouble:
      return java_double_text(v.dbl());
    case Kind::kDecimal:
      return decimal_text(v.unscaled(), v.scale());
    case Kind::kString:
      return v.text();
    case Kind::kBytes:
      return base64(v.text());
    default:  // BIGINT, DATE (days), TIME (ms of day), TIMESTAMP (ms)
      return std::to_string(v.bigint());
  }
}

bool needs_quotes(const std::string& field, char delimiter) {
  if (field.empty()) return false;
  if (static_cast<unsigned char>(field[0]) <= '#') return true;
  if (static_cast<unsigned char>(field.back()) <= ' ') return true;
  return field.find_first_of(std::string{delimiter, '"', '\r', '\n'}) != std::string::npos;
}

std::vector<std::string> split_delimited(std::string_view bytes, char delimiter) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t k = 0; k < bytes.size(); ++k) {
    char c = bytes[k];
    if (quoted) {
      if (c != '"') {
        fields.back() += c;
      } else if (k + 1 < bytes.size() && bytes[k + 1] == '"') {
        fields.back() += '"', ++k;
      } else {
        quoted = false;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == delimiter) {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  if (quoted) unreadable("Unterminated quoted field in a DELIMITED record");
  return fields;
}

}  // namespace

streams::Serde<Row> delimited_serde(std::vector<Column> columns, char delimiter) {
  for (const auto& c : columns)
    if (c.type->base() == SqlBaseType::kArray || c.type->base() == SqlBaseType::kMap ||
        c.type->base() == SqlBaseType::kStruct)
      throw SqlError(std::string("The 'DELIMITED' format does not support type '") +
                     c.type->base_name() + "'");
  auto shared = std::make_shared<std::vector<Column>>(std::move(columns));
  auto serialize = [delimiter](std::string_view, const Row& row) {
    std::string out;
    for (size_t k = 0; k < row.size(); ++k) {
      if (k) out += delimiter;
      std::string field = delimited_field(row[k]);
      if (!needs_quotes(field, delimiter)) {
        out += field;
        continue;
      }
      out += '"';
      for (char c : field) out += c == '"' ? std::string("\"\"") : std::string(1, c);
      out += '"';
    }
    return out;
  };
  auto deserialize = [shared, delimiter](std::string_view, std::string_view bytes) {
    std::vector<std::string> fields = split_delimited(bytes, delimiter);
    if (fields.size() != shared->size())
      unreadable("Column count mismatch on deserialization. expected: " +
                 std::to_string(shared->size()) + ", got: " + std::to_string(fields.size()));
    Row row(shared->size());
    for (size_t k = 0; k < fields.size(); ++k) {
      if (fields[k].empty()) continue;  // NULL
      const SqlType& type = *(*shared)[k].type;
      if (type.base() == SqlBaseType::kBytes) {
        std::string raw = from_base64(fields[k]);
        row[k].set_text(Kind::kBytes, raw.data(), raw.size());
      } else if (type.base() == SqlBaseType::kString) {
        row[k].set_string(fields[k]);
      } else {
        value_from_json(nlohmann::json(fields[k]), type, row[k]);
      }
    }
    return row;
  };
  return streams::Serde<Row>(serialize, deserialize, "DELIMITED");
}

}  // namespace oxbow::sql::formats
