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
