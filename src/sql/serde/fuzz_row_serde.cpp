// libFuzzer: any bytes, read as a row in a value format (the first byte picks JSON, DELIMITED,
// KAFKA, the queries' internal format, or AVRO, JSON_SR or PROTOBUF: those bytes then follow
// Confluent's header naming the schema ksqlDB registered for the columns, in an in-process
// registry), either fail with a SerializationException or give a row that writes and reads back to
// the same row.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>

#include "oxbow/streams/errors.h"
#include "registry/serde/fake_registry.h"
#include "sql/serde/row_serde.h"
#include "sql/serde/schema_registry.h"

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
  if (format == "JSON" || format == "AVRO" || format == "JSON_SR" || format == "PROTOBUF") {
    out.push_back(column("A", SqlType::array(SqlType::integer())));
    out.push_back(column("P", SqlType::map(SqlType::string(), SqlType::double_type())));
    out.push_back(column("R", SqlType::structure({{"F", SqlType::string()}})));
  }
  return out;
}

struct RegistryFormat {
  oxbow::streams::Serde<Row> serde;
  std::string header;  // magic byte, schema id (and PROTOBUF's message index)
};

// The registry formats' serdes, their schemas registered once in an in-process registry.
const RegistryFormat& registry_format(const std::string& format) {
  static oxbow::registry::testing::FakeRegistry registry;
  static std::map<std::string, RegistryFormat> made;
  auto it = made.find(format);
  if (it != made.end()) return it->second;
  SchemaRegistryScope scope(registry.url());
  Formats formats;
  formats.value_format = format;
  RegistryFormat f{row_serde(formats, columns_for(format), false), ""};
  std::string sample = f.serde.serialize("fuzz", Row(columns_for(format).size()));
  f.header = sample.substr(0, format == "PROTOBUF" ? 6 : 5);
  return made.emplace(format, std::move(f)).first->second;
}

std::string text_of(const Row& row) {
  std::string out;
  for (const auto& v : row) out += v.debug_string() + "\x1f";
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const char* kFormats[] = {"JSON", "DELIMITED", "KAFKA",   "INTERNAL",
                                   "AVRO", "JSON_SR",   "PROTOBUF"};
  Formats formats;
  formats.value_format = kFormats[data[0] % 7];
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  oxbow::streams::Serde<Row> serde;
  if (data[0] % 7 >= 4) {
    const RegistryFormat& f = registry_format(formats.value_format);
    serde = f.serde;
    bytes = f.header + bytes;
  } else {
    serde = formats.value_format == "INTERNAL"
                ? internal_row_serde()
                : row_serde(formats, columns_for(formats.value_format), false);
  }
  Row row;
  try {
    row = serde.deserialize("fuzz", bytes);
  } catch (const oxbow::streams::SerializationException&) {
    return 0;
  }
  Row again = serde.deserialize("fuzz", serde.serialize("fuzz", row));
  if (text_of(again) != text_of(row)) {
    std::fprintf(stderr, "%s row:   %s\nwritten and read back: %s\n", formats.value_format.c_str(),
                 text_of(row).c_str(), text_of(again).c_str());
    __builtin_trap();
  }
  return 0;
}
