// libFuzzer: any bytes, read as a row in a value format (the first byte picks JSON, DELIMITED,
// KAFKA or the queries' internal format), either fail with a SerializationException or give a row
// that writes and reads back to the same row.
#include <cstddef>
#include <cstdint>
#include <string>

#include "oxbow/streams/errors.h"
#include "sql/serde/row_serde.h"

namespace {

using namespace oxbow::sql;

Column column(const char* name, SqlTypePtr type) {
  return {name, std::move(type), ColumnNamespace::kValue, ""};
}

std::vector<Column> columns_for(const std::string& format) {
  if (format == "KAFKA") return {column("S", SqlType::string())};
  std::vector<Column> out = {
      column("B", SqlType::boolean()),     column("I", SqlType::integer()),
      column("L", SqlType::bigint()),      column("D", SqlType::double_type()),
      column("M", SqlType::decimal(6, 2)), column("S", SqlType::string()),
      column("Y", SqlType::bytes())};
  if (format == "JSON") {
    out.push_back(column("A", SqlType::array(SqlType::integer())));
    out.push_back(column("P", SqlType::map(SqlType::string(), SqlType::double_type())));
    out.push_back(column("R", SqlType::structure({{"F", SqlType::string()}})));
  }
  return out;
}

std::string text_of(const Row& row) {
  std::string out;
  for (const auto& v : row) out += v.debug_string() + "\x1f";
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const char* kFormats[] = {"JSON", "DELIMITED", "KAFKA", "INTERNAL"};
  Formats formats;
  formats.value_format = kFormats[data[0] % 4];
  auto serde = formats.value_format == "INTERNAL"
                   ? internal_row_serde()
                   : row_serde(formats, columns_for(formats.value_format), false);
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  Row row;
  try {
    row = serde.deserialize("fuzz", bytes);
  } catch (const oxbow::streams::SerializationException&) {
    return 0;
  }
  Row again = serde.deserialize("fuzz", serde.serialize("fuzz", row));
  if (text_of(again) != text_of(row)) __builtin_trap();
  return 0;
}
