// The log and dead letter queue reporters over spdlog and librdkafka.
#include "connect/runtime/error_reporters.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <memory>

#include "connect/runtime/task_runner.h"
#include "oxbow/connect/errors.h"

namespace oxbow::connect::runtime {

namespace {

constexpr int kAdminTimeoutMs = 30'000;

std::future<void> done() {
  std::promise<void> promise;
  promise.set_value();
  return promise.get_future();
}

const char* timestampTypeName(TimestampType type) {
  return type == TimestampType::CREATE_TIME ? "CreateTime" : "LogAppendTime";
}

std::string consumedText(const RawRecord& record) {
  std::string text = ", where consumed record is {topic='" + record.topic +
                     "', partition=" + std::to_string(record.partition) +
                     ", offset=" + std::to_string(record.offset);
  if (record.timestamp && record.timestampType != TimestampType::NO_TIMESTAMP_TYPE) {
    text += ", timestamp=" + std::to_string(*record.timestamp) +
            ", timestampType=" + timestampTypeName(record.timestampType);
  }
  return text + "}";
}

std::string sourceText(const SourceRecord& record) {
  return ", where source record is = SourceRecord{sourcePartition=" +
         Value(record.sourcePartition()).toString() +
         ", sourceOffset=" + Value(record.sourceOffset()).toString() + "} " + record.toString();
}

using Metadata = std::unique_ptr<const rd_kafka_metadata_t, decltype(&rd_kafka_metadata_destroy)>;

}  // namespace

std::string LogReporter::message(const ErrorContext& context) const {
  std::string text = "Error encountered in task " + taskName_ + ". Executing stage '" +
                     errorStageName(context.stage) + "' with class '" +
                     (context.executingClass.empty() ? "null" : context.executingClass) + "'";
  if (includeMessages_ && context.consumed) text += consumedText(context.consumed());
  if (includeMessages_ && context.source != nullptr) text += sourceText(*context.source);
  return text + ".";
}

std::future<void> LogReporter::report(const ErrorContext& context) {
  if (!context.failed()) return done();
  spdlog::error("connect: {} {}", message(context), exceptionTrace(context.error, true));
  return done();
}

DeadLetterQueueReporter::DeadLetterQueueReporter(const WorkerConfig& worker, std::string connector,
                                                 int taskId, const ErrorsConfig& config)
    : connector_(std::move(connector)), taskId_(taskId), config_(config) {
  producer_ =
      workerProducer(worker, "connector-dlq-producer-" + connector_ + "-" + std::to_string(taskId),
                     &DeadLetterQueueReporter::onDelivery, this);
}

DeadLetterQueueReporter::~DeadLetterQueueReporter() {
  // What was not delivered fails through the callback, which frees what it was given.
  rd_kafka_purge(producer_, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
  rd_kafka_poll(producer_, 0);
  rd_kafka_destroy(producer_);
}

void DeadLetterQueueReporter::createTopicIfMissing() {
  const std::string& topic = config_.dlqTopic;
  const std::string failure = "Could not initialize dead letter queue with topic=" + topic + ": ";
  const rd_kafka_metadata_t* raw = nullptr;
  rd_kafka_resp_err_t err = rd_kafka_metadata(producer_, 1, nullptr, &raw, kAdminTimeoutMs);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) throw ConnectException(failure + rd_kafka_err2str(err));
  Metadata metadata(raw, &rd_kafka_metadata_destroy);
  for (int i = 0; i < metadata->topic_cnt; ++i) {
    if (topic == metadata->topics[i].topic && metadata->topics[i].err == 0) return;
  }
  int replication = config_.dlqReplicationFactor;
  if (replication > metadata->broker_cnt) {
    // Kafka would fail the task; a smaller cluster (a development broker) gets what it allows.
    spdlog::warn(
        "connect: the cluster has {} broker(s): dead letter queue topic {} is created "
        "with replication factor {}, not {}",
        metadata->broker_cnt, topic, metadata->broker_cnt, replication);
    replication = metadata->broker_cnt;
  }
  spdlog::info("connect: creating dead letter queue topic {}", topic);
  char error[512];
  rd_kafka_NewTopic_t* newTopic =
      rd_kafka_NewTopic_new(topic.c_str(), 1, replication, error, sizeof error);
  if (newTopic == nullptr) throw ConnectException(failure + error);
  rd_kafka_queue_t* queue = rd_kafka_queue_new(producer_);
  rd_kafka_CreateTopics(producer_, &newTopic, 1, nullptr, queue);
  rd_kafka_NewTopic_destroy(newTopic);
  rd_kafka_event_t* event = rd_kafka_queue_poll(queue, kAdminTimeoutMs + 5000);
  rd_kafka_queue_destroy(queue);
  if (event == nullptr) throw ConnectException(failure + "timed out");
  std::unique_ptr<rd_kafka_event_t, decltype(&rd_kafka_event_destroy)> owned(
      event, &rd_kafka_event_destroy);
  err = rd_kafka_event_error(event);
  std::string text = err ? rd_kafka_event_error_string(event) : "";
  if (!err) {
    size_t count = 0;
    const rd_kafka_topic_result_t** results =
        rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(event), &count);
    if (count > 0) err = rd_kafka_topic_result_error(results[0]);
    if (count > 0 && err) text = rd_kafka_topic_result_error_string(results[0]);
  }
  if (err && err != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) throw ConnectException(failure + text);
}

