#include "storage/partition_log.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <sstream>

#include <spdlog/spdlog.h>

#include "common/clock.h"
#include "protocol/batch_builder.h"
#include "protocol/record_batch.h"

#include "storage/file.h"
#include "storage/probe.h"
#include "storage/segment.h"

namespace oxbow::storage {

namespace fs = std::filesystem;
namespace pr = oxbow::protocol;
using pr::ErrorCode;

StorageProbe& probe() {
  static StorageProbe instance;
  return instance;
}

namespace {

constexpr const char* kEpochCheckpoint = "leader-epoch-checkpoint";
constexpr int64_t kNoTimestamp = -1;

// Calls `visit(index, record)` for each record of the append's data batches, indexes counted over
// all of them.
template <typename Visitor>
void for_each_record(std::span<const uint8_t> records, Visitor visit) {
  std::string scratch;
  std::vector<pr::RawRecord> parsed;
  int32_t index = 0;
  for (size_t pos = 0; pos < records.size();) {
    auto h = pr::read_batch_header(records.data() + pos);
    parsed.clear();
    if (!h.is_control() &&
        pr::parse_raw_records(records.subspan(pos, h.total_size()), scratch, parsed)) {
      for (const auto& r : parsed) visit(index++, r.view);
    }
    pos += h.total_size();
  }
}

// What Kafka checks of each record a client sends, before writing any (it may decompress whole
// batches, so it runs outside the log's lock, once for both checks): on a compacted topic a record
// needs a key, since compaction could never replace it; with CreateTime, a timestamp within
// message.timestamp.difference.max.ms of the broker's clock.
void check_records(std::span<const uint8_t> records, const LogConfig& config, int64_t now_ms,
                   AppendResult& result) {
  bool check_keys = config.compact;
  bool check_timestamps = !config.log_append_time && config.timestamp_difference_max_ms != kNever;
  if (!check_keys && !check_timestamps) return;
  auto max_gap = static_cast<uint64_t>(config.timestamp_difference_max_ms);
  auto too_far = [&](int64_t timestamp) {
    if (timestamp == kNoTimestamp) return false;
    // In unsigned arithmetic, so that no client timestamp can overflow it.
    auto ts = static_cast<uint64_t>(timestamp), now = static_cast<uint64_t>(now_ms);
    return (timestamp > now_ms ? ts - now : now - ts) > max_gap;
  };
  std::vector<int32_t> keyless, out_of_range;
  for_each_record(records, [&](int32_t index, const pr::RecordView& r) {
    if (check_keys && !r.key) keyless.push_back(index);
    if (check_timestamps && too_far(r.timestamp)) out_of_range.push_back(index);
  });
  auto refuse = [&](const std::vector<int32_t>& failing, ErrorCode error, const char* why) {
    result.error = error;
    for (int32_t index : failing) result.record_errors.push_back({index, why});
  };
  if (!keyless.empty()) {
    refuse(keyless, ErrorCode::kInvalidRecord, "a compacted topic takes no record without a key");
  } else if (!out_of_range.empty()) {
    refuse(out_of_range, ErrorCode::kInvalidTimestamp,
           "timestamp further from the broker's clock than message.timestamp.difference.max.ms");
  }
}

void wake_all(std::vector<std::shared_ptr<Wakeable>>& waiters) {
  for (auto& w : waiters) w->wake();
}

}  // namespace

PartitionLog::PartitionLog(std::string dir, const LogConfig& config)
    : dir_(std::move(dir)), config_(config) {}

PartitionLog::~PartitionLog() = default;

std::unique_ptr<PartitionLog> PartitionLog::open(const std::string& dir, const LogConfig& config,
                                                 bool clean, std::string& error) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    error = dir + ": " + ec.message();
    return nullptr;
  }
  std::unique_ptr<PartitionLog> log(new PartitionLog(dir, config));
  if (!clean) {
    if (!log->load(false, error)) return nullptr;
    log->loaded_ = true;
  }
  return log;
}

