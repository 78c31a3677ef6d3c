#pragma once
// What a source and a sink task runner share: the task's thread, how it is asked to stop, and
// its state (a task that throws is FAILED with the message and never takes the worker down).
#include <librdkafka/rdkafka.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "connect/runtime/error_handler.h"
#include "connect/runtime/herder.h"
#include "connect/runtime/worker_config.h"
#include "oxbow/connect/connector.h"

namespace oxbow::connect::runtime {

class ActiveTopics;

enum class TaskState { UNASSIGNED, RUNNING, FAILED, STOPPED };
const char* taskStateName(TaskState state);

class TaskRunner {
 public:
  TaskRunner(const WorkerConfig& worker, ConnectorConfig connector, int taskId, Props taskProps);
  virtual ~TaskRunner();
  TaskRunner(const TaskRunner&) = delete;
  TaskRunner& operator=(const TaskRunner&) = delete;

  // Runs the task on its own thread.
  void start();
  // Asks the task to stop, waits for its thread to commit what it can and end.
  void stop();
  TaskState state() const { return state_.load(); }
  std::string failure() const;
  // "NAME-N", as Connect names a task.
  const std::string& name() const { return name_; }
  int taskId() const { return taskId_; }
  const std::string& connectorName() const { return connector_.name; }
  // Kafka's task-error-metrics of this task so far (any thread).
  ErrorCounts errorCounts() const { return errorHandler_.counts(); }
  // Where the task records the topics it uses (KIP-558); null when tracking is off.
  void trackTopics(ActiveTopics* topics) { activeTopics_ = topics; }

 protected:
  // The task's loop: returns once stopping() is true (or throws).
  virtual void run() = 0;
  // Wakes a task blocked in its poll; called from the thread calling stop().
  virtual void wake() = 0;
  bool stopping() const { return stopping_.load(); }
  // Whether offset.flush.interval.ms has passed since the last commit (and restarts the clock).
  bool commitDue();
  void recordActiveTopic(std::string_view topic);  // in active_topics.cpp

  const WorkerConfig& worker_;
  ConnectorConfig connector_;
  int taskId_;
  Props taskProps_;
  // The connector's converters (its own or the worker's; header.converter by default
  // SimpleHeaderConverter, as Kafka's) and its transforms.
  std::unique_ptr<Converter> keyConverter_;
  std::unique_ptr<Converter> valueConverter_;
  std::unique_ptr<Converter> headerConverter_;
  std::unique_ptr<TransformationChain> transforms_;
  // Their class names, as failures report them.
  std::string keyConverterClass_;
  std::string valueConverterClass_;
  std::string headerConverterClass_;
  // The connector's errors.* handling, its log reporter added when errors.log.enable is set.
  RetryWithTolerance errorHandler_;
  // The record through each transform in turn, each stage's failure handled: null when a
  // transform dropped it or failed and the failure is tolerated; else `record` itself when there
  // are no transforms (no copy), or the last stage's result, kept in `storage`.
  const ConnectRecord* transform(ErrorContext& context, const ConnectRecord& record,
                                 std::optional<ConnectRecord>& storage);

 private:
  void main();
  void fail(const std::string& message);
  std::string name_;
  std::thread thread_;
  ActiveTopics* activeTopics_ = nullptr;
  // The topics this task has reported since ActiveTopics' last reset (of any connector).
  std::mutex seenTopicsMutex_;
  std::set<std::string, std::less<>> seenTopics_;
  uint64_t seenTopicsResets_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<TaskState> state_{TaskState::UNASSIGNED};
  mutable std::mutex failureMutex_;
  std::string failure_;
  std::chrono::steady_clock::time_point lastCommit_ = std::chrono::steady_clock::now();
};

// The task's metrics as the REST server's /metrics reports them.
TaskMetrics metricsOf(const TaskRunner& task);

// A producer as Kafka's worker configures its own (for source records and the dead letter queue):
// every record acknowledged by all replicas, in order per partition, retried rather than dropped;
// the worker's producer.* laid over; deliveries reported to onDelivery with opaque. `settings`
// go over the runtime's defaults (a transactional producer's), under the worker's overrides, and
// those under the connector's.
rd_kafka_t* workerProducer(const WorkerConfig& worker, const std::string& clientId,
                           void (*onDelivery)(rd_kafka_t*, const rd_kafka_message_t*, void*),
                           void* opaque,
                           const std::vector<std::pair<std::string, std::string>>& settings = {},
                           const Properties& connectorOverrides = {});

// The worker's client overrides (producer.*, consumer.*) with the connector's own
// (producer.override.*, consumer.override.*) laid over them.
Properties withConnectorOverrides(const Properties& worker, const Properties& connector);

// librdkafka's config from the runtime's defaults, then the worker's overrides (producer.* or
// consumer.*); ConnectException naming a property librdkafka refuses.
rd_kafka_conf_t* clientConfig(const std::vector<std::pair<std::string, std::string>>& defaults,
                              const Properties& overrides);

}  // namespace oxbow::connect::runtime
