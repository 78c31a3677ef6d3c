#pragma once
// Producer and transaction state of one partition.
//
// Idempotence: for each producer id, its epoch and its last five batches (sequence range and
// offsets), as Kafka keeps them, so that a retried batch is answered with its original offsets
// instead of being written twice and a gap is refused.
//
// Transactions: each producer's open transaction (the offset of its first batch), the aborted
// transactions a read_committed consumer must skip, and the last stable offset (the first offset
// of the oldest open transaction). A transactional batch may start a transaction in this
// partition only after the coordinator allowed it (KIP-890's verification, done locally): a late
// retry of a finished transaction can never open a new one that nobody would close.
//
// Snapshot file `<20-digit offset>.snapshot` in the partition directory: the state as of that log
// offset, written at a clean shutdown. Text:
//   oxbow-producer-snapshot 2
//   p producer_id epoch last_timestamp txn_first_offset coordinator_epoch
//     (first_seq last_seq first_offset last_offset)...
//   a producer_id first_offset last_offset          (one line per aborted transaction)
// Without a snapshot at the log end, the state is rebuilt from the batch headers of the log.
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

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
  int64_t txn_first_offset = -1;      // the open transaction's first offset in this partition
  int32_t coordinator_epoch = -1;     // of the last marker
  int16_t allowed_txn_epoch =
      -1;  // the coordinator added this partition to a transaction of this epoch
};

struct AbortedTransaction {
  int64_t producer_id;
  int64_t first_offset;
  int64_t last_offset;  // the abort marker's
};

class ProducerState {
 public:
  static constexpr size_t kMaxCachedBatches = 5;

  struct Check {
    protocol::ErrorCode error = protocol::ErrorCode::kNone;
    std::optional<BatchMetadata> duplicate;  // a retry of this already written batch
  };

  // Decides whether a batch of `record_count` records from (producer_id, epoch) starting at
  // `first_seq` may be appended. A negative `first_seq` (the coordinator's own transactional
  // writes) checks only the epoch.
  Check check(int64_t producer_id, int16_t epoch, int32_t first_seq, int32_t record_count) const;
  // kInvalidTxnState unless the producer's transaction is open here or the coordinator allowed it.
  protocol::ErrorCode check_transactional(int64_t producer_id, int16_t epoch) const;
  // Records an appended data batch; a transactional one opens the producer's transaction here.
  void update(int64_t producer_id, int16_t epoch, int32_t first_seq, int32_t record_count,
              int64_t first_offset, int64_t last_offset, int64_t timestamp,
              bool transactional = false);

  // The coordinator added this partition to the producer's transaction (AddPartitionsToTxn).
  protocol::ErrorCode allow_transaction(int64_t producer_id, int16_t epoch);
  // A marker at `marker_offset` ended the producer's transaction. False for a stale epoch.
  bool check_marker(int64_t producer_id, int16_t epoch) const;
  void complete_transaction(int64_t producer_id, int16_t epoch, bool commit,
                            int32_t coordinator_epoch, int64_t marker_offset);

  // The first offset of the oldest open transaction, or `high_watermark` when none is open.
  int64_t last_stable_offset(int64_t high_watermark) const;
  // Aborted transactions that may hold records in [from, to).
  std::vector<AbortedTransaction> aborted_between(int64_t from, int64_t to) const;
  // Forgets aborted transactions wholly below the log start.
  void trim_before(int64_t log_start_offset);

  bool empty() const { return producers_.empty() && aborted_.empty(); }
  const std::unordered_map<int64_t, ProducerEntry>& producers() const { return producers_; }

  std::string serialize() const;
  bool parse(const std::string& text);

 private:
  std::unordered_map<int64_t, ProducerEntry> producers_;
  std::map<int64_t, int64_t> open_;          // first offset -> producer id
  std::vector<AbortedTransaction> aborted_;  // in marker order
};

}  // namespace oxbow::storage
