#include "broker/topics/internal_topic.h"

#include <spdlog/spdlog.h>

#include "broker/topics/topic_registry.h"
#include "common/clock.h"
#include "protocol/batch_builder.h"
#include "protocol/record_batch.h"
#include "storage/file.h"
#include "storage/partition_log.h"

namespace oxbow::broker {

namespace pr = oxbow::protocol;

bool InternalTopic::ensure_exists() {
  if (exists_) return true;
  auto result = topics_.create(name_, partitions_,
                               {{"cleanup.policy", "compact"}, {"retention.ms", "-1"}}, false);
  exists_ =
      result.error == pr::ErrorCode::kNone || result.error == pr::ErrorCode::kTopicAlreadyExists;
  return exists_;
}

int16_t InternalTopic::append_batch(int32_t partition, const KeyedRecords& records,
                                    int64_t producer_id, int16_t producer_epoch) {
  if (!ensure_exists()) return pr::code(pr::ErrorCode::kCoordinatorNotAvailable);
  auto log = topics_.partition(name_, partition);
  if (!log) return pr::code(pr::ErrorCode::kCoordinatorNotAvailable);
  std::vector<pr::OutgoingRecord> batch_records;
  batch_records.reserve(records.size());
  for (const auto& [key, value] : records) batch_records.push_back({key, value, 0});
  pr::ProducerFields producer{producer_id, producer_epoch, -1, producer_id >= 0};
  auto batch = pr::build_batch(batch_records, now_ms(), 0, producer);
  auto result = log->append(batch, now_ms(), storage::AppendOrigin::kCoordinator);
  // Under a flush policy that wants it, coordinator state is durable before it is acted on.
  if (result.error == pr::ErrorCode::kNone && result.wait_for_flush && !log->flush()) {
    result.error = pr::ErrorCode::kKafkaStorageError;
  }
  if (result.error != pr::ErrorCode::kNone) {
    spdlog::log(producer_id >= 0 ? spdlog::level::debug : spdlog::level::err,
                "appending to {}-{}: {}", name_, partition, pr::error_name(result.error));
  }
  return pr::code(result.error);
}

bool InternalTopic::append(int32_t partition, const KeyedRecords& records) {
  return append_batch(partition, records, -1, -1) == 0;
}

int16_t InternalTopic::append_transactional(int32_t partition, const KeyedRecords& records,
                                            int64_t producer_id, int16_t producer_epoch) {
  return append_batch(partition, records, producer_id, producer_epoch);
}

void InternalTopic::replay(const RecordVisitor& on_record, const MarkerVisitor& on_marker) {
  if (!topics_.find(name_)) return;
  std::vector<uint8_t> bytes;
  std::vector<pr::RecordView> records;
  for (int32_t p = 0; p < partitions_; ++p) {
    auto log = topics_.partition(name_, p);
    if (!log) continue;
    int64_t offset = log->log_start_offset();
    while (offset < log->high_watermark()) {
      auto read = log->read(offset, 1 << 20, true);
      if (read.error != pr::ErrorCode::kNone || read.slice.length == 0) break;
      bytes.resize(read.slice.length);
      if (storage::read_at(read.slice.fd, bytes.data(), bytes.size(), read.slice.offset) !=
          static_cast<int64_t>(bytes.size())) {
        break;
      }
      size_t pos = 0;
      int64_t next = offset;
      while (pos + pr::kBatchHeaderSize <= bytes.size()) {
        const uint8_t* batch = bytes.data() + pos;
        auto header = pr::read_batch_header(batch);
        if (pos + header.total_size() > bytes.size()) break;
        if (header.is_control()) {
          auto type = pr::control_type(batch, header.total_size());
          if (type != pr::ControlType::kUnknown)
            on_marker(header.producer_id, type == pr::ControlType::kCommit);
        } else {
          records.clear();
          if (pr::parse_records(batch, header.total_size(), records)) {
            int64_t txn_producer = header.is_transactional() ? header.producer_id : -1;
            for (const auto& r : records) {
              if (r.key) on_record(*r.key, r.value, txn_producer);
            }
          }
        }
        next = header.last_offset() + 1;
        pos += header.total_size();
      }
      if (next == offset) break;
      offset = next;
    }
  }
}

}  // namespace oxbow::broker
