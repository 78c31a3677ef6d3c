#pragma once
// The formats' serdes behind row_serde(), and what they share. Internal to sql/serde/.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "oxbow/streams/serde.h"
#include "sql/catalog/data_source.h"
#include "sql/execution/value.h"

namespace oxbow::sql::formats {

// Bytes that do not read: the record is skipped and counted.
[[noreturn]] void unreadable(const std::string& what);
// BYTES travel as base64 in JSON and DELIMITED (ksqlDB's Java Base64, with padding).
std::string from_base64(const std::string& text);

// A JSON value as a column of `type`, coerced as ksqlDB's JSON reader coerces it.
void value_from_json(const nlohmann::json& j, const SqlType& type, Value& out);

// `wrapped`: the row as an object of its columns; else (a single key column, or a single value
// column with WRAP_SINGLE_VALUE=false) the column's value alone.
streams::Serde<Row> json_serde(std::vector<Column> columns, bool wrapped);
streams::Serde<Row> delimited_serde(std::vector<Column> columns, char delimiter);
// KAFKA: one column in the bytes of Kafka's own serializers (for keys and values alike).
streams::Serde<Row> kafka_serde(std::vector<Column> columns);

}  // namespace oxbow::sql::formats
