// A sink task's errant records through the connector's error handling.
#include "connect/runtime/errant_reporter.h"

#include "oxbow/connect/converters.h"
#include "oxbow/connect/errors.h"

namespace oxbow::connect::runtime {

namespace {

std::optional<std::string> copied(const void* data, size_t size) {
  if (data == nullptr) return std::nullopt;
  return std::string(static_cast<const char*>(data), size);
}

}  // namespace

TimestampType timestampTypeOf(rd_kafka_timestamp_type_t type) {
  switch (type) {
    case RD_KAFKA_TIMESTAMP_CREATE_TIME:
      return TimestampType::CREATE_TIME;
    case RD_KAFKA_TIMESTAMP_LOG_APPEND_TIME:
      return TimestampType::LOG_APPEND_TIME;
    default:
      return TimestampType::NO_TIMESTAMP_TYPE;
  }
}

void forEachHeader(const rd_kafka_message_t& message,
                   const std::function<void(const char*, std::optional<std::string_view>)>& visit) {
  rd_kafka_headers_t* headers = nullptr;
  if (rd_kafka_message_headers(&message, &headers) != RD_KAFKA_RESP_ERR_NO_ERROR) return;
  const char* name;
  const void* data;
  size_t size;
  for (size_t i = 0; rd_kafka_header_get_all(headers, i, &name, &data, &size) == 0; ++i) {
    visit(name, data == nullptr ? std::nullopt
                                : std::optional<std::string_view>(
                                      std::string_view(static_cast<const char*>(data), size)));
  }
}

RawRecord rawRecord(const rd_kafka_message_t& message) {
  RawRecord record;
  record.topic = rd_kafka_topic_name(message.rkt);
  record.partition = message.partition;
  record.offset = message.offset;
  record.key = copied(message.key, message.key_len);
  record.value = copied(message.payload, message.len);
  forEachHeader(message, [&](const char* name, std::optional<std::string_view> value) {
    record.headers.emplace_back(name, value ? std::optional<std::string>(*value) : std::nullopt);
  });
  rd_kafka_timestamp_type_t type;
  int64_t timestamp = rd_kafka_message_timestamp(&message, &type);
  if (timestamp >= 0) record.timestamp = timestamp;
  record.timestampType = timestampTypeOf(type);
  return record;
}

WorkerErrantRecordReporter::WorkerErrantRecordReporter(RetryWithTolerance& handler,
                                                       std::unique_ptr<Converter> keyConverter,
                                                       std::unique_ptr<Converter> valueConverter)
    : handler_(handler),
      keyConverter_(std::move(keyConverter)),
      valueConverter_(std::move(valueConverter)) {}

void WorkerErrantRecordReporter::setBatch(std::vector<const rd_kafka_message_t*> batch) {
  std::lock_guard lock(mutex_);
  batch_ = std::move(batch);
}

// A record of the current batch is sent as it was read; another (one the task kept from an
// earlier batch, or made) converted back by the connector's converters, as Kafka does for a
// record that is not its own.
RawRecord WorkerErrantRecordReporter::original(const SinkRecord& record) {
  for (const rd_kafka_message_t* message : batch_) {
    if (message->offset == record.kafkaOffset() &&
        message->partition == record.kafkaPartition().value_or(-1) &&
        record.topic() == rd_kafka_topic_name(message->rkt)) {
      return rawRecord(*message);
    }
  }
  RawRecord raw;
  raw.topic = record.topic();
  raw.partition = record.kafkaPartition().value_or(0);
  raw.offset = record.kafkaOffset();
  raw.key = keyConverter_->fromConnectData(raw.topic, record.keySchema(), record.key());
  raw.value = valueConverter_->fromConnectData(raw.topic, record.valueSchema(), record.value());
  StringConverter headerConverter;
  headerConverter.configure({}, false);
  for (const Header& header : record.headers()) {
    raw.headers.emplace_back(
        header.key, headerConverter.fromConnectData(raw.topic, header.schema, header.value));
  }
  raw.timestamp = record.timestamp();
  raw.timestampType = record.timestampType();
  return raw;
}

std::future<void> WorkerErrantRecordReporter::report(const SinkRecord& record,
                                                     std::exception_ptr error) {
  std::lock_guard lock(mutex_);
  RawRecord raw = original(record);
  ErrorContext context;
  context.consumed = [&raw] { return raw; };
  if (!firstError_) firstError_ = error;
  return handler_.executeFailed(context, ErrorStage::TASK_PUT,
                                "org.apache.kafka.connect.sink.SinkTask", error);
}

void WorkerErrantRecordReporter::throwIfNotTolerated() {
  std::exception_ptr error;
  {
    std::lock_guard lock(mutex_);
    error = firstError_;
  }
  if (!error || handler_.withinToleranceLimits()) return;
  try {
    std::rethrow_exception(error);
  } catch (...) {
    std::throw_with_nested(ConnectException("Tolerance exceeded in error handler"));
  }
}

}  // namespace oxbow::connect::runtime
