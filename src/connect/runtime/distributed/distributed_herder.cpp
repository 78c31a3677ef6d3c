// The herder's thread: the group's assignments applied, connectors and tasks started and stopped
// here, config changes read from the config topic applied, task configs generated and written
// through the leader, statuses written (Kafka's DistributedHerder.tick and its handlers).
#include "connect/runtime/distributed/distributed_herder.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <nlohmann/json.hpp>

#include "connect/runtime/distributed/exactly_once.h"
#include "connect/runtime/distributed/herder_parts.h"
#include "connect/runtime/distributed/incremental_assignor.h"
#include "connect/runtime/distributed/kafka_offset_store.h"
#include "connect/runtime/distributed/status_backing_store.h"
#include "connect/runtime/distributed/worker_group_member.h"
#include "connect/runtime/worker_tasks.h"

namespace oxbow::connect::runtime::distributed {

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kTick = std::chrono::milliseconds(200);
constexpr auto kReconfigureBackoff = std::chrono::milliseconds(250);

}  // namespace

struct DistributedHerder::Events {
  enum class Kind { CONNECTOR_CONFIG, TARGET_STATE, TASK_CONFIGS };
  std::mutex mutex;
  std::deque<std::pair<Kind, std::string>> changes;
  std::deque<RestartRequest> restarts;
  std::deque<ConnectorTaskId> taskRestarts;
  bool woken = false;
};

DistributedHerder::DistributedHerder(const Properties& workerProps, ConnectorPlugins plugins)
    : config_(DistributedConfig::parse(workerProps)),
      plugins_(std::move(plugins)),
      events_(std::make_unique<Events>()) {}

DistributedHerder::~DistributedHerder() {
  stop();
}

void DistributedHerder::start(const std::string& workerId, Forward forward) {
  workerId_ = workerId;
  forward_ = std::move(forward);
  const WorkerConfig& worker = config_.worker;
  auto settings = [](const InternalTopic& topic, const char* property, const char* purpose) {
    return TopicSettings{topic.name, topic.partitions, topic.replicationFactor, property, purpose};
  };
  offsets_ = std::make_unique<KafkaOffsetBackingStore>(
      worker, settings(config_.offsetTopic, "offset.storage.topic", "source connector offsets"));
  offsets_->start();
  statuses_ = std::make_unique<StatusBackingStore>(
      worker, settings(config_.statusTopic, "status.storage.topic", "connector and task statuses"));
  statuses_->start();
  topics_.attach(statuses_.get());
  auto queue = [this](Events::Kind kind) {
    return [this, kind](const std::string& name) {
      {
        std::lock_guard lock(events_->mutex);
        events_->changes.emplace_back(kind, name);
      }
      wake();
    };
  };
  ConfigBackingStore::Listener listener;
  listener.connectorConfigUpdated = queue(Events::Kind::CONNECTOR_CONFIG);
  listener.connectorConfigRemoved = queue(Events::Kind::CONNECTOR_CONFIG);
  listener.targetStateChanged = queue(Events::Kind::TARGET_STATE);
  listener.taskConfigsUpdated = [this](const std::vector<std::string>& connectors) {
    {
      std::lock_guard lock(events_->mutex);
      for (const std::string& name : connectors) {
        events_->changes.emplace_back(Events::Kind::TASK_CONFIGS, name);
      }
    }
    wake();
  };
  listener.restartRequested = [this](const RestartRequest& request) {
    {
      std::lock_guard lock(events_->mutex);
      events_->restarts.push_back(request);
    }
    wake();
  };
  configs_ = std::make_unique<ConfigBackingStore>(
      worker, settings(config_.configTopic, "config.storage.topic", "connector configurations"),
      listener);
  configs_->start();
  assignor_ =
      std::make_unique<IncrementalCooperativeAssignor>(config_.scheduledRebalanceMaxDelayMs);

  WorkerMemberConfig memberConfig;
  memberConfig.bootstrapServers = worker.bootstrapServers;
  memberConfig.security = securitySettings(worker.props);
  memberConfig.groupId = config_.groupId;
  memberConfig.clientId = "connect-" + workerId;
  memberConfig.sessionTimeoutMs = config_.sessionTimeoutMs;
  memberConfig.rebalanceTimeoutMs = config_.rebalanceTimeoutMs;
  memberConfig.heartbeatIntervalMs = config_.heartbeatIntervalMs;
  memberConfig.protocol = config_.protocol;
  WorkerMemberCallbacks callbacks;
  callbacks.state = [this] { return memberState(); };
  callbacks.assign = [this](const std::string& leaderId, int16_t version,
                            const std::map<std::string, WorkerState>& members) {
    return assign(leaderId, version, members);
  };
  callbacks.wake = [this] { wake(); };
  member_ = std::make_unique<WorkerGroupMember>(memberConfig, callbacks);
  member_->start();
  started_ = true;
  thread_ = std::thread([this] { runLoop(); });
  ready_.store(true, std::memory_order_release);
  spdlog::info("connect: distributed worker {} joining group {}", workerId_, config_.groupId);
}

