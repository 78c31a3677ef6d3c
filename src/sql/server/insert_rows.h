#pragma once
// /inserts-stream's rows (docs/sql/server.md): a JSON object of a source's columns by name made
// into the record INSERT VALUES would write, with ksqlDB's checks and messages: names upper-cased
// unless quoted in backticks, every key column given, each value of a JSON kind its column's type
// takes as ksqlDB's API coerces strictly (numbers widen, text reads as DECIMAL, BYTES, DATE, TIME
// and TIMESTAMP, no text as a number).
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sql/engine/engine.h"

namespace oxbow::sql::server {

// A row refused, with ksqlDB's message (its error code: 40000, a bad request).
struct InsertRowError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ksqlDB's identifier text of a name in a request: upper case, or as written between backticks.
std::string identifier_text(const std::string& name);

class InsertRows {
 public:
  // Serdes made now: a registry format's from the caller's SchemaRegistryScope.
  explicit InsertRows(const DataSource& target);
  // Throws InsertRowError for a row ksqlDB refuses; SqlError or a serde's exception for one the
  // target's formats cannot write.
  InsertedRecord record(const nlohmann::json& row, int64_t timestamp) const;

 private:
  Row read(const nlohmann::json& row, const std::vector<Column>& columns,
           const streams::Serde<Row>& reader, bool keys) const;

  std::vector<Column> keys_, values_;
  streams::Serde<Row> key_reader_, value_reader_;  // the columns as JSON objects
  InsertWriter writer_;
};

}  // namespace oxbow::sql::server
