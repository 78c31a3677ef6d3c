#include "sql/server/insert_rows.h"

#include <cctype>
#include <cstdint>
#include <limits>

#include "sql/execution/operations.h"
#include "sql/serde/row_serde.h"

namespace oxbow::sql::server {

namespace {

using nlohmann::json;

// The Java class ksqlDB's API server reads a JSON value as (Vert.x), named in its refusals.
std::string java_class(const json& v) {
  if (v.is_string()) return "java.lang.String";
  if (v.is_boolean()) return "java.lang.Boolean";
  if (v.is_number_float()) return "java.lang.Double";
  if (v.is_number_integer()) {
    const bool fits = v.is_number_unsigned()
                          ? v.get<uint64_t>() <= std::numeric_limits<int32_t>::max()
                          : v.get<int64_t>() >= std::numeric_limits<int32_t>::min() &&
                                v.get<int64_t>() <= std::numeric_limits<int32_t>::max();
    return fits ? "java.lang.Integer" : "java.lang.Long";
  }
  if (v.is_array()) return "io.vertx.core.json.JsonArray";
  return "io.vertx.core.json.JsonObject";
}

bool coerce(json& v, const SqlType& type);

bool coerce_all(json& values, const SqlType& element) {
  for (auto& e : values)
    if (!e.is_null() && !coerce(e, element)) return false;
  return true;
}

bool coerce_struct(json& v, const SqlType& type) {
  if (!v.is_object()) return false;
  for (auto& [name, field] : v.items()) {
    const SqlField* f = type.field(identifier_text(name));
    if (!f) return false;  // ksqlDB refuses a field its struct does not have
    if (!field.is_null() && !coerce(field, *f->type)) return false;
  }
  return true;
}

// DATE, TIME and TIMESTAMP from ksqlDB's ISO text into the numbers the JSON format reads (days,
// milliseconds of the day, epoch milliseconds).
bool coerce_time(json& v, SqlBaseType base) {
  if (!v.is_string()) return false;
  const std::string& text = v.get_ref<const std::string&>();
  int64_t n = 0;
  std::string error;
  const bool parsed = base == SqlBaseType::kDate   ? ops::parse_date_text(text, n, error)
                      : base == SqlBaseType::kTime ? ops::parse_time_text(text, n, error)
                                                   : ops::parse_timestamp_text(text, n, error);
  if (parsed) v = n;
  return parsed;
}

// ksqlDB's strict coercion of what its API server reads (ApiSqlValueCoercer): whether `v` goes
// into `type`; a time's text is made the number the JSON format reads.
bool coerce(json& v, const SqlType& type) {
  switch (type.base()) {
    case SqlBaseType::kBoolean:
      return v.is_boolean();
    case SqlBaseType::kInteger:
      return java_class(v) == "java.lang.Integer";
    case SqlBaseType::kBigint:
      return v.is_number_integer();
    case SqlBaseType::kDouble:
      return v.is_number();
    case SqlBaseType::kDecimal:
      return v.is_number() || v.is_string();
    case SqlBaseType::kArray:
      return v.is_array() && coerce_all(v, *type.element());
    case SqlBaseType::kMap:
      return v.is_object() && coerce_all(v, *type.element());
    case SqlBaseType::kStruct:
      return coerce_struct(v, type);
    case SqlBaseType::kDate:
    case SqlBaseType::kTime:
    case SqlBaseType::kTimestamp:
      return coerce_time(v, type.base());
    default:  // STRING, BYTES (base64)
      return v.is_string();
  }
}

// The row's fields by their identifier text, as ksqlDB converts them.
json by_identifier(const json& row) {
  json out = json::object();
  for (const auto& [name, value] : row.items()) {
    std::string id = identifier_text(name);
    if (out.contains(id)) throw InsertRowError("Found duplicate column / struct field name: " + id);
    out[id] = value;
  }
  return out;
}

}  // namespace

std::string identifier_text(const std::string& name) {
  if (name.size() >= 2 && name.front() == '`' && name.back() == '`')
    return name.substr(1, name.size() - 2);
  std::string out = name;
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

InsertRows::InsertRows(const DataSource& target)
    : keys_(key_columns(target)),
      values_(value_columns(target)),
      key_reader_(row_serde("JSON", keys_, false)),
      value_reader_(row_serde("JSON", values_, false)),
      writer_(target) {}

Row InsertRows::read(const json& row, const std::vector<Column>& columns,
                     const streams::Serde<Row>& reader, bool keys) const {
  json picked = json::object();
  for (const Column& c : columns) {
    auto found = row.find(c.name);
    if (found == row.end() || found->is_null()) {
      if (keys) throw InsertRowError("Key field must be specified: " + c.name);
      continue;
    }
    json value = *found;
    if (!coerce(value, *c.type))
      throw InsertRowError("Can't coerce a field of type class " + java_class(*found) +
                           " into type " + c.type->to_string());
    picked[c.name] = std::move(value);
  }
  // The JSON format reads the values into the columns' types, as it reads a topic's records.
  return reader.deserialize("", picked.dump());
}

InsertedRecord InsertRows::record(const json& row, int64_t timestamp) const {
  json fields = by_identifier(row);
  Row key = read(fields, keys_, key_reader_, true);
  Row value = read(fields, values_, value_reader_, false);
  return writer_.record(key, value, timestamp);
}

}  // namespace oxbow::sql::server