void DistributedHerder::stop() {
  {
    std::lock_guard lock(mutex_);
    if (!started_ || stopping_) return;
    stopping_ = true;
  }
  wake();
  if (thread_.joinable()) thread_.join();
  if (member_) member_->stop();
  if (configs_) configs_->stop();
  if (statuses_) {
    statuses_->flush();
    statuses_->stop();
  }
  if (offsets_) offsets_->stop();
}

void DistributedHerder::wake() {
  {
    std::lock_guard lock(events_->mutex);
    events_->woken = true;
  }
  wake_.notify_all();
}

void DistributedHerder::queueTaskRestart(const ConnectorTaskId& id) {
  {
    std::lock_guard lock(events_->mutex);
    events_->taskRestarts.push_back(id);
  }
  wake();
}

void DistributedHerder::runLoop() {
  while (true) {
    {
      std::unique_lock lock(events_->mutex);
      wake_.wait_for(lock, kTick, [this] { return events_->woken; });
      events_->woken = false;
    }
    {
      std::lock_guard lock(mutex_);
      if (stopping_) break;
    }
    try {
      tick();
    } catch (const std::exception& e) {
      spdlog::error("connect: the herder's round failed: {}", e.what());
    }
  }
  // Tasks first, as Kafka's worker stops them before its connectors; each is UNASSIGNED then,
  // unless another worker already wrote a newer status.
  std::vector<ConnectorTaskId> tasks;
  for (const auto& [id, task] : tasks_) tasks.push_back(id);
  for (const ConnectorTaskId& id : tasks) {
    stopTask(id);
    writeTaskStatus(id, "UNASSIGNED", "", true);
  }
  std::vector<std::string> connectors;
  for (const auto& [name, connector] : connectors_) connectors.push_back(name);
  for (const std::string& name : connectors) stopConnector(name, "stopping");
}

void DistributedHerder::tick() {
  takeGroupNews();
  applyEvents();
  reconfigureConnectors();
  reportStatuses();
  bool rejoin = false;
  {
    std::lock_guard lock(mutex_);
    if (rejoinAt_ && Clock::now() >= *rejoinAt_) {
      rejoinAt_.reset();
      rejoin = true;
    }
  }
  if (rejoin) member_->requestRejoin();
}

void DistributedHerder::takeGroupNews() {
  if (member_->takeLost()) {
    spdlog::warn("connect: worker {} lost its group membership; stopping what it ran", workerId_);
    std::vector<ConnectorTaskId> tasks(ownedTasks_.begin(), ownedTasks_.end());
    for (const ConnectorTaskId& id : tasks) stopTask(id);
    std::vector<std::string> connectors(ownedConnectors_.begin(), ownedConnectors_.end());
    for (const std::string& name : connectors) stopConnector(name, "lost");
    std::lock_guard lock(mutex_);
    ownedTasks_.clear();
    ownedConnectors_.clear();
    leaderId_.clear();
    leaderUrl_.clear();
  }
  while (auto news = member_->takeAssignment()) applyAssignment(news->first, news->second);
}

