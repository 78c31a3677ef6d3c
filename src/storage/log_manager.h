#pragma once
// All partition logs of the broker, spread over `log.dirs`, and the background work on them:
// the flusher (group commit: every flush request that arrives while an fdatasync runs is served by
// the next one), housekeeping (retention, time-based rolls, flush.ms) and the cleaner
// (compaction of logs with cleanup.policy=compact).
//
// Each log dir holds one directory per partition, `<topic>-<partition>`, and, while the broker
// runs cleanly shut down, a `.oxbow_clean_shutdown` marker: present at start-up means no log needs
// recovery; it is removed at start-up and written back by a clean shutdown.
#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "storage/log_config.h"

namespace oxbow::storage {

class PartitionLog;

struct LogManagerOptions {
  std::vector<std::string> log_dirs;
  int64_t retention_check_interval_ms = 300000;  // log.retention.check.interval.ms
  bool cleaner_enabled = true;                   // log.cleaner.enable
  int64_t cleaner_backoff_ms = 15000;            // log.cleaner.backoff.ms
  size_t cleaner_key_map_bytes = 128 << 20;      // log.cleaner.dedupe.buffer.size
  int recovery_threads_per_dir = 1;              // num.recovery.threads.per.data.dir
};

// A partition log to open at start-up, with the config it is opened with.
struct LogToOpen {
  std::string topic;
  int32_t partition = 0;
  LogConfig config;
};

class LogManager {
 public:
  explicit LogManager(LogManagerOptions options);
  ~LogManager();

  // Creates the log dirs, notes whether the last shutdown was clean, and finds existing
  // partitions. Returns false with `error` set when a log dir is unusable.
  bool start(std::string& error);
  // (topic, partition) pairs found on disk at start().
  std::vector<std::pair<std::string, int32_t>> existing_partitions() const;
  bool last_shutdown_clean() const { return clean_; }

  // Opens (recovering if needed) or creates the partition's log.
  std::shared_ptr<PartitionLog> open_log(const std::string& topic, int32_t partition,
                                         const LogConfig& config, std::string& error);
  // Opens many logs at once (each partition named once), in the order given; one already open
  // is returned as it is. After an unclean shutdown each log dir's logs
  // are recovered by recovery_threads_per_dir threads of their own, as Kafka's per-dir pools do.
  // Empty, with `error` from the first that failed, when any fails.
  std::vector<std::shared_ptr<PartitionLog>> open_logs(const std::vector<LogToOpen>& wanted,
                                                       std::string& error);
  std::shared_ptr<PartitionLog> get(const std::string& topic, int32_t partition) const;
  void delete_log(const std::string& topic, int32_t partition);

  // Asks the flusher to make the log durable soon (waiters are woken when it is).
  void request_flush(const std::shared_ptr<PartitionLog>& log);
  // Runs retention and rolls now (tests, admin), as housekeeping does periodically.
  void run_housekeeping(int64_t now_ms);
  // One cleaner round over every log; returns how many were compacted.
  int run_cleaner(int64_t now_ms);

  // Stops background threads, flushes and closes every log, writes the clean-shutdown markers.
  void shutdown();

  const std::vector<std::string>& log_dirs() const { return options_.log_dirs; }

 private:
  void flusher_loop();
  void housekeeping_loop();
  void cleaner_loop();
  std::vector<std::shared_ptr<PartitionLog>> all_logs() const;
  std::string pick_dir_for_new_log() const;
  // Where the partition's log lives (found at start() or placed now) and that log dir.
  std::pair<std::string, std::string> place_locked(const std::string& topic, int32_t partition);

  LogManagerOptions options_;
  bool clean_ = false;
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int32_t>, std::shared_ptr<PartitionLog>> logs_;
  std::map<std::pair<std::string, int32_t>, std::string> found_dirs_;
  std::map<std::string, int> logs_per_dir_;

  std::mutex flush_mutex_;
  std::condition_variable flush_cv_;
  std::vector<std::shared_ptr<PartitionLog>> flush_queue_;
  std::mutex housekeeping_mutex_;
  std::condition_variable housekeeping_cv_;
  std::atomic<bool> stopping_{false};
  bool started_ = false;
  std::thread flusher_;
  std::thread housekeeper_;
  std::thread cleaner_;
};

}  // namespace oxbow::storage
