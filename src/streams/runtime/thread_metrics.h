#pragma once
// What a stream thread exposes for metrics. Counters and histograms are updated by the thread
// itself (relaxed atomics, common/metrics.h); per-task figures, which live in the thread's tasks,
// are copied into a snapshot under a mutex about once a second, so a scrape never touches a task.
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "common/metrics.h"
#include "streams/runtime/task.h"

namespace oxbow::streams::detail {

struct LagSnapshot {
  std::string topic;
  int32_t partition = 0;
  int64_t lag = 0;
};

struct TaskSnapshot {
  std::string id;
  TaskCounters counters;
  std::vector<StoreSnapshot> stores;
  std::vector<LagSnapshot> lags;
};

// Where a local store's copy of one changelog partition stands: a running active task's is
// current (position -1), a restoring one's or a standby's is the next offset it will read.
struct StorePosition {
  std::string store;
  std::string changelog;
  int32_t partition = 0;
  int64_t position = -1;
  int64_t end = -1;  // the changelog's end as the thread last saw it; -1 unknown
  bool standby = false;
};

struct ThreadMetrics {
  std::string thread_id;
  metrics::Counter processed, commits, restored;
  metrics::Counter production_skipped;   // writes the production-exception handler let go
  metrics::Counter fetch_restarts;       // stalled fetchers restarted (runtime/fetch_restarter.h)
  metrics::Counter redelivered_skipped;  // input records the consumer handed out twice, skipped
  metrics::Counter standby_applied;      // changelog records written into standby tasks' stores
  metrics::Histogram process_latency{metrics::latency_buckets()};
  metrics::Histogram commit_latency{metrics::latency_buckets()};

  std::mutex mutex;
  std::vector<TaskSnapshot> tasks;       // guarded by mutex
  int64_t restore_remaining = 0;         // guarded by mutex: records left in running restorations
  std::vector<StorePosition> positions;  // guarded by mutex
  int standby_tasks = 0;                 // guarded by mutex
};

}  // namespace oxbow::streams::detail
