#include "txn/transaction_coordinator.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <limits>

#include "common/clock.h"

namespace oxbow::txn {

namespace {

bool is_preparing(TxnState s) {
  return s == TxnState::kPrepareCommit || s == TxnState::kPrepareAbort;
}

}  // namespace

TransactionCoordinator::TransactionCoordinator(TxnOptions options, KeyedLog& log,
                                               PartitionWriter& partitions,
                                               std::function<int64_t()> next_producer_id)
    : options_(options),
      log_(log),
      partitions_(partitions),
      next_producer_id_(std::move(next_producer_id)) {}

TransactionCoordinator::~TransactionCoordinator() {
  stop();
}

void TransactionCoordinator::start() {
  {
    std::lock_guard lock(mutex_);
    log_.replay(
        [this](std::string_view key_bytes, std::optional<std::string_view> value_bytes, int64_t) {
          auto id = decode_txn_key(key_bytes);
          if (!id) return;
          if (!value_bytes) {
            transactions_.erase(*id);
            return;
          }
          if (auto value = decode_txn_value(*value_bytes)) {
            value->transactional_id = *id;
            transactions_[*id] = std::move(*value);
          }
        },
        [](int64_t, bool) {});
    int64_t now = now_ms();
    int resumed = 0;
    for (auto& [id, txn] : transactions_) {
      if (is_preparing(txn.state)) {
        write_markers_locked(txn, now);
      } else if (txn.state == TxnState::kOngoing) {
        // The partitions forgot what the coordinator allowed them: tell them again.
        for (const auto& tp : txn.partitions)
          partitions_.allow(tp, txn.producer_id, txn.producer_epoch);
        ++resumed;
      }
    }
    if (!transactions_.empty()) {
      spdlog::info("transaction coordinator loaded {} transactional ids, {} ongoing transactions",
                   transactions_.size(), resumed);
    }
  }
  timer_ = std::thread([this] {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      stop_cv_.wait_for(lock, std::chrono::milliseconds(options_.abort_check_interval_ms));
      if (stopping_) break;
      lock.unlock();
      tick(now_ms());
      lock.lock();
    }
  });
}

void TransactionCoordinator::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (timer_.joinable()) timer_.join();
}

bool TransactionCoordinator::persist_locked(const TxnMetadata& txn) {
  KeyedRecords records{{encode_txn_key(txn.transactional_id), encode_txn_value(txn)}};
  return log_.append(partition_for_key(txn.transactional_id, log_.partitions()), records);
}

ErrorCode TransactionCoordinator::check_producer_locked(const std::string& transactional_id,
                                                        int64_t producer_id, int16_t epoch,
                                                        TxnMetadata*& found) {
  auto it = transactions_.find(transactional_id);
  if (it == transactions_.end() || it->second.producer_id != producer_id) {
    return ErrorCode::kInvalidProducerIdMapping;
  }
  found = &it->second;
  if (epoch != found->producer_epoch) return ErrorCode::kProducerFenced;
  if (is_preparing(found->state)) return ErrorCode::kConcurrentTransactions;
  return ErrorCode::kNone;
}

