#pragma once
// KIP-618 in a distributed worker: which source tasks run transactionally and how, the checks a
// connector's config must pass when the worker supports exactly-once sources, and the fencing of
// tasks a connector no longer has.
#include <optional>
#include <string>

#include "connect/runtime/distributed/distributed_config.h"
#include "connect/runtime/source_runner.h"
#include "oxbow/connect/plugins.h"

namespace oxbow::connect::runtime::distributed {

// The transactional id of a source task: <group.id>-<connector>-<task>, as Kafka names it.
std::string transactionalId(const DistributedConfig& config, const std::string& connector,
                            int task);

// How task `task` of a source connector writes when the worker has exactly-once sources
// enabled; nullopt otherwise (and for sinks).
std::optional<SourceTransactions> sourceTransactions(const DistributedConfig& config,
                                                     const ConnectorPlugin& plugin,
                                                     const Properties& props, int task);

// exactly.once.support (requested, required) and transaction.boundary (poll, interval,
// connector) checked against what the connector says it supports; BadRequestException with
// the reason. Nothing to check when the worker's support is not enabled, or for a sink.
void checkExactlyOnce(const DistributedConfig& config, const ConnectorPlugin& plugin,
                      const Properties& props);

// Fences the producers of tasks [from, to) of the connector (their transactional ids), so that a
// zombie of a task the connector no longer has cannot write after the new task configs count.
void fenceTasks(const DistributedConfig& config, const std::string& connector, int from, int to);

}  // namespace oxbow::connect::runtime::distributed
