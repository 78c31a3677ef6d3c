// What the REST API asks of a distributed worker: reads answered from this worker's view of the
// config and status topics, writes made by the group's leader (RedirectException sends a
// follower's request on), as Kafka's DistributedHerder does.
#include <spdlog/spdlog.h>

#include "connect/runtime/distributed/distributed_herder.h"
#include "connect/runtime/distributed/exactly_once.h"
#include "connect/runtime/distributed/herder_parts.h"
#include "connect/runtime/distributed/kafka_offset_store.h"
#include "connect/runtime/distributed/status_backing_store.h"
#include "connect/runtime/distributed/worker_group_member.h"
#include "connect/runtime/worker_tasks.h"

namespace oxbow::connect::runtime::distributed {

ClusterConfigState DistributedHerder::snapshot() const {
  if (!ready_.load(std::memory_order_acquire)) throw ConflictException(kStarting);
  return configs_->snapshot();
}

void DistributedHerder::requireConnector(const ClusterConfigState& state,
                                         const std::string& name) const {
  if (!state.connectorConfigs.contains(name)) {
    throw NotFoundException("Connector " + name + " not found");
  }
}

void DistributedHerder::requireLeader() const {
  if (!ready_.load(std::memory_order_acquire)) throw ConflictException(kStarting);
  std::lock_guard lock(mutex_);
  if (!member_ || leaderUrl_.empty()) {
    throw ConflictException(
        "Cannot complete request momentarily due to no known leader URL, likely because a "
        "rebalance was underway.");
  }
  if (member_->rebalancing()) {
    throw ConflictException(
        "Cannot complete request because of a conflicting operation (e.g. worker rebalance)");
  }
  if (leaderId_ != member_->memberId()) {
    std::string url = leaderUrl_;
    while (url.ends_with('/')) url.pop_back();
    throw RedirectException("This worker is not the leader of the Connect cluster", url);
  }
}

bool DistributedHerder::putConnector(const std::string& name, Properties props, bool mustBeNew) {
  props["name"] = name;
  CheckedConnector checked = checkConnector(plugins_, props, true, &config_.worker);
  checkExactlyOnce(config_, *checked.plugin, props);
  requireLeader();
  configs_->refresh();
  bool exists = configs_->snapshot().connectorConfigs.contains(name);
  if (exists && mustBeNew) throw AlreadyExistsException("Connector " + name + " already exists");
  configs_->putConnectorConfig(name, props,
                               exists ? std::nullopt : std::optional(TargetState::STARTED));
  configs_->refresh();
  spdlog::info("connect: connector {} {}", name, exists ? "updated" : "created");
  return !exists;
}

void DistributedHerder::deleteConnector(const std::string& name) {
  requireLeader();
  configs_->refresh();
  requireConnector(configs_->snapshot(), name);
  configs_->removeConnectorConfig(name);
  configs_->refresh();
  spdlog::info("connect: connector {} deleted", name);
}

void DistributedHerder::setTargetState(const std::string& name, TargetState state) {
  if (state != TargetState::STOPPED) {
    // Pausing and resuming are written by whichever worker is asked, as Kafka does.
    requireConnector(snapshot(), name);
    configs_->putTargetState(name, state);
    configs_->refresh();
    return;
  }
  requireLeader();
  configs_->refresh();
  requireConnector(configs_->snapshot(), name);
  // A stopped connector has no tasks: their configs go first, so that no task outlives the stop.
  putTaskConfigsAsLeader(name, {});
  configs_->putTargetState(name, TargetState::STOPPED);
  configs_->refresh();
}

void DistributedHerder::restartConnector(const std::string& name, bool includeTasks,
                                         bool onlyFailed) {
  requireLeader();
  configs_->refresh();
  requireConnector(configs_->snapshot(), name);
  configs_->putRestartRequest(RestartRequest{name, includeTasks, onlyFailed});
}

void DistributedHerder::restartTask(const std::string& name, int task) {
  ClusterConfigState state = snapshot();
  requireConnector(state, name);
  std::string taskName = name + "-" + std::to_string(task);
  if (task < 0 || task >= state.taskCount(name)) {
    throw NotFoundException("Task " + taskName + " not found");
  }
  ConnectorTaskId id{name, task};
  bool owned;
  {
    std::lock_guard lock(mutex_);
    owned = ownedTasks_.contains(id);
  }
  if (owned) {
    queueTaskRestart(id);
    return;
  }
  std::map<int, StatusRecord> tasks = statuses_->tasks(name);
  auto owner = tasks.find(task);
  if (owner == tasks.end() || owner->second.workerId.empty() ||
      owner->second.workerId == workerId_) {
    throw ConflictException("Cannot complete request because task " + taskName +
                            " is not assigned to any worker at the moment");
  }
  throw RedirectException("Task " + taskName + " runs on another worker",
                          "http://" + owner->second.workerId);
}

std::vector<std::string> DistributedHerder::connectorNames() const {
  std::vector<std::string> names;
  for (const auto& [name, config] : snapshot().connectorConfigs) names.push_back(name);
  return names;
}

ConnectorInfo DistributedHerder::connectorInfo(const std::string& name) const {
  ClusterConfigState state = snapshot();
  requireConnector(state, name);
  ConnectorInfo info{name, state.connectorConfigs.at(name), {}, "unknown"};
  if (auto tasks = state.taskConfigs.find(name); tasks != state.taskConfigs.end()) {
    info.taskConfigs = tasks->second;
  }
  try {
    auto cls = info.config.find("connector.class");
    if (cls != info.config.end()) {
      info.type = std::string(pluginTypeName(plugins_.connectorPlugin(cls->second).type));
    }
  } catch (const ConnectException&) {
  }
  return info;
}

ConnectorStatus DistributedHerder::connectorStatus(const std::string& name) const {
  ClusterConfigState state = snapshot();
  std::optional<StatusRecord> record =
      state.connectorConfigs.contains(name) ? statuses_->connector(name) : std::nullopt;
  if (!record) throw NotFoundException("No status found for connector " + name);
  ConnectorStatus status;
  status.name = name;
  status.type = connectorInfo(name).type;
  status.state = record->state;
  status.trace = record->trace;
  status.workerId = record->workerId;
  int count = state.taskCount(name);
  for (const auto& [id, task] : statuses_->tasks(name)) {
    if (id >= count) continue;
    status.tasks.push_back(
        TaskStatus{name + "-" + std::to_string(id), id, task.state, task.trace, task.workerId});
  }
  return status;
}

OffsetsTarget DistributedHerder::offsetsTarget(const std::string& name) const {
  ClusterConfigState state = snapshot();
  requireConnector(state, name);
  const Properties& config = state.connectorConfigs.at(name);
  auto cls = config.find("connector.class");
  if (cls == config.end()) throw BadRequestException("Connector " + name + " has no class");
  return OffsetsTarget{name, &plugins_.connectorPlugin(cls->second), config};
}

void DistributedHerder::modifyOffsets(const std::string& name,
                                      const std::function<void(const OffsetsTarget&)>& modify) {
  requireLeader();
  configs_->refresh();
  ClusterConfigState state = configs_->snapshot();
  requireConnector(state, name);
  if (targetOf(state, name) != TargetState::STOPPED || state.taskCount(name) != 0) {
    throw BadRequestException(
        "Connectors must be in the STOPPED state before their offsets can be modified. This can "
        "be done for the specified connector by issuing a 'PUT' request to the '/connectors/" +
        name + "/stop' endpoint");
  }
  modify(offsetsTarget(name));
}

void DistributedHerder::putTaskConfigs(const std::string& name, const std::vector<Props>& configs) {
  requireLeader();
  requireConnector(snapshot(), name);
  putTaskConfigsAsLeader(name, configs);
}

// With exactly-once sources, the producers of tasks the connector no longer has are fenced
// first, so that none of them writes once the new configs count.
void DistributedHerder::putTaskConfigsAsLeader(const std::string& name,
                                               const std::vector<Props>& configs) {
  int before = configs_->snapshot().taskCount(name);
  int after = static_cast<int>(configs.size());
  if (config_.exactlyOnceSource && after < before) fenceTasks(config_, name, after, before);
  configs_->putTaskConfigs(name, configs);
}

OffsetBackingStore& DistributedHerder::offsetStore() {
  return *offsets_;
}

}  // namespace oxbow::connect::runtime::distributed
