#include "connect/runtime/distributed/config_backing_store.h"

#include <spdlog/spdlog.h>

#include "oxbow/connect/config_def.h"

namespace oxbow::connect::runtime::distributed {

namespace {

TopicSettings configTopic(const WorkerConfig& worker, TopicSettings topic) {
  topic.readCommitted = topic.readCommitted || exactlyOnceSourceEnabled(worker);
  topic.partitions = 1;  // one order for every record, as Kafka requires
  if (topic.workerProperty.empty()) topic.workerProperty = "config.storage.topic";
  if (topic.purpose.empty()) topic.purpose = "connector configurations";
  return topic;
}

}  // namespace

ConfigBackingStore::ConfigBackingStore(const WorkerConfig& worker, TopicSettings topic,
                                       Listener listener)
    : listener_(std::move(listener)),
      log_(worker, configTopic(worker, std::move(topic)), "connect-configs-",
           [this](const std::string& key, const std::optional<std::string>& value, int32_t,
                  int64_t offset) { consumed(key, value, offset); }) {}

void ConfigBackingStore::start() {
  log_.start();
  if (int32_t partitions = log_.partitionCount(); partitions > 1) {
    // Records of one connector spread over partitions would be read in no particular order.
    log_.stop();
    throw ConfigException("Topic '" + log_.topic().name + "' supplied via the '" +
                          log_.topic().workerProperty +
                          "' property is required to have a single partition in order to "
                          "guarantee consistency of connector configurations, but found " +
                          std::to_string(partitions) + " partitions.");
  }
  std::lock_guard lock(mutex_);
  started_ = true;
  spdlog::info("connect: read the connector configurations in topic {}", log_.topic().name);
}

void ConfigBackingStore::stop() {
  log_.stop();
}

void ConfigBackingStore::refresh() {
  log_.readToEnd();
}

ClusterConfigState ConfigBackingStore::snapshot() const {
  std::lock_guard lock(mutex_);
  return state_.snapshot();
}

void ConfigBackingStore::consumed(const std::string& key, const std::optional<std::string>& value,
                                  int64_t offset) {
  std::optional<ConfigEvent> event;
  bool started = false;
  {
    std::lock_guard lock(mutex_);
    event = state_.apply(key, value, offset);
    started = started_;
  }
  // What was read before start() returned is the starting point, not news (restart requests
  // included, as Kafka's).
  if (event && started) notify(*event);
}

void ConfigBackingStore::notify(const ConfigEvent& event) const {
  switch (event.kind) {
    case ConfigEvent::Kind::CONNECTOR_UPDATED:
      if (listener_.connectorConfigUpdated) listener_.connectorConfigUpdated(event.connector);
      break;
    case ConfigEvent::Kind::CONNECTOR_REMOVED:
      if (listener_.connectorConfigRemoved) listener_.connectorConfigRemoved(event.connector);
      break;
    case ConfigEvent::Kind::TARGET_STATE_CHANGED:
      if (listener_.targetStateChanged) listener_.targetStateChanged(event.connector);
      break;
    case ConfigEvent::Kind::TASK_CONFIGS_UPDATED:
      if (listener_.taskConfigsUpdated) listener_.taskConfigsUpdated({event.connector});
      break;
    case ConfigEvent::Kind::RESTART_REQUESTED:
      if (listener_.restartRequested) listener_.restartRequested(event.restart);
      break;
    case ConfigEvent::Kind::LOGGER_LEVEL:
      if (listener_.loggerLevelChanged) listener_.loggerLevelChanged(event.connector, event.level);
      break;
  }
}

void ConfigBackingStore::putConnectorConfig(const std::string& name, const Properties& config,
                                            std::optional<TargetState> initial) {
  std::vector<KafkaBasedLog::Record> records;
  if (initial) {
    records.emplace_back(config_records::targetStateKey(name),
                         config_records::targetStateValue(*initial));
  }
  records.emplace_back(config_records::connectorKey(name),
                       config_records::connectorConfigValue(config));
  log_.write(records);
  log_.readToEnd();
}

void ConfigBackingStore::removeConnectorConfig(const std::string& name) {
  log_.write({{config_records::connectorKey(name), std::nullopt},
              {config_records::targetStateKey(name), std::nullopt}});
  log_.readToEnd();
}

void ConfigBackingStore::putTaskConfigs(const std::string& name,
                                        const std::vector<Props>& configs) {
  std::vector<KafkaBasedLog::Record> records;
  for (size_t task = 0; task < configs.size(); ++task) {
    records.emplace_back(config_records::taskKey(name, static_cast<int>(task)),
                         config_records::taskConfigValue(configs[task]));
  }
  // The commit goes out only once every task config is in the topic, so that a reader never
  // takes a commit for complete when one of its tasks failed to be written.
  if (!records.empty()) log_.write(records);
  log_.write({{config_records::commitKey(name),
               config_records::commitValue(static_cast<int>(configs.size()))}});
  log_.readToEnd();
}

void ConfigBackingStore::putTargetState(const std::string& name, TargetState state) {
  log_.write({{config_records::targetStateKey(name), config_records::targetStateValue(state)}});
}

void ConfigBackingStore::putRestartRequest(const RestartRequest& request) {
  log_.write(
      {{config_records::restartKey(request.connector), config_records::restartValue(request)}});
}

void ConfigBackingStore::putLoggerLevel(const std::string& logger, const std::string& level) {
  log_.write({{config_records::loggerKey(logger), config_records::loggerValue(level)}});
}

}  // namespace oxbow::connect::runtime::distributed
