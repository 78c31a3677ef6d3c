// WorkerSinkTask's loop over librdkafka's consumer.
#include "connect/runtime/sink_runner.h"

#include <spdlog/spdlog.h>

#include "connect/runtime/error_reporters.h"
#include "oxbow/connect/converters.h"
#include "oxbow/connect/errors.h"

namespace oxbow::connect::runtime {

namespace {

constexpr int kPollMs = 100;
constexpr size_t kMaxBatch = 500;  // Kafka's max.poll.records default

using PartitionList = std::unique_ptr<rd_kafka_topic_partition_list_t,
                                      decltype(&rd_kafka_topic_partition_list_destroy)>;

PartitionList partitionList(const std::vector<TopicPartition>& partitions) {
  PartitionList list(rd_kafka_topic_partition_list_new(static_cast<int>(partitions.size())),
                     &rd_kafka_topic_partition_list_destroy);
  for (const TopicPartition& tp : partitions) {
    rd_kafka_topic_partition_list_add(list.get(), tp.topic.c_str(), tp.partition);
  }
  return list;
}

std::vector<TopicPartition> fromList(const rd_kafka_topic_partition_list_t* list) {
  std::vector<TopicPartition> out;
  for (int i = 0; i < list->cnt; ++i) {
    out.push_back(TopicPartition{list->elems[i].topic, list->elems[i].partition});
  }
  return out;
}

std::optional<std::string_view> bytes(const void* data, size_t size) {
  if (data == nullptr) return std::nullopt;
  return std::string_view(static_cast<const char*>(data), size);
}

}  // namespace

SinkTaskRunner::SinkTaskRunner(const WorkerConfig& worker, ConnectorConfig connector, int taskId,
                               Props taskProps, std::unique_ptr<SinkTask> task)
    : TaskRunner(worker, std::move(connector), taskId, std::move(taskProps)),
      task_(std::move(task)) {
  // Kafka's worker consumer: the connector's group, offsets committed by the runtime only after
  // the task flushed, a new group starting at the beginning of the topics.
  rd_kafka_conf_t* conf =
      clientConfig({{"bootstrap.servers", worker.bootstrapServers},
                    {"group.id", "connect-" + connector_.name},
                    {"client.id", "connector-consumer-" + name()},
                    {"enable.auto.commit", "false"},
                    {"enable.auto.offset.store", "false"},
                    {"auto.offset.reset", "earliest"}},
                   withConnectorOverrides(worker.consumerOverrides, connector_.consumerOverrides));
  rd_kafka_conf_set_rebalance_cb(conf, &SinkTaskRunner::rebalanceCallback);
  rd_kafka_conf_set_opaque(conf, this);
  char error[512];
  consumer_ = rd_kafka_new(RD_KAFKA_CONSUMER, conf, error, sizeof error);
  if (consumer_ == nullptr) {
    rd_kafka_conf_destroy(conf);
    throw ConnectException(std::string("Could not create the consumer: ") + error);
  }
  rd_kafka_poll_set_consumer(consumer_);
  restarter_ = std::make_unique<rdkafka::FetchRestarter>(consumer_);
}

SinkTaskRunner::~SinkTaskRunner() {
  stop();
  rd_kafka_destroy(consumer_);
}

void SinkTaskRunner::subscribe() {
  // librdkafka reads a subscription starting with ^ as a regular expression.
  std::vector<std::string> topics = connector_.topics;
  if (topics.empty()) topics.push_back("^" + connector_.topicsRegex);
  PartitionList list(rd_kafka_topic_partition_list_new(static_cast<int>(topics.size())),
                     &rd_kafka_topic_partition_list_destroy);
  for (const std::string& topic : topics) {
    rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), RD_KAFKA_PARTITION_UA);
  }
  rd_kafka_resp_err_t err = rd_kafka_subscribe(consumer_, list.get());
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    throw ConnectException(std::string("Could not subscribe: ") + rd_kafka_err2str(err));
  }
}

// Kafka's reporters: the dead letter queue (its topic created first) and, given either it or
// errors.log.enable, the task's errant record reporter.
void SinkTaskRunner::setUpErrorReporting() {
  const ErrorsConfig& errors = connector_.errors;
  if (!errors.dlqTopic.empty()) {
    auto dlq = std::make_unique<DeadLetterQueueReporter>(worker_, connector_.name, taskId_, errors);
    dlq->createTopicIfMissing();
    dlq_ = dlq.get();
    errorHandler_.addReporter(std::move(dlq));
  }
  if (!errors.dlqTopic.empty() || errors.logEnable) {
    errant_ = std::make_unique<WorkerErrantRecordReporter>(
        errorHandler_, connectorConverter(worker_, connector_, true),
        connectorConverter(worker_, connector_, false));
  }
}

void SinkTaskRunner::put(const std::vector<SinkRecord>& records) {
  if (errant_) errant_->setBatch(batchMessages());
  task_->put(records);
  if (errant_) errant_->throwIfNotTolerated();
}

