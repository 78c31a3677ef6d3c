#pragma once
// A source task on its own thread (Kafka's WorkerSourceTask, at least once): poll() -> transforms
// -> converters -> producer. A record's source offset is committed to the offsets file only once
// the producer acknowledged it and every record polled before it from the same source partition,
// every offset.flush.interval.ms and when the task stops.
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "connect/runtime/offset_store.h"
#include "connect/runtime/task_runner.h"
#include "oxbow/connect/source.h"

namespace oxbow::connect::runtime {

// KIP-618's exactly-once source: the task's records and the offsets they lead to are written by
// one transactional producer, in one transaction per boundary, the offsets to the offsets topic
// as the offset store keeps them. A task started anywhere with the same transactional id fences
// every earlier instance of it (a zombie on a worker the group gave up on).
struct SourceTransactions {
  std::string transactionalId;  // <group.id>-<connector>-<task>
  SourceTask::TransactionBoundary boundary = SourceTask::DEFAULT_TRANSACTION_BOUNDARY;
  int64_t intervalMs = 60'000;  // transaction.boundary.interval.ms
  std::string offsetsTopic;
  std::function<std::string(const ValueMap& partition)> offsetKey;
  std::function<std::string(const ValueMap& offset)> offsetValue;
};

class SourceTaskRunner : public TaskRunner, private SourceTaskContext {
 public:
  SourceTaskRunner(const WorkerConfig& worker, ConnectorConfig connector, int taskId,
                   Props taskProps, std::unique_ptr<SourceTask> task, OffsetBackingStore& offsets,
                   std::optional<SourceTransactions> transactions = std::nullopt);
  ~SourceTaskRunner() override;

 private:
  // The boundaries a connector asks for (transaction.boundary=connector): after the batch being
  // sent, or after one of its records.
  class ConnectorBoundaries : public TransactionContext {
   public:
    void commitTransaction() override { commitBatch = true; }
    void commitTransaction(const SourceRecord& record) override { commitAfter = &record; }
    void abortTransaction() override { abortBatch = true; }
    void abortTransaction(const SourceRecord& record) override { abortAfter = &record; }

    bool commitBatch = false, abortBatch = false;
    const SourceRecord* commitAfter = nullptr;
    const SourceRecord* abortAfter = nullptr;
  };
  // A record sent and not yet committed: its offset, and whether the producer acknowledged it.
  struct Submitted {
    ValueMap offset;
    bool acked = false;
  };
  struct Delivery;
  struct PartitionQueue {
    ValueMap partition;
    std::deque<std::shared_ptr<Submitted>> records;
  };

  void run() override;
  void wake() override;
  Props configs() const override { return taskProps_; }
  OffsetStorageReader& offsetStorageReader() override { return reader_; }
  TransactionContext* transactionContext() override;

  struct Converted {
    std::optional<std::string> key;
    std::optional<std::string> value;
    std::vector<std::pair<std::string, std::optional<std::string>>> headers;
  };

  void send(SourceRecord&& polled);
  std::optional<Converted> convert(ErrorContext& context, const ConnectRecord& record);
  void produce(const ConnectRecord& record, Converted& converted,
               std::unique_ptr<Delivery> delivery);
  void skipFailedDelivery(Delivery& delivery, const rd_kafka_message_t* message);
  std::shared_ptr<Submitted> submit(const SourceRecord& record);
  rd_kafka_topic_t* topicHandle(const std::string& topic);
  void commitOffsets();
  void finish();
  // With transactions (source_transactions.cpp).
  void runTransactional();
  void beginTransaction();
  void commitTransaction();
  void abortTransaction();
  void finishTransactional();
  void openOffsetsTopic();
  static void onDelivery(rd_kafka_t* rk, const rd_kafka_message_t* message, void* opaque);

  std::unique_ptr<SourceTask> task_;
  OffsetBackingStore& offsets_;
  StoreOffsetReader reader_;
  rd_kafka_t* producer_ = nullptr;
  std::vector<PartitionQueue> submitted_;
  size_t lastQueue_ = 0;  // in submitted_: the last record's source partition
  std::string deliveryError_;
  std::optional<SourceTransactions> transactions_;
  std::unique_ptr<ConnectorBoundaries> boundaries_;
  rd_kafka_topic_t* offsetsTopic_ = nullptr;
  static constexpr int kFirstMetadataMs = 1000;
  std::map<std::string, rd_kafka_topic_t*, std::less<>> topics_;  // destroyed with the producer
  std::string_view lastTopicName_;                                // a key of topics_
  rd_kafka_topic_t* lastTopic_ = nullptr;
  bool inTransaction_ = false;
  std::chrono::steady_clock::time_point transactionStarted_;
};

}  // namespace oxbow::connect::runtime
