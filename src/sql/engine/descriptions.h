#pragma once
// What SHOW ... EXTENDED, DESCRIBE, SHOW QUERIES and EXPLAIN <id> return, shaped as ksqlDB's REST
// entities (its rest-model SourceDescription, QueryDescription, RunningQuery, FieldInfo) so that a
// REST server can write them field for field as ksqlDB's /ksql JSON, and a CLI print them as
// ksqlDB's console does (description_output.h). The names in comments are ksqlDB's JSON keys.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sql/types/sql_type.h"

namespace oxbow::sql {

// "fields": a column, its schema (JSON "schema" is the type's SchemaInfo: "type", "fields",
// "memberSchema", "parameters"), and "fieldType" KEY or HEADER (none for a value column).
struct FieldInfo {
  enum class FieldType { kKey, kHeader };
  std::string name;
  SqlTypePtr schema;
  std::optional<FieldType> field_type;
  std::optional<std::string> header_key;  // HEADER('k'); none for HEADERS
};

// "readQueries" / "writeQueries" and SHOW QUERIES' rows (ksqlDB's RunningQuery).
struct RunningQuery {
  std::string query_string;                    // "queryString"
  std::vector<std::string> sinks;              // "sinks"
  std::vector<std::string> sink_kafka_topics;  // "sinkKafkaTopics"
  std::string id;                              // "id"
  // "statusCount": hosts per status (RUNNING, PAUSED, ERROR, UNRESPONSIVE); this engine's one.
  std::map<std::string, int> status_count;
  std::string query_type = "PERSISTENT";  // "queryType"
  // "state": ERROR when a host has it in ERROR, else RUNNING (ksqlDB's aggregate status).
  std::string state() const;
  // QueryStatusCount's text: "RUNNING:1".
  std::string status_text() const;
};

// One runtime metric of a source's topic (ksqlDB's TopicSensors.Stat; "clusterStatistics" and
// "clusterErrorStats" carry them with the host the REST server adds).
struct TopicStatistic {
  std::string name;  // consumer-total-messages, total-messages, consumer-failed-messages
  double value = 0;
  int64_t timestamp = 0;  // the last message's (ms since the epoch); 0: none
};

struct SourceDescription {
  std::string name;
  std::optional<std::string> window_type;  // "windowType": TUMBLING, HOPPING or SESSION
  std::vector<RunningQuery> read_queries, write_queries;
  std::vector<FieldInfo> fields;
  std::string type;       // STREAM or TABLE
  std::string timestamp;  // the timestamp column, "" for ROWTIME
  // "statistics" / "errorStats": ksqlDB's one-line text of the metrics below, "" unless extended.
  std::string statistics, error_stats;
  bool extended = false;
  std::string key_format, value_format;
  std::string topic;
  int partitions = 0, replication = 0;          // 0: the topic could not be described
  std::string statement;                        // the statement that made the source
  std::vector<std::string> source_constraints;  // always empty: no DROP constraints yet
  // This engine's metrics of the topic (extended only): what it read and wrote, and records it
  // could not read.
  std::vector<TopicStatistic> statistics_list, error_stats_list;
};

// SHOW QUERIES EXTENDED and EXPLAIN <id> (ksqlDB's QueryDescription).
struct QueryDescription {
  std::string id;
  std::string statement_text;              // "statementText"
  std::optional<std::string> window_type;  // the sink's
  std::vector<FieldInfo> fields;           // the sink's columns
  std::vector<std::string> sources, sinks;
  std::string topology;        // the Streams topology's description
  std::string execution_plan;  // "executionPlan": the physical plan's steps, sink to source
  std::map<std::string, std::string> overridden_properties;  // SET when the query started
  std::string status;  // "ksqlHostQueryStatus" of this host: RUNNING or PAUSED
  std::string query_type = "PERSISTENT";
  std::string consumer_group_id;  // "consumerGroupId": the query's application id
};

// ksqlDB's SchemaInfo.toTypeString, as its console prints a field's type: VARCHAR(STRING),
// ARRAY<...>, MAP<STRING, ...>, STRUCT<F INTEGER>, DECIMAL(p, s), else the base type's name.
std::string schema_type_text(const SqlType& type);

// ksqlDB's MetricCollectors.format: each statistic as "%16s:%10.0f " (two decimals when not
// whole), then "%16s: %9s" of `last_label` and the first statistic's time (ISO-8601, UTC, "n/a"
// for none); "" when there are none.
std::string statistics_text(const std::vector<TopicStatistic>& statistics,
                            const std::string& last_label);

}  // namespace oxbow::sql
