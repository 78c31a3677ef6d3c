#pragma once
// A sink task's ErrantRecordReporter (KIP-610, Kafka's WorkerErrantRecordReporter): what the task
// reports goes through the connector's error handling at stage TASK_PUT, to the log and the dead
// letter queue as configured. A task is given one when the connector has a dead letter queue or
// errors.log.enable, as in Kafka.
#include <librdkafka/rdkafka.h>

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

#include "connect/runtime/error_handler.h"
#include "oxbow/connect/converter.h"
#include "oxbow/connect/sink.h"

namespace oxbow::connect::runtime {

// Each header of the message, in order (a null value as nullopt).
void forEachHeader(const rd_kafka_message_t& message,
                   const std::function<void(const char*, std::optional<std::string_view>)>& visit);
// The record as librdkafka gave it.
RawRecord rawRecord(const rd_kafka_message_t& message);
TimestampType timestampTypeOf(rd_kafka_timestamp_type_t type);

class WorkerErrantRecordReporter : public ErrantRecordReporter {
 public:
  WorkerErrantRecordReporter(RetryWithTolerance& handler, std::unique_ptr<Converter> keyConverter,
                             std::unique_ptr<Converter> valueConverter);

  // With errors.tolerance=none the report is made, then ConnectException "Tolerance exceeded in
  // error handler" is thrown (and again after put(), should the task catch it).
  std::future<void> report(const SinkRecord& record, std::exception_ptr error) override;

  // The records of the batch being put, whose bytes as read are sent rather than the record
  // converted back (as Kafka sends a record it gave the task). Not owned; kept until the next.
  void setBatch(std::vector<const rd_kafka_message_t*> batch);
  // Throws "Tolerance exceeded in error handler" once a report was not tolerated.
  void throwIfNotTolerated();

 private:
  RawRecord original(const SinkRecord& record);

  RetryWithTolerance& handler_;
  std::unique_ptr<Converter> keyConverter_;
  std::unique_ptr<Converter> valueConverter_;
  std::mutex mutex_;  // a task may report from its own threads
  std::vector<const rd_kafka_message_t*> batch_;
  std::exception_ptr firstError_;
};

}  // namespace oxbow::connect::runtime