bool PartitionLog::ensure_loaded_locked() const {
  if (loaded_) return true;
  loaded_ = true;
  std::string error;
  // Loading fills in state that every accessor reports; it is invisible to callers otherwise.
  if (!const_cast<PartitionLog*>(this)->load(true, error)) {
    spdlog::error("cannot load log {}: {}", dir_, error);
    return false;
  }
  return true;
}

bool PartitionLog::load(bool clean, std::string& error) {
  finish_interrupted_cleaning(dir_);
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    auto name = entry.path().filename().string();
    if (name.size() != 24 || !name.ends_with(".log")) continue;
    try {
      int64_t base = std::stoll(name.substr(0, 20));
      uint64_t size = entry.file_size(ec);
      segments_[base] = Segment::existing(dir_, base, ec ? 0 : size, config_.index_interval_bytes);
    } catch (...) {
    }
  }
  if (ec) {
    error = dir_ + ": " + ec.message();
    return false;
  }
  if (segments_.empty()) {
    auto segment = Segment::create(dir_, 0, config_.index_interval_bytes, error);
    if (!segment) return false;
    segments_[0] = segment;
  }
  active_ = segments_.rbegin()->second;
  active_since_ms_ = oxbow::now_ms();
  if (clean) {
    active_->load_tail();
  } else {
    probe().recovered_bytes_truncated.add(active_->recover());
  }
  log_start_offset_ = segments_.begin()->first;
  log_end_offset_ = active_->next_offset();
  std::string start_text;
  if (read_whole_file(dir_ + "/" + kLogStartFile, start_text)) {
    try {
      log_start_offset_ =
          std::clamp<int64_t>(std::stoll(start_text), log_start_offset_, log_end_offset_);
    } catch (...) {
    }
  }
  high_watermark_ = log_end_offset_;
  flushed_offset_ = log_end_offset_;

  std::string text;
  if (read_whole_file(dir_ + "/" + kEpochCheckpoint, text)) {
    std::istringstream in(text);
    int version = 0, count = 0;
    in >> version >> count;
    for (int i = 0; i < count; ++i) {
      int32_t epoch;
      int64_t start;
      if (in >> epoch >> start) epochs_.emplace_back(epoch, start);
    }
  }
  if (epochs_.empty()) {
    epochs_.emplace_back(0, log_start_offset_);
    write_leader_epoch_checkpoint(false);
  }
  leader_epoch_ = epochs_.back().first;
  load_producer_state();
  return true;
}

void PartitionLog::write_leader_epoch_checkpoint(bool durable) {
  std::ostringstream out;
  out << "0\n" << epochs_.size() << "\n";
  for (auto& [epoch, start] : epochs_) out << epoch << " " << start << "\n";
  std::string error;
  write_file_atomically(dir_ + "/" + kEpochCheckpoint, out.str(), error, durable);
}

void PartitionLog::set_config(const LogConfig& config) {
  std::lock_guard lock(mutex_);
  config_ = config;
}

LogConfig PartitionLog::config() const {
  std::lock_guard lock(mutex_);
  return config_;
}

bool PartitionLog::roll_locked(int64_t now_ms, std::string& error) {
  (void)now_ms;
  auto segment = Segment::create(dir_, log_end_offset_, config_.index_interval_bytes, error);
  if (!segment) return false;
  active_->seal();
  unflushed_rolled_.push_back(active_);
  segments_[log_end_offset_] = segment;
  active_ = segment;
  return true;
}

