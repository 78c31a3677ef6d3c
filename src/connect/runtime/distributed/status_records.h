#pragma once
// The status topic's records in Kafka Connect's format (KafkaStatusBackingStore): keys
// status-connector-NAME, status-task-NAME-N and KIP-558's status-topic-TOPIC:connector-NAME, values
// as JsonConverter writes its structs without schemas.
#include <cstdint>
#include <optional>
#include <string>

namespace oxbow::connect::runtime::distributed {

// A connector's or task's status as the worker that runs it wrote it.
struct StatusRecord {
  std::string state;  // UNASSIGNED, RUNNING, PAUSED, FAILED, RESTARTING, STOPPED (DESTROYED)
  std::string trace;  // empty: none (null in the record)
  std::string workerId;
  int32_t generation = 0;  // the group generation the worker had when it wrote it
  bool operator==(const StatusRecord&) const = default;
};

// A topic a connector's task used (KIP-558).
struct TopicStatus {
  std::string topic, connector;
  int32_t task = 0;
  int64_t discoverTimestamp = 0;  // ms since the epoch
  bool operator==(const TopicStatus&) const = default;
};

// What a status record's key names.
struct StatusKey {
  enum class Kind { CONNECTOR, TASK, TOPIC };
  Kind kind;
  std::string connector;
  int task = 0;       // TASK's
  std::string topic;  // TOPIC's
};

namespace status_records {

std::string connectorKey(const std::string& connector);
std::string taskKey(const std::string& connector, int task);
std::string topicKey(const std::string& topic, const std::string& connector);
// nullopt, logged, for a key of none of the three kinds or a malformed one.
std::optional<StatusKey> parseKey(const std::string& key);

// {"state":..,"trace":..,"worker_id":..,"generation":..}
std::string statusValue(const StatusRecord& status);
// nullopt, logged, when the value is not such an object with a known state.
std::optional<StatusRecord> parseStatus(const std::string& value);

// {"topic":{"name":..,"connector":..,"task":..,"discoverTimestamp":..}}
std::string topicValue(const TopicStatus& status);
std::optional<TopicStatus> parseTopic(const std::string& value);

}  // namespace status_records

}  // namespace oxbow::connect::runtime::distributed
