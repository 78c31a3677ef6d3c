#pragma once
// Where a connector's failures are reported (Kafka's LogReporter and DeadLetterQueueReporter):
// the worker's log with errors.log.enable, and for sinks the dead letter queue topic, which
// receives the record as it was read, with the failure's context in __connect.errors.* headers
// when errors.deadletterqueue.context.headers.enable is set.
#include <librdkafka/rdkafka.h>

#include <atomic>
#include <string>

#include "connect/runtime/error_handler.h"
#include "connect/runtime/worker_config.h"

namespace oxbow::connect::runtime {

class LogReporter : public ErrorReporter {
 public:
  LogReporter(std::string taskName, const ErrorsConfig& config)
      : taskName_(std::move(taskName)), includeMessages_(config.logIncludeMessages) {}
  std::future<void> report(const ErrorContext& context) override;
  // The line logged (Kafka's words): "Error encountered in task NAME-N. Executing stage 'STAGE'
  // with class 'CLASS'[, where consumed record is {topic='t', partition=0, offset=5}]."
  std::string message(const ErrorContext& context) const;

 private:
  std::string taskName_;
  bool includeMessages_;
};

class DeadLetterQueueReporter : public ErrorReporter {
 public:
  DeadLetterQueueReporter(const WorkerConfig& worker, std::string connector, int taskId,
                          const ErrorsConfig& config);
  ~DeadLetterQueueReporter() override;
  DeadLetterQueueReporter(const DeadLetterQueueReporter&) = delete;
  DeadLetterQueueReporter& operator=(const DeadLetterQueueReporter&) = delete;

  // Creates the topic when the cluster has none of that name: one partition, the configured
  // replication factor but no more than the cluster's brokers. ConnectException when it cannot.
  void createTopicIfMissing();
  std::future<void> report(const ErrorContext& context) override;
  // Serves delivery reports.
  void poll();
  // Waits up to timeoutMs for every record sent; whether none is left.
  bool flush(int64_t timeoutMs);
  int64_t produceRequests() const { return produceRequests_.load(); }
  int64_t produceFailures() const { return produceFailures_.load(); }

  // The context headers a record gets (Kafka's names; numbers as decimal text).
  std::vector<std::pair<std::string, std::string>> contextHeaders(const ErrorContext& context,
                                                                  const RawRecord& record) const;

 private:
  static void onDelivery(rd_kafka_t* rk, const rd_kafka_message_t* message, void* opaque);
  std::future<void> whenDelivered(std::future<void> delivered);

  std::string connector_;
  int taskId_;
  ErrorsConfig config_;
  rd_kafka_t* producer_ = nullptr;
  std::atomic<int64_t> produceRequests_{0};
  std::atomic<int64_t> produceFailures_{0};
};

}  // namespace oxbow::connect::runtime
