#pragma once
// How a source's rows become bytes and back, as Streams serdes built at run time from the
// source's columns and formats (docs/sql/ksqldb-facts.md §3): the key's columns in the key
// format, the value's in the value format. A Row here holds that side's columns in the source's
// order. Supported so far: KAFKA (one column: STRING as its bytes, INTEGER 4 and BIGINT 8 bytes
// big-endian, DOUBLE 8), JSON (an object whose fields match columns case-insensitively, as ksqlDB
// reads it, written with the columns' names; a single key, or a single value with
// WRAP_SINGLE_VALUE=false, bare; BYTES base64), DELIMITED (see delimited_serde), NONE (no
// key), and AVRO, JSON_SR and PROTOBUF through the Schema Registry of the thread's
// SchemaRegistryScope (schema_registry.h). Bytes that do not read throw
// streams::SerializationException, so that the record is skipped and counted.
#include <vector>

#include "oxbow/streams/serde.h"
#include "sql/catalog/data_source.h"
#include "sql/execution/value.h"

namespace oxbow::sql {

// The columns of one side of a source: its key columns, or its value columns.
std::vector<Column> key_columns(const DataSource& source);
std::vector<Column> value_columns(const DataSource& source);

// Throws SqlError for a format not supported yet.
// The serde of `columns` in the source's key or value format, with its delimiter and single-value
// wrapping. Throws SqlError for a format or type the format cannot hold.
streams::Serde<Row> row_serde(const Formats& formats, std::vector<Column> columns, bool key);
// A value as ksqlDB's JSON writes it (Jackson's: columns of a struct in order, doubles as Java
// prints them, DECIMAL at its scale, BYTES base64), appended to `out`; and a string, quoted and
// escaped.
void append_json(const Value& value, const SqlType& type, std::string& out);
void append_json_string(std::string_view text, std::string& out);

// The serde of `source`'s keys: its key columns in its key format and, for a windowed source, the
// window in Kafka's windowed key bytes (the key, then a time window's start, or a session's end
// and start), read into two more values at the row's end: WINDOWSTART and WINDOWEND.
streams::Serde<Row> source_key_serde(const DataSource& source);

// The rows of a query's own repartition topics and stores: binary, self-describing
// (internal_format.cpp documents the bytes).
streams::Serde<Row> internal_row_serde();

// The same with the format's defaults (JSON wrapped, ',' delimited).
streams::Serde<Row> row_serde(const std::string& format, std::vector<Column> columns, bool key);

}  // namespace oxbow::sql
