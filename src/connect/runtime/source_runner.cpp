// WorkerSourceTask's loop over librdkafka's producer.
#include "connect/runtime/source_runner.h"

#include <spdlog/spdlog.h>

#include "oxbow/connect/converters.h"
#include "oxbow/connect/errors.h"

namespace oxbow::connect::runtime {

// What the delivery callback needs of a record; freed by the callback.
struct SourceTaskRunner::Delivery {
  SourceTaskRunner* runner;
  std::shared_ptr<Submitted> submitted;
  SourceRecord record;
};

SourceTaskRunner::SourceTaskRunner(const WorkerConfig& worker, ConnectorConfig connector,
                                   int taskId, Props taskProps, std::unique_ptr<SourceTask> task,
                                   OffsetBackingStore& offsets,
                                   std::optional<SourceTransactions> transactions)
    : TaskRunner(worker, std::move(connector), taskId, std::move(taskProps)),
      task_(std::move(task)),
      offsets_(offsets),
      reader_(offsets, connector_.name),
      transactions_(std::move(transactions)) {
  std::vector<std::pair<std::string, std::string>> settings;
  if (transactions_) {
    // A transaction must end within transaction.timeout.ms, so a record may not wait longer.
    settings = {{"transactional.id", transactions_->transactionalId},
                {"enable.idempotence", "true"},
                {"max.in.flight.requests.per.connection", "5"},
                {"message.timeout.ms", "60000"}};
  }
  producer_ = workerProducer(worker, "connector-producer-" + name(), &SourceTaskRunner::onDelivery,
                             nullptr, settings);
  if (transactions_) openOffsetsTopic();
}

SourceTaskRunner::~SourceTaskRunner() {
  stop();
  if (offsetsTopic_ != nullptr) rd_kafka_topic_destroy(offsetsTopic_);
  // Records still queued (the broker gone past the shutdown timeout) fail through the callback,
  // which frees what it was given, while this runner is still whole.
  rd_kafka_purge(producer_, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
  rd_kafka_poll(producer_, 0);
  rd_kafka_destroy(producer_);
}

void SourceTaskRunner::wake() {
  task_->stop();
}

void SourceTaskRunner::run() {
  task_->initialize(*this);
  task_->start(taskProps_);
  spdlog::info("connect: source task {} started", name());
  if (transactions_) {
    runTransactional();
    return;
  }
  try {
    while (!stopping()) {
      rd_kafka_poll(producer_, 0);
      if (!deliveryError_.empty()) break;
      if (commitDue()) commitOffsets();
      for (const SourceRecord& record : task_->poll()) send(record);
    }
  } catch (...) {
    finish();  // a failing task still commits what the broker acknowledged
    throw;
  }
  finish();
  if (!deliveryError_.empty()) throw ConnectException(deliveryError_);
}

// What was sent is written (or failed) before the offsets are committed a last time.
void SourceTaskRunner::finish() {
  rd_kafka_flush(producer_, static_cast<int>(worker_.taskShutdownTimeoutMs));
  rd_kafka_poll(producer_, 0);
  commitOffsets();
}

// A record dropped by a transform, or failed in a transform or converter with errors.tolerance=all,
// is skipped: its offset may be committed (Kafka's recordDropped).
void SourceTaskRunner::send(const SourceRecord& record) {
  std::shared_ptr<Submitted> submitted = submit(record);
  ErrorContext context;
  context.source = &record;
  std::optional<ConnectRecord> transformed = transform(context, record);
  std::optional<Converted> converted;
  if (transformed) converted = convert(context, *transformed);
  if (!converted) {
    submitted->acked = true;
    task_->commitRecord(record, std::nullopt);
    return;
  }
  produce(*transformed, *converted, std::make_unique<Delivery>(Delivery{this, submitted, record}));
}

// The key, value and headers through the converters (Kafka's convertTransformedRecord).
std::optional<SourceTaskRunner::Converted> SourceTaskRunner::convert(ErrorContext& context,
                                                                     const ConnectRecord& record) {
  using Bytes = std::optional<std::string>;
  const std::string& topic = record.topic();
  std::optional<Bytes> key = errorHandler_.execute<Bytes>(
      context, ErrorStage::KEY_CONVERTER, keyConverterClass_,
      [&] { return keyConverter_->fromConnectData(topic, record.keySchema(), record.key()); });
  std::optional<Bytes> value =
      errorHandler_.execute<Bytes>(context, ErrorStage::VALUE_CONVERTER, valueConverterClass_, [&] {
        return valueConverter_->fromConnectData(topic, record.valueSchema(), record.value());
      });
  std::optional<std::vector<std::pair<std::string, Bytes>>> headers =
      errorHandler_.execute<std::vector<std::pair<std::string, Bytes>>>(
          context, ErrorStage::HEADER_CONVERTER, headerConverterClass_, [&] {
            std::vector<std::pair<std::string, Bytes>> out;
            for (const Header& header : record.headers()) {
              out.emplace_back(header.key, headerConverter_->fromConnectData(topic, header.schema,
                                                                             header.value));
            }
            return out;
          });
  if (context.failed()) return std::nullopt;
  return Converted{std::move(*key), std::move(*value), std::move(*headers)};
}

void SourceTaskRunner::produce(const ConnectRecord& record, Converted& converted,
                               std::unique_ptr<Delivery> delivery) {
  const std::string& topic = record.topic();
  std::optional<std::string>& key = converted.key;
  std::optional<std::string>& value = converted.value;
  rd_kafka_headers_t* headers = rd_kafka_headers_new(converted.headers.size());
  for (const auto& [name, bytes] : converted.headers) {
    rd_kafka_header_add(headers, name.data(), static_cast<ssize_t>(name.size()),
                        bytes ? bytes->data() : nullptr, bytes ? bytes->size() : 0);
  }
  // librdkafka's macros cast their arguments without parentheses.
  const char* keyData = key ? key->data() : nullptr;
  size_t keySize = key ? key->size() : 0;
  char* valueData = value ? value->data() : nullptr;  // copied (RD_KAFKA_MSG_F_COPY)
  size_t valueSize = value ? value->size() : 0;
  int32_t partition = record.kafkaPartition().value_or(RD_KAFKA_PARTITION_UA);
  int64_t timestamp = record.timestamp().value_or(0);
  while (true) {
    rd_kafka_resp_err_t err = rd_kafka_producev(
        producer_, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(partition),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_KEY(keyData, keySize),
        RD_KAFKA_V_VALUE(valueData, valueSize), RD_KAFKA_V_TIMESTAMP(timestamp),
        RD_KAFKA_V_HEADERS(headers), RD_KAFKA_V_OPAQUE(delivery.get()), RD_KAFKA_V_END);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      delivery.release();  // the producer owns the headers, the callback the delivery
      return;
    }
    if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      rd_kafka_headers_destroy(headers);
      throw ConnectException("Could not send a record to " + topic + ": " + rd_kafka_err2str(err));
    }
    if (stopping()) {
      // The broker is not taking records and the task must stop: this one stays unacknowledged,
      // so neither its offset nor any later one of its source partition is committed.
      rd_kafka_headers_destroy(headers);
      return;
    }
    rd_kafka_poll(producer_, 100);  // room is made as deliveries complete
  }
}

