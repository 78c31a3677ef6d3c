#pragma once
// The Schema Registry formats, AVRO, JSON_SR and PROTOBUF (docs/sql/ksqldb-facts.md §3): which
// registry a thread's serdes use, the schemas ksqlDB derives from columns, and the check that a
// registry is configured. The engine opens a SchemaRegistryScope around each statement, so that
// row_serde() (whose callers know only formats and columns) finds the registry of
// ksql.schema.registry.url.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "oxbow/registry/client.h"
#include "sql/catalog/data_source.h"

namespace oxbow::sql {

// AVRO, JSON_SR or PROTOBUF: Confluent's wire format through the registry.
bool is_schema_registry_format(const std::string& format);

// While it lives, serdes built on this thread use the registry at `url` (empty: none). Scopes
// nest; the innermost wins.
class SchemaRegistryScope {
 public:
  explicit SchemaRegistryScope(std::string url);
  ~SchemaRegistryScope();
  SchemaRegistryScope(const SchemaRegistryScope&) = delete;
  SchemaRegistryScope& operator=(const SchemaRegistryScope&) = delete;

 private:
  std::string previous_;
};
// The innermost scope's URL on this thread, or empty.
const std::string& schema_registry_url();

// One client per URL for the process, so that every serde shares its caches of ids.
std::shared_ptr<registry::SchemaRegistryClient> schema_registry_client(const std::string& url);

// Whether a side of `columns.size()` columns is a record in an SR format: several columns, a
// value unless WRAP_SINGLE_VALUE=false, and always in PROTOBUF (ksqlDB's wrapping rules).
bool registry_wrapped(const Formats& formats, size_t columns, bool key);

// What ksqlDB's SchemaRegisterInjector does for a CREATE (`always` false: each side's derived
// schema registered when its subject has none) and a C*AS sink (`always`: registered, a new
// version if it differs). SqlError "Cannot create topic 'T' with format AVRO without configuring
// 'ksql.schema.registry.url'" when an SR format has no registry, "Could not register schema for
// topic: ..." when the registry refuses.
void register_schemas(const DataSource& source, const std::string& url, bool always);

// One side's settings from its WITH properties (Formats): the schema's full name (empty: the
// format's default), the Protobuf nullable representation ("", "OPTIONAL", "WRAPPER") and a
// pinned schema id, with which a serde writes with that registered schema.
struct RegistrySide {
  std::string full_name;
  std::string protobuf_nullable;
  std::optional<int32_t> schema_id;
};
RegistrySide registry_side(const Formats& formats, bool key);

// The schema ksqlDB registers for `columns` in `format`: `wrapped`, a record (object, message) of
// the columns; else the single column's type at the root. AVRO as Connect's AvroData prints
// ksqlDB's schema (record io.confluent.ksql.avro_schemas.KsqlDataSourceSchema, optional fields
// as ["null", T] with default null); JSON_SR as Connect's JsonSchemaData; PROTOBUF as its
// ProtobufData (message ConnectDefault1).
// `side` names the record (AVRO: record and namespace, nested records <name>_<FIELD>; PROTOBUF:
// package and message) and makes Protobuf's fields nullable.
registry::SchemaInfo derived_schema(const std::string& format, const std::vector<Column>& columns,
                                    bool wrapped, const RegistrySide& side = {});

// A CREATE's columns from a registered schema (inference, docs/sql/ksqldb-facts.md §3) as
// ksqlDB's ConnectKsqlSchemaTranslator reads it: a record's (object's, message's) fields
// upper-cased, or for a key (or an unwrapped value) of another type one column ROWKEY (ROWVAL).
// PROTOBUF reads the top-level message `message` (*_SCHEMA_FULL_NAME), or the schema's only
// one. `names_as_written`: names are kept as the schema writes them, as ksqlDB reads a schema
// pinned by *_SCHEMA_ID (its ORIGINAL_FIELD_NAME policy). The binder calls it through
// DdlSettings::registry_columns. Throws SqlError.
std::vector<Column> registry_columns(const registry::SchemaInfo& schema, const std::string& format,
                                     bool key, bool unwrapped_value,
                                     const std::string& message = "",
                                     bool names_as_written = false);

}  // namespace oxbow::sql
