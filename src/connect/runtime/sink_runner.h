#pragma once
// A sink task on its own thread (Kafka's WorkerSinkTask, at least once): a consumer in group
// connect-NAME reads the connector's topics; each record goes through the converters
// (toConnectData) and the transforms to put(); every offset.flush.interval.ms, when partitions
// are revoked and when the task stops, the offsets preCommit() answers (by default after
// flush()) are committed to the group.
#include <exception>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "connect/runtime/errant_reporter.h"
#include "connect/runtime/error_reporters.h"
#include "connect/runtime/task_runner.h"
#include "oxbow/connect/sink.h"
#include "rdkafka/fetch_restarter.h"

namespace oxbow::connect::runtime {

class SinkTaskRunner : public TaskRunner, private SinkTaskContext {
 public:
  SinkTaskRunner(const WorkerConfig& worker, ConnectorConfig connector, int taskId, Props taskProps,
                 std::unique_ptr<SinkTask> task);
  ~SinkTaskRunner() override;

 private:
  void run() override;
  void wake() override {}  // the loop polls in short steps and checks stopping()

  // SinkTaskContext
  Props configs() const override { return taskProps_; }
  void offset(const std::map<TopicPartition, int64_t>& offsets) override;
  void offset(const TopicPartition& partition, int64_t offset) override;
  void timeout(int64_t timeoutMs) override { retryTimeoutMs_ = timeoutMs; }
  std::set<TopicPartition> assignment() const override { return assigned_; }
  void pause(const std::vector<TopicPartition>& partitions) override;
  void resume(const std::vector<TopicPartition>& partitions) override;
  void requestCommit() override { commitRequested_ = true; }
  ErrantRecordReporter* errantRecordReporter() override { return errant_.get(); }

  using MessagePtr = std::unique_ptr<rd_kafka_message_t, decltype(&rd_kafka_message_destroy)>;
  void setUpErrorReporting();
  void put(const std::vector<SinkRecord>& records);
  std::vector<const rd_kafka_message_t*> batchMessages() const;
  Headers convertHeaders(const rd_kafka_message_t& message, const std::string& topic);
  bool deadLettersWritten();

  void subscribe();
  std::vector<SinkRecord> pollBatch();
  std::optional<SinkRecord> convert(const rd_kafka_message_t& message);
  void commitOffsets();
  void closeConsumer();
  void seekRequested();
  void onRebalance(rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* partitions);
  static void rebalanceCallback(rd_kafka_t* rk, rd_kafka_resp_err_t err,
                                rd_kafka_topic_partition_list_t* partitions, void* opaque);

  std::unique_ptr<SinkTask> task_;
  rd_kafka_t* consumer_ = nullptr;
  std::set<TopicPartition> assigned_;
  std::set<TopicPartition> paused_;  // by the task (SinkTaskContext::pause)
  // librdkafka 2.0.2's fetcher, stalled up to a second once the queue filled, restarted.
  std::unique_ptr<rdkafka::FetchRestarter> restarter_;
  SinkOffsets currentOffsets_;  // past the records consumed, put or dropped
  std::map<TopicPartition, int64_t> seeks_;
  int64_t retryTimeoutMs_ = -1;
  bool commitRequested_ = false;
  bool closing_ = false;
  std::exception_ptr callbackError_;
  DeadLetterQueueReporter* dlq_ = nullptr;  // owned by errorHandler_
  std::unique_ptr<WorkerErrantRecordReporter> errant_;
  std::vector<MessagePtr> batch_;  // the records being put, when errant_ may need them
};

}  // namespace oxbow::connect::runtime
