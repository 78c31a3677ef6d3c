#pragma once
// A stream thread's restoration of its active tasks' stores from their changelogs (or a source
// table's topic), as Kafka Streams' StoreChangelogReader: a restore consumer of its own, what
// each store still has to read, and the end of a changelog under exactly-once. It runs beside
// processing: the stream thread gives it a slice of about kRestoreTurnMs at a time while ready
// tasks process, and a task's input stays paused until all its stores caught up.
#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "streams/runtime/fetch_restarter.h"
#include "streams/runtime/kafka_clients.h"
#include "streams/runtime/task.h"
#include "streams/runtime/thread_config.h"
#include "streams/runtime/thread_metrics.h"

namespace oxbow::streams::detail {

class ChangelogReader {
 public:
  // Restoration and the ready tasks' records take turns of about this long while both have work.
  static constexpr int64_t kRestoreTurnMs = 50;

  // `main_consumer` reads the group's committed offsets (a source table restores up to its
  // input's); `on_restored` is called with each task whose stores have all caught up.
  ChangelogReader(const ThreadConfig& config, rd_kafka_t* main_consumer, ThreadMetrics& metrics,
                  std::function<void(Task*)> on_restored);
  ~ChangelogReader();
  ChangelogReader(const ChangelogReader&) = delete;
  ChangelogReader& operator=(const ChangelogReader&) = delete;

  // New tasks' stores start restoring from what their local state reflects; those already up to
  // date with their changelogs do not.
  void register_tasks(const std::vector<Task*>& tasks);
  // A task closed: its stores stop restoring. Whether it was restoring (then reassign()).
  bool unregister(Task* task);
  // The restore consumer's assignment: every changelog partition still restoring, from where it
  // stands.
  void reassign();
  // One slice of restoration. True when it restored the last store that was restoring.
  bool restore();
  // Whether any store is restoring.
  bool restoring() const { return !restoring_.empty(); }
  // Whether the task still has stores restoring.
  bool restoring(const Task* task) const {
    return !pending_stores_.empty() && pending_stores_.count(task) > 0;
  }
  std::vector<Task*> restoring_tasks() const;
  // The next offset the store restoring from this changelog partition reads (0 before any), or
  // nullopt when none is restoring from it.
  std::optional<int64_t> position(const std::string& topic, int32_t partition) const;
  // On the way out.
  void close();

 private:
  struct RestoreTarget {
    Task* task;
    std::string store;
    int64_t position;  // next changelog offset to read; RD_KAFKA_OFFSET_BEGINNING at first
    int64_t end = -1;  // where restoration stops; -1: the end of the log
  };
  bool open_transaction_ahead(const std::pair<std::string, int32_t>& partition, int64_t end);
  // The changelog partition was read up to next_offset: its store is restored.
  void finish_store_restoration(const std::pair<std::string, int32_t>& partition,
                                int64_t next_offset);

  const ThreadConfig& config_;
  rd_kafka_t* main_consumer_;
  ThreadMetrics& metrics_;
  std::function<void(Task*)> on_restored_;
  RdKafkaHandle restorer_;
  std::unique_ptr<FetchRestarter> restarter_;
  std::map<std::pair<std::string, int32_t>, RestoreTarget> restoring_;  // changelog partition
  std::map<Task*, int, std::less<>> pending_stores_;                    // tasks still restoring
  std::set<std::pair<std::string, int32_t>> waiting_on_transaction_;    // logged once each
  std::chrono::steady_clock::time_point restore_started_;
  int64_t restored_ = 0, to_restore_ = 0;
  size_t restore_stores_ = 0;
};

}  // namespace oxbow::streams::detail
