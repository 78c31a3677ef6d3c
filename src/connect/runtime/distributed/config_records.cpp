// Kafka's prefixes are tested in its order: "task-" before "commit-", and "tasks-fencing-" (which
// "task-" does not match) among the records this worker does not use yet.
#include "connect/runtime/distributed/config_records.h"

#include <spdlog/spdlog.h>

#include "connect/runtime/distributed/record_json.h"

namespace oxbow::connect::runtime::distributed {

namespace {

constexpr std::string_view kTargetStatePrefix = "target-state-";
constexpr std::string_view kConnectorPrefix = "connector-";
constexpr std::string_view kTaskPrefix = "task-";
constexpr std::string_view kCommitPrefix = "commit-";
constexpr std::string_view kRestartPrefix = "restart-connector-";
// Records of features this worker does not have (KIP-618's fencing, request signing, KIP-976's
// cluster-wide logger levels): read past without complaint.
constexpr std::string_view kLoggerPrefix = "logger-cluster-";
constexpr std::string_view kKnownPrefixes[] = {"tasks-fencing-", "session-key"};

using Json = nlohmann::ordered_json;

std::string withProperties(const Properties& config) {
  Json properties = Json::object();
  for (const auto& [name, value] : config) properties[name] = value;
  return Json{{"properties", properties}}.dump();
}

// The "properties" of a connector's or task's config record (already known to be JSON).
std::optional<Properties> propertiesOf(const std::string& value) {
  nlohmann::json json = nlohmann::json::parse(value);
  if (!json.is_object() || !json.contains("properties")) return std::nullopt;
  return record_json::stringMap(json["properties"]);
}

bool startsWith(const std::string& key, std::string_view prefix) {
  return std::string_view(key).starts_with(prefix);
}

std::string after(const std::string& key, std::string_view prefix) {
  return key.substr(prefix.size());
}

}  // namespace

int ClusterConfigState::taskCount(const std::string& connector) const {
  auto it = taskCounts.find(connector);
  return it == taskCounts.end() ? 0 : it->second;
}

namespace config_records {

std::string connectorKey(const std::string& connector) {
  return std::string(kConnectorPrefix) + connector;
}
std::string targetStateKey(const std::string& connector) {
  return std::string(kTargetStatePrefix) + connector;
}
std::string taskKey(const std::string& connector, int task) {
  return std::string(kTaskPrefix) + connector + "-" + std::to_string(task);
}
std::string commitKey(const std::string& connector) {
  return std::string(kCommitPrefix) + connector;
}
std::string loggerKey(const std::string& logger) {
  return std::string(kLoggerPrefix) + logger;
}
std::string restartKey(const std::string& connector) {
  return std::string(kRestartPrefix) + connector;
}

std::string connectorConfigValue(const Properties& config) {
  return withProperties(config);
}

std::string taskConfigValue(const Props& config) {
  return withProperties(config);
}

std::string commitValue(int tasks) {
  return Json{{"tasks", tasks}}.dump();
}

std::string targetStateValue(TargetState state) {
  TargetState legacy = state == TargetState::STOPPED ? TargetState::PAUSED : state;
  return Json{{"state", targetStateName(legacy)}, {"state.v2", targetStateName(state)}}.dump();
}

std::string loggerValue(const std::string& level) {
  return Json{{"level", level}}.dump();
}

std::string restartValue(const RestartRequest& request) {
  return Json{{"include-tasks", request.includeTasks}, {"only-failed", request.onlyFailed}}.dump();
}

const char* targetStateName(TargetState state) {
  switch (state) {
    case TargetState::STARTED:
      return "STARTED";
    case TargetState::PAUSED:
      return "PAUSED";
    case TargetState::STOPPED:
      return "STOPPED";
  }
  return "STARTED";
}

std::optional<TargetState> parseTargetState(const std::string& name) {
  for (TargetState state : {TargetState::STARTED, TargetState::PAUSED, TargetState::STOPPED}) {
    if (name == targetStateName(state)) return state;
  }
  return std::nullopt;
}

}  // namespace config_records

std::optional<ConfigEvent> ConfigState::apply(const std::string& key,
                                              const std::optional<std::string>& value,
                                              int64_t offset) {
  if (value && !record_json::parse(*value, "config record " + key)) return std::nullopt;
  offset_ = offset + 1;
  if (startsWith(key, kTargetStatePrefix)) {
    return applyTargetState(after(key, kTargetStatePrefix), value);
  }
  if (startsWith(key, kConnectorPrefix)) {
    return applyConnectorConfig(after(key, kConnectorPrefix), value);
  }
  if (startsWith(key, kTaskPrefix)) {
    applyTaskConfig(key, value);
    return std::nullopt;
  }
  if (startsWith(key, kCommitPrefix)) return applyCommit(after(key, kCommitPrefix), value);
  if (startsWith(key, kRestartPrefix)) return applyRestart(after(key, kRestartPrefix), value);
  if (startsWith(key, kLoggerPrefix)) return applyLoggerLevel(after(key, kLoggerPrefix), value);
  for (std::string_view prefix : kKnownPrefixes) {
    if (startsWith(key, prefix)) return std::nullopt;
  }
  spdlog::error("connect: discarding config update record with invalid key: {}", key);
  return std::nullopt;
}

std::optional<ConfigEvent> ConfigState::applyTargetState(const std::string& connector,
                                                         const std::optional<std::string>& value) {
  if (!value) {
    // Written with a connector's removal; a connector still configured keeps a state.
    targetStates_.erase(connector);
    if (connectorConfigs_.contains(connector)) targetStates_[connector] = TargetState::STARTED;
    return std::nullopt;
  }
  nlohmann::json json = *record_json::parse(*value, "");
  if (!json.is_object()) {
    spdlog::error(
        "connect: ignoring target state for connector '{}' because it is in the wrong "
        "format: {}",
        connector, record_json::typeName(json));
    return std::nullopt;
  }
  // state.v2 (KIP-875) first; a record of an older worker has only "state".
  std::optional<std::string> name;
  if (json.contains("state.v2") && json["state.v2"].is_string()) {
    name = json["state.v2"].get<std::string>();
  } else if (json.contains("state") && json["state"].is_string()) {
    name = json["state"].get<std::string>();
  }
  std::optional<TargetState> state = name ? config_records::parseTargetState(*name) : std::nullopt;
  if (!state) {
    // The record's own bytes: dump() recurses once per nesting level, and a record of a
    // megabyte of '[' would overflow the stack.
    spdlog::error("connect: invalid target state for connector '{}': {}", connector, *value);
    return std::nullopt;
  }
  auto previous = targetStates_.find(connector);
  bool changed = previous == targetStates_.end() || previous->second != *state;
  targetStates_[connector] = *state;
  if (!changed || !connectorConfigs_.contains(connector)) return std::nullopt;
  return ConfigEvent{ConfigEvent::Kind::TARGET_STATE_CHANGED, connector, {}};
}

std::optional<ConfigEvent> ConfigState::applyConnectorConfig(
    const std::string& connector, const std::optional<std::string>& value) {
  if (!value) {
    removeConnector(connector);
    spdlog::info("connect: processed the removal of connector '{}'", connector);
    return ConfigEvent{ConfigEvent::Kind::CONNECTOR_REMOVED, connector, {}};
  }
  std::optional<Properties> config = propertiesOf(*value);
  if (!config) {
    spdlog::error(
        "connect: ignoring configuration for connector '{}' because it is in the "
        "wrong format: {}",
        connector, *value);
    return std::nullopt;
  }
  connectorConfigs_[connector] = std::move(*config);
  targetStates_.try_emplace(connector, TargetState::STARTED);
  return ConfigEvent{ConfigEvent::Kind::CONNECTOR_UPDATED, connector, {}};
}

void ConfigState::applyTaskConfig(const std::string& key, const std::optional<std::string>& value) {
  auto id = record_json::connectorTask(std::string_view(key).substr(kTaskPrefix.size()));
  if (!id) {
    spdlog::error(
        "connect: ignoring task configuration because {} couldn't be parsed as a task "
        "config key",
        key);
    return;
  }
  if (!value) {
    spdlog::error(
        "connect: ignoring task configuration for task {} because it is unexpectedly "
        "null",
        key.substr(kTaskPrefix.size()));
    return;
  }
  std::optional<Properties> config = propertiesOf(*value);
  if (!config) {
    spdlog::error(
        "connect: ignoring task configuration for task {} because it is in the wrong "
        "format: {}",
        key.substr(kTaskPrefix.size()), *value);
    return;
  }
  // Held back until the commit record: a leader may die between the tasks and their commit.
  deferredTasks_[id->first][id->second] = std::move(*config);
}

std::optional<ConfigEvent> ConfigState::applyCommit(const std::string& connector,
                                                    const std::optional<std::string>& value) {
  if (!connectorConfigs_.contains(connector)) {
    // Deleted before, and compaction has removed its config and tombstone since.
    removeConnector(connector);
    return std::nullopt;
  }
  std::optional<int32_t> count;
  if (value) {
    nlohmann::json json = *record_json::parse(*value, "");
    if (json.is_object() && json.contains("tasks")) count = record_json::int32(json["tasks"]);
  }
  if (!count || *count < 0) {
    spdlog::error(
        "connect: ignoring connector tasks configuration commit for connector '{}' "
        "because it is in the wrong format",
        connector);
    return std::nullopt;
  }
  std::map<int, Props> deferred = std::move(deferredTasks_[connector]);
  deferredTasks_.erase(connector);
  taskCounts_[connector] = *count;
  // Every task up to the count must be there; more is fine (a shrink whose old tasks compaction
  // has not removed yet).
  for (int task = 0; task < *count; ++task) {
    if (!deferred.contains(task)) {
      spdlog::warn(
          "connect: the task configs of connector '{}' are incomplete (compaction, or a "
          "writer that died): waiting for them to be written again",
          connector);
      inconsistent_.insert(connector);
      return std::nullopt;
    }
  }
  for (auto& [task, config] : deferred) taskConfigs_[connector][task] = std::move(config);
  inconsistent_.erase(connector);
  return ConfigEvent{ConfigEvent::Kind::TASK_CONFIGS_UPDATED, connector, {}};
}

std::optional<ConfigEvent> ConfigState::applyRestart(const std::string& connector,
                                                     const std::optional<std::string>& value) {
  nlohmann::json json = value ? *record_json::parse(*value, "") : nlohmann::json();
  if (!json.is_object()) {
    spdlog::error("connect: ignoring restart request because the value is not a map but is {}",
                  record_json::typeName(json));
    return std::nullopt;
  }
  RestartRequest request{connector};
  auto flag = [&](const char* name, bool& out) {
    if (json.contains(name) && json[name].is_boolean()) {
      out = json[name].get<bool>();
    } else {
      spdlog::warn(
          "connect: invalid data for restart request '{}' field should be a Boolean, "
          "defaulting to false",
          name);
    }
  };
  flag("include-tasks", request.includeTasks);
  flag("only-failed", request.onlyFailed);
  return ConfigEvent{ConfigEvent::Kind::RESTART_REQUESTED, connector, request};
}

std::optional<ConfigEvent> ConfigState::applyLoggerLevel(const std::string& logger,
                                                         const std::optional<std::string>& value) {
  nlohmann::json json = value ? nlohmann::json::parse(*value) : nlohmann::json();
  if (!json.is_object() || !json.contains("level") || !json["level"].is_string()) {
    spdlog::error(
        "connect: ignoring logging level for namespace {} because it is not "
        "{{\"level\":...}}",
        logger);
    return std::nullopt;
  }
  return ConfigEvent{ConfigEvent::Kind::LOGGER_LEVEL, logger, {}, json["level"].get<std::string>()};
}

void ConfigState::removeConnector(const std::string& connector) {
  connectorConfigs_.erase(connector);
  taskCounts_.erase(connector);
  taskConfigs_.erase(connector);
  deferredTasks_.erase(connector);
  inconsistent_.erase(connector);
}

ClusterConfigState ConfigState::snapshot() const {
  ClusterConfigState out;
  out.offset = offset_;
  out.connectorConfigs = connectorConfigs_;
  out.targetStates = targetStates_;
  out.taskCounts = taskCounts_;
  out.inconsistent = inconsistent_;
  for (const auto& [connector, count] : taskCounts_) {
    if (inconsistent_.contains(connector)) continue;
    auto tasks = taskConfigs_.find(connector);
    std::vector<Props>& configs = out.taskConfigs[connector];
    for (int task = 0; task < count && tasks != taskConfigs_.end(); ++task) {
      configs.push_back(tasks->second.at(task));
    }
  }
  return out;
}

}  // namespace oxbow::connect::runtime::distributed
