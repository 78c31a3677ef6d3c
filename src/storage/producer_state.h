#pragma once
// Idempotent-producer state of one partition: for each producer id, its epoch and its last five
// batches (sequence range and offsets), as Kafka keeps them, so that a retried batch is answered
// with its original offsets instead of being written twice and a gap is refused.
//
// Snapshot file `<20-digit offset>.snapshot` in the partition directory: the state as of that log
// offset, written at a clean shutdown. Text, one producer per line:
//   producer_id epoch last_timestamp (first_seq last_seq first_offset last_offset)...
// Without a snapshot at the log end, the state is rebuilt from the batch headers of the log.
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>

#include "protocol/errors.h"

namespace oxbow::storage {

struct BatchMetadata {
  int32_t first_seq;
  int32_t last_seq;
  int64_t first_offset;
  int64_t last_offset;
};

struct ProducerEntry {
  int16_t epoch = -1;
  int64_t last_timestamp = -1;
  std::deque<BatchMetadata> batches;  // oldest first, at most kMaxCachedBatches
};

class ProducerState {
 public:
  static constexpr size_t kMaxCachedBatches = 5;

  struct Check {
    protocol::ErrorCode error = protocol::ErrorCode::kNone;
    std::optional<BatchMetadata> duplicate;  // a retry of this already written batch
  };

  // Decides whether a batch of `record_count` records from (producer_id, epoch) starting at
  // `first_seq` may be appended.
  Check check(int64_t producer_id, int16_t epoch, int32_t first_seq, int32_t record_count) const;
  // Records an appended batch.
  void update(int64_t producer_id, int16_t epoch, int32_t first_seq, int32_t record_count,
              int64_t first_offset, int64_t last_offset, int64_t timestamp);

  bool empty() const { return producers_.empty(); }
  const std::unordered_map<int64_t, ProducerEntry>& producers() const { return producers_; }

  std::string serialize() const;
  bool parse(const std::string& text);

 private:
  std::unordered_map<int64_t, ProducerEntry> producers_;
};

}  // namespace oxbow::storage