void DistributedHerder::applyAssignment(int32_t generation, const WorkerAssignment& assignment) {
  if (assignment.error != 0) {
    spdlog::info("connect: the leader's config is behind this worker's; reading it and rejoining");
    configs_->refresh();
    member_->requestRejoin();
    return;
  }
  {
    std::lock_guard lock(mutex_);
    leaderId_ = assignment.leader;
    leaderUrl_ = assignment.leaderUrl;
    generation_ = generation;
    assignedConfigOffset_ = assignment.configOffset;
    rejoinAt_.reset();
    if (assignment.delayMs > 0) {
      rejoinAt_ = Clock::now() + std::chrono::milliseconds(assignment.delayMs);
    }
  }
  for (const std::string& name : assignment.revokedConnectors) {
    stopConnector(name, "revoked");
    std::lock_guard lock(mutex_);
    ownedConnectors_.erase(name);
  }
  for (const ConnectorTaskId& id : assignment.revokedTasks) {
    stopTask(id);
    writeTaskStatus(id, "UNASSIGNED", "", true);
    std::lock_guard lock(mutex_);
    ownedTasks_.erase(id);
  }
  // What was given up can be placed elsewhere only in the next round.
  if (!assignment.revokedConnectors.empty() || !assignment.revokedTasks.empty()) {
    member_->requestRejoin();
  }
  if (configs_->snapshot().offset < assignment.configOffset) configs_->refresh();
  for (const std::string& name : assignment.connectors) {
    {
      std::lock_guard lock(mutex_);
      ownedConnectors_.insert(name);
    }
    if (!connectors_.contains(name)) startConnector(name);
  }
  for (const ConnectorTaskId& id : assignment.tasks) {
    {
      std::lock_guard lock(mutex_);
      ownedTasks_.insert(id);
    }
    if (!tasks_.contains(id)) startTask(id);
  }
  spdlog::info("connect: worker {} runs {} connector(s) and {} task(s) in generation {}", workerId_,
               ownedConnectors_.size(), ownedTasks_.size(), generation);
}

void DistributedHerder::applyEvents() {
  std::deque<std::pair<Events::Kind, std::string>> changes;
  std::deque<RestartRequest> restarts;
  std::deque<ConnectorTaskId> taskRestarts;
  {
    std::lock_guard lock(events_->mutex);
    changes.swap(events_->changes);
    restarts.swap(events_->restarts);
    taskRestarts.swap(events_->taskRestarts);
  }
  for (const auto& [kind, name] : changes) {
    switch (kind) {
      case Events::Kind::CONNECTOR_CONFIG:
        onConnectorConfig(name);
        break;
      case Events::Kind::TARGET_STATE:
        onTargetState(name);
        break;
      case Events::Kind::TASK_CONFIGS:
        onTaskConfigs(name);
        break;
    }
  }
  for (const RestartRequest& request : restarts) restartOwned(request);
  for (const ConnectorTaskId& id : taskRestarts) {
    if (!ownedTasks_.contains(id)) continue;
    stopTask(id);
    startTask(id);
  }
}

void DistributedHerder::onConnectorConfig(const std::string& name) {
  ClusterConfigState state = configs_->snapshot();
  auto config = state.connectorConfigs.find(name);
  if (config == state.connectorConfigs.end()) {
    // Deleted: whoever ran its parts removes their statuses, as Kafka's DESTROYED does.
    bool ranHere = connectors_.contains(name);
    std::vector<ConnectorTaskId> tasks;
    for (const auto& [id, task] : tasks_) {
      if (id.connector == name) tasks.push_back(id);
    }
    for (const ConnectorTaskId& id : tasks) stopTask(id);
    stopConnector(name, "deleted");
    if (ranHere) {
      statuses_->deleteConnector(name);
      topics_.reset(name);
    }
  } else if (auto local = connectors_.find(name);
             local != connectors_.end() && local->second->props != config->second) {
    stopConnector(name, "reconfigured");
    if (ownedConnectors_.contains(name)) startConnector(name);
  }
  if (isLeader()) member_->requestRejoin();
}

