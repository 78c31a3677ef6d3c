#pragma once
// A standalone worker (Kafka's ConnectStandalone without its REST API): the connectors of the
// given configs started in this process, each task on its own thread, source offsets in the
// worker's offsets file. Connectors and tasks start in order; a connector whose config or start
// fails stops the worker's start (as ConnectStandalone exits), a task failing later is FAILED
// and logged while the others go on.
#include <memory>
#include <string>
#include <vector>

#include "connect/runtime/offset_store.h"
#include "connect/runtime/task_runner.h"
#include "connect/runtime/worker_config.h"
#include "oxbow/connect/plugins.h"

namespace oxbow::connect::runtime {

struct TaskStatus {
  std::string name;  // NAME-N
  TaskState state;
  std::string failure;
};

class StandaloneWorker {
 public:
  // ConnectException for a bad worker config or an unreadable offsets file.
  StandaloneWorker(const Properties& workerProps, ConnectorPlugins plugins);
  ~StandaloneWorker();

  // Validates and starts one connector and its tasks; ConnectException (with every config error)
  // when it cannot.
  void addConnector(const Properties& connectorProps);
  // Stops every task (each commits what it can), then every connector; their statuses stay.
  void stop();
  std::vector<TaskStatus> taskStatuses() const;
  const WorkerConfig& config() const { return config_; }

 private:
  struct RunningConnector;
  WorkerConfig config_;
  ConnectorPlugins plugins_;
  FileOffsetStore offsets_;
  std::vector<std::unique_ptr<RunningConnector>> connectors_;
  bool stopped_ = false;
};

}  // namespace oxbow::connect::runtime