std::shared_ptr<SourceTaskRunner::Submitted> SourceTaskRunner::submit(const SourceRecord& record) {
  auto submitted = std::make_shared<Submitted>(Submitted{record.sourceOffset()});
  for (PartitionQueue& queue : submitted_) {
    if (Value(queue.partition) == Value(record.sourcePartition())) {
      queue.records.push_back(submitted);
      return submitted;
    }
  }
  submitted_.push_back(PartitionQueue{record.sourcePartition(), {submitted}});
  return submitted;
}

void SourceTaskRunner::onDelivery(rd_kafka_t* rk, const rd_kafka_message_t* message, void*) {
  std::unique_ptr<Delivery> delivery(static_cast<Delivery*>(message->_private));
  if (!delivery) {  // an offset record of a transaction: its failure fails the commit
    if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      spdlog::warn("connect: {}: an offset record failed: {}", rd_kafka_name(rk),
                   rd_kafka_err2str(message->err));
    }
    return;
  }
  SourceTaskRunner& runner = *delivery->runner;
  if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR && runner.errorHandler_.toleratesAll()) {
    runner.skipFailedDelivery(*delivery, message);
    return;
  }
  if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    // Its offset is never committed, nor any after it in its source partition.
    if (runner.deliveryError_.empty()) {
      runner.deliveryError_ = "Could not write a record to " +
                              std::string(rd_kafka_topic_name(message->rkt)) + ": " +
                              rd_kafka_err2str(message->err);
    }
    return;
  }
  delivery->submitted->acked = true;
  runner.recordActiveTopic(rd_kafka_topic_name(message->rkt));
  rd_kafka_timestamp_type_t type;
  int64_t timestamp = rd_kafka_message_timestamp(message, &type);
  RecordMetadata metadata{rd_kafka_topic_name(message->rkt), message->partition, message->offset,
                          timestamp >= 0 ? std::optional<int64_t>(timestamp) : std::nullopt};
  runner.task_->commitRecord(delivery->record, metadata);
}

// With errors.tolerance=all a record the producer could not write is reported and skipped, as
// Kafka's WorkerSourceTask does.
void SourceTaskRunner::skipFailedDelivery(Delivery& delivery, const rd_kafka_message_t* message) {
  ErrorContext context;
  context.source = &delivery.record;
  std::string text = "Could not write a record to " +
                     std::string(rd_kafka_topic_name(message->rkt)) + ": " +
                     rd_kafka_err2str(message->err);
  errorHandler_.executeFailed(context, ErrorStage::KAFKA_PRODUCE,
                              "org.apache.kafka.connect.runtime.WorkerSourceTask",
                              std::make_exception_ptr(ConnectException(text)));
  delivery.submitted->acked = true;
}

void SourceTaskRunner::commitOffsets() {
  std::vector<std::pair<ValueMap, ValueMap>> committable;
  for (PartitionQueue& queue : submitted_) {
    std::optional<ValueMap> last;
    while (!queue.records.empty() && queue.records.front()->acked) {
      last = std::move(queue.records.front()->offset);
      queue.records.pop_front();
    }
    if (last && !queue.partition.empty()) committable.emplace_back(queue.partition, *last);
  }
  if (committable.empty()) return;
  offsets_.commit(connector_.name, committable);
  task_->commit();
}

}  // namespace oxbow::connect::runtime
