#pragma once
// Connector and task statuses, and KIP-558's active topics, in the status topic
// (status.storage.topic), as Kafka's KafkaStatusBackingStore keeps them. A write is seen, here as
// by every worker, once it is read back from the topic.
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "connect/runtime/distributed/kafka_based_log.h"
#include "connect/runtime/distributed/status_records.h"

namespace oxbow::connect::runtime::distributed {

class StatusBackingStore {
 public:
  StatusBackingStore(const WorkerConfig& worker, TopicSettings topic);
  void start();
  void stop();
  void flush();  // waits for every write's acknowledgement

  // Kafka's put: written whatever the topic holds.
  void putConnector(const std::string& name, const StatusRecord& status);
  void putTask(const std::string& connector, int task, const StatusRecord& status);
  // Kafka's putSafe (a worker giving up what it ran): written only when no status is known, the
  // known one is this worker's, or it is of this generation or an older one; never over a newer
  // generation's status written by another worker.
  void putConnectorSafe(const std::string& name, const StatusRecord& status);
  void putTaskSafe(const std::string& connector, int task, const StatusRecord& status);

  std::optional<StatusRecord> connector(const std::string& name) const;
  std::map<int, StatusRecord> tasks(const std::string& connector) const;
  std::vector<std::string> connectors() const;
  // Tombstones for the connector's status, its tasks' and its topics', as Kafka writes when a
  // connector is deleted.
  void deleteConnector(const std::string& name);

  // KIP-558's active topics.
  void putTopic(const std::string& connector, const std::string& topic, int task);
  std::vector<std::string> topics(const std::string& connector) const;
  void resetTopics(const std::string& connector);

 private:
  // A key's last status read back (librdkafka retries a write until it is acknowledged, so
  // Kafka's count of writes in flight, which guards its own retries, has no use here).
  struct Entry {
    std::optional<StatusRecord> value;
  };
  void put(const std::string& key, Entry& entry, const StatusRecord& status, bool safe);
  void consumed(const std::string& key, const std::optional<std::string>& value);
  void readTask(const StatusKey& key, const std::optional<std::string>& value);
  void readTopic(const StatusKey& key, const std::optional<std::string>& value);

  KafkaBasedLog log_;
  mutable std::mutex mutex_;
  std::map<std::string, Entry> connectors_;
  std::map<std::string, std::map<int, Entry>> tasks_;
  std::map<std::string, std::map<std::string, TopicStatus>> topics_;  // connector -> topic
};

}  // namespace oxbow::connect::runtime::distributed