void DistributedHerder::onTargetState(const std::string& name) {
  ClusterConfigState state = configs_->snapshot();
  TargetState target = targetOf(state, name);
  auto local = connectors_.find(name);
  if (local != connectors_.end() && local->second->target != target) {
    TargetState before = local->second->target;
    local->second->target = target;
    if (target == TargetState::STOPPED || before == TargetState::STOPPED) {
      stopConnector(name, "target state");
      if (ownedConnectors_.contains(name)) startConnector(name);
    }
  }
  for (auto& [id, task] : tasks_) {
    if (id.connector != name) continue;
    if (target != TargetState::STARTED && task->runner) {
      task->runner->stop();
      std::lock_guard lock(mutex_);
      task->runner.reset();
    }
  }
  if (target == TargetState::STARTED) {
    std::vector<ConnectorTaskId> paused;
    for (const auto& [id, task] : tasks_) {
      if (id.connector == name && !task->runner) paused.push_back(id);
    }
    for (const ConnectorTaskId& id : paused) {
      stopTask(id);
      startTask(id);
    }
  }
}

void DistributedHerder::onTaskConfigs(const std::string& name) {
  ClusterConfigState state = configs_->snapshot();
  auto configs = state.taskConfigs.find(name);
  std::vector<ConnectorTaskId> changed;
  for (const auto& [id, task] : tasks_) {
    if (id.connector != name) continue;
    bool same = configs != state.taskConfigs.end() &&
                static_cast<size_t>(id.task) < configs->second.size() &&
                configs->second[id.task] == task->config;
    if (!same) changed.push_back(id);
  }
  for (const ConnectorTaskId& id : changed) {
    stopTask(id);
    if (ownedTasks_.contains(id)) startTask(id);
  }
  if (isLeader()) member_->requestRejoin();
}

void DistributedHerder::restartOwned(const RestartRequest& request) {
  auto local = connectors_.find(request.connector);
  if (local != connectors_.end() && (!request.onlyFailed || !local->second->failed().empty())) {
    stopConnector(request.connector, "restart");
    startConnector(request.connector);
  }
  if (!request.includeTasks) return;
  std::vector<ConnectorTaskId> restart;
  for (const auto& [id, task] : tasks_) {
    if (id.connector != request.connector) continue;
    bool failed =
        !task->startError.empty() || (task->runner && task->runner->state() == TaskState::FAILED);
    if (!request.onlyFailed || failed) restart.push_back(id);
  }
  for (const ConnectorTaskId& id : restart) {
    stopTask(id);
    startTask(id);
  }
}

void DistributedHerder::startConnector(const std::string& name) {
  ClusterConfigState state = configs_->snapshot();
  auto config = state.connectorConfigs.find(name);
  if (config == state.connectorConfigs.end()) return;  // deleted: the next round revokes it
  auto local = std::make_unique<LocalConnector>();
  LocalConnector* raw = local.get();
  local->props = config->second;
  local->target = targetOf(state, name);
  try {
    CheckedConnector checked = checkConnector(plugins_, config->second, false);
    local->plugin = checked.plugin;
    local->config = std::move(checked.config);
    if (local->target != TargetState::STOPPED) {
      local->connector = local->plugin->create();
      local->context = std::make_unique<WorkerConnectorContext>(
          name, *offsets_,
          [this, raw] {
            raw->reconfigure = true;
            wake();
          },
          [raw](std::string error) { raw->fail(std::move(error)); });
      local->connector->initialize(*local->context);
      local->connector->start(local->config.props);
    }
  } catch (const std::exception& e) {
    spdlog::error("connect: connector {} failed to start: {}", name, e.what());
    local->fail(e.what());
    local->connector.reset();
  }
  std::lock_guard lock(mutex_);
  connectors_[name] = std::move(local);
}

