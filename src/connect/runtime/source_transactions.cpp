// KIP-618's exactly-once source task (Kafka's ExactlyOnceWorkerSourceTask): the records of each
// transaction and the offsets they lead to are committed together, or neither is. A transaction
// ends at the boundary the connector's transaction.boundary names: after each poll() that gave
// records, every transaction.boundary.interval.ms, or when the task asks through its
// TransactionContext. A transaction that cannot commit fails the task: it restarts from the last
// committed offsets, and readers with isolation.level=read_committed never see the aborted
// records.
#include <spdlog/spdlog.h>

#include "connect/runtime/source_runner.h"
#include "oxbow/connect/errors.h"

namespace oxbow::connect::runtime {

namespace {

constexpr int kTransactionCallTimeoutMs = 60'000;

[[noreturn]] void throwTransactionError(const std::string& what, rd_kafka_error_t* error) {
  std::string text = what + ": " + rd_kafka_error_string(error);
  rd_kafka_error_destroy(error);
  throw ConnectException(text);
}

}  // namespace

TransactionContext* SourceTaskRunner::transactionContext() {
  if (!transactions_ || transactions_->boundary != SourceTask::TransactionBoundary::CONNECTOR) {
    return nullptr;
  }
  if (!boundaries_) boundaries_ = std::make_unique<ConnectorBoundaries>();
  return boundaries_.get();
}

// Offsets go to the offsets topic's partition Kafka's default partitioner picks for the key, so
// that a key's records stay in one partition whoever wrote them.
void SourceTaskRunner::openOffsetsTopic() {
  rd_kafka_topic_conf_t* conf = rd_kafka_topic_conf_new();
  char error[256];
  rd_kafka_topic_conf_set(conf, "partitioner", "murmur2_random", error, sizeof error);
  offsetsTopic_ = rd_kafka_topic_new(producer_, transactions_->offsetsTopic.c_str(), conf);
  if (offsetsTopic_ == nullptr) {
    throw ConnectException("Could not use the offsets topic " + transactions_->offsetsTopic);
  }
}

void SourceTaskRunner::runTransactional() {
  // Fences every earlier instance of this task: their open transaction is aborted.
  if (rd_kafka_error_t* error = rd_kafka_init_transactions(producer_, kTransactionCallTimeoutMs)) {
    throwTransactionError("Failed to initialize the transactional producer of task " + name(),
                          error);
  }
  try {
    while (!stopping()) {
      rd_kafka_poll(producer_, 0);
      if (!deliveryError_.empty()) throw ConnectException(deliveryError_);
      auto elapsed = std::chrono::steady_clock::now() - transactionStarted_;
      if (inTransaction_ && transactions_->boundary == SourceTask::TransactionBoundary::INTERVAL &&
          elapsed >= std::chrono::milliseconds(transactions_->intervalMs)) {
        commitTransaction();
      }
      std::vector<SourceRecord> records = task_->poll();
      for (SourceRecord& record : records) {
        if (!inTransaction_) beginTransaction();
        send(std::move(record));  // the boundaries compare addresses, which stay
        if (boundaries_ && boundaries_->abortAfter == &record) abortTransaction();
        if (boundaries_ && boundaries_->commitAfter == &record) commitTransaction();
      }
      if (boundaries_) {
        boundaries_->commitAfter = boundaries_->abortAfter = nullptr;
        if (std::exchange(boundaries_->abortBatch, false)) abortTransaction();
        if (std::exchange(boundaries_->commitBatch, false) && inTransaction_) commitTransaction();
      }
      if (inTransaction_ && !records.empty() &&
          transactions_->boundary == SourceTask::TransactionBoundary::POLL) {
        commitTransaction();
      }
    }
  } catch (...) {
    if (inTransaction_) abortTransaction();
    throw;
  }
  finishTransactional();
}

void SourceTaskRunner::beginTransaction() {
  if (rd_kafka_error_t* error = rd_kafka_begin_transaction(producer_)) {
    throwTransactionError("Failed to begin a transaction of task " + name(), error);
  }
  inTransaction_ = true;
  transactionStarted_ = std::chrono::steady_clock::now();
}

void SourceTaskRunner::commitTransaction() {
  std::vector<std::pair<ValueMap, ValueMap>> offsets;
  for (PartitionQueue& queue : submitted_) {
    if (!queue.records.empty() && !queue.partition.empty()) {
      offsets.emplace_back(queue.partition, queue.records.back()->offset);
    }
  }
  for (const auto& [partition, offset] : offsets) {
    std::string key = transactions_->offsetKey(partition);
    std::string value = transactions_->offsetValue(offset);
    rd_kafka_resp_err_t err = rd_kafka_producev(
        producer_, RD_KAFKA_V_RKT(offsetsTopic_), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_KEY(key.data(), key.size()), RD_KAFKA_V_VALUE(value.data(), value.size()),
        RD_KAFKA_V_OPAQUE(nullptr), RD_KAFKA_V_END);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      throw ConnectException("Could not write the offsets of task " + name() + ": " +
                             rd_kafka_err2str(err));
    }
  }
  if (rd_kafka_error_t* error = rd_kafka_commit_transaction(producer_, kTransactionCallTimeoutMs)) {
    // Aborting is left to the caller's unwinding; a fenced producer cannot even abort.
    throwTransactionError("Failed to commit the transaction of task " + name(), error);
  }
  inTransaction_ = false;
  for (PartitionQueue& queue : submitted_) queue.records.clear();
  task_->commit();
}

void SourceTaskRunner::abortTransaction() {
  inTransaction_ = false;
  for (PartitionQueue& queue : submitted_) queue.records.clear();
  if (rd_kafka_error_t* error = rd_kafka_abort_transaction(producer_, kTransactionCallTimeoutMs)) {
    spdlog::warn("connect: task {} could not abort its transaction: {}", name(),
                 rd_kafka_error_string(error));
    rd_kafka_error_destroy(error);
  }
}

// A task that stops commits what it sent, as a boundary would have.
void SourceTaskRunner::finishTransactional() {
  if (!inTransaction_) return;
  if (deliveryError_.empty()) {
    commitTransaction();
  } else {
    abortTransaction();
    throw ConnectException(deliveryError_);
  }
}

}  // namespace oxbow::connect::runtime