std::vector<const rd_kafka_message_t*> SinkTaskRunner::batchMessages() const {
  std::vector<const rd_kafka_message_t*> out;
  for (const MessagePtr& message : batch_) out.push_back(message.get());
  return out;
}

void SinkTaskRunner::run() {
  setUpErrorReporting();
  task_->initialize(*this);
  task_->start(taskProps_);
  subscribe();
  spdlog::info("connect: sink task {} started", name());
  try {
    while (!stopping()) {
      seekRequested();
      if (dlq_) dlq_->poll();
      std::vector<SinkRecord> records = pollBatch();
      if (callbackError_) std::rethrow_exception(callbackError_);
      if (!records.empty()) put(records);
      if (commitDue() || commitRequested_) commitOffsets();
    }
    commitOffsets();
    task_->close(std::vector<TopicPartition>(assigned_.begin(), assigned_.end()));
    assigned_.clear();
  } catch (...) {
    // A failure not tolerated was reported first: its dead letter is written before the task
    // ends, as Kafka's producer close() waits for what it sent.
    if (dlq_) dlq_->flush(worker_.taskShutdownTimeoutMs);
    closeConsumer();
    task_->stop();
    throw;
  }
  closeConsumer();
  task_->stop();
}

void SinkTaskRunner::closeConsumer() {
  closing_ = true;  // the revocation close() brings has nothing left to commit or close
  if (errant_) errant_->setBatch({});
  batch_.clear();  // librdkafka's messages go before its handle
  rd_kafka_consumer_close(consumer_);
}

std::vector<SinkRecord> SinkTaskRunner::pollBatch() {
  if (errant_) errant_->setBatch({});
  batch_.clear();
  std::vector<SinkRecord> records;
  // A queue that filled is polled briefly, so that its running dry is seen at once.
  int wait = restarter_->watching() ? 1 : kPollMs;
  while (records.size() < kMaxBatch && !stopping()) {
    rd_kafka_message_t* message = rd_kafka_consumer_poll(consumer_, wait);
    if (message == nullptr) {
      restarter_->idle([this](const char* topic, int32_t partition) {
        return paused_.contains(TopicPartition{topic, partition});
      });
      break;
    }
    MessagePtr owned(message, &rd_kafka_message_destroy);
    restarter_->got_record(message->key_len + message->len);
    wait = 0;  // take what is there, then hand it over
    if (message->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) continue;
    if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      spdlog::warn("connect: sink task {}: {}", name(), rd_kafka_message_errstr(message));
      continue;
    }
    TopicPartition tp{rd_kafka_topic_name(message->rkt), message->partition};
    currentOffsets_[tp] = OffsetAndMetadata{message->offset + 1};
    recordActiveTopic(tp.topic);
    if (std::optional<SinkRecord> record = convert(*message)) records.push_back(std::move(*record));
    // Kept while the batch is put, for the errant record reporter to send as read.
    if (errant_) batch_.push_back(std::move(owned));
  }
  return records;
}

Headers SinkTaskRunner::convertHeaders(const rd_kafka_message_t& message,
                                       const std::string& topic) {
  Headers headers;
  forEachHeader(message, [&](const char* name, std::optional<std::string_view> value) {
    headers.add(name, headerConverter_->toConnectHeader(topic, name, value));
  });
  return headers;
}

// Kafka's convertAndTransformRecord: each converter, then each transform, through the error
// handler; nullopt for a record dropped or failed (and tolerated).
std::optional<SinkRecord> SinkTaskRunner::convert(const rd_kafka_message_t& message) {
  std::string topic = rd_kafka_topic_name(message.rkt);
  ErrorContext context;
  context.consumed = [&message] { return rawRecord(message); };
  std::optional<SchemaAndValue> key = errorHandler_.execute<SchemaAndValue>(
      context, ErrorStage::KEY_CONVERTER, keyConverterClass_,
      [&] { return keyConverter_->toConnectData(topic, bytes(message.key, message.key_len)); });
  std::optional<SchemaAndValue> value = errorHandler_.execute<SchemaAndValue>(
      context, ErrorStage::VALUE_CONVERTER, valueConverterClass_,
      [&] { return valueConverter_->toConnectData(topic, bytes(message.payload, message.len)); });
  // A record without headers has nothing to convert, so nothing that could fail.
  rd_kafka_headers_t* raw = nullptr;
  std::optional<Headers> headers;
  if (rd_kafka_message_headers(&message, &raw) == RD_KAFKA_RESP_ERR_NO_ERROR) {
    headers =
        errorHandler_.execute<Headers>(context, ErrorStage::HEADER_CONVERTER, headerConverterClass_,
                                       [&] { return convertHeaders(message, topic); });
  } else {
    headers.emplace();
  }
  if (context.failed()) return std::nullopt;
  rd_kafka_timestamp_type_t type;
  int64_t timestamp = rd_kafka_message_timestamp(&message, &type);
  SinkRecord record(std::move(topic), message.partition, std::move(key->schema),
                    std::move(key->value), std::move(value->schema), std::move(value->value),
                    message.offset,
                    timestamp >= 0 ? std::optional<int64_t>(timestamp) : std::nullopt,
                    timestampTypeOf(type), std::move(*headers));
  if (transforms_->size() == 0) return record;
  std::optional<ConnectRecord> storage;
  const ConnectRecord* transformed = transform(context, record, storage);
  if (transformed == nullptr) return std::nullopt;
  // A transform may change the topic, key, value, timestamp and headers, never where the
  // record was read from.
  return SinkRecord(transformed->topic(), transformed->kafkaPartition().value_or(message.partition),
                    transformed->keySchema(), transformed->key(), transformed->valueSchema(),
                    transformed->value(), message.offset, transformed->timestamp(),
                    timestampTypeOf(type), transformed->headers());
}