void DistributedHerder::stopConnector(const std::string& name, const char* why) {
  auto found = connectors_.find(name);
  if (found == connectors_.end()) return;
  LocalConnector& local = *found->second;
  if (local.connector) {
    try {
      local.connector->stop();
    } catch (const std::exception& e) {
      spdlog::warn("connect: connector {} failed to stop: {}", name, e.what());
    }
  }
  spdlog::info("connect: connector {} stopped here ({})", name, why);
  // Given up (to another worker or at shutdown): UNASSIGNED unless another worker wrote since.
  if (std::string_view(why) == "revoked" || std::string_view(why) == "stopping")
    writeConnectorStatus(name, "UNASSIGNED", "", true);
  std::lock_guard lock(mutex_);
  connectors_.erase(found);
}

void DistributedHerder::startTask(const ConnectorTaskId& id) {
  ClusterConfigState state = configs_->snapshot();
  auto configs = state.taskConfigs.find(id.connector);
  auto props = state.connectorConfigs.find(id.connector);
  if (configs == state.taskConfigs.end() || props == state.connectorConfigs.end() ||
      static_cast<size_t>(id.task) >= configs->second.size()) {
    return;  // stale: the next round revokes it
  }
  auto local = std::make_unique<LocalTask>();
  local->config = configs->second[id.task];
  if (targetOf(state, id.connector) == TargetState::STARTED) {
    try {
      CheckedConnector checked = checkConnector(plugins_, props->second, false);
      std::unique_ptr<Connector> probe = checked.plugin->create();
      local->runner =
          makeTaskRunner(config_.worker, checked.config, *checked.plugin, *probe, id.task,
                         local->config, *offsets_, &topics_,
                         sourceTransactions(config_, *checked.plugin, props->second, id.task));
      local->runner->start();
    } catch (const std::exception& e) {
      spdlog::error("connect: task {} failed to start: {}", taskName(id), e.what());
      local->startError = e.what();
      local->runner.reset();
    }
  }
  std::lock_guard lock(mutex_);
  tasks_[id] = std::move(local);
}

void DistributedHerder::stopTask(const ConnectorTaskId& id) {
  auto found = tasks_.find(id);
  if (found == tasks_.end()) return;
  if (found->second->runner) found->second->runner->stop();
  std::lock_guard lock(mutex_);
  tasks_.erase(found);
}

void DistributedHerder::reconfigureConnectors() {
  for (auto& [name, local] : connectors_) {
    if (!local->connector || !local->reconfigure || Clock::now() < local->nextReconfigure) continue;
    if (local->target == TargetState::STOPPED) continue;
    std::vector<Props> configs;
    try {
      configs = local->connector->taskConfigs(local->config.tasksMax);
    } catch (const std::exception& e) {
      local->fail(e.what());
      local->reconfigure = false;
      continue;
    }
    ClusterConfigState state = configs_->snapshot();
    auto committed = state.taskConfigs.find(name);
    bool same = committed != state.taskConfigs.end() && committed->second == configs &&
                !state.inconsistent.contains(name);
    if (same || writeTaskConfigs(name, configs)) {
      local->reconfigure = false;
    } else {
      local->nextReconfigure = Clock::now() + kReconfigureBackoff;
    }
  }
}

bool DistributedHerder::writeTaskConfigs(const std::string& name,
                                         const std::vector<Props>& configs) {
  if (isLeader()) {
    putTaskConfigsAsLeader(name, configs);
    return true;
  }
  std::string leaderUrl;
  {
    std::lock_guard lock(mutex_);
    leaderUrl = leaderUrl_;
  }
  if (leaderUrl.empty() || !forward_) return false;
  nlohmann::json body = nlohmann::json::array();
  for (const Props& config : configs) body.push_back(config);
  RestRequest request{"POST", "/connectors/" + name + "/tasks", "forward=false", body.dump()};
  std::string error;
  std::optional<RestResponse> answer = forward_(leaderUrl, request, error);
  if (answer && answer->status / 100 == 2) return true;
  spdlog::warn("connect: the leader at {} did not take connector {}'s task configs: {}", leaderUrl,
               name, answer ? answer->body : error);
  return false;
}

}  // namespace oxbow::connect::runtime::distributed
