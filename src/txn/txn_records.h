#pragma once
// Transaction state as records of the internal topic `__transaction_state`, in Kafka's formats
// (so the log stays readable by Kafka tooling):
//   key   (version 0): version int16, transactional_id string
//   value (version 0): version int16, producer_id int64, producer_epoch int16, timeout_ms int32,
//                      state int8, partitions nullable array of (topic string, [partition int32]),
//                      last_update_ms int64, start_ms int64
// State codes: 0 Empty, 1 Ongoing, 2 PrepareCommit, 3 PrepareAbort, 4 CompleteCommit,
// 5 CompleteAbort, 6 Dead, 7 PrepareEpochFence. A tombstone forgets an expired transactional id.
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

namespace oxbow::txn {

using TopicPartition = std::pair<std::string, int32_t>;

enum class TxnState : int8_t {
  kEmpty = 0,
  kOngoing = 1,
  kPrepareCommit = 2,
  kPrepareAbort = 3,
  kCompleteCommit = 4,
  kCompleteAbort = 5,
  kDead = 6,
  kPrepareEpochFence = 7,
};

// Kafka's names ("Ongoing", "CompleteCommit", ...), as ListTransactions and DescribeTransactions
// report them.
const char* state_name(TxnState state);
std::optional<TxnState> state_from_name(std::string_view name);

struct TxnMetadata {
  std::string transactional_id;
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  int32_t timeout_ms = 60000;
  TxnState state = TxnState::kEmpty;
  std::set<TopicPartition> partitions;
  int64_t last_update_ms = -1;
  int64_t start_ms = -1;
};

std::string encode_txn_key(const std::string& transactional_id);
std::string encode_txn_value(const TxnMetadata& metadata);
std::optional<std::string> decode_txn_key(std::string_view bytes);
// Fills everything but transactional_id.
std::optional<TxnMetadata> decode_txn_value(std::string_view bytes);

}  // namespace oxbow::txn
