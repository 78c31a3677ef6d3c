#pragma once
// What start() checks and creates before the threads run: every source topic of every topology
// exists, joined inputs are co-partitioned, and each topology's internal topics (repartition
// topics, changelogs) exist under its prefix with the partition counts its sub-topologies need.
#include <cstdint>

#include "streams/runtime/kafka_clients.h"
#include "streams/runtime/topologies.h"

namespace oxbow::streams::detail {

struct InternalTopicSettings {
  int32_t replication_factor = -1;
  // Kafka's windowstore.changelog.additional.retention.ms.
  int64_t window_changelog_extra_retention_ms = 86400000;
};

// Throws StreamsException for a missing source topic or an internal topic of another partition
// count than needed, TopologyException for inputs not co-partitioned.
void prepare_internal_topics(const Config& config, const Topologies& topologies,
                             const InternalTopicSettings& settings);

}  // namespace oxbow::streams::detail
