#pragma once
// The text ksqlDB's CLI prints for SHOW STREAMS|TABLES|QUERIES [EXTENDED], DESCRIBE [EXTENDED]
// and EXPLAIN <id> (its Console's tables and descriptions): pure functions over the entities,
// so that every line is tested without a cluster.
#include <string>
#include <vector>

#include "sql/catalog/data_source.h"
#include "sql/engine/descriptions.h"

namespace oxbow::sql {

// SHOW STREAMS / SHOW TABLES: "Stream Name | Kafka Topic | Key Format | Value Format | Windowed"
// ("Table Name" for tables), by name.
std::string sources_table(const std::vector<DataSource>& sources, SourceKind kind);

// SHOW QUERIES: "Query ID | Query Type | Status | Sink Name | Sink Kafka Topic | Query String",
// then how to see more.
std::string queries_table(const std::vector<RunningQuery>& queries);

// DESCRIBE: the name and the fields, then how to see more; EXTENDED: type, timestamp, formats,
// topic, statement, fields, the queries that read and write it and the runtime statistics.
std::string source_description_text(const SourceDescription& source);

// EXPLAIN <id> and each of SHOW QUERIES EXTENDED: id, type, SQL, the sink's fields, sources,
// sinks, execution plan, topology and overridden properties.
std::string query_description_text(const QueryDescription& query);

}  // namespace oxbow::sql
