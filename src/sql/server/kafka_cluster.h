#pragma once
// What running SQL needs of the Kafka cluster beyond Streams, over librdkafka: the topics ksqlDB
// creates for sources and sinks, INSERT VALUES' records, the processing log's topic, and the
// cluster's id (the server's /info and /healthcheck). `oxbow sql run` and `oxbow sql-server`
// share it. Failures throw std::runtime_error with one line.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sql/engine/engine.h"

struct rd_kafka_s;
struct rd_kafka_message_s;

namespace oxbow::sql::server {

// librdkafka properties: bootstrap.servers and whatever security settings the cluster wants.
using ClientConfig = std::map<std::string, std::string>;

// A librdkafka client of `type` (an rd_kafka_type_t) with `config`, then `extra`, and the delivery
// report callback `delivered` if any; throws for a setting librdkafka refuses.
rd_kafka_s* new_kafka_client(int type, const ClientConfig& config, const ClientConfig& extra = {},
                             void (*delivered)(rd_kafka_s*, const rd_kafka_message_s*,
                                               void*) = nullptr);

// Creates each topic of `wanted` (name, partitions) the cluster does not have yet.
void create_missing_topics(const ClientConfig& config,
                           const std::vector<std::pair<std::string, int>>& wanted);

// Deletes `topic`; one that is already gone is no error.
void delete_topic(const ClientConfig& config, const std::string& topic);

// The topics of `catalog`'s sources whose WITH gave a partition count, as ksqlDB creates them.
std::vector<std::pair<std::string, int>> source_topics(const Catalog& catalog);

// Produces INSERT VALUES' records (idempotently) and waits until the cluster has them.
void produce_records(const ClientConfig& config, const std::vector<InsertedRecord>& records);

// The cluster's id from a metadata request, nothing when no broker answered within `timeout_ms`.
std::optional<std::string> cluster_id(const ClientConfig& config, int timeout_ms);

// ksqlDB's KSQL_PROCESSING_LOG stream over `topic`, the statement that creates it.
std::string processing_log_statement(const std::string& topic);

// The processing log's entries as keyless records of its topic, as ksqlDB writes them.
class TopicProcessingLog : public ProcessingLog {
 public:
  TopicProcessingLog(const ClientConfig& config, std::string topic);
  ~TopicProcessingLog() override;
  void log(const ProcessingLogEntry& entry) override;

 private:
  rd_kafka_s* producer_;
  std::string topic_;
};

}  // namespace oxbow::sql::server
