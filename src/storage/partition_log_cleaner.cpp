// Log compaction: PartitionLog's cleaning pass and the crash-safe swap of cleaned segments.
#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "protocol/batch_builder.h"
#include "protocol/record_batch.h"
#include "storage/file.h"
#include "storage/partition_log.h"
#include "storage/probe.h"
#include "storage/segment.h"

namespace oxbow::storage {

namespace fs = std::filesystem;
namespace pr = oxbow::protocol;

namespace {

constexpr const char* kCleanerCheckpoint = "cleaner-offset-checkpoint";
constexpr const char* kCleaningDir = "cleaning";
constexpr const char* kSwapFile = "swap";
// What a key map entry costs besides its key's bytes: the node, hash bucket, string and offset.
constexpr size_t kKeyMapEntryOverhead = 64;

// Base offset of a segment file name ("<20 digits>.log|.index|.timeindex"), or -1.
int64_t segment_base(const std::string& name) {
  if (name.size() < 21 || name[20] != '.') return -1;
  auto suffix = name.substr(20);
  if (suffix != ".log" && suffix != ".index" && suffix != ".timeindex") return -1;
  try {
    return std::stoll(name.substr(0, 20));
  } catch (...) {
    return -1;
  }
}

// Which records of aborted transactions a pass must drop: producer id -> [first, last] ranges.
class AbortedRanges {
 public:
  explicit AbortedRanges(const std::vector<AbortedTransaction>& aborted) {
    for (const auto& a : aborted)
      ranges_[a.producer_id].emplace_back(a.first_offset, a.last_offset);
  }
  bool contains(int64_t producer_id, int64_t offset) const {
    auto it = ranges_.find(producer_id);
    if (it == ranges_.end()) return false;
    for (const auto& [first, last] : it->second) {
      if (offset >= first && offset <= last) return true;
    }
    return false;
  }

 private:
  std::unordered_map<int64_t, std::vector<std::pair<int64_t, int64_t>>> ranges_;
};

using KeyMap = std::unordered_map<std::string, int64_t>;  // key -> its latest dirty offset

// What a pass keeps of each batch below its end: the latest record of each key, no aborted
// records, and tombstones and transaction markers until their delete horizon. As in Kafka
// (KIP-534), that horizon is delete.retention.ms counted from the pass that first keeps them,
// stamped into their batch: the pass that removes a key's older values never removes its
// tombstone, so a consumer that read an older value before the pass and reaches the tombstone
// within delete.retention.ms after it sees the delete. (Counted from the tombstone's own
// timestamp, both could go in one pass, and such a consumer kept a deleted key for good.)
class BatchFilter {
 public:
  enum class Outcome { kDropped, kAsIs, kRebuilt };

  BatchFilter(const KeyMap& latest, const AbortedRanges& aborted, int64_t now_ms,
              int64_t delete_retention_ms)
      : latest_(latest),
        aborted_(aborted),
        now_ms_(now_ms),
        new_horizon_(delete_retention_ms > kNever - now_ms ? kNever
                                                           : now_ms + delete_retention_ms) {}

  // Batches are given in offset order, from the log's start. A batch whose records cannot be
  // read is kept as it is.
  Outcome filter(std::span<const uint8_t> batch, const pr::BatchHeader& h,
                 std::vector<uint8_t>& rebuilt) {
    if (h.is_control()) return filter_marker(batch, h, rebuilt);
    records_.clear();
    if (!pr::parse_raw_records(batch, scratch_, records_)) return Outcome::kAsIs;
    bool aborted_batch = h.is_transactional() && aborted_.contains(h.producer_id, h.base_offset);
    kept_.clear();
    bool tombstones = false;
    for (const auto& r : records_) {
      if (aborted_batch || superseded(r.view) || (is_tombstone(r.view) && horizon_passed(h))) {
        continue;
      }
      tombstones = tombstones || is_tombstone(r.view);
      kept_.push_back(r);
    }
    records_removed_ += static_cast<int64_t>(records_.size() - kept_.size());
    if (h.is_transactional() && !kept_.empty()) txn_has_data_.insert(h.producer_id);
    if (kept_.empty()) return Outcome::kDropped;
    if (tombstones && !h.has_delete_horizon()) {
      rebuilt = pr::rebuild_batch_with_delete_horizon(batch, kept_, new_horizon_);
      return Outcome::kRebuilt;
    }
    if (kept_.size() == records_.size()) return Outcome::kAsIs;
    rebuilt = pr::rebuild_batch(batch, kept_);
    return Outcome::kRebuilt;
  }

