#include "storage/log_manager.h"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include "common/clock.h"
#include "storage/file.h"
#include "storage/file_cache.h"
#include "storage/partition_log.h"

namespace oxbow::storage {

namespace fs = std::filesystem;

namespace {

constexpr const char* kCleanMarker = ".oxbow_clean_shutdown";

}  // namespace

LogManager::LogManager(LogManagerOptions options) : options_(std::move(options)) {}

LogManager::~LogManager() {
  shutdown();
}

namespace {

// Partition logs open their files on demand, within a budget derived from the descriptor limit
// (raised to its hard maximum), leaving half for connections.
void size_file_budget() {
  struct rlimit limit;
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
  }
  size_t usable = limit.rlim_cur == RLIM_INFINITY ? 1 << 20 : static_cast<size_t>(limit.rlim_cur);
  FileCache::instance().set_budget(std::max<size_t>(64, usable / 2));
}

// Opens the logs at `dirs[i]` for every i of each group, each group by up to `threads` threads of
// its own; false, with the first error, when any fails (the rest are then not attempted).
bool open_in_parallel(const std::map<std::string, std::vector<size_t>>& groups,
                      const std::vector<std::string>& dirs, const std::vector<LogToOpen>& wanted,
                      size_t threads, bool clean, std::vector<std::shared_ptr<PartitionLog>>& out,
                      std::string& error) {
  std::mutex error_mutex;
  std::atomic<bool> failed{false};
  auto open_from = [&](const std::vector<size_t>& indexes, std::atomic<size_t>& next) {
    for (size_t at = next++; at < indexes.size() && !failed; at = next++) {
      size_t i = indexes[at];
      std::string own_error;
      out[i] = PartitionLog::open(dirs[i], wanted[i].config, clean, own_error);
      if (!out[i] && !failed.exchange(true)) {
        std::lock_guard lock(error_mutex);
        error = own_error;
      }
    }
  };
  std::vector<std::unique_ptr<std::atomic<size_t>>> cursors;
  std::vector<std::thread> workers;
  for (const auto& [group, indexes] : groups) {
    cursors.push_back(std::make_unique<std::atomic<size_t>>(0));
    for (size_t t = 0; t < std::min(threads, indexes.size()); ++t)
      workers.emplace_back(open_from, std::cref(indexes), std::ref(*cursors.back()));
  }
  for (auto& worker : workers) worker.join();
  return !failed;
}

}  // namespace

bool LogManager::start(std::string& error) {
  size_file_budget();
  clean_ = true;
  for (const auto& dir : options_.log_dirs) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) {
      error = "log.dirs: cannot create " + dir + ": " + ec.message();
      return false;
    }
    std::string marker = dir + "/" + kCleanMarker;
    bool has_partitions = false;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      if (!entry.is_directory()) continue;
      auto name = entry.path().filename().string();
      auto dash = name.rfind('-');
      if (dash == std::string::npos || dash == 0 || dash + 1 == name.size()) continue;
      try {
        size_t used = 0;
        int32_t partition = std::stoi(name.substr(dash + 1), &used);
        if (used != name.size() - dash - 1 || partition < 0) continue;
        found_dirs_[{name.substr(0, dash), partition}] = entry.path().string();
        has_partitions = true;
      } catch (...) {
      }
    }
    if (has_partitions && !fs::exists(marker)) clean_ = false;
    fs::remove(marker, ec);
  }
  sync_directory(options_.log_dirs.front());
  started_ = true;
  flusher_ = std::thread([this] { flusher_loop(); });
  housekeeper_ = std::thread([this] { housekeeping_loop(); });
  if (options_.cleaner_enabled) cleaner_ = std::thread([this] { cleaner_loop(); });
  return true;
}

std::vector<std::pair<std::string, int32_t>> LogManager::existing_partitions() const {
  std::lock_guard lock(mutex_);
  std::vector<std::pair<std::string, int32_t>> out;
  for (auto& [key, dir] : found_dirs_) out.push_back(key);
  return out;
}

std::string LogManager::pick_dir_for_new_log() const {
  std::string best = options_.log_dirs.front();
  for (const auto& dir : options_.log_dirs) {
    auto count = [&](const std::string& d) {
      auto it = logs_per_dir_.find(d);
      return it == logs_per_dir_.end() ? 0 : it->second;
    };
    if (count(dir) < count(best)) best = dir;
  }
  return best;
}

std::pair<std::string, std::string> LogManager::place_locked(const std::string& topic,
                                                             int32_t partition) {
  if (auto it = found_dirs_.find({topic, partition}); it != found_dirs_.end()) {
    return {it->second, fs::path(it->second).parent_path().string()};
  }
  auto parent = pick_dir_for_new_log();
  return {parent + "/" + topic + "-" + std::to_string(partition), parent};
}

std::shared_ptr<PartitionLog> LogManager::open_log(const std::string& topic, int32_t partition,
                                                   const LogConfig& config, std::string& error) {
  std::lock_guard lock(mutex_);
  if (auto it = logs_.find({topic, partition}); it != logs_.end()) return it->second;
  auto [dir, parent] = place_locked(topic, partition);
  std::shared_ptr<PartitionLog> log = PartitionLog::open(dir, config, clean_, error);
  if (log) {
    logs_[{topic, partition}] = log;
    logs_per_dir_[parent]++;
  }
  return log;
}

