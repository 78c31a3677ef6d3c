// The task thread's life: start, run, fail or stop.
#include "connect/runtime/task_runner.h"

#include <librdkafka/rdkafka.h>
#include <spdlog/spdlog.h>

#include "connect/runtime/error_reporters.h"
#include "oxbow/connect/converters.h"
#include "oxbow/connect/errors.h"
#include "oxbow/connect/header_converters.h"

namespace oxbow::connect::runtime {

const char* taskStateName(TaskState state) {
  switch (state) {
    case TaskState::UNASSIGNED:
      return "UNASSIGNED";
    case TaskState::RUNNING:
      return "RUNNING";
    case TaskState::FAILED:
      return "FAILED";
    case TaskState::STOPPED:
      return "STOPPED";
  }
  return "UNKNOWN";
}

namespace {

// header.converter: the connector's own (configured with its header.converter.*) when it names
// one, else the worker's, else Kafka's default SimpleHeaderConverter; configured as Kafka
// configures a HeaderConverter (converter.type=header).
ConfigMap headerConverterConfigs(const WorkerConfig& worker, const ConnectorConfig& connector) {
  const Properties& source =
      connector.props.contains("header.converter") ? connector.props : worker.props;
  ConfigMap configs(source.begin(), source.end());
  configs.emplace("header.converter", std::string(SimpleHeaderConverter::CLASS_NAME));
  configs["header.converter.converter.type"] = "header";
  return configs;
}

}  // namespace

TaskRunner::TaskRunner(const WorkerConfig& worker, ConnectorConfig connector, int taskId,
                       Props taskProps)
    : worker_(worker),
      connector_(std::move(connector)),
      taskId_(taskId),
      taskProps_(std::move(taskProps)),
      keyConverter_(connectorConverter(worker, connector_, true)),
      valueConverter_(connectorConverter(worker, connector_, false)),
      headerConverter_(ConverterRegistry::instance().configured(
          headerConverterConfigs(worker, connector_), "header.converter", false)),
      transforms_(std::make_unique<TransformationChain>(connectorTransforms(connector_))),
      keyConverterClass_(connectorConverterClass(worker, connector_, true)),
      valueConverterClass_(connectorConverterClass(worker, connector_, false)),
      headerConverterClass_(ConverterRegistry::instance().fullClassName(
          headerConverterConfigs(worker, connector_).at("header.converter"))),
      errorHandler_(connector_.errors),
      name_(connector_.name + "-" + std::to_string(taskId)) {
  if (connector_.errors.logEnable) {
    errorHandler_.addReporter(std::make_unique<LogReporter>(name_, connector_.errors));
  }
}

const ConnectRecord* TaskRunner::transform(ErrorContext& context, const ConnectRecord& record,
                                           std::optional<ConnectRecord>& storage) {
  const ConnectRecord* current = &record;
  for (size_t i = 0; i < transforms_->size(); ++i) {
    std::optional<std::optional<ConnectRecord>> result =
        errorHandler_.execute<std::optional<ConnectRecord>>(
            context, ErrorStage::TRANSFORMATION, transforms_->stageClassName(i),
            [&] { return transforms_->applyStage(i, *current); });
    if (!result || !*result) return nullptr;  // failed and tolerated, or dropped
    storage = std::move(**result);
    current = &*storage;
  }
  return current;
}

TaskRunner::~TaskRunner() {
  // Subclasses stop their runners in their own destructors, while their members are alive.
  if (thread_.joinable()) thread_.join();
  transforms_->close();
}

void TaskRunner::start() {
  state_ = TaskState::RUNNING;
  thread_ = std::thread([this] { main(); });
}

void TaskRunner::stop() {
  if (!thread_.joinable()) return;
  stopping_ = true;
  errorHandler_.triggerStop();  // a retry's backoff ends at once
  wake();
  thread_.join();
}

std::string TaskRunner::failure() const {
  std::lock_guard lock(failureMutex_);
  return failure_;
}

bool TaskRunner::commitDue() {
  auto now = std::chrono::steady_clock::now();
  if (now - lastCommit_ < std::chrono::milliseconds(worker_.offsetFlushIntervalMs)) return false;
  lastCommit_ = now;
  return true;
}

void TaskRunner::main() {
  try {
    run();
    state_ = TaskState::STOPPED;
    spdlog::info("connect: task {} stopped", name_);
  } catch (const std::exception&) {
    // A failure with causes (Tolerance exceeded in error handler) shows them, one a line.
    fail(exceptionTrace(std::current_exception(), false));
  } catch (...) {
    // Whatever a task throws ends the task only: an exception leaving the thread would end the
    // process.
    fail("unknown exception (not a std::exception)");
  }
}

void TaskRunner::fail(const std::string& message) {
  {
    std::lock_guard lock(failureMutex_);
    failure_ = message;
  }
  state_ = TaskState::FAILED;
  spdlog::error("connect: task {} failed: {}", name_, message);
}

rd_kafka_conf_t* clientConfig(const std::vector<std::pair<std::string, std::string>>& defaults,
                              const Properties& overrides) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char error[512];
  auto set = [&](const std::string& name, const std::string& value) {
    if (rd_kafka_conf_set(conf, name.c_str(), value.c_str(), error, sizeof error) !=
        RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      throw ConnectException("Invalid client configuration " + name + "=" + value + ": " + error);
    }
  };
  for (const auto& [name, value] : defaults) set(name, value);
  for (const auto& [name, value] : overrides) set(name, value);
  return conf;
}

Properties withConnectorOverrides(const Properties& worker, const Properties& connector) {
  Properties merged = worker;
  for (const auto& [name, value] : connector) merged[name] = value;
  return merged;
}

rd_kafka_t* workerProducer(const WorkerConfig& worker, const std::string& clientId,
                           void (*onDelivery)(rd_kafka_t*, const rd_kafka_message_t*, void*),
                           void* opaque,
                           const std::vector<std::pair<std::string, std::string>>& settings,
                           const Properties& connectorOverrides) {
  std::vector<std::pair<std::string, std::string>> defaults{
      {"bootstrap.servers", worker.bootstrapServers},
      {"client.id", clientId},
      {"acks", "all"},
      {"max.in.flight.requests.per.connection", "1"},
      {"message.timeout.ms", "0"},
      {"linger.ms", "0"}};
  defaults.insert(defaults.end(), settings.begin(), settings.end());
  rd_kafka_conf_t* conf =
      clientConfig(defaults, withConnectorOverrides(worker.producerOverrides, connectorOverrides));
  rd_kafka_conf_set_dr_msg_cb(conf, onDelivery);
  rd_kafka_conf_set_opaque(conf, opaque);
  char error[512];
  rd_kafka_t* producer = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
  if (producer == nullptr) {
    rd_kafka_conf_destroy(conf);
    throw ConnectException(std::string("Could not create the producer ") + clientId + ": " + error);
  }
  return producer;
}

}  // namespace oxbow::connect::runtime
