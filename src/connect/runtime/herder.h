#pragma once
// What Connect's REST API asks of a worker (Kafka's Herder): a standalone worker answers itself; a
// distributed one answers from its view of the cluster and forwards what only the group's leader
// may do. Every method may be called from any thread.
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "connect/runtime/worker_config.h"
#include "oxbow/connect/errors.h"
#include "oxbow/connect/plugins.h"

namespace oxbow::connect::runtime {

class OffsetBackingStore;
class ActiveTopics;

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
// 409 with the message: the cluster is rebalancing, or its configs changed meanwhile.
class ConflictException : public ConnectException {
  using ConnectException::ConnectException;
};
// Another worker must answer (the group's leader, or the worker running a task): the REST API
// forwards the request to `url` ("http://host:port").
class RedirectException : public ConnectException {
 public:
  RedirectException(const std::string& message, std::string url)
      : ConnectException(message), url_(std::move(url)) {}
  const std::string& url() const { return url_; }

 private:
  std::string url_;
};

// What a connector was asked to be (Connect's TargetState).
enum class TargetState { STARTED, PAUSED, STOPPED };

struct TaskStatus {
  std::string name;  // NAME-N
  int id = 0;
  std::string state;  // RUNNING, PAUSED, FAILED, UNASSIGNED
  std::string failure;
  std::string workerId;  // empty: this worker
};

struct ConnectorStatus {
  std::string name;
  std::string type;   // "source", "sink"
  std::string state;  // RUNNING, PAUSED, STOPPED, FAILED, UNASSIGNED
  std::string trace;  // a FAILED connector's error
  std::vector<TaskStatus> tasks;
  std::string workerId;  // empty: this worker
};

// What the offsets endpoints (offsets_api.h) need of a connector.
struct OffsetsTarget {
  std::string name;
  const ConnectorPlugin* plugin = nullptr;
  Properties config;
};

// What a task running on this worker has counted (Kafka's task-error-metrics).
struct TaskMetrics {
  std::string connector;
  int task = 0;
  std::string state;  // RUNNING, FAILED, ...
  int64_t recordFailures = 0;
  int64_t recordErrors = 0;
  int64_t recordsSkipped = 0;
  int64_t retries = 0;
};

struct ConnectorInfo {
  std::string name;
  Properties config;
  std::vector<Props> taskConfigs;
  std::string type;
};

class Herder {
 public:
  virtual ~Herder() = default;

  // Connect's PUT /connectors/NAME/config (and POST /connectors when `mustBeNew`): validates,
  // then replaces the connector of that name or creates it. True when created.
  // BadRequestException for an invalid config, AlreadyExistsException.
  virtual bool putConnector(const std::string& name, Properties props, bool mustBeNew) = 0;
  // The rest: NotFoundException for an unknown connector or task.
  virtual void deleteConnector(const std::string& name) = 0;
  virtual void setTargetState(const std::string& name, TargetState state) = 0;
  // Restarts the connector (unless onlyFailed and it is not FAILED) and, with includeTasks, its
  // tasks (only the FAILED ones with onlyFailed).
  virtual void restartConnector(const std::string& name, bool includeTasks, bool onlyFailed) = 0;
  virtual void restartTask(const std::string& name, int task) = 0;
  virtual std::vector<std::string> connectorNames() const = 0;
  virtual ConnectorInfo connectorInfo(const std::string& name) const = 0;
  virtual ConnectorStatus connectorStatus(const std::string& name) const = 0;

  // NotFoundException for an unknown connector.
  virtual OffsetsTarget offsetsTarget(const std::string& name) const = 0;
  // Runs `modify` while the connector cannot be resumed: NotFoundException, or
  // BadRequestException unless the connector is STOPPED (KIP-875).
  virtual void modifyOffsets(const std::string& name,
                             const std::function<void(const OffsetsTarget&)>& modify) = 0;
  // The task configs a connector generated, written by the group's leader (Connect's internal
  // POST /connectors/NAME/tasks); a standalone worker refuses them.
  virtual void putTaskConfigs(const std::string& name, const std::vector<Props>& configs) {
    (void)configs;
    throw BadRequestException(
        "Kafka Connect in standalone mode does not support externally "
        "setting task configurations (connector " +
        name + ")");
  }
  virtual OffsetBackingStore& offsetStore() = 0;
  // The tasks that run on this worker, with what they counted.
  virtual std::vector<TaskMetrics> taskMetrics() const = 0;
  // How many connectors and tasks run on this worker.
  virtual std::pair<size_t, size_t> runningCounts() const = 0;
  virtual ActiveTopics& activeTopics() = 0;
  virtual const WorkerConfig& config() const = 0;
  virtual const ConnectorPlugins& plugins() const = 0;
};

}  // namespace oxbow::connect::runtime