AppendResult PartitionLog::append(std::span<uint8_t> records, int64_t now_ms, AppendOrigin origin) {
  AppendResult result;
  pr::BatchesSummary summary;
  result.error = pr::validate_batches(records, summary);
  if (result.error != ErrorCode::kNone) return result;

  if (origin == AppendOrigin::kClient) {
    check_records(records, config(), now_ms, result);
    if (result.error != ErrorCode::kNone) return result;
  }
  std::vector<std::shared_ptr<Wakeable>> to_wake;
  {
    std::lock_guard lock(mutex_);
    if (!ensure_loaded_locked()) {
      result.error = ErrorCode::kKafkaStorageError;
      return result;
    }
    for (size_t pos = 0; pos < records.size();) {
      auto h = pr::read_batch_header(records.data() + pos);
      if (h.total_size() > static_cast<size_t>(config_.max_message_bytes)) {
        result.error = ErrorCode::kMessageTooLarge;
        result.message = fmt::format("record batch of {} bytes exceeds max.message.bytes ({})",
                                     h.total_size(), config_.max_message_bytes);
        return result;
      }
      if (h.is_control() && origin == AppendOrigin::kClient) {
        result.error = ErrorCode::kInvalidRecord;  // only coordinators write markers
        return result;
      }
      pos += h.total_size();
    }
    // As Kafka: what one append writes must fit in one segment.
    if (records.size() > static_cast<uint64_t>(config_.segment_bytes)) {
      result.error = ErrorCode::kRecordListTooLarge;
      result.message = fmt::format("record batch of {} bytes exceeds segment.bytes ({})",
                                   records.size(), config_.segment_bytes);
      return result;
    }
    if (!check_producer_locked(records, summary.batch_count, origin, result)) return result;
    if (!append_locked(records, summary, now_ms, result, to_wake)) return result;
    if (auto h = pr::read_batch_header(records.data()); h.producer_id >= 0) {
      producers_.update(h.producer_id, h.producer_epoch, h.base_sequence, h.record_count,
                        result.base_offset, result.last_offset, h.max_timestamp,
                        h.is_transactional());
    }
    result.wait_for_flush = unflushed_messages_ >= config_.flush_messages;
  }
  wake_all(to_wake);
  return result;
}

bool PartitionLog::append_locked(std::span<uint8_t> records, const pr::BatchesSummary& summary,
                                 int64_t now_ms, AppendResult& result,
                                 std::vector<std::shared_ptr<Wakeable>>& to_wake) {
  bool full = active_->size() + records.size() > static_cast<uint64_t>(config_.segment_bytes);
  bool old = now_ms - active_since_ms_ >= config_.segment_ms;
  if (!active_->empty() && (full || old)) {
    std::string error;
    if (!roll_locked(now_ms, error)) {
      result.error = ErrorCode::kKafkaStorageError;
      return false;
    }
  }
  if (active_->empty()) active_since_ms_ = now_ms;
  int64_t append_time = config_.log_append_time ? now_ms : -1;
  pr::assign_offsets(records, log_end_offset_, leader_epoch_, append_time);
  int64_t last = log_end_offset_ + summary.record_count - 1;
  int64_t max_ts = config_.log_append_time ? now_ms : summary.max_timestamp;
  if (!active_->append(records.data(), records.size(), last, max_ts)) {
    result.error = ErrorCode::kKafkaStorageError;
    return false;
  }
  result.base_offset = log_end_offset_;
  result.last_offset = last;
  result.log_append_time_ms = append_time;
  result.log_start_offset = log_start_offset_;
  log_end_offset_ = last + 1;
  high_watermark_ = log_end_offset_;
  unflushed_messages_ += summary.record_count;
  for (auto& weak : data_waiters_) {
    if (auto w = weak.lock()) to_wake.push_back(std::move(w));
  }
  data_waiters_.clear();
  data_waiters_pruned_size_ = 0;
  return true;
}

AppendResult PartitionLog::write_marker(int64_t producer_id, int16_t epoch, bool commit,
                                        int32_t coordinator_epoch, int64_t now_ms) {
  AppendResult result;
  auto batch = pr::build_control_batch({producer_id, epoch, -1, true},
                                       commit ? pr::ControlType::kCommit : pr::ControlType::kAbort,
                                       coordinator_epoch, now_ms);
  pr::BatchesSummary summary{1, 1, now_ms};
  std::vector<std::shared_ptr<Wakeable>> to_wake;
  {
    std::lock_guard lock(mutex_);
    if (!ensure_loaded_locked()) {
      result.error = ErrorCode::kKafkaStorageError;
      return result;
    }
    if (!producers_.check_marker(producer_id, epoch)) {
      result.error = ErrorCode::kInvalidProducerEpoch;
      return result;
    }
    if (!append_locked(batch, summary, now_ms, result, to_wake)) return result;
    producers_.complete_transaction(producer_id, epoch, commit, coordinator_epoch,
                                    result.last_offset);
    result.wait_for_flush = unflushed_messages_ >= config_.flush_messages;
  }
  wake_all(to_wake);
  return result;
}

