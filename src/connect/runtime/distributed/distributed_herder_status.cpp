// The herder's view for others: statuses written for what runs here, this worker's state for
// the group, and the leader's assignment of the group's members.
#include <spdlog/spdlog.h>

#include "connect/runtime/distributed/distributed_herder.h"
#include "connect/runtime/distributed/herder_parts.h"
#include "connect/runtime/distributed/incremental_assignor.h"
#include "connect/runtime/distributed/status_backing_store.h"
#include "connect/runtime/distributed/worker_group_member.h"

namespace oxbow::connect::runtime::distributed {

void DistributedHerder::reportStatuses() {
  for (auto& [name, local] : connectors_) {
    std::string failure = local->failed();
    std::string state = !failure.empty()                        ? "FAILED"
                        : local->target == TargetState::STOPPED ? "STOPPED"
                        : local->target == TargetState::PAUSED  ? "PAUSED"
                                                                : "RUNNING";
    std::string key = state + "\n" + failure;
    if (key == local->reported) continue;
    writeConnectorStatus(name, state, failure, false);
    local->reported = key;
  }
  for (auto& [id, task] : tasks_) {
    std::string state, trace;
    if (!task->startError.empty()) {
      state = "FAILED";
      trace = task->startError;
    } else if (!task->runner) {
      state = "PAUSED";
    } else if (task->runner->state() == TaskState::FAILED) {
      state = "FAILED";
      trace = task->runner->failure();
    } else if (task->runner->state() == TaskState::RUNNING) {
      state = "RUNNING";
    } else {
      continue;
    }
    std::string key = state + "\n" + trace;
    if (key == task->reported) continue;
    writeTaskStatus(id, state, trace, false);
    task->reported = key;
  }
}

StatusRecord DistributedHerder::statusRecord(const std::string& state,
                                             const std::string& trace) const {
  std::lock_guard lock(mutex_);
  return StatusRecord{state, trace, workerId_, generation_};
}

void DistributedHerder::writeConnectorStatus(const std::string& name, const std::string& state,
                                             const std::string& trace, bool safe) {
  StatusRecord record = statusRecord(state, trace);
  safe ? statuses_->putConnectorSafe(name, record) : statuses_->putConnector(name, record);
}

void DistributedHerder::writeTaskStatus(const ConnectorTaskId& id, const std::string& state,
                                        const std::string& trace, bool safe) {
  StatusRecord record = statusRecord(state, trace);
  safe ? statuses_->putTaskSafe(id.connector, id.task, record)
       : statuses_->putTask(id.connector, id.task, record);
}

WorkerState DistributedHerder::memberState() {
  WorkerState state;
  state.url = "http://" + workerId_ + "/";
  state.configOffset = configs_->snapshot().offset;
  WorkerAssignment owned;
  std::lock_guard lock(mutex_);
  owned.leader = leaderId_;
  owned.leaderUrl = leaderUrl_;
  owned.configOffset = assignedConfigOffset_;
  owned.connectors.assign(ownedConnectors_.begin(), ownedConnectors_.end());
  owned.tasks.assign(ownedTasks_.begin(), ownedTasks_.end());
  state.owned = std::move(owned);
  return state;
}

std::map<std::string, WorkerAssignment> DistributedHerder::assign(
    const std::string& leaderId, int16_t version,
    const std::map<std::string, WorkerState>& members) {
  configs_->refresh();
  ClusterConfigState state = configs_->snapshot();
  ClusterView view;
  view.configOffset = state.offset;
  for (const auto& [name, config] : state.connectorConfigs) {
    view.taskCounts[name] = state.taskCount(name);
  }
  auto leader = members.find(leaderId);
  std::string leaderUrl = leader == members.end() ? "" : leader->second.url;
  int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::steady_clock::now().time_since_epoch())
                    .count();
  auto [generation, lastCompleted] = member_->assigningGenerations();
  return assignor_->assign(leaderId, leaderUrl, version, members, view, now, lastCompleted,
                           generation);
}

std::string DistributedHerder::fatalError() const {
  return member_ ? member_->fatalError() : "";
}

bool DistributedHerder::isLeader() const {
  std::lock_guard lock(mutex_);
  return member_ && !leaderId_.empty() && leaderId_ == member_->memberId();
}

std::vector<std::string> DistributedHerder::running() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> names;
  for (const auto& [name, local] : connectors_) {
    if (local->connector) names.push_back(name);
  }
  for (const auto& [id, task] : tasks_) {
    if (task->runner) names.push_back(taskName(id));
  }
  return names;
}

std::vector<TaskMetrics> DistributedHerder::taskMetrics() const {
  std::lock_guard lock(mutex_);
  std::vector<TaskMetrics> out;
  for (const auto& [id, task] : tasks_) {
    if (task->runner) out.push_back(metricsOf(*task->runner));
  }
  return out;
}

std::pair<size_t, size_t> DistributedHerder::runningCounts() const {
  std::lock_guard lock(mutex_);
  size_t connectors = 0, tasks = 0;
  for (const auto& [name, local] : connectors_) connectors += local->connector ? 1 : 0;
  for (const auto& [id, task] : tasks_) tasks += task->runner ? 1 : 0;
  return {connectors, tasks};
}

}  // namespace oxbow::connect::runtime::distributed
