#pragma once
// Connector configs, target states, task configs and restart requests in the config topic
// (config.storage.topic), as Kafka's KafkaConfigBackingStore keeps them: one partition,
// compacted, every worker reading all of it.
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "connect/runtime/distributed/config_records.h"
#include "connect/runtime/distributed/kafka_based_log.h"

namespace oxbow::connect::runtime::distributed {

class ConfigBackingStore {
 public:
  // Called on the log's thread, once start() has read the topic to its end (what was read before
  // is in the snapshot).
  struct Listener {
    std::function<void(const std::string&)> connectorConfigUpdated, connectorConfigRemoved,
        targetStateChanged;
    std::function<void(const std::vector<std::string>& connectors)> taskConfigsUpdated;
    std::function<void(const RestartRequest&)> restartRequested;
    // KIP-976: a logger's level set for the whole cluster (PUT /admin/loggers/NAME?scope=cluster).
    std::function<void(const std::string& logger, const std::string& level)> loggerLevelChanged;
  };

  // The topic's partition count is always 1, whatever `topic` says.
  ConfigBackingStore(const WorkerConfig& worker, TopicSettings topic, Listener listener);
  // KafkaBasedLog::start()'s exceptions, and ConfigException for an existing topic of more than
  // one partition, as Kafka refuses it.
  void start();
  void stop();
  void refresh();  // reads the topic to its end
  ClusterConfigState snapshot() const;

  // Each write returns once the records are read back (ConnectException on failure or timeout).
  // `initial` is written before the config, as Kafka does for a connector created STOPPED.
  void putConnectorConfig(const std::string& name, const Properties& config,
                          std::optional<TargetState> initial);
  // Tombstones for the config and the target state.
  void removeConnectorConfig(const std::string& name);
  // task-NAME-0.., read back, then commit-NAME with their count.
  void putTaskConfigs(const std::string& name, const std::vector<Props>& configs);
  // Returns once acknowledged (not read back), as Kafka's.
  void putTargetState(const std::string& name, TargetState state);
  void putRestartRequest(const RestartRequest& request);
  // logger-cluster-NAME {"level":...}; returns once acknowledged, as Kafka's.
  void putLoggerLevel(const std::string& logger, const std::string& level);

 private:
  void consumed(const std::string& key, const std::optional<std::string>& value, int64_t offset);
  void notify(const ConfigEvent& event) const;

  Listener listener_;
  KafkaBasedLog log_;
  mutable std::mutex mutex_;
  ConfigState state_;
  bool started_ = false;  // under mutex_
};

}  // namespace oxbow::connect::runtime::distributed