ReadResult PartitionLog::read(int64_t offset, int32_t max_bytes, bool min_one_batch,
                              bool committed_only) {
  ReadResult result;
  std::lock_guard lock(mutex_);
  if (!ensure_loaded_locked()) {
    result.error = ErrorCode::kKafkaStorageError;
    return result;
  }
  result.high_watermark = high_watermark_;
  result.last_stable_offset = producers_.last_stable_offset(high_watermark_);
  result.log_start_offset = log_start_offset_;
  if (offset < log_start_offset_ || offset > high_watermark_) {
    result.error = ErrorCode::kOffsetOutOfRange;
    return result;
  }
  int64_t upper = committed_only ? result.last_stable_offset : high_watermark_;
  if (offset >= upper || max_bytes <= 0) return result;
  if (committed_only) result.aborted = producers_.aborted_between(offset, upper);
  auto it = segments_.upper_bound(offset);
  if (it != segments_.begin()) --it;
  for (; it != segments_.end(); ++it) {
    auto& segment = it->second;
    uint64_t pos = segment->position_of(offset);
    uint64_t limit = segment->size();
    // An open transaction starts at a batch boundary: stop before it.
    auto next = std::next(it);
    if (upper < high_watermark_ && (next == segments_.end() || upper < next->first)) {
      limit = std::min(limit, segment->position_of(upper));
    }
    if (pos >= limit) continue;
    uint64_t length = std::min<uint64_t>(limit - pos, static_cast<uint64_t>(max_bytes));
    // A read cut by max_bytes ends at the last whole batch: a partial one at the end would only be
    // sent, dropped by the client and fetched again (Kafka sends it; we need not).
    if (length < limit - pos) {
      uint64_t boundary = segment->last_boundary_before(pos, pos + length);
      if (boundary > pos) length = boundary - pos;
    }
    auto file = segment->log_file();
    if (!file) {
      result.error = ErrorCode::kKafkaStorageError;
      return result;
    }
    if (min_one_batch && limit - pos > static_cast<uint64_t>(max_bytes)) {
      uint8_t overhead[pr::kBatchLogOverhead];
      if (::pread(file->fd(), overhead, sizeof(overhead), static_cast<off_t>(pos)) ==
          static_cast<ssize_t>(sizeof(overhead))) {
        int64_t base;
        int32_t batch_length;
        pr::read_log_overhead(overhead, base, batch_length);
        uint64_t first = pr::kBatchLogOverhead + static_cast<uint64_t>(std::max(batch_length, 0));
        length = std::min(limit - pos, std::max(length, first));
      }
    }
    result.slice = pr::FileSlice{file->fd(), pos, static_cast<uint32_t>(length), file};
    return result;
  }
  return result;
}

std::optional<pr::OffsetAndTimestamp> PartitionLog::offset_for_timestamp(int64_t ts) {
  std::lock_guard lock(mutex_);
  ensure_loaded_locked();
  for (auto& [base, segment] : segments_) {
    if (auto found = segment->offset_for_timestamp(ts)) {
      if (found->offset < log_start_offset_) found->offset = log_start_offset_;
      return found;
    }
  }
  return std::nullopt;
}

std::optional<pr::OffsetAndTimestamp> PartitionLog::largest_timestamp_record() {
  std::lock_guard lock(mutex_);
  ensure_loaded_locked();
  std::shared_ptr<Segment> best;
  for (auto& [base, segment] : segments_) {
    if (!best || segment->max_timestamp() > best->max_timestamp()) best = segment;
  }
  if (!best || best->max_timestamp() < 0) return std::nullopt;
  return best->largest_timestamp_record();
}

int64_t PartitionLog::log_start_offset() const {
  std::lock_guard lock(mutex_);
  ensure_loaded_locked();
  return log_start_offset_;
}

int64_t PartitionLog::log_end_offset() const {
  std::lock_guard lock(mutex_);
  ensure_loaded_locked();
  return log_end_offset_;
}

int64_t PartitionLog::high_watermark() const {
  std::lock_guard lock(mutex_);
  ensure_loaded_locked();
  return high_watermark_;
}

