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
#include "connect/runtime/offset_store.h"
#include "connect/runtime/task_runner.h"
#include "connect/runtime/worker_config.h"
#include "oxbow/connect/errors.h"
#include "oxbow/connect/plugins.h"

namespace oxbow::connect::runtime {

// Connect's REST errors: 404, 409 and 400 with the exception's message.
class NotFoundException : public ConnectException {
  using ConnectException::ConnectException;
};
class AlreadyExistsException : public ConnectException {
  using ConnectException::ConnectException;
};
class BadRequestException : public ConnectException {
  using ConnectException::ConnectException;
};

// What a connector was asked to be (Connect's TargetState).
enum class TargetState { STARTED, PAUSED, STOPPED };

struct TaskStatus {
  std::string name;  // NAME-N
  int id = 0;
  std::string state;  // RUNNING, PAUSED, FAILED, UNASSIGNED
  std::string failure;
};

struct ConnectorStatus {
  std::string name;
  std::string type;   // "source", "sink"
  std::string state;  // RUNNING, PAUSED, STOPPED, FAILED
  std::string trace;  // a FAILED connector's error
  std::vector<TaskStatus> tasks;
};

// What the offsets endpoints (offsets_api.h) need of a connector.
struct OffsetsTarget {
  std::string name;
  const ConnectorPlugin* plugin = nullptr;
  Properties config;
};

struct ConnectorInfo {
  std::string name;
  Properties config;
  std::vector<Props> taskConfigs;
  std::string type;
};

class StandaloneWorker {
 public:
  // ConnectException for a bad worker config or an unreadable offsets file.
  StandaloneWorker(const Properties& workerProps, ConnectorPlugins plugins);
  ~StandaloneWorker();

  // Validates and starts one connector from its file and its tasks; ConnectException (with every
  // config error) when it cannot.
  void addConnector(const Properties& connectorProps);
  // Connect's PUT /connectors/NAME/config (and POST /connectors when `mustBeNew`): validates,
  // then replaces the running connector of that name or creates it. True when created.
  // BadRequestException for an invalid config, AlreadyExistsException.
  bool putConnector(const std::string& name, Properties props, bool mustBeNew);
  // The rest: NotFoundException for an unknown connector or task.
  void deleteConnector(const std::string& name);
  void setTargetState(const std::string& name, TargetState state);
  // Restarts the connector (unless onlyFailed and it is not FAILED) and, with includeTasks, its
  // tasks (only the FAILED ones with onlyFailed).
  void restartConnector(const std::string& name, bool includeTasks, bool onlyFailed);
  void restartTask(const std::string& name, int task);
  std::vector<std::string> connectorNames() const;
  ConnectorInfo connectorInfo(const std::string& name) const;
  ConnectorStatus connectorStatus(const std::string& name) const;

  // Stops every task (each commits what it can), then every connector; their statuses stay.
  void stop();
  std::vector<TaskStatus> taskStatuses() const;

  // NotFoundException for an unknown connector.
  OffsetsTarget offsetsTarget(const std::string& name) const;
  // Runs `modify` under the worker's lock, so that the connector cannot be resumed meanwhile:
  // NotFoundException, or BadRequestException unless the connector is STOPPED (KIP-875).
  void modifyOffsets(const std::string& name,
                     const std::function<void(const OffsetsTarget&)>& modify);
  FileOffsetStore& offsetStore() { return offsets_; }
  ActiveTopics& activeTopics() { return topics_; }
  const WorkerConfig& config() const { return config_; }
  const ConnectorPlugins& plugins() const { return plugins_; }

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
