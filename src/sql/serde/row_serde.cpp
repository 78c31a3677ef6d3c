#include "sql/serde/row_serde.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <optional>

#include "common/base64.h"
#include "sql/binder/sql_error.h"
#include "sql/serde/formats.h"
#include "sql/serde/schema_registry.h"

namespace oxbow::sql {

namespace formats {

using Kind = Value::Kind;

void unreadable(const std::string& what) {
  throw streams::SerializationException(what);
}

std::string from_base64(const std::string& text) {
  // Java's basic decoder, which ksqlDB reads BYTES with, takes the alphabet and padding only
  // (OpenSSL's would skip white space: a field of spaces then read as empty bytes).
  bool alphabet = std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '/' || c == '=';
  });
  auto bytes = alphabet ? unbase64(text) : std::nullopt;
  if (!bytes) unreadable("Illegal base64 value: " + text.substr(0, 100));
  return *bytes;
}

streams::Serde<Row> serde_of(std::string name, RowWriter write, RowReader read) {
  auto serialize = [write](std::string_view topic, const Row& row) {
    std::string out;
    write(topic, row, out);
    return out;
  };
  auto deserialize = [read](std::string_view topic, std::string_view bytes) {
    Row row;
    read(topic, bytes, row);
    return row;
  };
  auto serialize_into = [write](std::string_view topic, const Row& row, std::string& out) {
    out.clear();
    write(topic, row, out);
  };
  return streams::Serde<Row>(serialize, deserialize, std::move(name), serialize_into, read);
}

// KAFKA: one column in the bytes of Kafka's own serializers (for keys and values alike).
streams::Serde<Row> kafka_serde(std::vector<Column> columns) {
  if (columns.size() > 1) throw SqlError("The 'KAFKA' format only supports a single field.");
  if (columns.empty())
    return serde_of(
        "KAFKA", [](std::string_view, const Row&, std::string&) {},
        [](std::string_view, std::string_view, Row& row) { row.clear(); });
  SqlTypePtr type = columns[0].type;
  auto serialize = [type](std::string_view, const Row& row, std::string& out) {
    const Value& v = row.at(0);
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
  };
  auto deserialize = [type](std::string_view, std::string_view bytes, Row& row) {
    row.resize(1);
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
  };
  return serde_of("KAFKA", serialize, deserialize);
}

}  // namespace formats

using formats::delimited_serde;
using formats::json_serde;
using formats::kafka_serde;

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
  if (format == "AVRO" || format == "JSON_SR") {
    const bool wrapped = registry_wrapped(formats, columns.size(), key);
    const RegistrySide side = registry_side(formats, key);
    return format == "AVRO" ? formats::avro_serde(std::move(columns), key, wrapped, side)
                            : formats::json_sr_serde(std::move(columns), key, wrapped, side);
  }
  if (format == "PROTOBUF")
    return formats::protobuf_serde(std::move(columns), key, registry_side(formats, key));
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