// WorkerSourceTask's loop over librdkafka's producer.
#include "connect/runtime/source_runner.h"

#include <spdlog/spdlog.h>

#include <algorithm>

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
                             nullptr, settings, connector_.producerOverrides);
  if (transactions_) openOffsetsTopic();
}

SourceTaskRunner::~SourceTaskRunner() {
  stop();
  if (offsetsTopic_ != nullptr) rd_kafka_topic_destroy(offsetsTopic_);
  for (auto& [topic, handle] : topics_) rd_kafka_topic_destroy(handle);
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
      for (SourceRecord& record : task_->poll()) send(std::move(record));
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
// The record moves into its delivery, which the callback frees: never copied on its way.
void SourceTaskRunner::send(SourceRecord&& polled) {
  std::shared_ptr<Submitted> submitted = submit(polled);
  auto delivery = std::make_unique<Delivery>(Delivery{this, submitted, std::move(polled)});
  const SourceRecord& record = delivery->record;
  ErrorContext context;
  context.source = &record;
  std::optional<ConnectRecord> storage;
  const ConnectRecord* transformed = transform(context, record, storage);
  std::optional<Converted> converted;
  if (transformed) converted = convert(context, *transformed);
  if (!converted) {
    submitted->acked = true;
    task_->commitRecord(record, std::nullopt);
    return;
  }
  produce(*transformed, *converted, std::move(delivery));
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
  rd_kafka_topic_t* handle = topicHandle(topic);
  std::optional<std::string>& key = converted.key;
  std::optional<std::string>& value = converted.value;
  rd_kafka_headers_t* headers = nullptr;  // none for most records: nothing to allocate
  if (!converted.headers.empty()) {
    headers = rd_kafka_headers_new(converted.headers.size());
    for (const auto& [name, bytes] : converted.headers) {
      rd_kafka_header_add(headers, name.data(), static_cast<ssize_t>(name.size()),
                          bytes ? bytes->data() : nullptr, bytes ? bytes->size() : 0);
    }
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
        producer_, RD_KAFKA_V_RKT(handle), RD_KAFKA_V_PARTITION(partition),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_KEY(keyData, keySize),
        RD_KAFKA_V_VALUE(valueData, valueSize), RD_KAFKA_V_TIMESTAMP(timestamp),
        RD_KAFKA_V_HEADERS(headers), RD_KAFKA_V_OPAQUE(delivery.get()), RD_KAFKA_V_END);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      delivery.release();  // the producer owns the headers, the callback the delivery
      return;
    }
    if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      if (headers != nullptr) rd_kafka_headers_destroy(headers);
      throw ConnectException("Could not send a record to " + topic + ": " + rd_kafka_err2str(err));
    }
    if (stopping()) {
      // The broker is not taking records and the task must stop: this one stays unacknowledged,
      // so neither its offset nor any later one of its source partition is committed.
      if (headers != nullptr) rd_kafka_headers_destroy(headers);
      return;
    }
    rd_kafka_poll(producer_, 100);  // room is made as deliveries complete
  }
}

namespace {

// Equal as Value's maps are, whatever the order of their entries; checked in order first, the
// order a connector that builds its partitions one way always gives.
bool samePartition(const ValueMap& a, const ValueMap& b) {
  if (a.size() != b.size()) return false;
  if (a == b) return true;
  return std::all_of(a.begin(), a.end(), [&b](const std::pair<Value, Value>& entry) {
    return std::find(b.begin(), b.end(), entry) != b.end();
  });
}

}  // namespace

// A handle per topic, kept: naming the topic in each produce call looks it up under the client's
// lock. A topic's first record asks for its metadata, which librdkafka 2.0.2 would otherwise
// fetch only at its next 1 s refresh, holding the records until then; the request waits at most
// kFirstMetadataMs, so a broker that is away delays the task that long once per topic.
rd_kafka_topic_t* SourceTaskRunner::topicHandle(const std::string& topic) {
  if (lastTopic_ != nullptr && lastTopicName_ == topic) return lastTopic_;
  auto found = topics_.find(topic);
  if (found == topics_.end()) {
    rd_kafka_topic_t* handle = rd_kafka_topic_new(producer_, topic.c_str(), nullptr);
    if (handle == nullptr) {
      throw ConnectException("Could not send a record to " + topic + ": " +
                             rd_kafka_err2str(rd_kafka_last_error()));
    }
    found = topics_.emplace(topic, handle).first;
    const rd_kafka_metadata_t* metadata = nullptr;
    if (rd_kafka_metadata(producer_, 0, handle, &metadata, kFirstMetadataMs) ==
        RD_KAFKA_RESP_ERR_NO_ERROR) {
      rd_kafka_metadata_destroy(metadata);
    }
  }
  lastTopicName_ = found->first;
  lastTopic_ = found->second;
  return lastTopic_;
}

// A task's records mostly come from one source partition in runs: the last queue matched is
// tried first.
std::shared_ptr<SourceTaskRunner::Submitted> SourceTaskRunner::submit(const SourceRecord& record) {
  auto submitted = std::make_shared<Submitted>(Submitted{record.sourceOffset()});
  const ValueMap& partition = record.sourcePartition();
  if (lastQueue_ < submitted_.size() &&
      samePartition(submitted_[lastQueue_].partition, partition)) {
    submitted_[lastQueue_].records.push_back(submitted);
    return submitted;
  }
  for (size_t i = 0; i < submitted_.size(); ++i) {
    if (samePartition(submitted_[i].partition, partition)) {
      submitted_[i].records.push_back(submitted);
      lastQueue_ = i;
      return submitted;
    }
  }
  submitted_.push_back(PartitionQueue{partition, {submitted}});
  lastQueue_ = submitted_.size() - 1;
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
  // Called from librdkafka's C callback, which no exception may cross: a task that throws here
  // fails as one that throws in poll() does.
  try {
    runner.task_->commitRecord(delivery->record, metadata);
  } catch (const std::exception& e) {
    if (runner.deliveryError_.empty()) {
      runner.deliveryError_ = std::string("The task failed in commitRecord: ") + e.what();
    }
  }
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
