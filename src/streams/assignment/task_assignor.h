#pragma once
// Which instance runs which task, as Kafka Streams' high-availability assignor (KIP-441) decides
// it: a balanced assignment of active tasks that keeps each stateful task where its state is
// caught up, standby replicas on other instances, and warm-up replicas that let a task move to
// an instance only once its state has caught up there (a probing rebalance, some minutes later,
// then finds it ready).
//
// This is Oxbow's own formulation of those rules, deterministic for the same input:
//  1. Lags. An instance is caught up on a stateful task when it runs it now (offset sum
//     kLatestOffsetSum) or its local state lags the changelogs' end by at most
//     acceptable.recovery.lag; its lag is the end-offset sum minus its reported offset sum (the
//     whole end sum when it reported none).
//  2. Target. Each instance's quota is its share of the tasks by thread count. Tasks stay with
//     their previous active instance up to its quota; the rest go, stateful ones first, to the
//     instance with the most room, the smallest lag breaking ties.
//  3. Movements. A stateful task whose target instance is not caught up stays (or goes) where
//     the state is least behind, preferring the previous active and caught-up instances; the
//     target receives a warm-up replica instead, at most max.warmup.replicas of them in the
//     whole group, and a probing rebalance is asked for.
//  4. Standbys. num.standby.replicas of each stateful task, on distinct instances other than the
//     active, least lag first (a standby stays where its state is), then fewest tasks.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "streams/assignment/protocol_data.h"

namespace oxbow::streams::detail {

struct AssignorConfig {
  int32_t num_standby_replicas = 0;
  int64_t acceptable_recovery_lag = 10000;
  int32_t max_warmup_replicas = 2;
};

struct ClientState {
  int32_t capacity = 1;                   // its stream threads in the group
  std::set<TaskId> previous_active;       // from its members' owned partitions
  std::map<TaskId, int64_t> offset_sums;  // from its subscription
};

struct ClientAssignment {
  std::set<TaskId> active;
  std::set<TaskId> standby;  // warm-ups included
  std::set<TaskId> warmup;   // the standbys that are warm-ups
};

struct AssignorResult {
  std::map<std::string, ClientAssignment> clients;  // process id -> tasks
  bool probing_rebalance_needed = false;            // warm-ups were placed
};

// `clients` keyed by process id (their order breaks ties); `end_offset_sums` has an entry for
// every stateful task.
AssignorResult assign_tasks(const std::map<std::string, ClientState>& clients,
                            const std::set<TaskId>& tasks,
                            const std::map<TaskId, int64_t>& end_offset_sums,
                            const AssignorConfig& config);

}  // namespace oxbow::streams::detail
