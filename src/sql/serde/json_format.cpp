// JSON, as ksqlDB reads and writes it (docs/sql/ksqldb-facts.md §3): fields matched to columns
// case-insensitively on the way in; on the way out, columns in their order with their names, as
// Jackson writes them (doubles as Java prints them, DECIMAL at its scale, BYTES base64).
#include <charconv>
#include <cmath>

#include "common/base64.h"
#include "sql/binder/sql_error.h"
#include "sql/serde/formats.h"
#include "sql/serde/row_serde.h"

namespace oxbow::sql {

using Kind = Value::Kind;
using nlohmann::json;

namespace {

// The escape of a character JSON cannot hold as it is, or null for one it can.
const char* escape_of(unsigned char c, char (&buffer)[7]) {
  switch (c) {
    case '"':
      return "\\\"";
    case '\\':
      return "\\\\";
    case '\n':
      return "\\n";
    case '\r':
      return "\\r";
    case '\t':
      return "\\t";
    case '\b':
      return "\\b";
    case '\f':
      return "\\f";
    default:
      if (c >= 0x20) return nullptr;
      static const char* kHex = "0123456789abcdef";
      buffer[0] = '\\', buffer[1] = 'u', buffer[2] = '0', buffer[3] = '0';
      buffer[4] = kHex[c >> 4], buffer[5] = kHex[c & 0xf], buffer[6] = '\0';
      return buffer;
  }
}

}  // namespace

void append_json_string(std::string_view text, std::string& out) {
  out += '"';
  char buffer[7];
  size_t plain = 0;  // the start of the run of characters copied as they are
  for (size_t i = 0; i < text.size(); ++i) {
    const char* escape = escape_of(static_cast<unsigned char>(text[i]), buffer);
    if (!escape) continue;
    out.append(text.data() + plain, i - plain);
    out += escape;
    plain = i + 1;
  }
  out.append(text.data() + plain, text.size() - plain);
  out += '"';
}

void append_json(const Value& v, const SqlType& type, std::string& out) {
  char buffer[32];
  auto number = [&](auto n) {
    auto end = std::to_chars(buffer, buffer + sizeof buffer, n).ptr;
    out.append(buffer, end);
  };
  switch (v.kind()) {
    case Kind::kNull:
      out += "null";
      return;
    case Kind::kBoolean:
      out += v.boolean() ? "true" : "false";
      return;
    case Kind::kInteger:
      return number(v.integer());
    case Kind::kBigint:
    case Kind::kDate:
    case Kind::kTime:
    case Kind::kTimestamp:
      return number(v.bigint());
    case Kind::kDouble:
      // As Jackson writes a double (Java's Double.toString); NaN and infinities quoted.
      if (std::isfinite(v.dbl())) {
        out += java_double_text(v.dbl());
      } else {
        append_json_string(java_double_text(v.dbl()), out);
      }
      return;
    case Kind::kDecimal:
      out += decimal_text(v.unscaled(), v.scale());
      return;
    case Kind::kString:
      return append_json_string(v.text(), out);
    case Kind::kBytes:
      return append_json_string(base64(v.text()), out);
    case Kind::kArray:
      out += '[';
      for (size_t k = 0; k < v.items().size(); ++k) {
        if (k) out += ',';
        append_json(v.items()[k], *type.element(), out);
      }
      out += ']';
      return;
    case Kind::kMap:
      out += '{';
      for (size_t k = 0; k + 1 < v.items().size(); k += 2) {
        if (k) out += ',';
        append_json_string(v.items()[k].text(), out);
        out += ':';
        append_json(v.items()[k + 1], *type.element(), out);
      }
      out += '}';
      return;
    case Kind::kStruct:
      out += '{';
      for (size_t k = 0; k < type.fields().size() && k < v.items().size(); ++k) {
        if (k) out += ',';
        append_json_string(type.fields()[k].name, out);
        out += ':';
        append_json(v.items()[k], *type.fields()[k].type, out);
      }
      out += '}';
      return;
  }
}

namespace formats {

namespace {

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

void container_value_from_json(const json& j, const SqlType& type, Value& out) {
  auto items = std::make_shared<std::vector<Value>>();
  if (type.base() == SqlBaseType::kArray) {
    if (!j.is_array())
      unreadable("Can't convert type. sourceType: " + std::string(j.type_name()) +
                 ", requiredType: " + type.to_string());
    for (const auto& e : j) value_from_json(e, *type.element(), items->emplace_back());
    out.set_items(Kind::kArray, std::move(items));
  } else if (type.base() == SqlBaseType::kMap) {
    if (!j.is_object())
      unreadable("Can't convert type. sourceType: " + std::string(j.type_name()) +
                 ", requiredType: " + type.to_string());
    for (const auto& [k, v] : j.items()) {
      items->emplace_back().set_string(k);
      value_from_json(v, *type.element(), items->emplace_back());
    }
    out.set_items(Kind::kMap, std::move(items));
  } else {
    if (!j.is_object())
      unreadable("Can't convert type. sourceType: " + std::string(j.type_name()) +
                 ", requiredType: " + type.to_string());
    for (const auto& f : type.fields()) {
      Value& v = items->emplace_back();
      for (const auto& [k, e] : j.items())
        if (upper(k) == upper(f.name)) value_from_json(e, *f.type, v);
    }
    out.set_items(Kind::kStruct, std::move(items));
  }
}

}  // namespace

bool decimal_from_text(std::string_view text, const SqlType& type, Value& out) {
  // Digits to the type's scale, half up; more whole digits than the type holds do not read.
  bool negative = !text.empty() && text[0] == '-';
  std::string_view number = text.substr(negative ? 1 : 0);
  size_t dot = number.find('.');
  std::string_view whole = number.substr(0, dot);
  std::string_view fraction =
      dot == std::string_view::npos ? std::string_view() : number.substr(dot + 1);
  auto digits = [](std::string_view part) {
    return std::all_of(part.begin(), part.end(),
                       [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  };
  if ((whole.empty() && fraction.empty()) || !digits(whole) || !digits(fraction)) return false;
  whole.remove_prefix(std::min(whole.find_first_not_of('0'), whole.size()));
  auto too_big = [&] {
    unreadable("Cannot fit decimal '" + std::string(text) + "' into " + type.to_string() +
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
  out.set_decimal(negative ? -v : v, type.scale());
  return true;
}

void value_from_json(const json& j, const SqlType& type, Value& out) {
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
      if (!decimal_from_text(text, type, out)) unreadable(mismatch());
      return;
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
      return container_value_from_json(j, type, out);
  }
}

// `wrapped`: the row as an object of its columns; else (a single key column, or a single value
// column with WRAP_SINGLE_VALUE=false) the column's value alone.
streams::Serde<Row> json_serde(std::vector<Column> columns, bool wrapped) {
  auto shared = std::make_shared<std::vector<Column>>(std::move(columns));
  auto upper_names = std::make_shared<std::vector<std::string>>();
  for (const auto& c : *shared) upper_names->push_back(upper(c.name));
  auto serialize = [shared, wrapped](std::string_view, const Row& row, std::string& out) {
    if (!wrapped) {
      if (row.empty()) return void(out += "null");
      return append_json(row[0], *(*shared)[0].type, out);
    }
    out += '{';
    for (size_t k = 0; k < shared->size() && k < row.size(); ++k) {
      if (k) out += ',';
      append_json_string((*shared)[k].name, out);
      out += ':';
      append_json(row[k], *(*shared)[k].type, out);
    }
    out += '}';
  };
  auto deserialize = [shared, upper_names, wrapped](std::string_view, std::string_view bytes,
                                                    Row& row) {
    read_json_row(bytes, *shared, *upper_names, wrapped, row);
  };
  return serde_of("JSON", serialize, deserialize);
}

}  // namespace formats
}  // namespace oxbow::sql