  int64_t records_removed() const { return records_removed_; }

 private:
  // A transaction's marker stays while records of its transaction do; then until its horizon.
  Outcome filter_marker(std::span<const uint8_t> batch, const pr::BatchHeader& h,
                        std::vector<uint8_t>& rebuilt) {
    bool needed = txn_has_data_.erase(h.producer_id) > 0;
    if (needed) return Outcome::kAsIs;
    if (horizon_passed(h)) return Outcome::kDropped;
    if (h.has_delete_horizon()) return Outcome::kAsIs;
    records_.clear();
    if (!pr::parse_raw_records(batch, scratch_, records_)) return Outcome::kAsIs;
    rebuilt = pr::rebuild_batch_with_delete_horizon(batch, records_, new_horizon_);
    return Outcome::kRebuilt;
  }

  static bool is_tombstone(const pr::RecordView& r) { return r.key && !r.value; }

  bool superseded(const pr::RecordView& r) const {
    if (!r.key) return false;
    auto found = latest_.find(std::string(*r.key));
    return found != latest_.end() && found->second > r.offset;
  }

  bool horizon_passed(const pr::BatchHeader& h) const {
    return h.has_delete_horizon() && now_ms_ >= h.base_timestamp;
  }

  const KeyMap& latest_;
  const AbortedRanges& aborted_;
  int64_t now_ms_;
  int64_t new_horizon_;
  std::unordered_set<int64_t> txn_has_data_;  // producers whose open transaction kept records
  std::string scratch_;
  std::vector<pr::RawRecord> records_;
  std::vector<pr::RawRecord> kept_;
  int64_t records_removed_ = 0;
};

// Writes what `filter` keeps of `group` into a new segment in `cleaning` (emptied first), sealed
// and durable; batches from `mapped_end` on (past a full key map) are copied untouched.
bool write_cleaned(const std::vector<std::shared_ptr<Segment>>& group, const std::string& cleaning,
                   int64_t mapped_end, int32_t index_interval_bytes, BatchFilter& filter,
                   CleanResult& result, std::string& error) {
  std::error_code ec;
  fs::remove_all(cleaning, ec);
  fs::create_directories(cleaning, ec);
  auto cleaned =
      Segment::create(cleaning, group.front()->base_offset(), index_interval_bytes, error);
  if (!cleaned) return false;
  bool write_failed = false;
  auto write = [&](std::span<const uint8_t> bytes, const pr::BatchHeader& h) {
    if (!cleaned->append(bytes.data(), bytes.size(), h.last_offset(), h.max_timestamp))
      write_failed = true;
    result.bytes_written += bytes.size();
  };
  std::vector<uint8_t> rebuilt;
  for (auto& segment : group) {
    segment->read_batches([&](std::span<const uint8_t> batch) {
      auto h = pr::read_batch_header(batch.data());
      result.bytes_read += batch.size();
      auto outcome = h.base_offset >= mapped_end ? BatchFilter::Outcome::kAsIs
                                                 : filter.filter(batch, h, rebuilt);
      if (outcome == BatchFilter::Outcome::kAsIs) write(batch, h);
      if (outcome == BatchFilter::Outcome::kRebuilt) write(rebuilt, h);
      return !write_failed;
    });
    if (write_failed) break;
  }
  if (write_failed || !cleaned->flush()) {
    error = "cannot write into " + cleaning;
    return false;
  }
  cleaned->seal();
  cleaned.reset();
  sync_directory(cleaning);
  return true;
}

}  // namespace

struct PartitionLog::CleanPlan {
  std::vector<std::shared_ptr<Segment>> segments;  // the cleanable ones, in order
  int64_t end = 0;                                 // first offset not cleanable
  int64_t first_dirty = 0;
  uint64_t clean_bytes = 0;
  uint64_t dirty_bytes = 0;
  bool overdue = false;  // dirty records older than max.compaction.lag.ms
  LogConfig config;
  std::vector<AbortedTransaction> aborted;
};

void finish_interrupted_cleaning(const std::string& dir) {
  std::string cleaning = dir + "/" + kCleaningDir;
  std::error_code ec;
  if (!fs::exists(cleaning, ec)) return;
  std::string text;
  int64_t base = -1, end = -1;
  if (read_whole_file(cleaning + "/" + kSwapFile, text)) {
    std::istringstream(text) >> base >> end;
  }
  std::string cleaned_log = cleaning + "/" + Segment::file_name(base, ".log");
  if (base >= 0 && end > base && fs::exists(cleaned_log, ec)) {
    spdlog::warn("{}: completing a compaction interrupted by a crash", dir);
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      int64_t b = segment_base(entry.path().filename().string());
      if (b >= base && b < end) fs::remove(entry.path(), ec);
    }
    // The .log moves last: while it is still in cleaning/, the move is not done.
    for (const char* suffix : {".index", ".timeindex", ".log"}) {
      std::string name = Segment::file_name(base, suffix);
      if (fs::exists(cleaning + "/" + name, ec))
        fs::rename(cleaning + "/" + name, dir + "/" + name, ec);
    }
    sync_directory(dir);
  }
  fs::remove_all(cleaning, ec);
}

