// PartitionLog's producer and transaction state: idempotence checks, producer snapshots and
// their rebuilding after a crash, the coordinator's transaction verification and markers.
#include <filesystem>

#include "protocol/batch_builder.h"
#include "protocol/record_batch.h"
#include "storage/file.h"
#include "storage/partition_log.h"
#include "storage/segment.h"

namespace oxbow::storage {

namespace fs = std::filesystem;
namespace pr = oxbow::protocol;
using pr::ErrorCode;

void PartitionLog::load_producer_state() {
  std::string snapshot = dir_ + "/" + Segment::file_name(log_end_offset_, ".snapshot");
  std::string text;
  bool loaded = read_whole_file(snapshot, text) && producers_.parse(text);
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    if (entry.path().extension() == ".snapshot") fs::remove(entry.path(), ec);
  }
  if (loaded) return;
  // No snapshot at the log end (a crash): replay the batch headers.
  for (auto& [base, segment] : segments_) {
    segment->for_each_batch([this](const uint8_t* raw, size_t available) {
      auto h = pr::read_batch_header(raw);
      if (h.producer_id < 0) return;
      if (!h.is_control()) {
        producers_.update(h.producer_id, h.producer_epoch, h.base_sequence, h.record_count,
                          h.base_offset, h.last_offset(), h.max_timestamp, h.is_transactional());
        return;
      }
      auto type = pr::control_type(raw, available);
      if (type == pr::ControlType::kUnknown) return;
      int32_t coordinator_epoch =
          -1;  // not needed after a crash: markers are checked by producer epoch
      producers_.complete_transaction(h.producer_id, h.producer_epoch,
                                      type == pr::ControlType::kCommit, coordinator_epoch,
                                      h.base_offset);
    });
  }
  producers_.trim_before(log_start_offset_);
}

void PartitionLog::write_producer_snapshot() {
  if (producers_.empty()) return;
  std::string error;
  write_file_atomically(dir_ + "/" + Segment::file_name(log_end_offset_, ".snapshot"),
                        producers_.serialize(), error);
}

bool PartitionLog::check_producer_locked(std::span<uint8_t> records, int batch_count,
                                         AppendOrigin origin, AppendResult& result) {
  auto h = pr::read_batch_header(records.data());
  if (h.producer_id < 0) return true;
  if (batch_count != 1 || (origin == AppendOrigin::kClient && h.base_sequence < 0)) {
    result.error =
        ErrorCode::kInvalidRecord;  // Kafka: one batch per partition from an idempotent producer
    return false;
  }
  auto check = producers_.check(h.producer_id, h.producer_epoch, h.base_sequence, h.record_count);
  if (check.error != ErrorCode::kNone) {
    result.error = check.error;
    return false;
  }
  if (check.duplicate) {
    result.base_offset = check.duplicate->first_offset;
    result.last_offset = check.duplicate->last_offset;
    result.log_start_offset = log_start_offset_;
    result.wait_for_flush =
        flushed_offset_ <= check.duplicate->last_offset && config_.flush_messages != kNever;
    return false;
  }
  if (h.is_transactional()) {
    result.error = producers_.check_transactional(h.producer_id, h.producer_epoch);
    return result.error == ErrorCode::kNone;
  }
  return true;
}

ErrorCode PartitionLog::allow_transaction(int64_t producer_id, int16_t epoch) {
  std::lock_guard lock(mutex_);
  if (!ensure_loaded_locked()) return ErrorCode::kKafkaStorageError;
  return producers_.allow_transaction(producer_id, epoch);
}

int64_t PartitionLog::last_stable_offset() const {
  std::lock_guard lock(mutex_);
  ensure_loaded_locked();
  return producers_.last_stable_offset(high_watermark_);
}

ProducerState PartitionLog::producer_state() const {
  std::lock_guard lock(mutex_);
  ensure_loaded_locked();
  return producers_;
}

}  // namespace oxbow::storage
