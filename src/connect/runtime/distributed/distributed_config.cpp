// Kafka's DistributedConfig names, defaults and checks.
#include "connect/runtime/distributed/distributed_config.h"

#include <limits>

#include "oxbow/connect/errors.h"

namespace oxbow::connect::runtime::distributed {

namespace {

int32_t intConfig(const Properties& props, const std::string& name, int32_t fallback,
                  int32_t atLeast) {
  return static_cast<int32_t>(std::min<int64_t>(longConfig(props, name, fallback, atLeast),
                                                std::numeric_limits<int32_t>::max()));
}

InternalTopic topic(const Properties& props, const std::string& prefix, int32_t partitions) {
  InternalTopic topic;
  topic.name = required(props, prefix + ".topic");
  if (partitions > 1) topic.partitions = intConfig(props, prefix + ".partitions", partitions, 1);
  int64_t factor = longConfig(props, prefix + ".replication.factor", 3, -1);
  if (factor == 0) {
    throw ConnectException("Invalid value 0 for configuration " + prefix +
                           ".replication.factor: Replication factor must be positive and not "
                           "larger than the number of brokers in the Kafka cluster, or -1 to use "
                           "the broker's default");
  }
  topic.replicationFactor = static_cast<int16_t>(std::min<int64_t>(factor, 32767));
  return topic;
}

}  // namespace

Properties securitySettings(const Properties& workerProps) {
  Properties settings;
  for (const auto& [key, value] : workerProps) {
    if (key == "security.protocol" || key.starts_with("sasl.") || key.starts_with("ssl.")) {
      settings[key] = value;
    }
  }
  return settings;
}

DistributedConfig DistributedConfig::parse(const Properties& props) {
  DistributedConfig config;
  config.worker = WorkerConfig::parse(props, false);
  config.groupId = required(props, "group.id");
  config.configTopic = topic(props, "config.storage", 1);
  config.offsetTopic = topic(props, "offset.storage", 25);
  config.statusTopic = topic(props, "status.storage", 5);
  std::vector<std::string> names{config.configTopic.name, config.offsetTopic.name,
                                 config.statusTopic.name};
  if (names[0] == names[1] || names[0] == names[2] || names[1] == names[2]) {
    throw ConnectException(
        "Topic names config.storage.topic, offset.storage.topic and status.storage.topic must "
        "all be distinct");
  }
  config.sessionTimeoutMs = intConfig(props, "session.timeout.ms", 10'000, 1);
  config.heartbeatIntervalMs = intConfig(props, "heartbeat.interval.ms", 3'000, 1);
  config.rebalanceTimeoutMs = intConfig(props, "rebalance.timeout.ms", 60'000, 1);
  config.scheduledRebalanceMaxDelayMs =
      intConfig(props, "scheduled.rebalance.max.delay.ms", 300'000, 0);
  config.workerSyncTimeoutMs = intConfig(props, "worker.sync.timeout.ms", 3'000, 1);
  auto protocol = props.find("connect.protocol");
  if (protocol != props.end()) {
    std::string value = ascii_lower(std::string(trim(protocol->second)));
    if (value != "default" && value != "compatible" && value != "sessioned") {
      throw ConnectException("Invalid value " + protocol->second +
                             " for configuration connect.protocol: String must be one of: "
                             "default, compatible, sessioned");
    }
    config.protocol = value;
  }
  auto exactlyOnce = props.find("exactly.once.source.support");
  if (exactlyOnce != props.end()) {
    std::string value = ascii_lower(std::string(trim(exactlyOnce->second)));
    if (value != "disabled" && value != "preparing" && value != "enabled") {
      throw ConnectException("Invalid value " + exactlyOnce->second +
                             " for configuration exactly.once.source.support: String must be "
                             "one of: disabled, preparing, enabled");
    }
    config.exactlyOnceSource = value == "enabled";
  }
  return config;
}

}  // namespace oxbow::connect::runtime::distributed