std::optional<PartitionLog::CleanPlan> PartitionLog::plan_cleaning(int64_t now_ms) {
  std::lock_guard lock(mutex_);
  // A compacted log is loaded for the cleaner even if no client has asked for it since start-up.
  if (!config_.compact || !ensure_loaded_locked() || !active_) return std::nullopt;
  CleanPlan plan;
  plan.config = config_;
  plan.end = std::min(active_->base_offset(), producers_.last_stable_offset(high_watermark_));
  if (cleaned_up_to_ < 0) {
    std::string text;
    cleaned_up_to_ = 0;
    if (read_whole_file(dir_ + "/" + kCleanerCheckpoint, text)) {
      try {
        cleaned_up_to_ = std::stoll(text);
      } catch (...) {
      }
    }
  }
  plan.first_dirty = std::max(cleaned_up_to_, log_start_offset_);
  for (auto it = segments_.begin(); it != segments_.end(); ++it) {
    auto next = std::next(it);
    if (next == segments_.end() || next->first > plan.end) break;
    auto& segment = it->second;
    int64_t newest = segment->max_timestamp();
    if (config_.min_compaction_lag_ms > 0 && newest >= 0 &&
        now_ms - newest < config_.min_compaction_lag_ms)
      break;
    plan.segments.push_back(segment);
    if (next->first <= plan.first_dirty) {
      plan.clean_bytes += segment->size();
    } else {
      plan.dirty_bytes += segment->size();
      if (config_.max_compaction_lag_ms != kNever && newest >= 0 &&
          now_ms - newest > config_.max_compaction_lag_ms) {
        plan.overdue = true;
      }
    }
  }
  if (plan.segments.empty()) return std::nullopt;
  auto last = segments_.upper_bound(plan.segments.back()->base_offset());
  plan.end = last == segments_.end() ? plan.end : last->first;
  plan.aborted = producers_.aborted_between(log_start_offset_, plan.end);
  return plan;
}

double PartitionLog::dirty_ratio(int64_t now_ms) {
  auto plan = plan_cleaning(now_ms);
  if (!plan || plan->clean_bytes + plan->dirty_bytes == 0) return 0;
  return static_cast<double>(plan->dirty_bytes) /
         static_cast<double>(plan->clean_bytes + plan->dirty_bytes);
}

