// Connectors started from their configs: validated, started, their task configs made into
// running tasks; paused, stopped, restarted and replaced as Connect's StandaloneHerder does.
#include "connect/runtime/standalone.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "connect/runtime/worker_tasks.h"

namespace oxbow::connect::runtime {

struct StandaloneWorker::RunningConnector {
  ConnectorConfig config;
  const ConnectorPlugin* plugin = nullptr;
  TargetState target = TargetState::STARTED;
  std::unique_ptr<WorkerConnectorContext> context;
  std::unique_ptr<Connector> connector;  // null while STOPPED
  bool connectorStarted = false;
  std::mutex traceMutex;  // the connector's context may fail it from its own threads
  std::string trace;      // a FAILED connector's error
  std::vector<Props> taskConfigs;
  std::vector<std::unique_ptr<TaskRunner>> tasks;  // by task id; null when not running
  std::vector<std::string> taskErrors;             // a task that could not be made

  std::string failure() {
    std::lock_guard lock(traceMutex);
    return trace;
  }
  void fail(std::string message) {
    std::lock_guard lock(traceMutex);
    trace = std::move(message);
  }
};

StandaloneWorker::StandaloneWorker(const Properties& workerProps, ConnectorPlugins plugins)
    : config_(WorkerConfig::parse(workerProps)),
      plugins_(std::move(plugins)),
      offsets_(config_.offsetFile) {}

StandaloneWorker::~StandaloneWorker() {
  stop();
}

std::unique_ptr<StandaloneWorker::RunningConnector> StandaloneWorker::prepare(
    const Properties& props, bool fromRest) const {
  CheckedConnector checked = checkConnector(plugins_, props, fromRest, &config_);
  auto running = std::make_unique<RunningConnector>();
  running->plugin = checked.plugin;
  running->config = std::move(checked.config);
  return running;
}

void StandaloneWorker::startConnector(RunningConnector& running) {
  const ConnectorConfig& config = running.config;
  running.fail("");
  running.connector = running.plugin->create();
  RunningConnector* self = &running;
  // A standalone worker cannot yet change a running connector's tasks.
  std::string name = config.name;
  auto reconfigure = [name] {
    spdlog::warn(
        "connect: connector {} asked for new task configs; a standalone worker applies "
        "them only when restarted",
        name);
  };
  running.context = std::make_unique<WorkerConnectorContext>(
      config.name, offsets_, reconfigure,
      [self](std::string error) { self->fail(std::move(error)); });
  running.connector->initialize(*running.context);
  running.connector->start(config.props);
  running.connectorStarted = true;
  running.taskConfigs = running.connector->taskConfigs(config.tasksMax);
}

void StandaloneWorker::startTask(RunningConnector& running, int id) {
  std::unique_ptr<TaskRunner> runner =
      makeTaskRunner(config_, running.config, *running.plugin, *running.connector, id,
                     running.taskConfigs[id], offsets_, &topics_);
  runner->start();
  running.tasks[id] = std::move(runner);
}

void StandaloneWorker::startTasks(RunningConnector& running) {
  running.tasks.resize(running.taskConfigs.size());
  running.taskErrors.assign(running.taskConfigs.size(), "");
  for (size_t i = 0; i < running.taskConfigs.size(); ++i) startTask(running, static_cast<int>(i));
}

void StandaloneWorker::stopTasks(RunningConnector& running) {
  for (auto& task : running.tasks) {
    if (task) task->stop();
  }
  running.tasks.clear();
  running.taskErrors.clear();
}

void StandaloneWorker::stopConnector(RunningConnector& running) {
  if (running.connector && running.connectorStarted) {
    try {
      running.connector->stop();
    } catch (const std::exception& e) {
      spdlog::warn("connect: connector {} failed to stop: {}", running.config.name, e.what());
    }
  }
  running.connectorStarted = false;
  running.connector.reset();
}

void StandaloneWorker::addConnector(const Properties& connectorProps) {
  std::lock_guard lock(mutex_);
  if (stopped_) throw ConnectException("The worker is stopped");
  std::unique_ptr<RunningConnector> running = prepare(connectorProps, false);
  const std::string name = running->config.name;
  if (std::any_of(connectors_.begin(), connectors_.end(),
                  [&](const auto& other) { return other->config.name == name; })) {
    throw ConnectException("Connector " + name + " already exists");
  }
  // Registered before anything can throw, so that stop() ends what started.
  RunningConnector& added = *running;
  connectors_.push_back(std::move(running));
  startConnector(added);
  startTasks(added);
  spdlog::info("connect: connector {} ({}) started with {} task(s)", name, added.plugin->className,
               added.tasks.size());
}

bool StandaloneWorker::putConnector(const std::string& name, Properties props, bool mustBeNew) {
  std::lock_guard lock(mutex_);
  if (stopped_) throw ConnectException("The worker is stopped");
  props["name"] = name;
  auto existing = std::find_if(connectors_.begin(), connectors_.end(),
                               [&](const auto& other) { return other->config.name == name; });
  if (existing != connectors_.end() && mustBeNew) {
    throw AlreadyExistsException("Connector " + name + " already exists");
  }
  std::unique_ptr<RunningConnector> running = prepare(props, true);
  bool created = existing == connectors_.end();
  if (!created) {
    // A new config replaces the connector and its tasks, keeping what it was asked to be.
    running->target = (*existing)->target;
    stopTasks(**existing);
    stopConnector(**existing);
    connectors_.erase(existing);
  }
  RunningConnector& added = *running;
  connectors_.push_back(std::move(running));
  if (added.target == TargetState::STOPPED) return created;
  try {
    startConnector(added);
    if (added.target == TargetState::STARTED) startTasks(added);
  } catch (...) {
    added.fail(exceptionMessage(std::current_exception()));
    spdlog::error("connect: connector {} failed to start: {}", name, added.failure());
  }
  spdlog::info("connect: connector {} {} with {} task(s)", name, created ? "created" : "updated",
               added.tasks.size());
  return created;
}

StandaloneWorker::RunningConnector& StandaloneWorker::find(const std::string& name) const {
  for (const auto& running : connectors_) {
    if (running->config.name == name) return *running;
  }
  throw NotFoundException("Connector " + name + " not found");
}

void StandaloneWorker::deleteConnector(const std::string& name) {
  std::lock_guard lock(mutex_);
  RunningConnector& running = find(name);
  stopTasks(running);
  stopConnector(running);
  std::erase_if(connectors_, [&](const auto& other) { return other.get() == &running; });
  topics_.reset(name);
  spdlog::info("connect: connector {} deleted", name);
}

void StandaloneWorker::setTargetState(const std::string& name, TargetState state) {
  std::lock_guard lock(mutex_);
  RunningConnector& running = find(name);
  if (running.target == state) return;
  stopTasks(running);
  if (state == TargetState::STOPPED) {
    stopConnector(running);
    running.taskConfigs.clear();
  } else if (running.target == TargetState::STOPPED || !running.connectorStarted) {
    running.target = state;
    restartConnector(name, state == TargetState::STARTED, false);
  } else if (state == TargetState::STARTED) {
    startTasks(running);
  }
  running.target = state;
  spdlog::info("connect: connector {} is {}", name,
               state == TargetState::STARTED  ? "resumed"
               : state == TargetState::PAUSED ? "paused"
                                              : "stopped");
}

void StandaloneWorker::restartConnector(const std::string& name, bool includeTasks,
                                        bool onlyFailed) {
  std::lock_guard lock(mutex_);
  RunningConnector& running = find(name);
  if (running.target == TargetState::STOPPED) return;
  bool connectorFailed = !running.failure().empty();
  if (!onlyFailed || connectorFailed) {
    // onlyFailed restarts the failed tasks only, even with a failed connector.
    if (includeTasks && !onlyFailed) stopTasks(running);
    stopConnector(running);
    try {
      startConnector(running);
    } catch (...) {
      running.fail(exceptionMessage(std::current_exception()));
      return;
    }
  }
  if (!includeTasks || running.target != TargetState::STARTED) return;
  running.tasks.resize(running.taskConfigs.size());
  running.taskErrors.resize(running.taskConfigs.size());
  for (size_t i = 0; i < running.taskConfigs.size(); ++i) {
    bool failed = !running.taskErrors[i].empty() ||
                  (running.tasks[i] && running.tasks[i]->state() == TaskState::FAILED);
    if (running.tasks[i] && onlyFailed && !failed) continue;
    restartTask(name, static_cast<int>(i));
  }
}

void StandaloneWorker::restartTask(const std::string& name, int task) {
  std::lock_guard lock(mutex_);
  RunningConnector& running = find(name);
  if (task < 0 || static_cast<size_t>(task) >= running.taskConfigs.size() ||
      !running.connectorStarted) {
    throw NotFoundException("Task " + name + "-" + std::to_string(task) + " not found");
  }
  if (running.target != TargetState::STARTED) return;
  running.tasks.resize(running.taskConfigs.size());
  running.taskErrors.resize(running.taskConfigs.size());
  if (running.tasks[task]) running.tasks[task]->stop();
  running.tasks[task].reset();
  running.taskErrors[task].clear();
  try {
    startTask(running, task);
  } catch (...) {
    running.taskErrors[task] = exceptionMessage(std::current_exception());
  }
}

std::vector<std::string> StandaloneWorker::connectorNames() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> names;
  for (const auto& running : connectors_) names.push_back(running->config.name);
  std::sort(names.begin(), names.end());
  return names;
}

