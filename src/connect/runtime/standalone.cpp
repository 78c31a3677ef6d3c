// Connectors started from their configs: validated, started, their task configs made into
// running tasks.
#include "connect/runtime/standalone.h"

#include <spdlog/spdlog.h>

#include "connect/runtime/sink_runner.h"
#include "connect/runtime/source_runner.h"
#include "oxbow/connect/errors.h"

namespace oxbow::connect::runtime {

namespace {

// A standalone worker cannot yet change a running connector's tasks nor report its status other
// than in its log.
class StandaloneConnectorContext : public SourceConnectorContext {
 public:
  StandaloneConnectorContext(std::string name, OffsetStorageReader& reader)
      : name_(std::move(name)), reader_(reader) {}
  void requestTaskReconfiguration() override {
    spdlog::warn(
        "connect: connector {} asked for new task configs; a standalone worker applies "
        "them only when restarted",
        name_);
  }
  void raiseError(std::exception_ptr error) override {
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      spdlog::error("connect: connector {} failed: {}", name_, e.what());
    } catch (...) {
      spdlog::error("connect: connector {} failed", name_);
    }
  }
  OffsetStorageReader& offsetStorageReader() override { return reader_; }

 private:
  std::string name_;
  OffsetStorageReader& reader_;
};

void checkValid(const Connector& connector, const Properties& props, const std::string& name) {
  std::string errors;
  int count = 0;
  Config validated = connector.validate(props);
  for (const ConfigValue& value : validated.configValues()) {
    for (const std::string& message : value.errorMessages) {
      errors += "\n  " + value.name + ": " + message;
      ++count;
    }
  }
  if (count > 0) {
    throw ConnectException("Connector configuration for " + name + " is invalid and contains " +
                           std::to_string(count) + " error(s):" + errors);
  }
}

}  // namespace

struct StandaloneWorker::RunningConnector {
  ConnectorConfig config;
  std::unique_ptr<FileOffsetReader> reader;
  std::unique_ptr<StandaloneConnectorContext> context;
  std::unique_ptr<Connector> connector;
  std::vector<std::unique_ptr<TaskRunner>> tasks;
};

StandaloneWorker::StandaloneWorker(const Properties& workerProps, ConnectorPlugins plugins)
    : config_(WorkerConfig::parse(workerProps)),
      plugins_(std::move(plugins)),
      offsets_(config_.offsetFile) {}

StandaloneWorker::~StandaloneWorker() {
  stop();
}

void StandaloneWorker::addConnector(const Properties& connectorProps) {
  if (stopped_) throw ConnectException("The worker is stopped");
  auto cls = connectorProps.find("connector.class");
  if (cls == connectorProps.end()) {
    throw ConnectException(
        "Missing required configuration \"connector.class\" which has no "
        "default value.");
  }
  const ConnectorPlugin& plugin = plugins_.connectorPlugin(cls->second);
  ConnectorKind kind =
      plugin.type == PluginType::SOURCE ? ConnectorKind::SOURCE : ConnectorKind::SINK;
  auto running = std::make_unique<RunningConnector>();
  running->config = ConnectorConfig::parse(connectorProps, kind);
  for (const auto& other : connectors_) {
    if (other->config.name == running->config.name) {
      throw ConnectException("Connector " + running->config.name + " already exists");
    }
  }
  const ConnectorConfig& config = running->config;
  running->connector = plugin.create();
  checkValid(*running->connector, config.props, config.name);
  running->reader = std::make_unique<FileOffsetReader>(offsets_, config.name);
  running->context = std::make_unique<StandaloneConnectorContext>(config.name, *running->reader);
  running->connector->initialize(*running->context);
  running->connector->start(config.props);
  std::vector<Props> taskConfigs = running->connector->taskConfigs(config.tasksMax);
  // Running connectors stay registered even if a task below cannot be made, so stop() ends them.
  RunningConnector& added = *running;
  connectors_.push_back(std::move(running));
  TaskClass taskClass = added.connector->taskClass();
  for (size_t i = 0; i < taskConfigs.size(); ++i) {
    Props taskProps = taskConfigs[i];
    taskProps["task.class"] = taskClass.name;
    std::unique_ptr<Task> task = taskClass.create();
    std::unique_ptr<TaskRunner> runner;
    int id = static_cast<int>(i);
    if (kind == ConnectorKind::SOURCE) {
      auto* source = dynamic_cast<SourceTask*>(task.get());
      if (source == nullptr) throw ConnectException(taskClass.name + " is not a SourceTask");
      task.release();
      runner = std::make_unique<SourceTaskRunner>(config_, config, id, taskProps,
                                                  std::unique_ptr<SourceTask>(source), offsets_);
    } else {
      auto* sink = dynamic_cast<SinkTask*>(task.get());
      if (sink == nullptr) throw ConnectException(taskClass.name + " is not a SinkTask");
      task.release();
      if (!config.topics.empty()) taskProps["topics"] = config.props.at("topics");
      if (!config.topicsRegex.empty()) taskProps["topics.regex"] = config.topicsRegex;
      runner = std::make_unique<SinkTaskRunner>(config_, config, id, taskProps,
                                                std::unique_ptr<SinkTask>(sink));
    }
    runner->start();
    added.tasks.push_back(std::move(runner));
  }
  spdlog::info("connect: connector {} ({}) started with {} task(s)", config.name, plugin.className,
               added.tasks.size());
}

void StandaloneWorker::stop() {
  if (stopped_) return;
  stopped_ = true;
  for (auto& running : connectors_) {
    for (auto& task : running->tasks) task->stop();
  }
  for (auto& running : connectors_) {
    try {
      running->connector->stop();
    } catch (const std::exception& e) {
      spdlog::warn("connect: connector {} failed to stop: {}", running->config.name, e.what());
    }
  }
}

std::vector<TaskStatus> StandaloneWorker::taskStatuses() const {
  std::vector<TaskStatus> out;
  for (const auto& running : connectors_) {
    for (const auto& task : running->tasks) {
      out.push_back(TaskStatus{task->name(), task->state(), task->failure()});
    }
  }
  return out;
}

}  // namespace oxbow::connect::runtime