InitProducerResult TransactionCoordinator::init_producer(const std::string& transactional_id,
                                                         int32_t timeout_ms,
                                                         int64_t expected_producer_id,
                                                         int16_t expected_epoch) {
  InitProducerResult result;
  if (timeout_ms <= 0 || timeout_ms > options_.max_timeout_ms) {
    result.error = ErrorCode::kInvalidTransactionTimeout;
    return result;
  }
  std::lock_guard lock(mutex_);
  int64_t now = now_ms();
  auto it = transactions_.find(transactional_id);
  TxnMetadata next;
  if (it == transactions_.end()) {
    next.transactional_id = transactional_id;
    next.producer_id = next_producer_id_();
    next.producer_epoch = 0;
  } else {
    TxnMetadata& txn = it->second;
    if (expected_producer_id >= 0 &&
        (expected_producer_id != txn.producer_id || expected_epoch != txn.producer_epoch)) {
      result.error = ErrorCode::kProducerFenced;
      return result;
    }
    if (is_preparing(txn.state)) {
      result.error = ErrorCode::kConcurrentTransactions;
      return result;
    }
    if (txn.state == TxnState::kOngoing) {
      // A new instance of the producer: fence the old one by aborting its transaction with a
      // newer epoch, which the partitions then hold the old one to.
      spdlog::info("transactional id {}: fencing producer {} epoch {}, aborting its transaction",
                   transactional_id, txn.producer_id, txn.producer_epoch);
      ++txn.producer_epoch;
      ErrorCode error = finish_locked(txn, false, now);
      if (error == ErrorCode::kNone && is_preparing(txn.state))
        error = ErrorCode::kConcurrentTransactions;
      if (error != ErrorCode::kNone) {
        result.error = error;
        return result;
      }
    }
    next = txn;
    if (next.producer_epoch >= std::numeric_limits<int16_t>::max() - 1) {
      next.producer_id = next_producer_id_();
      next.producer_epoch = 0;
    } else {
      ++next.producer_epoch;
    }
  }
  if (next.producer_id < 0) {
    result.error = ErrorCode::kCoordinatorNotAvailable;
    return result;
  }
  next.timeout_ms = timeout_ms;
  next.state = TxnState::kEmpty;
  next.partitions.clear();
  next.start_ms = -1;
  next.last_update_ms = now;
  if (!persist_locked(next)) {
    result.error = ErrorCode::kCoordinatorNotAvailable;
    return result;
  }
  transactions_[transactional_id] = next;
  result.producer_id = next.producer_id;
  result.producer_epoch = next.producer_epoch;
  return result;
}

std::vector<ErrorCode> TransactionCoordinator::add_partitions(
    const std::string& transactional_id, int64_t producer_id, int16_t epoch,
    const std::vector<TopicPartition>& partitions) {
  std::vector<ErrorCode> errors(partitions.size(), ErrorCode::kNone);
  std::lock_guard lock(mutex_);
  TxnMetadata* txn = nullptr;
  ErrorCode error = check_producer_locked(transactional_id, producer_id, epoch, txn);
  if (error != ErrorCode::kNone) {
    std::fill(errors.begin(), errors.end(), error);
    return errors;
  }
  // All or nothing: one unknown partition leaves the others not attempted.
  bool missing = false;
  for (size_t i = 0; i < partitions.size(); ++i) {
    if (!partitions_.exists(partitions[i])) {
      errors[i] = ErrorCode::kUnknownTopicOrPartition;
      missing = true;
    }
  }
  if (missing) {
    for (auto& e : errors) {
      if (e == ErrorCode::kNone) e = ErrorCode::kOperationNotAttempted;
    }
    return errors;
  }
  TxnMetadata next = *txn;
  int64_t now = now_ms();
  if (next.state != TxnState::kOngoing) {
    next.state = TxnState::kOngoing;
    next.start_ms = now;
    next.partitions.clear();
  }
  bool changed = txn->state != TxnState::kOngoing;
  for (const auto& tp : partitions) changed = next.partitions.insert(tp).second || changed;
  if (changed) {
    next.last_update_ms = now;
    if (!persist_locked(next)) {
      std::fill(errors.begin(), errors.end(), ErrorCode::kCoordinatorNotAvailable);
      return errors;
    }
  }
  for (size_t i = 0; i < partitions.size(); ++i) {
    errors[i] = partitions_.allow(partitions[i], producer_id, epoch);
  }
  *txn = std::move(next);
  return errors;
}

ErrorCode TransactionCoordinator::end_transaction(const std::string& transactional_id,
                                                  int64_t producer_id, int16_t epoch, bool commit) {
  std::lock_guard lock(mutex_);
  TxnMetadata* txn = nullptr;
  ErrorCode error = check_producer_locked(transactional_id, producer_id, epoch, txn);
  if (error != ErrorCode::kNone) return error;
  switch (txn->state) {
    case TxnState::kOngoing:
      return finish_locked(*txn, commit, now_ms());
    case TxnState::kCompleteCommit:  // a retry of the EndTxn that completed it
      return commit ? ErrorCode::kNone : ErrorCode::kInvalidTxnState;
    case TxnState::kCompleteAbort:
      return commit ? ErrorCode::kInvalidTxnState : ErrorCode::kNone;
    default:
      return ErrorCode::kInvalidTxnState;
  }
}