ConnectorInfo StandaloneWorker::connectorInfo(const std::string& name) const {
  std::lock_guard lock(mutex_);
  const RunningConnector& running = find(name);
  return ConnectorInfo{name, running.config.props, running.taskConfigs,
                       std::string(pluginTypeName(running.plugin->type))};
}

ConnectorStatus StandaloneWorker::statusOf(const RunningConnector& running) const {
  auto& self = const_cast<RunningConnector&>(running);
  ConnectorStatus status{running.config.name,
                         std::string(pluginTypeName(running.plugin->type)),
                         "RUNNING",
                         self.failure(),
                         {},
                         ""};
  if (running.target == TargetState::STOPPED) {
    status.state = "STOPPED";
    return status;
  }
  if (!status.trace.empty())
    status.state = "FAILED";
  else if (running.target == TargetState::PAUSED)
    status.state = "PAUSED";
  for (size_t i = 0; i < running.taskConfigs.size(); ++i) {
    TaskStatus task{running.config.name + "-" + std::to_string(i), static_cast<int>(i),
                    "UNASSIGNED", "", ""};
    const TaskRunner* runner = i < running.tasks.size() ? running.tasks[i].get() : nullptr;
    if (i < running.taskErrors.size() && !running.taskErrors[i].empty()) {
      task.state = "FAILED";
      task.failure = running.taskErrors[i];
    } else if (running.target == TargetState::PAUSED) {
      task.state = "PAUSED";
    } else if (runner != nullptr && runner->state() == TaskState::FAILED) {
      task.state = "FAILED";
      task.failure = runner->failure();
    } else if (runner != nullptr && runner->state() == TaskState::RUNNING) {
      task.state = "RUNNING";
    }
    status.tasks.push_back(std::move(task));
  }
  return status;
}

