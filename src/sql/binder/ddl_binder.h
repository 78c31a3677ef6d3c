#pragma once
// Binds the statements that define things (CREATE STREAM|TABLE without AS, CREATE TYPE) against
// the catalog: types resolved, columns and WITH properties checked by ksqlDB's rules
// (docs/sql/ksqldb-facts.md §1.5-1.8), each refusal with ksqlDB's message (SqlError).
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "oxbow/registry/client.h"

#include "sql/catalog/catalog.h"
#include "sql/parser/ast.h"

namespace oxbow::sql {

// The engine's settings that DDL reads (ksqlDB's names).
struct DdlSettings {
  std::string default_key_format = "KAFKA";  // ksql.persistence.default.format.key
  std::string default_value_format;          // ksql.persistence.default.format.value
  // ksql.schema.registry.url: where AVRO, JSON_SR and PROTOBUF sources infer their columns from
  // (and, through the engine, where their serdes register and fetch schemas). Empty: none.
  std::string schema_registry_url;
  // How a registered schema (its format, the key's or the value's, a value unwrapped) becomes
  // columns: the serde layer's registry_columns(), which the engine sets; throws SqlError.
  // `message`: the side's *_SCHEMA_FULL_NAME; `names_as_written` for a pinned *_SCHEMA_ID.
  std::function<std::vector<Column>(const registry::SchemaInfo&, const std::string& format,
                                    bool key, bool unwrapped_value, const std::string& message,
                                    bool names_as_written)>
      registry_columns;
};

struct BoundCreate {
  DataSource source;
  bool skip = false;  // IF NOT EXISTS and the name is taken: nothing to do
  std::optional<std::string> warning;
};

// The source a CREATE STREAM|TABLE (with columns, not AS SELECT) defines. Throws SqlError.
BoundCreate bind_create_source(const parser::CreateSource& create, const Catalog& catalog,
                               const DdlSettings& settings);

// A type as written, with CREATE TYPE's names resolved from the catalog. Throws SqlError.
SqlTypePtr bind_type(const parser::TypeSpec& spec, const Catalog& catalog);

}  // namespace oxbow::sql