CleanResult PartitionLog::clean(int64_t now_ms, bool force, size_t key_map_bytes) {
  std::lock_guard serial(clean_mutex_);
  auto started = std::chrono::steady_clock::now();
  CleanResult result;
  auto plan = plan_cleaning(now_ms);
  if (!plan || plan->dirty_bytes == 0) return result;
  double ratio = static_cast<double>(plan->dirty_bytes) /
                 static_cast<double>(plan->clean_bytes + plan->dirty_bytes);
  if (!force && !plan->overdue && ratio < plan->config.min_cleanable_dirty_ratio) return result;

  // The latest offset of each key among the dirty records; aborted records do not count. The map
  // is bounded: once it holds key_map_bytes, the pass ends after the batch that filled it (at
  // least one dirty batch is always mapped, so that every pass makes progress); what lies past
  // the end is copied as it is and cleaned by the next pass.
  AbortedRanges aborted(plan->aborted);
  std::unordered_map<std::string, int64_t> latest;
  size_t map_bytes = 0;
  bool map_full = false;
  std::string scratch;
  std::vector<pr::RawRecord> records;
  bool malformed = false;
  // Where each cleanable segment ends: the next one's base. (A sealed segment's own next_offset()
  // is not known until it is read, e.g. after a restart.)
  std::vector<int64_t> ends;
  for (size_t s = 0; s < plan->segments.size(); ++s) {
    ends.push_back(s + 1 < plan->segments.size() ? plan->segments[s + 1]->base_offset()
                                                 : plan->end);
  }
  for (size_t s = 0; s < plan->segments.size() && !map_full; ++s) {
    auto& segment = plan->segments[s];
    if (ends[s] <= plan->first_dirty) continue;  // all clean: nothing to map
    segment->read_batches([&](std::span<const uint8_t> batch) {
      auto h = pr::read_batch_header(batch.data());
      result.bytes_read += batch.size();
      if (map_bytes >= key_map_bytes) {
        spdlog::info(
            "{}: the key map is full (log.cleaner.dedupe.buffer.size={}): this pass cleans up to "
            "offset {}",
            dir_, key_map_bytes, h.base_offset);
        plan->end = h.base_offset;
        map_full = true;
        return false;
      }
      if (h.is_control() || h.last_offset() < plan->first_dirty) return true;
      if (h.is_transactional() && aborted.contains(h.producer_id, h.base_offset)) return true;
      records.clear();
      if (!pr::parse_raw_records(batch, scratch, records)) {
        malformed = true;
        return false;
      }
      for (const auto& r : records) {
        if (!r.view.key) continue;
        auto [it, added] = latest.insert_or_assign(std::string(*r.view.key), r.view.offset);
        if (added) map_bytes += it->first.size() + kKeyMapEntryOverhead;
      }
      return true;
    });
    if (malformed) break;
  }
  if (malformed) {
    spdlog::error("{}: a batch cannot be read; compaction skipped", dir_);
    return result;
  }
  while (!plan->segments.empty() && plan->segments.back()->base_offset() >= plan->end) {
    plan->segments.pop_back();
    ends.pop_back();
  }

  BatchFilter filter(latest, aborted, now_ms, plan->config.delete_retention_ms);
  std::string cleaning = dir_ + "/" + kCleaningDir;
  size_t i = 0;
  while (i < plan->segments.size()) {
    // Segments merge while their sources fit in one segment.
    std::vector<std::shared_ptr<Segment>> group{plan->segments[i++]};
    uint64_t group_bytes = group.front()->size();
    while (i < plan->segments.size() && group_bytes + plan->segments[i]->size() <=
                                            static_cast<uint64_t>(plan->config.segment_bytes)) {
      group_bytes += plan->segments[i]->size();
      group.push_back(plan->segments[i++]);
    }
    int64_t base = group.front()->base_offset();
    std::string error;
    std::error_code ec;
    if (!write_cleaned(group, cleaning, plan->end, plan->config.index_interval_bytes, filter,
                       result, error)) {
      spdlog::error("{}: compaction cannot write the cleaned segment: {}", dir_, error);
      fs::remove_all(cleaning, ec);
      return result;
    }
    int64_t end = ends[i - 1];
    if (!swap_cleaned(group, end, base)) {
      fs::remove_all(cleaning, ec);
      return result;  // the log changed under us (retention, DeleteRecords): next time
    }
  }
  {
    std::lock_guard lock(mutex_);
    cleaned_up_to_ = plan->end;
  }
  std::string error;
  write_file_atomically(dir_ + "/" + kCleanerCheckpoint, std::to_string(plan->end) + "\n", error,
                        false);
  result.cleaned = true;
  result.records_removed = filter.records_removed();
  probe().cleaner_runs.add();
  probe().cleaner_seconds.observe(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  probe().cleaner_bytes_read.add(result.bytes_read);
  probe().cleaner_bytes_written.add(result.bytes_written);
  probe().cleaner_records_removed.add(static_cast<uint64_t>(result.records_removed));
  return result;
}

bool PartitionLog::swap_cleaned(const std::vector<std::shared_ptr<Segment>>& sources, int64_t end,
                                int64_t base) {
  std::string cleaning = dir_ + "/" + kCleaningDir;
  std::lock_guard lock(mutex_);
  for (const auto& source : sources) {
    auto it = segments_.find(source->base_offset());
    if (it == segments_.end() || it->second != source) return false;
  }
  std::string error;
  if (!write_file_atomically(cleaning + "/" + kSwapFile,
                             std::to_string(base) + " " + std::to_string(end) + "\n", error)) {
    return false;
  }
  for (const auto& source : sources) {
    source->remove_files();
    segments_.erase(source->base_offset());
  }
  std::error_code ec;
  for (const char* suffix : {".index", ".timeindex", ".log"}) {
    std::string name = Segment::file_name(base, suffix);
    fs::rename(cleaning + "/" + name, dir_ + "/" + name, ec);
  }
  sync_directory(dir_);
  fs::remove_all(cleaning, ec);
  uint64_t size = fs::file_size(dir_ + "/" + Segment::file_name(base, ".log"), ec);
  segments_[base] = Segment::existing(dir_, base, ec ? 0 : size, config_.index_interval_bytes);
  return true;
}

}  // namespace oxbow::storage