std::vector<std::shared_ptr<PartitionLog>> LogManager::open_logs(
    const std::vector<LogToOpen>& wanted, std::string& error) {
  std::vector<std::shared_ptr<PartitionLog>> out(wanted.size());
  std::vector<std::string> dirs(wanted.size());
  std::map<std::string, std::vector<size_t>> by_parent;
  int64_t started_ms = oxbow::now_ms();
  size_t on_disk = 0;  // the logs a crash leaves to recover; new ones are only created
  {
    std::lock_guard lock(mutex_);
    for (size_t i = 0; i < wanted.size(); ++i) {
      if (auto it = logs_.find({wanted[i].topic, wanted[i].partition}); it != logs_.end()) {
        out[i] = it->second;
        continue;
      }
      auto [dir, parent] = place_locked(wanted[i].topic, wanted[i].partition);
      dirs[i] = dir;
      by_parent[parent].push_back(i);
      logs_per_dir_[parent]++;  // now, so that the next new log is placed knowing of this one
      on_disk += found_dirs_.count({wanted[i].topic, wanted[i].partition});
    }
  }
  // A clean log is only opened here (it loads on first use); a recovering one reads its tail.
  size_t threads = clean_ ? 1 : static_cast<size_t>(std::max(1, options_.recovery_threads_per_dir));
  if (!open_in_parallel(by_parent, dirs, wanted, threads, clean_, out, error)) return {};
  if (!clean_ && on_disk > 0) {
    spdlog::info("recovered {} logs in {} ms, {} threads per log dir", on_disk,
                 oxbow::now_ms() - started_ms, threads);
  }
  std::lock_guard lock(mutex_);
  for (const auto& [parent, indexes] : by_parent) {
    for (size_t i : indexes) logs_[{wanted[i].topic, wanted[i].partition}] = out[i];
  }
  return out;
}

std::shared_ptr<PartitionLog> LogManager::get(const std::string& topic, int32_t partition) const {
  std::lock_guard lock(mutex_);
  auto it = logs_.find({topic, partition});
  return it == logs_.end() ? nullptr : it->second;
}

void LogManager::delete_log(const std::string& topic, int32_t partition) {
  std::shared_ptr<PartitionLog> log;
  {
    std::lock_guard lock(mutex_);
    auto key = std::make_pair(topic, partition);
    if (auto it = logs_.find(key); it != logs_.end()) {
      log = it->second;
      logs_.erase(it);
    }
    if (auto it = found_dirs_.find(key); it != found_dirs_.end()) {
      if (!log) {
        std::error_code ec;
        fs::remove_all(it->second, ec);
      }
      found_dirs_.erase(it);
    }
  }
  if (log) log->destroy();
}

void LogManager::request_flush(const std::shared_ptr<PartitionLog>& log) {
  {
    std::lock_guard lock(flush_mutex_);
    flush_queue_.push_back(log);
  }
  flush_cv_.notify_one();
}

void LogManager::flusher_loop() {
  std::vector<std::shared_ptr<PartitionLog>> batch;
  while (true) {
    {
      std::unique_lock lock(flush_mutex_);
      flush_cv_.wait(lock, [&] { return stopping_ || !flush_queue_.empty(); });
      if (flush_queue_.empty() && stopping_) return;
      batch.swap(flush_queue_);
    }
    std::sort(batch.begin(), batch.end());
    batch.erase(std::unique(batch.begin(), batch.end()), batch.end());
    for (auto& log : batch) log->flush();
    batch.clear();
  }
}

std::vector<std::shared_ptr<PartitionLog>> LogManager::all_logs() const {
  std::lock_guard lock(mutex_);
  std::vector<std::shared_ptr<PartitionLog>> logs;
  logs.reserve(logs_.size());
  for (auto& [key, log] : logs_) logs.push_back(log);
  return logs;
}

int LogManager::run_cleaner(int64_t now) {
  int cleaned = 0;
  for (auto& log : all_logs()) {
    if (stopping_) break;
    if (log->clean(now, false, options_.cleaner_key_map_bytes).cleaned) ++cleaned;
  }
  return cleaned;
}

void LogManager::cleaner_loop() {
  while (!stopping_) {
    // After a round that compacted something, look again at once: more may be due.
    if (run_cleaner(now_ms()) > 0) continue;
    std::unique_lock lock(housekeeping_mutex_);
    housekeeping_cv_.wait_for(lock, std::chrono::milliseconds(options_.cleaner_backoff_ms),
                              [&] { return stopping_.load(); });
  }
}

void LogManager::run_housekeeping(int64_t now) {
  for (auto& log : all_logs()) {
    log->maybe_roll(now);
    log->apply_retention(now);
  }
}

void LogManager::housekeeping_loop() {
  int64_t last_retention = now_ms();
  while (!stopping_) {
    {
      std::unique_lock lock(housekeeping_mutex_);
      housekeeping_cv_.wait_for(lock, std::chrono::milliseconds(200),
                                [&] { return stopping_.load(); });
    }
    if (stopping_) return;
    int64_t now = now_ms();
    for (auto& log : all_logs()) {
      if (log->needs_flush(now)) request_flush(log);
    }
    if (now - last_retention >= options_.retention_check_interval_ms) {
      last_retention = now;
      run_housekeeping(now);
    }
  }
}

void LogManager::shutdown() {
  {
    // Set under the mutexes the threads wait with, so neither can miss the wake-up between
    // checking the flag and going to sleep.
    std::scoped_lock lock(flush_mutex_, housekeeping_mutex_);
    if (stopping_.exchange(true) || !started_) return;
  }
  flush_cv_.notify_all();
  housekeeping_cv_.notify_all();
  if (flusher_.joinable()) flusher_.join();
  if (housekeeper_.joinable()) housekeeper_.join();
  if (cleaner_.joinable()) cleaner_.join();
  std::lock_guard lock(mutex_);
  for (auto& [key, log] : logs_) log->close();
  for (const auto& dir : options_.log_dirs) {
    std::string error;
    write_file_atomically(dir + "/" + kCleanMarker, "", error);
  }
}

}  // namespace oxbow::storage