std::vector<std::pair<std::string, std::string>> DeadLetterQueueReporter::contextHeaders(
    const ErrorContext& context, const RawRecord& record) const {
  const std::string prefix = "__connect.errors.";
  std::vector<std::pair<std::string, std::string>> headers = {
      {prefix + "topic", record.topic},
      {prefix + "partition", std::to_string(record.partition)},
      {prefix + "offset", std::to_string(record.offset)},
      {prefix + "connector.name", connector_},
      {prefix + "task.id", std::to_string(taskId_)},
      {prefix + "stage", errorStageName(context.stage)},
      {prefix + "class.name", context.executingClass}};
  if (context.error) {
    headers.emplace_back(prefix + "exception.class.name", exceptionClassName(context.error));
    headers.emplace_back(prefix + "exception.message", exceptionMessage(context.error));
    headers.emplace_back(prefix + "exception.stacktrace", exceptionTrace(context.error, true));
  }
  return headers;
}

std::future<void> DeadLetterQueueReporter::report(const ErrorContext& context) {
  ++produceRequests_;
  if (!context.consumed) {
    ++produceFailures_;
    return done();
  }
  RawRecord record = context.consumed();
  rd_kafka_headers_t* headers = rd_kafka_headers_new(record.headers.size() + 10);
  for (const auto& [name, value] : record.headers) {
    rd_kafka_header_add(headers, name.data(), static_cast<ssize_t>(name.size()),
                        value ? value->data() : nullptr, value ? value->size() : 0);
  }
  if (config_.dlqContextHeaders) {
    for (const auto& [name, value] : contextHeaders(context, record)) {
      rd_kafka_header_add(headers, name.data(), static_cast<ssize_t>(name.size()), value.data(),
                          value.size());
    }
  }
  auto promise = std::make_unique<std::promise<void>>();
  std::future<void> future = whenDelivered(promise->get_future());
  // librdkafka's macros cast their arguments without parentheses.
  const char* keyData = record.key ? record.key->data() : nullptr;
  size_t keySize = record.key ? record.key->size() : 0;
  char* valueData = record.value ? record.value->data() : nullptr;
  size_t valueSize = record.value ? record.value->size() : 0;
  int64_t timestamp = record.timestamp.value_or(0);
  rd_kafka_resp_err_t err = rd_kafka_producev(
      producer_, RD_KAFKA_V_TOPIC(config_.dlqTopic.c_str()),
      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_KEY(keyData, keySize),
      RD_KAFKA_V_VALUE(valueData, valueSize), RD_KAFKA_V_TIMESTAMP(timestamp),
      RD_KAFKA_V_HEADERS(headers), RD_KAFKA_V_OPAQUE(promise.get()), RD_KAFKA_V_END);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    rd_kafka_headers_destroy(headers);
    ++produceFailures_;
    spdlog::error("connect: could not produce to dead letter queue topic {}: {}", config_.dlqTopic,
                  rd_kafka_err2str(err));
    promise->set_exception(std::make_exception_ptr(
        ConnectException("Could not produce to dead letter queue topic " + config_.dlqTopic)));
    return future;
  }
  promise.release();  // the delivery callback owns it
  return future;
}

// Delivery reports are served by rd_kafka_poll: waiting on the task's thread (a task's get() in
// put()) polls, so that it never waits for the loop it holds up.
std::future<void> DeadLetterQueueReporter::whenDelivered(std::future<void> delivered) {
  return std::async(std::launch::deferred, [this, delivered = std::move(delivered)]() mutable {
    while (delivered.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
      rd_kafka_poll(producer_, 100);
    }
    delivered.get();
  });
}

void DeadLetterQueueReporter::onDelivery(rd_kafka_t*, const rd_kafka_message_t* message,
                                         void* opaque) {
  std::unique_ptr<std::promise<void>> promise(static_cast<std::promise<void>*>(message->_private));
  auto* self = static_cast<DeadLetterQueueReporter*>(opaque);
  if (message->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    promise->set_value();
    return;
  }
  ++self->produceFailures_;
  std::string text =
      "Could not produce message to dead letter queue. topic=" + self->config_.dlqTopic + ": " +
      rd_kafka_err2str(message->err);
  spdlog::error("connect: {}", text);
  promise->set_exception(std::make_exception_ptr(ConnectException(text)));
}

void DeadLetterQueueReporter::poll() {
  rd_kafka_poll(producer_, 0);
}

bool DeadLetterQueueReporter::flush(int64_t timeoutMs) {
  rd_kafka_flush(producer_, static_cast<int>(timeoutMs));
  rd_kafka_poll(producer_, 0);
  return rd_kafka_outq_len(producer_) == 0;
}

}  // namespace oxbow::connect::runtime
