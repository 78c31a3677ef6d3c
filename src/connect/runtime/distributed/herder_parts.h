#pragma once
// What the distributed herder's files share: what runs here of a connector and of a task.
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "connect/runtime/distributed/distributed_herder.h"
#include "connect/runtime/task_runner.h"
#include "connect/runtime/worker_tasks.h"

namespace oxbow::connect::runtime::distributed {

// What the config topic asks the connector to be (STARTED when it says nothing).
inline TargetState targetOf(const ClusterConfigState& state, const std::string& name) {
  auto found = state.targetStates.find(name);
  return found == state.targetStates.end() ? TargetState::STARTED : found->second;
}

// "NAME-N", as Connect names a task.
inline std::string taskName(const ConnectorTaskId& id) {
  return id.connector + "-" + std::to_string(id.task);
}

struct DistributedHerder::LocalConnector {
  Properties props;  // as the config topic had it when started
  TargetState target = TargetState::STARTED;
  const ConnectorPlugin* plugin = nullptr;
  ConnectorConfig config;
  std::unique_ptr<Connector> connector;  // null while STOPPED or when it failed to start
  std::unique_ptr<WorkerConnectorContext> context;
  std::atomic<bool> reconfigure{true};
  std::chrono::steady_clock::time_point nextReconfigure;
  std::mutex failureMutex;
  std::string failure;
  std::string reported;  // the status last written: "STATE\ntrace"

  void fail(std::string message) {
    std::lock_guard lock(failureMutex);
    failure = std::move(message);
  }
  std::string failed() {
    std::lock_guard lock(failureMutex);
    return failure;
  }
};

struct DistributedHerder::LocalTask {
  Props config;
  std::unique_ptr<TaskRunner> runner;  // null while paused or when it could not be made
  std::string startError;
  std::string reported;
};

}  // namespace oxbow::connect::runtime::distributed