ErrorCode TransactionCoordinator::finish_locked(TxnMetadata& txn, bool commit, int64_t now_ms) {
  TxnMetadata prepared = txn;
  prepared.state = commit ? TxnState::kPrepareCommit : TxnState::kPrepareAbort;
  prepared.last_update_ms = now_ms;
  if (!persist_locked(prepared)) return ErrorCode::kCoordinatorNotAvailable;
  txn = std::move(prepared);
  write_markers_locked(txn, now_ms);
  return ErrorCode::kNone;
}

bool TransactionCoordinator::write_markers_locked(TxnMetadata& txn, int64_t now_ms) {
  bool commit = txn.state == TxnState::kPrepareCommit;
  constexpr int32_t kCoordinatorEpoch = 0;  // one node: the coordinator never moves
  for (const auto& tp : txn.partitions) {
    if (!partitions_.exists(tp)) continue;  // deleted since: nothing left to mark
    ErrorCode error = partitions_.write_marker(tp, txn.producer_id, txn.producer_epoch, commit,
                                               kCoordinatorEpoch);
    // A stale epoch means a newer marker already ended this producer's transaction there.
    if (error != ErrorCode::kNone && error != ErrorCode::kInvalidProducerEpoch) {
      spdlog::warn("transactional id {}: marker to {}-{} failed ({}), will retry",
                   txn.transactional_id, tp.first, tp.second, protocol::error_name(error));
      return false;
    }
  }
  TxnMetadata complete = txn;
  complete.state = commit ? TxnState::kCompleteCommit : TxnState::kCompleteAbort;
  complete.partitions.clear();
  complete.last_update_ms = now_ms;
  if (!persist_locked(complete)) return false;
  txn = std::move(complete);
  return true;
}

std::optional<TxnMetadata> TransactionCoordinator::describe(const std::string& transactional_id) {
  std::lock_guard lock(mutex_);
  auto it = transactions_.find(transactional_id);
  if (it == transactions_.end()) return std::nullopt;
  return it->second;
}

std::vector<TxnMetadata> TransactionCoordinator::list(
    const std::vector<std::string>& state_filters,
    const std::vector<int64_t>& producer_id_filters) {
  std::lock_guard lock(mutex_);
  std::vector<TxnMetadata> out;
  for (const auto& [id, txn] : transactions_) {
    bool state_ok = state_filters.empty() ||
                    std::find(state_filters.begin(), state_filters.end(), state_name(txn.state)) !=
                        state_filters.end();
    bool producer_ok = producer_id_filters.empty() ||
                       std::find(producer_id_filters.begin(), producer_id_filters.end(),
                                 txn.producer_id) != producer_id_filters.end();
    if (state_ok && producer_ok) out.push_back(txn);
  }
  return out;
}

void TransactionCoordinator::tick(int64_t now_ms) {
  std::lock_guard lock(mutex_);
  for (auto it = transactions_.begin(); it != transactions_.end();) {
    TxnMetadata& txn = it->second;
    if (is_preparing(txn.state)) {
      write_markers_locked(txn, now_ms);
    } else if (txn.state == TxnState::kOngoing && now_ms - txn.start_ms > txn.timeout_ms) {
      spdlog::info("transactional id {}: transaction timed out after {} ms, aborting",
                   txn.transactional_id, txn.timeout_ms);
      // The producer that let it lapse is fenced by the epoch bump.
      if (txn.producer_epoch < std::numeric_limits<int16_t>::max()) ++txn.producer_epoch;
      finish_locked(txn, false, now_ms);
    } else if (txn.state != TxnState::kOngoing &&
               now_ms - txn.last_update_ms > options_.id_expiration_ms) {
      KeyedRecords tombstone{{encode_txn_key(txn.transactional_id), std::nullopt}};
      if (log_.append(partition_for_key(txn.transactional_id, log_.partitions()), tombstone)) {
        it = transactions_.erase(it);
        continue;
      }
    }
    ++it;
  }
}

}  // namespace oxbow::txn