ConnectorStatus StandaloneWorker::connectorStatus(const std::string& name) const {
  std::lock_guard lock(mutex_);
  for (const auto& running : connectors_) {
    if (running->config.name == name) return statusOf(*running);
  }
  throw NotFoundException("No status found for connector " + name);
}

OffsetsTarget StandaloneWorker::offsetsTarget(const std::string& name) const {
  std::lock_guard lock(mutex_);
  const RunningConnector& running = find(name);
  return OffsetsTarget{name, running.plugin, running.config.props};
}

void StandaloneWorker::modifyOffsets(const std::string& name,
                                     const std::function<void(const OffsetsTarget&)>& modify) {
  std::lock_guard lock(mutex_);
  const RunningConnector& running = find(name);
  if (running.target != TargetState::STOPPED || !running.taskConfigs.empty()) {
    throw BadRequestException(
        "Connectors must be in the STOPPED state before their offsets can be modified. This can "
        "be done for the specified connector by issuing a 'PUT' request to the '/connectors/" +
        name + "/stop' endpoint");
  }
  modify(OffsetsTarget{name, running.plugin, running.config.props});
}

void StandaloneWorker::stop() {
  std::lock_guard lock(mutex_);
  if (stopped_) return;
  stopped_ = true;
  for (auto& running : connectors_) {
    for (auto& task : running->tasks) {
      if (task) task->stop();
    }
  }
  for (auto& running : connectors_) stopConnector(*running);
}

std::vector<TaskMetrics> StandaloneWorker::taskMetrics() const {
  std::lock_guard lock(mutex_);
  std::vector<TaskMetrics> out;
  for (const auto& running : connectors_) {
    for (const auto& task : running->tasks) {
      if (task) out.push_back(metricsOf(*task));
    }
  }
  return out;
}

std::pair<size_t, size_t> StandaloneWorker::runningCounts() const {
  std::lock_guard lock(mutex_);
  size_t connectors = 0, tasks = 0;
  for (const auto& running : connectors_) {
    if (running->connectorStarted) ++connectors;
    for (const auto& task : running->tasks) tasks += task ? 1 : 0;
  }
  return {connectors, tasks};
}

std::vector<TaskStatus> StandaloneWorker::taskStatuses() const {
  std::lock_guard lock(mutex_);
  std::vector<TaskStatus> out;
  for (const auto& running : connectors_) {
    for (size_t i = 0; i < running->tasks.size(); ++i) {
      const TaskRunner* task = running->tasks[i].get();
      if (task == nullptr) continue;
      out.push_back(TaskStatus{task->name(), static_cast<int>(i), taskStateName(task->state()),
                               task->failure(), ""});
    }
  }
  return out;
}

}  // namespace oxbow::connect::runtime
