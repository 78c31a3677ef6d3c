#include "sql/serde/row_serde.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>

#include "common/base64.h"
#include "sql/binder/sql_error.h"

namespace oxbow::sql {

namespace {

using Kind = Value::Kind;
using nlohmann::json;

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

[[noreturn]] void unreadable(const std::string& what) {
  throw streams::SerializationException(what);
}

// BYTES travel as base64 in JSON and DELIMITED (ksqlDB's Java Base64, with padding).
std::string to_base64(const std::string& bytes) {
  return base64(bytes);
}

std::string from_base64(const std::string& text) {
  auto bytes = unbase64(text);
  if (!bytes) unreadable("Illegal base64 value: " + text.substr(0, 100));
  return *bytes;
}

void from_json(const json& j, const SqlType& type, Value& out);

void container_from_json(const json& j, const SqlType& type, Value& out) {
  auto items = std::make_shared<std::vector<Value>>();
  if (type.base() == SqlBaseType::kArray) {
    if (!j.is_array())
      unreadable("Can't convert type. sourceType: " + std::string(j.type_name()) +
                 ", requiredType: " + type.to_string());
    for (const auto& e : j) from_json(e, *type.element(), items->emplace_back());
    out.set_items(Kind::kArray, std::move(items));
  } else if (type.base() == SqlBaseType::kMap) {
    if (!j.is_object())
      unreadable("Can't convert type. sourceType: " + std::string(j.type_name()) +
                 ", requiredType: " + type.to_string());
    for (const auto& [k, v] : j.items()) {
      items->emplace_back().set_string(k);
      from_json(v, *type.element(), items->emplace_back());
    }
    out.set_items(Kind::kMap, std::move(items));
  } else {
    if (!j.is_object())
      unreadable("Can't convert type. sourceType: " + std::string(j.type_name()) +
                 ", requiredType: " + type.to_string());
    for (const auto& f : type.fields()) {
      Value& v = items->emplace_back();
      for (const auto& [k, e] : j.items())
        if (upper(k) == upper(f.name)) from_json(e, *f.type, v);
    }
    out.set_items(Kind::kStruct, std::move(items));
  }
}

void from_json(const json& j, const SqlType& type, Value& out) {
  if (j.is_null()) return out.set_null();
  auto mismatch = [&] {
    return "Can't convert type. sourceType: " + std::string(j.type_name()) +
           ", requiredType: " + type.to_string();
  };
  switch (type.base()) {
    case SqlBaseType::kBoolean:
      if (j.is_boolean()) return out.set_boolean(j.get<bool>());
      if (j.is_string()) return out.set_boolean(upper(j.get<std::string>()) == "TRUE");
      unreadable(mismatch());
    case SqlBaseType::kInteger:
    case SqlBaseType::kBigint:
    case SqlBaseType::kDate:
    case SqlBaseType::kTime:
    case SqlBaseType::kTimestamp: {
      int64_t n = 0;
      if (j.is_number_integer())
        n = j.get<int64_t>();
      else if (j.is_number_float())
        n = static_cast<int64_t>(j.get<double>());
      else if (j.is_string())
        try {
          n = std::stoll(j.get<std::string>());
        } catch (...) {
          unreadable(mismatch());
        }
      else
        unreadable(mismatch());
      if (type.base() == SqlBaseType::kInteger) return out.set_integer(static_cast<int32_t>(n));
      if (type.base() == SqlBaseType::kBigint) return out.set_bigint(n);
      return out.set_time(type.base() == SqlBaseType::kDate   ? Kind::kDate
                          : type.base() == SqlBaseType::kTime ? Kind::kTime
                                                              : Kind::kTimestamp,
                          n);
    }
    case SqlBaseType::kDouble:
      if (j.is_number()) return out.set_double(j.get<double>());
      if (j.is_string()) try {
          return out.set_double(std::stod(j.get<std::string>()));
        } catch (...) {
        }
      unreadable(mismatch());
    case SqlBaseType::kDecimal: {
      std::string text = j.is_string() ? j.get<std::string>() : j.is_number() ? j.dump() : "";
      if (text.empty()) unreadable(mismatch());
      // Digits to the type's scale, half up; more whole digits than the type holds do not read.
      bool negative = !text.empty() && text[0] == '-';
      size_t dot = text.find('.');
      std::string whole =
          text.substr(negative ? 1 : 0,
                      dot == std::string::npos ? std::string::npos : dot - (negative ? 1 : 0));
      std::string fraction = dot == std::string::npos ? "" : text.substr(dot + 1);
      auto digits = [](const std::string& part) {
        return std::all_of(part.begin(), part.end(),
                           [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
      };
      if ((whole.empty() && fraction.empty()) || !digits(whole) || !digits(fraction))
        unreadable(mismatch());
      whole.erase(0, std::min(whole.find_first_not_of('0'), whole.size()));
      auto too_big = [&] {
        unreadable("Cannot fit decimal '" + text + "' into " + type.to_string() +
                   " without rounding.");
      };
      if (static_cast<int>(whole.size()) > type.precision() - type.scale()) too_big();
      __int128 v = 0;
      for (char c : whole) v = v * 10 + (c - '0');
      for (int k = 0; k < type.scale(); ++k)
        v = v * 10 +
            (k < static_cast<int>(fraction.size()) ? fraction[static_cast<size_t>(k)] - '0' : 0);
      if (static_cast<int>(fraction.size()) > type.scale() &&
          fraction[static_cast<size_t>(type.scale())] >= '5')
        v += 1;
      __int128 limit = 1;
      for (int k = 0; k < type.precision(); ++k) limit *= 10;
      if (v >= limit) too_big();
      return out.set_decimal(negative ? -v : v, type.scale());
    }
    case SqlBaseType::kString:
      if (j.is_string()) return out.set_string(j.get_ref<const std::string&>());
      return out.set_string(j.dump());  // ksqlDB reads any JSON into a STRING as its text
    case SqlBaseType::kBytes: {
      if (!j.is_string()) unreadable(mismatch());
      std::string bytes = from_base64(j.get_ref<const std::string&>());
      return out.set_text(Kind::kBytes, bytes.data(), bytes.size());
    }
    default:
      return container_from_json(j, type, out);
  }
}

// A value as JSON, by its column's type (a struct's fields need their names).
json to_json(const Value& v, const SqlType& type) {
  switch (v.kind()) {
    case Kind::kNull:
      return nullptr;
    case Kind::kBoolean:
      return v.boolean();
    case Kind::kInteger:
      return v.integer();
    case Kind::kBigint:
    case Kind::kDate:
    case Kind::kTime:
    case Kind::kTimestamp:
      return v.bigint();
    case Kind::kDouble:
      return v.dbl();
    case Kind::kDecimal:
      return json::parse(decimal_text(v.unscaled(), v.scale()));
    case Kind::kString:
      return v.text();
    case Kind::kBytes:
      return to_base64(v.text());
    case Kind::kArray: {
      json a = json::array();
      for (const auto& e : v.items()) a.push_back(to_json(e, *type.element()));
      return a;
    }
    case Kind::kMap: {
      json o = json::object();
      for (size_t k = 0; k + 1 < v.items().size(); k += 2)
        o[v.items()[k].text()] = to_json(v.items()[k + 1], *type.element());
      return o;
    }
    case Kind::kStruct: {
      json o = json::object();
      for (size_t k = 0; k < type.fields().size() && k < v.items().size(); ++k)
        o[type.fields()[k].name] = to_json(v.items()[k], *type.fields()[k].type);
      return o;
    }
  }
  return nullptr;
}

// `wrapped`: the row as an object of its columns; else (a single key column, or a single value
// column with WRAP_SINGLE_VALUE=false) the column's value alone.
streams::Serde<Row> json_serde(std::vector<Column> columns, bool wrapped) {
  auto shared = std::make_shared<std::vector<Column>>(std::move(columns));
  auto serialize = [shared, wrapped](std::string_view, const Row& row) {
    if (!wrapped)
      return row.empty() ? std::string("null") : to_json(row[0], *(*shared)[0].type).dump();
    json o = json::object();
    for (size_t k = 0; k < shared->size() && k < row.size(); ++k)
      o[(*shared)[k].name] = to_json(row[k], *(*shared)[k].type);
    return o.dump();
  };
  auto deserialize = [shared, wrapped](std::string_view, std::string_view bytes) {
    json j = json::parse(bytes, nullptr, false);
    if (j.is_discarded()) unreadable("Invalid JSON: " + std::string(bytes.substr(0, 100)));
    Row row(shared->size());
    if (!wrapped) {
      if (!row.empty()) from_json(j, *(*shared)[0].type, row[0]);
      return row;
    }
    if (!j.is_object()) unreadable("Expected a JSON object, got " + std::string(j.type_name()));
    for (const auto& [k, e] : j.items()) {
      std::string name = upper(k);
      for (size_t c = 0; c < shared->size(); ++c)
        if (upper((*shared)[c].name) == name) from_json(e, *(*shared)[c].type, row[c]);
    }
    return row;
  };
  return streams::Serde<Row>(serialize, deserialize, "JSON");
}

// KAFKA: one column in the bytes of Kafka's own serializers (for keys and values alike).
streams::Serde<Row> kafka_serde(std::vector<Column> columns) {
  if (columns.size() > 1) throw SqlError("The 'KAFKA' format only supports a single field.");
  if (columns.empty())
    return streams::Serde<Row>([](std::string_view, const Row&) { return std::string(); },
                               [](std::string_view, std::string_view) { return Row(); }, "KAFKA");
  SqlTypePtr type = columns[0].type;
  auto serialize = [type](std::string_view, const Row& row) {
    const Value& v = row.at(0);
    std::string out;
    auto put = [&](uint64_t bits, int bytes) {
      for (int k = bytes - 1; k >= 0; --k) out.push_back(static_cast<char>(bits >> (8 * k)));
    };
    switch (type->base()) {
      case SqlBaseType::kInteger:
        put(static_cast<uint32_t>(v.integer()), 4);
        break;
      case SqlBaseType::kBigint:
        put(static_cast<uint64_t>(v.bigint()), 8);
        break;
      case SqlBaseType::kDouble: {
        uint64_t bits;
        double d = v.dbl();
        std::memcpy(&bits, &d, 8);
        put(bits, 8);
        break;
      }
      default:
        out = v.text();
        break;
    }
    return out;
  };
  auto deserialize = [type](std::string_view, std::string_view bytes) {
    Row row(1);
    auto get = [&](size_t n) {
      if (bytes.size() != n)
        unreadable("Size of data received by " + type->to_string() + " deserializer is not " +
                   std::to_string(n));
      uint64_t v = 0;
      for (unsigned char c : bytes) v = (v << 8) | c;
      return v;
    };
    switch (type->base()) {
      case SqlBaseType::kInteger:
        row[0].set_integer(static_cast<int32_t>(get(4)));
        break;
      case SqlBaseType::kBigint:
        row[0].set_bigint(static_cast<int64_t>(get(8)));
        break;
      case SqlBaseType::kDouble: {
        uint64_t bits = get(8);
        double d;
        std::memcpy(&d, &bits, 8);
        row[0].set_double(d);
        break;
      }
      case SqlBaseType::kString:
        row[0].set_text(Kind::kString, bytes.data(), bytes.size());
        break;
      default:
        throw SqlError("The 'KAFKA' format does not support type '" + type->to_string() + "'");
    }
    return row;
  };
  return streams::Serde<Row>(serialize, deserialize, "KAFKA");
}

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
      return to_base64(v.text());
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
        from_json(json(fields[k]), type, row[k]);
      }
    }
    return row;
  };
  return streams::Serde<Row>(serialize, deserialize, "DELIMITED");
}

}  // namespace

