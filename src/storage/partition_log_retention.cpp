// PartitionLog's head and tail: DeleteRecords and retention (by time and size) drop whole
// segments from the start; time-based rolls seal the active one. Housekeeping calls the last two.
#include <algorithm>

#include "storage/file.h"
#include "storage/partition_log.h"
#include "storage/segment.h"

namespace oxbow::storage {

using protocol::ErrorCode;

ErrorCode PartitionLog::delete_records_before(int64_t offset, int64_t& new_log_start) {
  std::vector<std::shared_ptr<Segment>> doomed;
  {
    std::lock_guard lock(mutex_);
    if (!ensure_loaded_locked()) return ErrorCode::kKafkaStorageError;
    if (offset == -1) offset = high_watermark_;
    if (offset < 0 || offset > high_watermark_) return ErrorCode::kOffsetOutOfRange;
    if (offset > log_start_offset_) {
      std::string error;
      if (!write_file_atomically(dir_ + "/" + kLogStartFile, std::to_string(offset) + "\n",
                                 error)) {
        return ErrorCode::kKafkaStorageError;
      }
      log_start_offset_ = offset;
      producers_.trim_before(offset);
      // Segments whose every offset is below the new start go; the active one always stays.
      while (segments_.size() > 1 && std::next(segments_.begin())->first <= offset) {
        doomed.push_back(segments_.begin()->second);
        segments_.erase(segments_.begin());
      }
    }
    new_log_start = log_start_offset_;
  }
  for (auto& segment : doomed) segment->remove_files();
  return ErrorCode::kNone;
}

int PartitionLog::apply_retention(int64_t now_ms) {
  std::vector<std::shared_ptr<Segment>> doomed;
  {
    std::lock_guard lock(mutex_);
    // A compacted topic keeps its history: only the "delete" policy lets retention drop segments.
    if (!config_.delete_policy || !ensure_loaded_locked()) return 0;
    uint64_t total = 0;
    for (auto& [base, segment] : segments_) total += segment->size();
    while (segments_.size() > 1) {
      auto& first = segments_.begin()->second;
      bool expired = config_.retention_ms >= 0 && first->max_timestamp() >= 0 &&
                     now_ms - first->max_timestamp() > config_.retention_ms;
      bool oversize = config_.retention_bytes >= 0 &&
                      total - first->size() >= static_cast<uint64_t>(config_.retention_bytes);
      if (!expired && !oversize) break;
      total -= first->size();
      doomed.push_back(first);
      segments_.erase(segments_.begin());
    }
    if (doomed.empty()) return 0;
    log_start_offset_ = std::max(log_start_offset_, segments_.begin()->first);
    producers_.trim_before(log_start_offset_);
  }
  for (auto& segment : doomed) segment->remove_files();
  return static_cast<int>(doomed.size());
}

void PartitionLog::maybe_roll(int64_t now_ms) {
  std::lock_guard lock(mutex_);
  if (!loaded_ || !active_) return;
  // A compacted log also rolls when its active records would otherwise outwait
  // max.compaction.lag.ms.
  int64_t roll_after = config_.compact ? std::min(config_.segment_ms, config_.max_compaction_lag_ms)
                                       : config_.segment_ms;
  if (!active_->empty() && now_ms - active_since_ms_ >= roll_after) {
    std::string error;
    roll_locked(now_ms, error);
  }
}

}  // namespace oxbow::storage
