#include <algorithm>
#include <charconv>
#include <cmath>
#include <iterator>
#include <string_view>

#include "common/base64.h"
#include "sql/binder/sql_error.h"
#include "sql/serde/formats.h"

namespace oxbow::sql::formats {

namespace {

using Kind = Value::Kind;

// DELIMITED (ksqlDB's, over Commons CSV): one field a column, in order, split on `delimiter`;
// a field with the delimiter, a quote or a line break, or that starts with a character Commons
// CSV quotes, is quoted with '"' (a quote inside doubled). An empty field is NULL.
void append_field(const Value& v, std::string& out) {
  char buffer[48];
  auto number = [&](auto n) { out.append(buffer, std::to_chars(buffer, std::end(buffer), n).ptr); };
  switch (v.kind()) {
    case Kind::kNull:
      return;
    case Kind::kBoolean:
      out += v.boolean() ? "true" : "false";
      return;
    case Kind::kInteger:
      return number(v.integer());
    case Kind::kDouble:
      return append_java_double(v.dbl(), out);
    case Kind::kDecimal:
      out += decimal_text(v.unscaled(), v.scale());
      return;
    case Kind::kString:
      out += v.text();
      return;
    case Kind::kBytes:
      out += base64(v.text());
      return;
    default:  // BIGINT, DATE (days), TIME (ms of day), TIMESTAMP (ms)
      return number(v.bigint());
  }
}

bool needs_quotes(std::string_view field, char delimiter) {
  if (field.empty()) return false;
  if (static_cast<unsigned char>(field[0]) <= '#') return true;
  if (static_cast<unsigned char>(field.back()) <= ' ') return true;
  for (char c : field)
    if (c == delimiter || c == '"' || c == '\r' || c == '\n') return true;
  return false;
}

// Appends the row's fields to `out`, quoting a field where Commons CSV would: the field is written
// in place, then moved into quotes if it needs them.
void write_row(const Row& row, char delimiter, std::string& out) {
  for (size_t k = 0; k < row.size(); ++k) {
    if (k) out += delimiter;
    size_t start = out.size();
    append_field(row[k], out);
    if (!needs_quotes(std::string_view(out).substr(start), delimiter)) continue;
    std::string field = out.substr(start);
    out.resize(start);
    out += '"';
    for (char c : field) out += c == '"' ? std::string_view("\"\"") : std::string_view(&c, 1);
    out += '"';
  }
}

// Calls field(index, text) for each field of `bytes`. An unquoted field is a view of `bytes`; a
// quoted one is unquoted into `scratch` (whose buffer is reused from record to record).
template <class Field>
size_t for_each_field(std::string_view bytes, char delimiter, std::string& scratch, Field field) {
  size_t index = 0, k = 0;
  while (true) {
    size_t start = k;
    bool quoted = false;
    scratch.clear();
    while (k < bytes.size() && (quoted || bytes[k] != delimiter)) {
      char c = bytes[k];
      if (c == '"' && !quoted) {
        if (start != std::string_view::npos) {  // the field's unquoted start, if any
          scratch.append(bytes.substr(start, k - start));
          start = std::string_view::npos;
        }
        quoted = true;
      } else if (quoted && c == '"') {
        if (k + 1 < bytes.size() && bytes[k + 1] == '"')
          scratch += '"', ++k;
        else
          quoted = false;
      } else if (start == std::string_view::npos) {
        scratch += c;
      }
      ++k;
    }
    if (quoted) unreadable("Unterminated quoted field in a DELIMITED record");
    field(index++, start == std::string_view::npos ? std::string_view(scratch)
                                                   : bytes.substr(start, k - start));
    if (k >= bytes.size()) return index;
    ++k;  // the delimiter
  }
}

template <class T>
bool parse_number(std::string_view text, T& out) {
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  return error == std::errc() && end == text.data() + text.size();
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::toupper(static_cast<unsigned char>(x)) ==
                  std::toupper(static_cast<unsigned char>(y));
         });
}

// A field's text as a column of `type`, as ksqlDB's DELIMITED reader parses it (Java's parsers:
// Integer.parseInt, Double.parseDouble, ...).
void read_field(std::string_view text, const SqlType& type, Value& out) {
  auto mismatch = [&] {
    unreadable("Can't convert type. sourceType: string, requiredType: " + type.to_string() +
               " (value: " + std::string(text.substr(0, 100)) + ")");
  };
  switch (type.base()) {
    case SqlBaseType::kString:
      return out.set_text(Kind::kString, text.data(), text.size());
    case SqlBaseType::kBytes: {
      std::string bytes = from_base64(std::string(text));
      return out.set_text(Kind::kBytes, bytes.data(), bytes.size());
    }
    case SqlBaseType::kBoolean:
      return out.set_boolean(equals_ignoring_case(text, "true"));
    case SqlBaseType::kInteger: {
      int32_t n;
      if (!parse_number(text, n)) mismatch();
      return out.set_integer(n);
    }
    case SqlBaseType::kDouble: {
      double d;
      if (parse_number(text, d)) return out.set_double(d);
      if (text == "NaN") return out.set_double(std::nan(""));
      if (text == "Infinity" || text == "-Infinity")
        return out.set_double(text[0] == '-' ? -HUGE_VAL : HUGE_VAL);
      return mismatch();
    }
    case SqlBaseType::kDecimal:
      if (!decimal_from_text(text, type, out)) mismatch();
      return;
    default: {  // BIGINT, DATE, TIME, TIMESTAMP
      int64_t n;
      if (!parse_number(text, n)) mismatch();
      if (type.base() == SqlBaseType::kBigint) return out.set_bigint(n);
      return out.set_time(type.base() == SqlBaseType::kDate   ? Kind::kDate
                          : type.base() == SqlBaseType::kTime ? Kind::kTime
                                                              : Kind::kTimestamp,
                          n);
    }
  }
}

}  // namespace

streams::Serde<Row> delimited_serde(std::vector<Column> columns, char delimiter) {
  for (const auto& c : columns)
    if (c.type->base() == SqlBaseType::kArray || c.type->base() == SqlBaseType::kMap ||
        c.type->base() == SqlBaseType::kStruct)
      throw SqlError(std::string("The 'DELIMITED' format does not support type '") +
                     c.type->base_name() + "'");
  auto shared = std::make_shared<std::vector<Column>>(std::move(columns));
  auto serialize = [delimiter](std::string_view, const Row& row, std::string& out) {
    write_row(row, delimiter, out);
  };
  auto deserialize = [shared, delimiter](std::string_view, std::string_view bytes, Row& row) {
    thread_local std::string scratch;
    const std::vector<Column>& columns = *shared;
    row.resize(columns.size());
    size_t fields = for_each_field(bytes, delimiter, scratch, [&](size_t k, std::string_view text) {
      if (k >= columns.size()) return;
      if (text.empty()) return row[k].set_null();
      read_field(text, *columns[k].type, row[k]);
    });
    if (fields != columns.size())
      unreadable("Column count mismatch on deserialization. expected: " +
                 std::to_string(columns.size()) + ", got: " + std::to_string(fields));
  };
  return serde_of("DELIMITED", serialize, deserialize);
}

}  // namespace oxbow::sql::formats