std::vector<Column> key_columns(const DataSource& source) {
  std::vector<Column> out;
  for (const auto& c : source.columns)
    if (c.ns == ColumnNamespace::kKey) out.push_back(c);
  return out;
}

std::vector<Column> value_columns(const DataSource& source) {
  std::vector<Column> out;
  for (const auto& c : source.columns)
    if (c.ns == ColumnNamespace::kValue) out.push_back(c);
  return out;
}

streams::Serde<Row> row_serde(const Formats& formats, std::vector<Column> columns, bool key) {
  const std::string& format = key ? formats.key_format : formats.value_format;
  if (format == "JSON") {
    bool wrapped = columns.size() != 1 || (!key && formats.wrap_single_value.value_or(true));
    return json_serde(std::move(columns), wrapped);
  }
  if (format == "KAFKA") return kafka_serde(std::move(columns));
  if (format == "DELIMITED") {
    const std::string& delimiter = key ? formats.key_delimiter : formats.value_delimiter;
    return delimited_serde(std::move(columns), delimiter.empty() ? ',' : delimiter[0]);
  }
  if (format == "NONE") {
    if (!columns.empty())
      throw SqlError("The 'NONE' format can only be used when no columns are defined.");
    return kafka_serde({});
  }
  throw SqlError("The " + format + " format is not supported yet for " + (key ? "keys" : "values"));
}

streams::Serde<Row> row_serde(const std::string& format, std::vector<Column> columns, bool key) {
  Formats formats;
  (key ? formats.key_format : formats.value_format) = format;
  return row_serde(formats, std::move(columns), key);
}

}  // namespace oxbow::sql
