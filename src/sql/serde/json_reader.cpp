// JSON rows read on the record path with simdjson's On-Demand parser: a parser and a padded copy
// of the bytes per thread, reused from record to record, so that a row of numbers, booleans and
// strings costs no allocation (nlohmann's DOM made one per field). Only the common cases are read
// here — a column's own JSON type, and numbers into DECIMAL — and everything else (coercions such
// as a string into a BIGINT, containers, integers past 64 bits) goes through the same
// value_from_json() as before, over the value's own text, so that what is read and what is refused
// are as they were.
#include <simdjson.h>

#include <string>

#include "sql/serde/formats.h"

namespace oxbow::sql::formats {

namespace {

namespace od = simdjson::ondemand;
using Kind = Value::Kind;

struct ThreadParser {
  od::parser parser;
  std::string padded;  // the record's bytes, with simdjson's padding beyond them
};

ThreadParser& thread_parser() {
  thread_local ThreadParser p;
  return p;
}

[[noreturn]] void invalid(std::string_view bytes) {
  unreadable("Invalid JSON: " + std::string(bytes.substr(0, 100)));
}

// A scalar's text (a document's raw_json_token() may fail; a value's cannot).
std::string_view token_of(od::value& v) {
  return v.raw_json_token();
}
std::string_view token_of(od::document& d) {
  std::string_view token;
  return d.raw_json_token().get(token) ? std::string_view() : token;
}

// The value's JSON text, for value_from_json().
template <class V>
std::string_view raw_text(V& v) {
  od::json_type type;
  if (v.type().get(type)) return {};
  std::string_view raw;
  if (type == od::json_type::object) {
    od::object o;
    if (v.get_object().get(o) || o.raw_json().get(raw)) return {};
  } else if (type == od::json_type::array) {
    od::array a;
    if (v.get_array().get(a) || a.raw_json().get(raw)) return {};
  } else {
    raw = token_of(v);
  }
  return raw;
}

template <class V>
void read_slowly(V& v, const SqlType& type, Value& out, std::string_view bytes) {
  nlohmann::json j = nlohmann::json::parse(raw_text(v), nullptr, false);
  if (j.is_discarded()) invalid(bytes);
  value_from_json(j, type, out);
}

bool is_integral(SqlBaseType base) {
  return base == SqlBaseType::kInteger || base == SqlBaseType::kBigint ||
         base == SqlBaseType::kDate || base == SqlBaseType::kTime ||
         base == SqlBaseType::kTimestamp;
}

void set_integral(int64_t n, SqlBaseType base, Value& out) {
  switch (base) {
    case SqlBaseType::kInteger:
      return out.set_integer(static_cast<int32_t>(n));
    case SqlBaseType::kBigint:
      return out.set_bigint(n);
    case SqlBaseType::kDate:
      return out.set_time(Kind::kDate, n);
    case SqlBaseType::kTime:
      return out.set_time(Kind::kTime, n);
    default:
      return out.set_time(Kind::kTimestamp, n);
  }
}

// The common cases read in place; true when `v` was one of them.
template <class V>
bool read_quickly(V& v, od::json_type json_type, const SqlType& type, Value& out) {
  const SqlBaseType base = type.base();
  if (json_type == od::json_type::number) {
    od::number_type number_type;
    if (v.get_number_type().get(number_type)) return false;
    if (is_integral(base) || base == SqlBaseType::kDouble) {
      if (number_type == od::number_type::signed_integer) {
        int64_t n;
        if (v.get_int64().get(n)) return false;
        if (base == SqlBaseType::kDouble)
          out.set_double(static_cast<double>(n));
        else
          set_integral(n, base, out);
        return true;
      }
      if (number_type == od::number_type::floating_point_number) {
        double d;
        if (v.get_double().get(d)) return false;
        if (base == SqlBaseType::kDouble)
          out.set_double(d);
        else
          set_integral(static_cast<int64_t>(d), base, out);
        return true;
      }
      return false;
    }
    if (base == SqlBaseType::kDecimal) {
      std::string_view token = token_of(v);
      while (!token.empty() && static_cast<unsigned char>(token.back()) <= ' ')
        token.remove_suffix(1);
      // An exponent (1E+2) is not a plain decimal: value_from_json() reads it.
      return decimal_from_text(token, type, out);
    }
    return false;
  }
  if (json_type == od::json_type::string && base == SqlBaseType::kString) {
    std::string_view text;
    if (v.get_string().get(text)) return false;
    out.set_text(Kind::kString, text.data(), text.size());
    return true;
  }
  if (json_type == od::json_type::boolean && base == SqlBaseType::kBoolean) {
    bool b;
    if (v.get_bool().get(b)) return false;
    out.set_boolean(b);
    return true;
  }
  return false;
}

template <class V>
void read_value(V& v, const SqlType& type, Value& out, std::string_view bytes) {
  od::json_type json_type;
  if (v.type().get(json_type)) invalid(bytes);
  if (json_type == od::json_type::null) {
    bool null = false;
    if (v.is_null().get(null) || !null) invalid(bytes);
    return out.set_null();
  }
  if (!read_quickly(v, json_type, type, out)) read_slowly(v, type, out, bytes);
}

// `key` equals `upper_name` but for the case of ASCII letters.
bool same_ignoring_case(std::string_view key, const std::string& upper_name) {
  if (key.size() != upper_name.size()) return false;
  for (size_t i = 0; i < key.size(); ++i)
    if (std::toupper(static_cast<unsigned char>(key[i])) != upper_name[i]) return false;
  return true;
}

void read_object(od::document& doc, const std::vector<Column>& columns,
                 const std::vector<std::string>& upper_names, Row& row, std::string_view bytes) {
  od::json_type json_type;
  if (doc.type().get(json_type) || json_type != od::json_type::object) {
    // On-Demand tells a type from the first character only: nlohmann says what the bytes are.
    nlohmann::json j = nlohmann::json::parse(bytes, nullptr, false);
    if (j.is_discarded()) invalid(bytes);
    unreadable("Expected a JSON object, got " + std::string(j.type_name()));
  }
  od::object object;
  if (doc.get_object().get(object)) invalid(bytes);
  for (auto field_or_error : object) {
    od::field field;
    std::string_view key;
    if (std::move(field_or_error).get(field) || field.unescaped_key().get(key)) invalid(bytes);
    for (size_t c = 0; c < columns.size(); ++c)
      if (same_ignoring_case(key, upper_names[c])) {
        od::value v = field.value();
        read_value(v, *columns[c].type, row[c], bytes);
        break;
      }
  }
}

}  // namespace

void read_json_row(std::string_view bytes, const std::vector<Column>& columns,
                   const std::vector<std::string>& upper_names, bool wrapped, Row& row) {
  ThreadParser& p = thread_parser();
  p.padded.assign(bytes);
  p.padded.resize(bytes.size() + simdjson::SIMDJSON_PADDING);
  od::document doc;
  if (p.parser.iterate(p.padded.data(), bytes.size(), p.padded.size()).get(doc)) invalid(bytes);
  row.resize(columns.size());
  for (Value& v : row) v.set_null();
  if (!wrapped) {
    if (!row.empty()) read_value(doc, *columns[0].type, row[0], bytes);
  } else {
    read_object(doc, columns, upper_names, row, bytes);
    // On-Demand stops at the object's end: anything after it is not JSON (nlohmann refused it).
    const char* trailing;
    if (!doc.current_location().get(trailing)) invalid(bytes);
  }
}

}  // namespace oxbow::sql::formats
