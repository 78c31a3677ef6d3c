#pragma once
// What a stream thread and its parts (runtime/stream_thread.h) are configured with, and the small
// helpers they share.
#include <time.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "oxbow/streams/errors.h"
#include "streams/assignment/task_assignor.h"
#include "streams/runtime/kafka_clients.h"
#include "streams/runtime/task.h"

namespace oxbow::streams::detail {

// What the threads of one instance share in the group.
struct GroupSettings {
  std::string process_id;  // the instance's, 32 hex digits
  std::string endpoint;    // application.server, empty when unset
  AssignorConfig assignor;
  int64_t probing_rebalance_interval_ms = 600000;
  // Called by a thread with each assignment it received (the group's hosts for queries).
  std::function<void(const AssignmentInfo& info, int thread_index)> on_hosts;
};

struct ThreadConfig {
  Config app;
  GroupSettings group;
  TaskConfig task;
  int64_t commit_interval_ms = 30000;
  // How often what was committed is deleted from the repartition topics the thread reads.
  int64_t repartition_purge_interval_ms = 30000;
  std::string client_id;
  int thread_index = 1;  // 1-based, for group.instance.id "<id>-<index>"
  // exactly_once_v2: one transactional producer; output, changelog writes and input offsets
  // committed in one transaction per commit, input read read_committed.
  bool exactly_once = false;
  std::string transactional_id;
  // Asked about an output or repartition record the producer could not write; none: the thread
  // fails. At least once only: changelog writes and transactions always fail.
  ProductionExceptionHandler production_handler;
};

// A message's key or payload as bytes (nullopt: null).
inline std::optional<std::string> bytes_of(const void* data, size_t size) {
  if (!data) return std::nullopt;
  return std::string(static_cast<const char*>(data), size);
}

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A client's error (none: nothing to do) as a StreamsException naming the step it failed in.
// Transactions' errors go through StreamsProducer, which aborts what they leave abortable.
inline void throw_on_error(rd_kafka_error_t* error, const char* step) {
  if (!error) return;
  std::string text = std::string(step) + ": " + rd_kafka_error_string(error);
  rd_kafka_error_destroy(error);
  throw StreamsException(text);
}

// The thread's clock for intervals (commits, metrics, purges, serving delivery reports), read
// once per record: the coarse monotonic clock (a few ms of resolution, no timestamp-counter read)
// is enough for them, and clock reads were 11% of a stateless application's CPU samples.
inline int64_t now_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

}  // namespace oxbow::streams::detail
