#pragma once
// A distributed worker's properties (Kafka's DistributedConfig): the group, the three internal
// topics and how the group rebalances, beside what every worker reads (WorkerConfig).
#include <cstdint>
#include <string>

#include "connect/runtime/worker_config.h"

namespace oxbow::connect::runtime::distributed {

struct InternalTopic {
  std::string name;
  int32_t partitions = 1;
  int16_t replicationFactor = 3;  // -1: the broker's default
};

struct DistributedConfig {
  WorkerConfig worker;
  std::string groupId;
  InternalTopic configTopic;  // always one partition
  InternalTopic offsetTopic;  // 25 partitions by default
  InternalTopic statusTopic;  // 5 partitions by default
  int32_t sessionTimeoutMs = 10'000;
  int32_t heartbeatIntervalMs = 3'000;
  int32_t rebalanceTimeoutMs = 60'000;
  int32_t scheduledRebalanceMaxDelayMs = 300'000;
  int32_t workerSyncTimeoutMs = 3'000;
  std::string protocol = "sessioned";  // connect.protocol: default, compatible, sessioned
  // exactly.once.source.support=enabled: source tasks write records and offsets in transactions
  // ("preparing" is accepted, for a rolling upgrade, and behaves as "disabled" here).
  bool exactlyOnceSource = false;

  static DistributedConfig parse(const Properties& props);
};

// The worker's own security settings (security.protocol, sasl.*, ssl.*), which its group
// membership and its internal topics' clients take, as Kafka's internal clients take them.
Properties securitySettings(const Properties& workerProps);

}  // namespace oxbow::connect::runtime::distributed
