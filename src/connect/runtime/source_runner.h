#pragma once
// A source task on its own thread (Kafka's WorkerSourceTask, at least once): poll() -> transforms
// -> converters -> producer. A record's source offset is committed to the offsets file only once
// the producer acknowledged it and every record polled before it from the same source partition,
// every offset.flush.interval.ms and when the task stops.
#include <deque>
#include <memory>
#include <vector>

#include "connect/runtime/offset_store.h"
#include "connect/runtime/task_runner.h"
#include "oxbow/connect/source.h"

namespace oxbow::connect::runtime {

class SourceTaskRunner : public TaskRunner, private SourceTaskContext {
 public:
  SourceTaskRunner(const WorkerConfig& worker, ConnectorConfig connector, int taskId,
                   Props taskProps, std::unique_ptr<SourceTask> task, OffsetBackingStore& offsets);
  ~SourceTaskRunner() override;

 private:
  struct Submitted;
  struct Delivery;
  struct PartitionQueue {
    ValueMap partition;
    std::deque<std::shared_ptr<Submitted>> records;
  };

  void run() override;
  void wake() override;
  Props configs() const override { return taskProps_; }
  OffsetStorageReader& offsetStorageReader() override { return reader_; }

  struct Converted {
    std::optional<std::string> key;
    std::optional<std::string> value;
    std::vector<std::pair<std::string, std::optional<std::string>>> headers;
  };

  void send(const SourceRecord& record);
  std::optional<Converted> convert(ErrorContext& context, const ConnectRecord& record);
  void produce(const ConnectRecord& record, Converted& converted,
               std::unique_ptr<Delivery> delivery);
  void skipFailedDelivery(Delivery& delivery, const rd_kafka_message_t* message);
  std::shared_ptr<Submitted> submit(const SourceRecord& record);
  void commitOffsets();
  void finish();
  static void onDelivery(rd_kafka_t* rk, const rd_kafka_message_t* message, void* opaque);

  std::unique_ptr<SourceTask> task_;
  OffsetBackingStore& offsets_;
  StoreOffsetReader reader_;
  rd_kafka_t* producer_ = nullptr;
  std::vector<PartitionQueue> submitted_;
  std::string deliveryError_;
};

}  // namespace oxbow::connect::runtime
