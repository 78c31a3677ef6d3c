#pragma once
// The service's command topic, `_confluent-ksql-<ksql.service.id>_command_topic`, as ksqlDB keeps
// it: one partition that is never cleaned up, each record one statement that changed the
// servers' state, keyed by its command id, each written in a transaction. A server writes a
// statement there before it takes effect, replays the topic from the start when it starts and
// then follows it (command_follower.h, docs/sql/server.md).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sql/server/kafka_cluster.h"

struct rd_kafka_s;

namespace oxbow::sql::server {

// One statement as the command topic carries it.
struct Command {
  std::string id;         // ksqlDB's CommandId text, "stream/`PAGEVIEWS`/create"
  std::string statement;  // its variables substituted
  // The request's streamsProperties, and the SET properties its query started with.
  std::map<std::string, std::string> streams_properties, original_properties;
  int64_t offset = -1;  // where it is in the topic: its commandSequenceNumber
};

// The record's key and value: the id as a JSON string, and a JSON object with `statement`,
// `streamsProperties` and `originalProperties` (values as strings).
std::string command_key(const Command& command);
std::string command_value(const Command& command);
// The command a record holds; throws std::runtime_error for a value without a statement.
Command parse_command(const std::string& key, const std::string& value, int64_t offset);

// `_confluent-ksql-<service id>_command_topic`.
std::string command_topic_name(const std::string& service_id);

class CommandTopic {
 public:
  // `transactional_id`: every server of the service writes in transactions of this id (ksqlDB's
  // is the service id), so that a server beginning one fences the others' (begin()).
  CommandTopic(ClientConfig config, std::string topic, std::string transactional_id);
  ~CommandTopic();
  CommandTopic(const CommandTopic&) = delete;
  CommandTopic& operator=(const CommandTopic&) = delete;

  const std::string& topic() const { return topic_; }
  // Creates the topic unless it exists: one partition, retention.ms=-1, cleanup.policy=delete,
  // min.insync.replicas 2 where three brokers can hold it, else 1. Throws when it cannot.
  void create_if_missing();
  // Begins a transaction with a new producer of the transactional id, which fences every other
  // producer of it (another server's transaction not committed yet fails); then the caller
  // catches up with the topic and validates. Throws std::runtime_error when it cannot.
  void begin();
  // Writes `command` with acks=all in the transaction begin() began (committing it), or without
  // one when none was begun; its offset. Throws std::runtime_error when the cluster does not take
  // it (a fenced transaction included): the command is then not in the topic.
  int64_t append(const Command& command);
  // Ends a transaction begun that writes nothing.
  void abort();

 private:
  int64_t produce(rd_kafka_s* producer, const Command& command);
  void learn_topic(rd_kafka_s* producer) const;

  ClientConfig config_;
  std::string topic_, transactional_id_;
  rd_kafka_s* producer_;
  rd_kafka_s* transaction_ = nullptr;  // begin()'s producer, until append() or abort()
};

}  // namespace oxbow::sql::server