// Every record reported is in the dead letter queue before offsets past it are committed.
bool SinkTaskRunner::deadLettersWritten() {
  if (dlq_ == nullptr) return true;
  while (!stopping()) {
    if (dlq_->flush(kPollMs)) return true;
  }
  return dlq_->flush(worker_.taskShutdownTimeoutMs);
}

void SinkTaskRunner::commitOffsets() {
  commitRequested_ = false;
  if (currentOffsets_.empty()) return;
  if (!deadLettersWritten()) {
    spdlog::warn(
        "connect: sink task {} commits no offsets: the dead letter queue has records "
        "not yet written",
        name());
    return;
  }
  SinkOffsets committable = task_->preCommit(currentOffsets_);
  if (committable.empty()) return;
  PartitionList list(rd_kafka_topic_partition_list_new(static_cast<int>(committable.size())),
                     &rd_kafka_topic_partition_list_destroy);
  for (const auto& [tp, offset] : committable) {
    if (!assigned_.contains(tp)) continue;  // revoked meanwhile: no longer ours to commit
    rd_kafka_topic_partition_list_add(list.get(), tp.topic.c_str(), tp.partition)->offset =
        offset.offset;
  }
  if (list->cnt == 0) return;
  rd_kafka_resp_err_t err = rd_kafka_commit(consumer_, list.get(), 0);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    // Not fatal: the records are committed with the next commit, or read again (at least once).
    spdlog::warn("connect: sink task {} could not commit offsets: {}", name(),
                 rd_kafka_err2str(err));
  }
}

void SinkTaskRunner::offset(const std::map<TopicPartition, int64_t>& offsets) {
  for (const auto& [tp, at] : offsets) seeks_[tp] = at;
}

void SinkTaskRunner::offset(const TopicPartition& partition, int64_t offset) {
  seeks_[partition] = offset;
}

void SinkTaskRunner::seekRequested() {
  for (const auto& [tp, at] : seeks_) {
    if (!assigned_.contains(tp)) continue;
    PartitionList list = partitionList({tp});
    list->elems[0].offset = at;
    if (rd_kafka_error_t* error = rd_kafka_seek_partitions(consumer_, list.get(), 1000)) {
      spdlog::warn("connect: sink task {} could not seek: {}", name(),
                   rd_kafka_error_string(error));
      rd_kafka_error_destroy(error);
    }
    currentOffsets_[tp] = OffsetAndMetadata{at};
  }
  seeks_.clear();
}

void SinkTaskRunner::pause(const std::vector<TopicPartition>& partitions) {
  paused_.insert(partitions.begin(), partitions.end());
  PartitionList list = partitionList(partitions);
  rd_kafka_pause_partitions(consumer_, list.get());
}

void SinkTaskRunner::resume(const std::vector<TopicPartition>& partitions) {
  for (const TopicPartition& tp : partitions) paused_.erase(tp);
  PartitionList list = partitionList(partitions);
  rd_kafka_resume_partitions(consumer_, list.get());
}

void SinkTaskRunner::rebalanceCallback(rd_kafka_t*, rd_kafka_resp_err_t err,
                                       rd_kafka_topic_partition_list_t* partitions, void* opaque) {
  static_cast<SinkTaskRunner*>(opaque)->onRebalance(err, partitions);
}

// Served on the task's thread, inside rd_kafka_consumer_poll.
void SinkTaskRunner::onRebalance(rd_kafka_resp_err_t err,
                                 rd_kafka_topic_partition_list_t* partitions) {
  std::vector<TopicPartition> changed = fromList(partitions);
  // An exception must not unwind through librdkafka: the loop rethrows it.
  try {
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
      rd_kafka_assign(consumer_, partitions);
      assigned_.insert(changed.begin(), changed.end());
      task_->open(changed);
      return;
    }
    if (!closing_) {
      // Revoked: what was put is committed before the task lets the partitions go.
      commitOffsets();
      task_->close(changed);
    }
  } catch (...) {
    if (!callbackError_) callbackError_ = std::current_exception();
  }
  for (const TopicPartition& tp : changed) {
    assigned_.erase(tp);
    currentOffsets_.erase(tp);
  }
  rd_kafka_assign(consumer_, nullptr);
}

}  // namespace oxbow::connect::runtime
