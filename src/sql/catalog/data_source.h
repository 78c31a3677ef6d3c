#pragma once
// What the engine knows of a stream or table (ksqlDB's metastore entry): its columns in their
// namespaces (key, value, headers), its topic and formats, its timestamp column and window.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sql/types/sql_type.h"

namespace oxbow::sql {

enum class SourceKind { kStream, kTable };

// ROWTIME, ROWPARTITION, ROWOFFSET, WINDOWSTART, WINDOWEND: the pseudo and window-bound columns
// (docs/sql/ksqldb-facts.md §1.6), whose names no column or alias may take.
bool is_system_column_name(const std::string& name);

enum class ColumnNamespace { kKey, kValue, kHeaders, kHeader };

struct Column {
  std::string name;
  SqlTypePtr type;
  ColumnNamespace ns = ColumnNamespace::kValue;
  std::string header_key;  // kHeader: HEADER('key')
};

struct Formats {
  std::string key_format = "KAFKA";
  std::string value_format;
  std::string key_delimiter = ",", value_delimiter = ",";  // DELIMITED
  std::optional<bool> wrap_single_value;
  // The Schema Registry formats' settings of each side (sql/serde/schema_registry.h): the full
  // name of the schema registered (empty: the format's default), the Protobuf nullable
  // representation ("", "OPTIONAL" or "WRAPPER") and a pinned schema id (*_SCHEMA_ID).
  std::string key_schema_full_name, value_schema_full_name;
  std::string key_protobuf_nullable, value_protobuf_nullable;
  std::optional<int32_t> key_schema_id, value_schema_id;
};

enum class SourceWindowType { kTumbling, kHopping, kSession };

struct SourceWindow {
  SourceWindowType type = SourceWindowType::kTumbling;
  std::optional<int64_t> size_ms;  // not for SESSION
};

struct DataSource {
  SourceKind kind = SourceKind::kStream;
  std::string name;
  std::vector<Column> columns;  // keys first, as declared
  std::string topic;
  Formats formats;
  std::optional<int32_t> partitions;
  std::optional<int16_t> replicas;
  std::optional<int64_t> retention_ms;
  std::optional<std::string> timestamp_column, timestamp_format;
  std::optional<SourceWindow> window;
  bool read_only = false;  // CREATE SOURCE STREAM|TABLE
  std::string statement;   // the statement that made it (DESCRIBE EXTENDED shows it)

  const Column* column(const std::string& name) const;
  const char* kind_name() const { return kind == SourceKind::kTable ? "table" : "stream"; }
  // ksqlDB's schema text: "`ID` BIGINT KEY, `NAME` STRING" (PRIMARY KEY for tables, HEADERS,
  // HEADER('k')).
  std::string schema_text() const;
};

}  // namespace oxbow::sql
