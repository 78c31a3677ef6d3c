#pragma once
// Names and properties Confluent's AvroData gives Avro schemas, shared by the Avro writer and
// reader of connect/schema_registry/.
#include <memory>
#include <string>
#include <string_view>

#include "connect/schema_registry/format_data.h"

namespace oxbow::connect::registry_detail {

inline constexpr std::string_view kAvroNamespace = "io.confluent.connect.avro";
inline constexpr std::string_view kDefaultSchemaName = "ConnectDefault";
inline constexpr std::string_view kDefaultSchemaFullName =
    "io.confluent.connect.avro.ConnectDefault";
inline constexpr std::string_view kAvroUnionName = "io.confluent.connect.avro.Union";
inline constexpr std::string_view kAvroEnumParameter = "io.confluent.connect.avro.Enum";
inline constexpr std::string_view kRecordDocParameter = "io.confluent.connect.avro.record.doc";
inline constexpr std::string_view kFieldDocPrefix = "io.confluent.connect.avro.field.doc.";
inline constexpr std::string_view kEnumDocPrefix = "io.confluent.connect.avro.enum.doc.";
inline constexpr std::string_view kFieldDefaultFlag = "io.confluent.connect.avro.field.default";
inline constexpr std::string_view kDecimalPrecisionParameter = "connect.decimal.precision";
inline constexpr std::string_view kFixedSizeParameter = "connect.fixed.size";

// A named type's namespace (empty for none) and name.
struct AvroName {
  std::string space;
  std::string name;
  std::string full() const { return space.empty() ? name : space + "." + name; }
  // "a.b.C" to {"a.b", "C"}.
  static AvroName split(const std::string& fullName) {
    const auto dot = fullName.rfind('.');
    if (dot == std::string::npos) return {"", fullName};
    return {fullName.substr(0, dot), fullName.substr(dot + 1)};
  }
};

inline bool isAvroPrimitive(std::string_view type) {
  for (std::string_view p :
       {"null", "boolean", "int", "long", "float", "double", "bytes", "string"})
    if (type == p) return true;
  return false;
}

std::unique_ptr<Writer> avroWriter(const SchemaPtr& schema);

}  // namespace oxbow::connect::registry_detail
