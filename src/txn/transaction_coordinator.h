#pragma once
// The transaction coordinator: every transactional id of the broker, its producer id and epoch,
// and its transaction's state and partitions. State changes are appended to
// `__transaction_state` (through a KeyedLog) before they are acted on, and replayed at start-up:
// a transaction caught preparing is completed, an ongoing one resumes with its timeout.
//
// Ending a transaction writes PrepareCommit/PrepareAbort, then a marker to each of its
// partitions, then CompleteCommit/CompleteAbort. On one node the markers are local appends, so
// this happens before EndTxn is answered; a marker that fails is retried by the timer.
// One lock guards everything; the timer aborts transactions past their timeout, bumping the
// epoch so that the producer that let it lapse is fenced.
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/keyed_log.h"
#include "protocol/errors.h"
#include "txn/txn_records.h"

namespace oxbow::txn {

using protocol::ErrorCode;

// The partitions a transaction writes to, as the coordinator acts on them.
class PartitionWriter {
 public:
  virtual ~PartitionWriter() = default;
  virtual bool exists(const TopicPartition& tp) = 0;
  // Lets the producer's transactional batches into the partition (KIP-890's verification).
  virtual ErrorCode allow(const TopicPartition& tp, int64_t producer_id, int16_t epoch) = 0;
  virtual ErrorCode write_marker(const TopicPartition& tp, int64_t producer_id, int16_t epoch,
                                 bool commit, int32_t coordinator_epoch) = 0;
};

struct TxnOptions {
  int32_t max_timeout_ms = 900000;  // transaction.max.timeout.ms
  int64_t abort_check_interval_ms =
      10000;  // transaction.abort.timed.out.transaction.cleanup.interval.ms
  int64_t id_expiration_ms = 7LL * 24 * 3600 * 1000;  // transactional.id.expiration.ms
};

struct InitProducerResult {
  ErrorCode error = ErrorCode::kNone;
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
};

class TransactionCoordinator {
 public:
  TransactionCoordinator(TxnOptions options, KeyedLog& log, PartitionWriter& partitions,
                         std::function<int64_t()> next_producer_id);
  ~TransactionCoordinator();

  // Replays `__transaction_state`, finishes what a crash interrupted, starts the timer.
  void start();
  void stop();

  // InitProducerId for a transactional id. `expected_*` (KIP-360) are -1 unless the producer
  // names the id and epoch it had.
  InitProducerResult init_producer(const std::string& transactional_id, int32_t timeout_ms,
                                   int64_t expected_producer_id, int16_t expected_epoch);
  // AddPartitionsToTxn: one error per partition, in order.
  std::vector<ErrorCode> add_partitions(const std::string& transactional_id, int64_t producer_id,
                                        int16_t epoch,
                                        const std::vector<TopicPartition>& partitions);
  ErrorCode end_transaction(const std::string& transactional_id, int64_t producer_id, int16_t epoch,
                            bool commit);

  std::optional<TxnMetadata> describe(const std::string& transactional_id);
  // Empty filters match everything.
  std::vector<TxnMetadata> list(const std::vector<std::string>& state_filters,
                                const std::vector<int64_t>& producer_id_filters);

  // Aborts timed-out transactions, retries unfinished markers, expires idle ids (also run by the
  // timer).
  void tick(int64_t now_ms);

 private:
  ErrorCode check_producer_locked(const std::string& transactional_id, int64_t producer_id,
                                  int16_t epoch, TxnMetadata*& found);
  bool persist_locked(const TxnMetadata& metadata);
  // Prepare, markers, complete. Returns kNone once the prepare state is durable.
  ErrorCode finish_locked(TxnMetadata& txn, bool commit, int64_t now_ms);
  // Writes the markers of a prepared transaction and completes it; false if a marker failed.
  bool write_markers_locked(TxnMetadata& txn, int64_t now_ms);

  TxnOptions options_;
  KeyedLog& log_;
  PartitionWriter& partitions_;
  std::function<int64_t()> next_producer_id_;
  std::mutex mutex_;
  std::map<std::string, TxnMetadata> transactions_;
  std::thread timer_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
};

}  // namespace oxbow::txn