int64_t PartitionLog::flushed_offset() const {
  std::lock_guard lock(mutex_);
  ensure_loaded_locked();
  return flushed_offset_;
}

uint64_t PartitionLog::size_bytes() const {
  std::lock_guard lock(mutex_);
  ensure_loaded_locked();
  uint64_t total = 0;
  for (auto& [base, segment] : segments_) total += segment->size();
  return total;
}

std::pair<int32_t, int64_t> PartitionLog::end_offset_for_epoch(int32_t epoch) const {
  std::lock_guard lock(mutex_);
  ensure_loaded_locked();
  // The end of an epoch is the start of the next larger one, or the log end for the latest.
  for (size_t i = 0; i < epochs_.size(); ++i) {
    if (epochs_[i].first > epoch) {
      if (i == 0) return {-1, -1};
      return {epochs_[i - 1].first, epochs_[i].second};
    }
  }
  if (epochs_.empty()) return {-1, -1};
  return {epochs_.back().first, log_end_offset_};
}

int32_t PartitionLog::leader_epoch() const {
  std::lock_guard lock(mutex_);
  ensure_loaded_locked();
  return leader_epoch_;
}

bool PartitionLog::needs_flush(int64_t now_ms) const {
  std::lock_guard lock(mutex_);
  if (!loaded_) return false;
  if (!flush_waiters_.empty() || !unflushed_rolled_.empty()) return true;
  if (unflushed_messages_ == 0) return false;
  if (unflushed_messages_ >= config_.flush_messages) return true;
  return config_.flush_ms != kNever && now_ms - last_flush_ms_ >= config_.flush_ms;
}

bool PartitionLog::flush() {
  std::lock_guard serial(flush_mutex_);
  std::shared_ptr<Segment> active;
  std::vector<std::shared_ptr<Segment>> rolled;
  int64_t target;
  {
    std::lock_guard lock(mutex_);
    if (!loaded_ || !active_) return true;
    target = log_end_offset_;
    active = active_;
    rolled.swap(unflushed_rolled_);
    unflushed_messages_ = 0;
  }
  bool ok = true;
  auto started = std::chrono::steady_clock::now();
  for (auto& segment : rolled) ok = segment->flush() && ok;
  ok = active->flush() && ok;
  probe().flush_seconds.observe(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  probe().flushes.add();
  if (!rolled.empty()) sync_directory(dir_);
  std::vector<std::shared_ptr<Wakeable>> to_wake;
  {
    std::lock_guard lock(mutex_);
    if (!ok) return false;
    flushed_offset_ = std::max(flushed_offset_, target);
    last_flush_ms_ = oxbow::now_ms();
    auto end = flush_waiters_.lower_bound(flushed_offset_);
    for (auto it = flush_waiters_.begin(); it != end; ++it) {
      if (auto w = it->second.lock()) to_wake.push_back(std::move(w));
    }
    flush_waiters_.erase(flush_waiters_.begin(), end);
  }
  wake_all(to_wake);
  return true;
}

void PartitionLog::wait_flushed(int64_t offset, const std::shared_ptr<Wakeable>& waiter) {
  {
    std::lock_guard lock(mutex_);
    if (flushed_offset_ <= offset) {
      flush_waiters_.emplace(offset, waiter);
      return;
    }
  }
  waiter->wake();
}

void PartitionLog::wait_for_data(const std::shared_ptr<Wakeable>& waiter) {
  std::lock_guard lock(mutex_);
  // Drop waiters that gave up once the list has doubled since the last pruning.
  if (data_waiters_.size() >= 2 * data_waiters_pruned_size_ + 16) {
    std::erase_if(data_waiters_, [](const auto& w) { return w.expired(); });
    data_waiters_pruned_size_ = data_waiters_.size();
  }
  data_waiters_.push_back(waiter);
}

void PartitionLog::close() {
  flush();
  std::lock_guard lock(mutex_);
  if (loaded_ && active_) {
    active_->seal();
    write_producer_snapshot();
  }
}

void PartitionLog::destroy() {
  std::lock_guard lock(mutex_);
  segments_.clear();
  active_.reset();
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

}  // namespace oxbow::storage
