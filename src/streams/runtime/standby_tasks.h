#pragma once
// A stream thread's standby tasks (num.standby.replicas, and KIP-441's warm-ups): copies of other
// instances' task state kept up to date from the changelogs, on a consumer of their own, so that
// when a task moves here its stores are already (nearly) current and its restoration reads only
// the tail. A standby processes nothing: it writes changelog records into its stores' bottom
// layer and, every commit interval, makes them durable with the offset they reached, which is
// where an active task made from the same directory starts restoring.
//
// Only persistent stores gain from a standby across the hand-over (the active task opens the
// same RocksDB files); an in-memory store is rebuilt by the active task from its changelog.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/shared_mutex.h"
#include "streams/runtime/kafka_clients.h"
#include "streams/runtime/task.h"

namespace oxbow::streams::detail {

class StandbyTasks {
 public:
  using TaskKey = TaskId;
  // `make_task` opens a task's stores in its directory (waiting for the directory's lock).
  // `on_applied` is called for each changelog record applied (a metric).
  StandbyTasks(Config app, std::string client_id,
               std::function<std::unique_ptr<Task>(TaskKey)> make_task,
               std::function<void()> on_applied = {});
  ~StandbyTasks();

  // Keeps exactly `wanted`: new standbys start from their stores' local state, the others are
  // made durable and closed.
  void assign(const std::set<TaskKey>& wanted);
  // Makes one durable and closes it (its task becomes active on this thread).
  void release(TaskKey key);
  bool empty() const { return tasks_.empty(); }
  const std::set<TaskKey> keys() const;
  // Applies what the changelogs have, for up to `budget_ms`.
  void step(int budget_ms);
  // Every commit interval: the stores made durable with the offsets they reached.
  void checkpoint();
  // Per task, the sum of its changelog positions (the subscription's offset sums).
  std::map<TaskKey, int64_t> offset_sums() const;
  // True once every standby opened since the last true answer has come within `acceptable_lag`
  // of its changelogs' end: warm-ups are ready to take their tasks over. A warm-up is a new
  // standby; telling them from new regular standbys costs at most one extra rebalance.
  bool warmups_caught_up(int64_t acceptable_lag);
  // Each standby store's changelog partition: store, topic, partition, next offset, end (-1
  // unknown) as the consumer last saw it.
  struct StorePosition {
    std::string store, topic;
    int32_t partition;
    int64_t next, end;
  };
  std::vector<StorePosition> positions() const;
  size_t size() const { return tasks_.size(); }
  // Interactive queries of stale stores (other threads): calls `read` with the store `name` of
  // each standby of `topology` (of `partition` only, when set) under its lock, until `read`
  // returns false. Returns how many stores it read.
  int read_store(const std::string& topology, const std::string& name,
                 std::optional<int32_t> partition, const std::function<bool(KeyValueStore&)>& read,
                 bool& stop) const;

 private:
  struct Position {
    Task* task;
    WriterPreferringSharedMutex* lock;
    std::string store;
    int64_t next;  // RD_KAFKA_OFFSET_BEGINNING until something was read
  };
  struct Standby {
    std::unique_ptr<Task> task;
    // Held exclusively while changelog records go into the stores, shared by a query.
    std::unique_ptr<WriterPreferringSharedMutex> lock =
        std::make_unique<WriterPreferringSharedMutex>();
  };
  void open(TaskKey key);
  void close(TaskKey key);
  void assign_consumer();
  int64_t task_lag(TaskKey key) const;  // -1 while an end is unknown

  Config app_;
  std::string client_id_;
  std::function<std::unique_ptr<Task>(TaskKey)> make_task_;
  std::function<void()> on_applied_;
  RdKafkaHandle consumer_;
  std::map<TaskKey, Standby> tasks_;
  std::set<TaskKey> fresh_;  // opened since warmups_caught_up() last said true
  // Held exclusively while standbys come and go, shared by queries; the thread itself reads
  // tasks_ without it.
  mutable WriterPreferringSharedMutex tasks_mutex_;
  std::map<std::pair<std::string, int32_t>, Position> positions_;  // changelog partition
};

}  // namespace oxbow::streams::detail
