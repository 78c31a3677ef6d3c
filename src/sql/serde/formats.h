#pragma once
// The formats' serdes behind row_serde(), and what they share. Internal to sql/serde/.
#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "oxbow/registry/client.h"
#include "oxbow/streams/serde.h"
#include "sql/catalog/data_source.h"
#include "sql/execution/value.h"
#include "sql/serde/schema_registry.h"

namespace oxbow::sql::formats {

// Bytes that do not read: the record is skipped and counted.
[[noreturn]] void unreadable(const std::string& what);
// BYTES travel as base64 in JSON and DELIMITED (ksqlDB's Java Base64, with padding).
std::string from_base64(const std::string& text);

// A serde whose record-path forms write into the caller's buffer and row, reused from record to
// record (Streams' serialize_into / deserialize_into): `write` appends to an empty `out`; `read`
// sets every value of `out`, which it has sized to the columns (it may hold the last record's).
using RowWriter = std::function<void(std::string_view topic, const Row& row, std::string& out)>;
using RowReader = std::function<void(std::string_view topic, std::string_view bytes, Row& out)>;
streams::Serde<Row> serde_of(std::string name, RowWriter write, RowReader read);

// A DECIMAL's text ("-12.345") as a value of `type`, rounded half up to its scale: false for text
// that is not a decimal number; unreadable() for one with more whole digits than the type holds.
bool decimal_from_text(std::string_view text, const SqlType& type, Value& out);

// A JSON value as a column of `type`, coerced as ksqlDB's JSON reader coerces it.
void value_from_json(const nlohmann::json& j, const SqlType& type, Value& out);

// JSON bytes into `row` (json_reader.cpp), its columns matched to fields ignoring case:
// `upper_names` are the columns' names in upper case.
void read_json_row(std::string_view bytes, const std::vector<Column>& columns,
                   const std::vector<std::string>& upper_names, bool wrapped, Row& row);

// `wrapped`: the row as an object of its columns; else (a single key column, or a single value
// column with WRAP_SINGLE_VALUE=false) the column's value alone.
streams::Serde<Row> json_serde(std::vector<Column> columns, bool wrapped);
streams::Serde<Row> delimited_serde(std::vector<Column> columns, char delimiter);
// KAFKA: one column in the bytes of Kafka's own serializers (for keys and values alike).
streams::Serde<Row> kafka_serde(std::vector<Column> columns);

// The Schema Registry formats (Confluent's wire format; schema_registry.h): `wrapped` as for JSON.
// Each throws SqlError when the thread's scope names no registry.
// `side` (schema_registry.h): the schema's name and Protobuf's nullable representation; with a
// pinned schema id, rows are written with that registered schema and its id, not the derived one.
streams::Serde<Row> avro_serde(std::vector<Column> columns, bool key, bool wrapped,
                               const RegistrySide& side = {});
streams::Serde<Row> json_sr_serde(std::vector<Column> columns, bool key, bool wrapped,
                                  const RegistrySide& side = {});
// PROTOBUF rows are always messages (ksqlDB cannot unwrap them).
streams::Serde<Row> protobuf_serde(std::vector<Column> columns, bool key,
                                   const RegistrySide& side = {});
std::shared_ptr<registry::SchemaRegistryClient> registry_client_or_throw(const std::string& format);
// The schema a *_SCHEMA_ID pins, which must be in `format`; SqlError when the registry has none.
registry::SchemaInfo pinned_schema(registry::SchemaRegistryClient& client, int32_t id,
                                   const std::string& format);
// "Schema from Schema Registry misses field with name: X" (ksqlDB's), as a record that does not
// serialize.
[[noreturn]] void missing_in_pinned_schema(const std::string& field);
// DECIMAL's unscaled value as Java's BigInteger.toByteArray writes it (Avro's and Confluent's
// Protobuf decimal bytes), and back.
std::string decimal_bytes(__int128 unscaled);
__int128 decimal_from_bytes(std::string_view bytes);

}  // namespace oxbow::sql::formats
