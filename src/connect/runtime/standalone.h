#pragma once
// A standalone worker (Kafka's ConnectStandalone and StandaloneHerder): connectors started in this
// process, each task on its own thread, source offsets in the worker's offsets file. Connectors
// come from files at start (a bad one stops the start, as ConnectStandalone exits) or from the
// REST API at any time (rest_api.h). A task failing is FAILED with its trace while the others go
// on. Every method may be called from any thread.
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "connect/runtime/active_topics.h"
#include "connect/runtime/herder.h"
#include "connect/runtime/offset_store.h"
#include "connect/runtime/task_runner.h"
#include "connect/runtime/worker_config.h"
#include "oxbow/connect/errors.h"
#include "oxbow/connect/plugins.h"

namespace oxbow::connect::runtime {

class StandaloneWorker : public Herder {
 public:
  // ConnectException for a bad worker config or an unreadable offsets file.
  StandaloneWorker(const Properties& workerProps, ConnectorPlugins plugins);
  ~StandaloneWorker() override;

  // Validates and starts one connector from its file and its tasks; ConnectException (with every
  // config error) when it cannot.
  void addConnector(const Properties& connectorProps);
  // Connect's PUT /connectors/NAME/config (and POST /connectors when `mustBeNew`): validates,
  // then replaces the running connector of that name or creates it. True when created.
  // BadRequestException for an invalid config, AlreadyExistsException.
  bool putConnector(const std::string& name, Properties props, bool mustBeNew) override;
  // The rest: NotFoundException for an unknown connector or task.
  void deleteConnector(const std::string& name) override;
  void setTargetState(const std::string& name, TargetState state) override;
  // Restarts the connector (unless onlyFailed and it is not FAILED) and, with includeTasks, its
  // tasks (only the FAILED ones with onlyFailed).
  void restartConnector(const std::string& name, bool includeTasks, bool onlyFailed) override;
  void restartTask(const std::string& name, int task) override;
  std::vector<std::string> connectorNames() const override;
  ConnectorInfo connectorInfo(const std::string& name) const override;
  ConnectorStatus connectorStatus(const std::string& name) const override;

  // Stops every task (each commits what it can), then every connector; their statuses stay.
  void stop();
  std::vector<TaskStatus> taskStatuses() const;

  // NotFoundException for an unknown connector.
  OffsetsTarget offsetsTarget(const std::string& name) const override;
  // Runs `modify` under the worker's lock, so that the connector cannot be resumed meanwhile:
  // NotFoundException, or BadRequestException unless the connector is STOPPED (KIP-875).
  void modifyOffsets(const std::string& name,
                     const std::function<void(const OffsetsTarget&)>& modify) override;
  OffsetBackingStore& offsetStore() override { return offsets_; }
  std::vector<TaskMetrics> taskMetrics() const override;
  std::pair<size_t, size_t> runningCounts() const override;
  ActiveTopics& activeTopics() override { return topics_; }
  const WorkerConfig& config() const override { return config_; }
  const ConnectorPlugins& plugins() const override { return plugins_; }

 private:
  struct RunningConnector;
  RunningConnector& find(const std::string& name) const;
  std::unique_ptr<RunningConnector> prepare(const Properties& props, bool fromRest) const;
  void startConnector(RunningConnector& running);
  void startTasks(RunningConnector& running);
  void startTask(RunningConnector& running, int id);
  void stopTasks(RunningConnector& running);
  void stopConnector(RunningConnector& running);
  ConnectorStatus statusOf(const RunningConnector& running) const;

  WorkerConfig config_;
  ConnectorPlugins plugins_;
  FileOffsetStore offsets_;
  ActiveTopics topics_;
  mutable std::recursive_mutex mutex_;
  std::vector<std::unique_ptr<RunningConnector>> connectors_;
  bool stopped_ = false;
};

}  // namespace oxbow::connect::runtime
