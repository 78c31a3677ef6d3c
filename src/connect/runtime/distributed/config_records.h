#pragma once
// The config topic's records in Kafka Connect's format (KafkaConfigBackingStore's keys, and values
// as JsonConverter writes its structs without schemas), and the state they add up to: connector
// configs, target states, and task configs that only count once their commit-NAME record says
// how many there are.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/properties.h"
#include "connect/runtime/herder.h"
#include "oxbow/connect/connector.h"

namespace oxbow::connect::runtime::distributed {

// What the config topic holds, as read up to `offset` (Kafka's ClusterConfigState).
struct ClusterConfigState {
  int64_t offset = -1;  // the offset after the last record applied; -1 before any
  std::map<std::string, Properties> connectorConfigs;
  std::map<std::string, TargetState> targetStates;
  // Committed ones only, in task order; none for an inconsistent connector.
  std::map<std::string, std::vector<Props>> taskConfigs;
  // The task count of each connector's last commit record, consistent or not.
  std::map<std::string, int> taskCounts;
  // Connectors whose last commit named tasks the topic does not hold (compaction, or a leader
  // that died while writing them): the herder should have their task configs written again.
  std::set<std::string> inconsistent;

  int taskCount(const std::string& connector) const;
};

struct RestartRequest {
  std::string connector;
  bool includeTasks = false, onlyFailed = false;
};

namespace config_records {

std::string connectorKey(const std::string& connector);       // connector-NAME
std::string targetStateKey(const std::string& connector);     // target-state-NAME
std::string taskKey(const std::string& connector, int task);  // task-NAME-N
std::string commitKey(const std::string& connector);          // commit-NAME
std::string restartKey(const std::string& connector);         // restart-connector-NAME
std::string loggerKey(const std::string& logger);             // logger-cluster-NAMESPACE

std::string connectorConfigValue(const Properties& config);  // {"properties":{...}}
std::string taskConfigValue(const Props& config);            // {"properties":{...}}
std::string commitValue(int tasks);                          // {"tasks":N}
// {"state":...,"state.v2":...}: STOPPED is PAUSED in "state", for workers that predate KIP-875.
std::string targetStateValue(TargetState state);
std::string restartValue(const RestartRequest& request);  // {"include-tasks":..,"only-failed":..}
std::string loggerValue(const std::string& level);        // {"level":"DEBUG"} (KIP-976)

const char* targetStateName(TargetState state);
std::optional<TargetState> parseTargetState(const std::string& name);

}  // namespace config_records

// What a record changed, for the store's listener.
struct ConfigEvent {
  enum class Kind {
    CONNECTOR_UPDATED,
    CONNECTOR_REMOVED,
    TARGET_STATE_CHANGED,
    TASK_CONFIGS_UPDATED,
    RESTART_REQUESTED,
    LOGGER_LEVEL  // KIP-976's cluster-wide level: `connector` is the logger, `level` its level
  };
  Kind kind;
  std::string connector;
  RestartRequest restart;  // RESTART_REQUESTED's
  std::string level = {};  // LOGGER_LEVEL's
};

// The config topic's records applied in order, as KafkaConfigBackingStore's consumer applies
// them. Not thread-safe. A record that does not parse is logged and skipped.
class ConfigState {
 public:
  std::optional<ConfigEvent> apply(const std::string& key, const std::optional<std::string>& value,
                                   int64_t offset);
  ClusterConfigState snapshot() const;

 private:
  std::optional<ConfigEvent> applyTargetState(const std::string& connector,
                                              const std::optional<std::string>& value);
  std::optional<ConfigEvent> applyConnectorConfig(const std::string& connector,
                                                  const std::optional<std::string>& value);
  void applyTaskConfig(const std::string& key, const std::optional<std::string>& value);
  std::optional<ConfigEvent> applyCommit(const std::string& connector,
                                         const std::optional<std::string>& value);
  std::optional<ConfigEvent> applyLoggerLevel(const std::string& logger,
                                              const std::optional<std::string>& value);
  std::optional<ConfigEvent> applyRestart(const std::string& connector,
                                          const std::optional<std::string>& value);
  void removeConnector(const std::string& connector);

  int64_t offset_ = -1;
  std::map<std::string, Properties> connectorConfigs_;
  std::map<std::string, TargetState> targetStates_;
  std::map<std::string, std::map<int, Props>> taskConfigs_;    // applied by a commit
  std::map<std::string, std::map<int, Props>> deferredTasks_;  // waiting for their commit
  std::map<std::string, int> taskCounts_;
  std::set<std::string> inconsistent_;
};

}  // namespace oxbow::connect::runtime::distributed
