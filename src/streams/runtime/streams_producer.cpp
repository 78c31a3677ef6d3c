#include "streams/runtime/streams_producer.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string_view>

namespace oxbow::streams::detail {

StreamsProducer::StreamsProducer(const ThreadConfig& config, ThreadMetrics& metrics)
    : config_(config), metrics_(metrics) {
  open();
}

void StreamsProducer::open() {
  // murmur2 on the key bytes, as Java's producer: Java consumers and Kafka Streams agree on
  // where a key lives.
  auto* pconf =
      client_conf(config_.app, ClientRole::kProducer,
                  {{"client.id", config_.client_id + "-producer"},
                   {"partitioner", "murmur2_random"},
                   {"acks", "all"},
                   {"enable.idempotence", "true"},
                   {"linger.ms", "5"},
                   {"allow.auto.create.topics", "false"}},
                  // Kafka's producer gives up on a record after delivery.timeout.ms,
                  // 2 min (librdkafka's default: 5 min): the final commit's flush with
                  // the cluster gone is bounded by it. Under exactly-once
                  // transaction.timeout.ms bounds it instead.
                  config_.exactly_once ? Config{} : Config{{"delivery.timeout.ms", "120000"}});
  if (config_.exactly_once) {
    // As Kafka Streams: a short transaction timeout, so that a crashed thread's open transaction
    // stops holding back read_committed readers within seconds.
    char error[512];
    if (rd_kafka_conf_set(pconf, "transactional.id", config_.transactional_id.c_str(), error,
                          sizeof error) != RD_KAFKA_CONF_OK ||
        rd_kafka_conf_set(pconf, "transaction.timeout.ms", "10000", error, sizeof error) !=
            RD_KAFKA_CONF_OK)
      throw std::invalid_argument(error);
  }
  rd_kafka_conf_set_dr_msg_cb(pconf, &StreamsProducer::delivered);
  rd_kafka_conf_set_opaque(pconf, this);
  producer_ = make_client(RD_KAFKA_PRODUCER, pconf);
  if (config_.exactly_once)
    throw_on_error(rd_kafka_init_transactions(producer_.get(), 60000), "init_transactions");
  purge_results_.reset(rd_kafka_queue_new(producer_.get()));
}

// Under exactly-once, librdkafka (2.0) takes a write refused for an old epoch as being fenced, a
// fatal error; here that is the broker's own abort of a transaction that outlived
// transaction.timeout.ms (it bumps the epoch), since each thread's transactional.id is its own.
// As Kafka Streams does on a ProducerFencedException, a new producer takes over (a new epoch) and
// the tasks start again from their last commit.
void StreamsProducer::replace_failed_producer(const std::string& why) {
  spdlog::warn("stream thread {}: the transactional producer failed ({}); a new one takes over",
               config_.client_id, why);
  in_transaction_ = false;
  send_error_.clear();
  send_error_code_ = RD_KAFKA_RESP_ERR_NO_ERROR;
  topics_.clear();
  purge_results_.reset();
  // Kept, idle, for what holds its handle for metadata queries (the group member's thread).
  rd_kafka_purge(producer_.get(), RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
  retired_.push_back(std::move(producer_));
  open();
  throw TasksMigrated(why);
}

StreamsProducer::~StreamsProducer() = default;

void StreamsProducer::send(const std::string& topic, const std::optional<std::string>& key,
                           const std::optional<std::string>& value, int64_t timestamp,
                           const Headers& headers, int32_t partition, int64_t* delivered) {
  rd_kafka_headers_t* hdrs = headers.empty() ? nullptr : rd_kafka_headers_new(headers.size());
  for (const auto& h : headers)
    rd_kafka_header_add(hdrs, h.key.data(), static_cast<ssize_t>(h.key.size()),
                        h.value ? h.value->data() : nullptr,
                        h.value ? static_cast<ssize_t>(h.value->size()) : 0);
  const void* key_data = key ? key->data() : nullptr;
  size_t key_size = key ? key->size() : 0;
  void* value_data = value ? const_cast<char*>(value->data()) : nullptr;
  size_t value_size = value ? value->size() : 0;
  int32_t target = partition < 0 ? RD_KAFKA_PARTITION_UA : partition;
  rd_kafka_topic_t* handle = topics_.get(producer_.get(), topic);
  auto produce = [&] {
    if (hdrs)
      return rd_kafka_producev(
          producer_.get(), RD_KAFKA_V_RKT(handle), RD_KAFKA_V_PARTITION(target),
          RD_KAFKA_V_KEY(key_data, key_size), RD_KAFKA_V_VALUE(value_data, value_size),
          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_TIMESTAMP(timestamp),
          RD_KAFKA_V_HEADERS(hdrs), RD_KAFKA_V_OPAQUE(delivered), RD_KAFKA_V_END);
    return rd_kafka_producev(
        producer_.get(), RD_KAFKA_V_RKT(handle), RD_KAFKA_V_PARTITION(target),
        RD_KAFKA_V_KEY(key_data, key_size), RD_KAFKA_V_VALUE(value_data, value_size),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_TIMESTAMP(timestamp),
        RD_KAFKA_V_OPAQUE(delivered), RD_KAFKA_V_END);
  };
  rd_kafka_resp_err_t err = handle ? produce() : rd_kafka_last_error();
  while (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
    rd_kafka_poll(producer_.get(), 10);
    err = produce();
  }
  if (!err) return;
  if (hdrs) rd_kafka_headers_destroy(hdrs);
  if ((err == RD_KAFKA_RESP_ERR__STATE || err == RD_KAFKA_RESP_ERR__FATAL) && config_.exactly_once)
    transaction_failed(topic, err);
  write_failed({topic, partition, key, value, rd_kafka_err2str(err)}, err, delivered != nullptr,
               true);
  if (!send_error_.empty()) throw CollectorError("cannot send to " + send_error_);
}

int64_t* StreamsProducer::delivery_slot(const std::string& topic, int32_t partition) {
  return &delivered_offsets_.try_emplace({topic, partition}, -1).first->second;
}

int32_t StreamsProducer::partitions_of(const std::string& topic) {
  auto it = partition_counts_.find(topic);
  if (it != partition_counts_.end()) return it->second;
  int32_t n = std::max(1, partition_count(producer_.get(), topic));
  partition_counts_[topic] = n;
  return n;
}

void StreamsProducer::delivered(rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
  auto* self = static_cast<StreamsProducer*>(opaque);
  if (!m->err && m->_private) {
    auto* slot = static_cast<int64_t*>(m->_private);
    *slot = std::max(*slot, m->offset);
  }
  // An aborted transaction's writes come back purged; its input is processed again, so they
  // are not failures (a membership lost mid-transaction would otherwise fail the thread).
  bool purged =
      m->err == RD_KAFKA_RESP_ERR__PURGE_QUEUE || m->err == RD_KAFKA_RESP_ERR__PURGE_INFLIGHT;
  if (m->err && !(purged && self->config_.exactly_once))
    self->write_failed({rd_kafka_topic_name(m->rkt), m->partition, bytes_of(m->key, m->key_len),
                        bytes_of(m->payload, m->len), rd_kafka_err2str(m->err)},
                       m->err, m->_private != nullptr, false);
}

bool StreamsProducer::production_handler_continues(const ProductionError& failure) {
  try {
    return config_.production_handler(failure) == ProductionExceptionHandlerResponse::CONTINUE;
  } catch (const std::exception& e) {
    spdlog::error("stream thread {}: the production exception handler threw: {}", config_.client_id,
                  e.what());
    return false;
  }
}

void StreamsProducer::write_failed(const ProductionError& failure, rd_kafka_resp_err_t code,
                                   bool changelog, bool refused) {
  // Under exactly-once a write the broker failed has made its transaction abortable: the thread
  // fails whatever the handler would say, and its input is processed again.
  if (config_.production_handler && !changelog && (refused || !config_.exactly_once) &&
      production_handler_continues(failure)) {
    metrics_.production_skipped.add();
    spdlog::warn(
        "stream thread {}: skipping a record the production exception handler lets go: "
        "topic {} partition {}: {}",
        config_.client_id, failure.topic, failure.partition, failure.error);
    return;
  }
  if (send_error_.empty()) {
    send_error_ = failure.topic + ": " + failure.error;
    send_error_code_ = code;
  }
}

void StreamsProducer::throw_if_failed() {
  if (send_error_.empty()) return;
  if (config_.exactly_once && in_transaction_ && transient(send_error_code_))
    transaction_failed(send_error_, send_error_code_);
  throw CollectorError("a write failed: " + send_error_);
}

// Under exactly-once, writes that timed out (the broker stalled past transaction.timeout.ms,
// which bounds message.timeout.ms) or that the broker refused for an old epoch (it aborted the
// transaction itself) leave a transaction that can only be aborted; the input is processed again.
bool StreamsProducer::transient(rd_kafka_resp_err_t code) {
  switch (code) {
    case RD_KAFKA_RESP_ERR__MSG_TIMED_OUT:
    case RD_KAFKA_RESP_ERR__TIMED_OUT:
    case RD_KAFKA_RESP_ERR__TIMED_OUT_QUEUE:
    case RD_KAFKA_RESP_ERR__TRANSPORT:
    case RD_KAFKA_RESP_ERR__STATE:
    case RD_KAFKA_RESP_ERR__FATAL:
    case RD_KAFKA_RESP_ERR__FENCED:
    case RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT:
    case RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH:
    case RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS:
    case RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND:
      return true;
    default:
      return false;
  }
}

void StreamsProducer::transaction_failed(const std::string& what, rd_kafka_resp_err_t code) {
  char reason[512] = "";
  if (rd_kafka_fatal_error(producer_.get(), reason, sizeof reason)) replace_failed_producer(reason);
  std::string text = "the transaction failed (" + what + ": " + rd_kafka_err2str(code) + ")";
  abort_transaction();
  throw TasksMigrated(text);
}

void StreamsProducer::throw_on_error(rd_kafka_error_t* error, const char* step) {
  if (!error) return;
  std::string text = std::string(step) + ": " + rd_kafka_error_string(error);
  bool abortable = rd_kafka_error_txn_requires_abort(error);
  bool fatal = rd_kafka_error_is_fatal(error);
  rd_kafka_error_destroy(error);
  if (fatal && config_.exactly_once && std::string_view(step) != "init_transactions")
    replace_failed_producer(text);
  if (abortable && in_transaction_) {
    // The transaction's output and offsets are dropped; the stores are ahead of what is committed,
    // so every task starts again from the last commit, as Kafka handles a TaskMigratedException
    // (the group moved on, the producer's epoch was bumped) or a TaskCorruptedException.
    abort_transaction();
    throw TasksMigrated(text);
  }
  throw StreamsException(text);
}

void StreamsProducer::begin_transaction_if_needed() {
  if (!config_.exactly_once || in_transaction_) return;
  throw_on_error(rd_kafka_begin_transaction(producer_.get()), "begin_transaction");
  in_transaction_ = true;
}

namespace {

// librdkafka's transactional calls resume where they stopped when called again after a
// retriable error: they are called again for up to kRetryTimedOutFor.

template <typename Call>
rd_kafka_error_t* retried(const std::string& client, const char* step, Call call) {
  auto deadline = std::chrono::steady_clock::now() + kRetryTimedOutFor;
  for (;;) {
    rd_kafka_error_t* error = call();
    if (!error || !rd_kafka_error_is_retriable(error) ||
        std::chrono::steady_clock::now() >= deadline)
      return error;
    spdlog::warn("stream thread {}: {} will be retried: {}", client, step,
                 rd_kafka_error_string(error));
    rd_kafka_error_destroy(error);
  }
}

}  // namespace

void StreamsProducer::commit_transaction(
    const rd_kafka_topic_partition_list_t* offsets, rd_kafka_consumer_group_metadata_t* group,
    const std::map<std::string, rd_kafka_topic_partition_list_t*>& own_groups) {
  using Metadata = std::unique_ptr<rd_kafka_consumer_group_metadata_t,
                                   decltype(&rd_kafka_consumer_group_metadata_destroy)>;
  auto send = [&](const rd_kafka_topic_partition_list_t* list, Metadata metadata) {
    if (list->cnt == 0) return;
    throw_on_error(retried(config_.client_id, "send_offsets_to_transaction",
                           [&] {
                             return rd_kafka_send_offsets_to_transaction(producer_.get(), list,
                                                                         metadata.get(), 60000);
                           }),
                   "send_offsets_to_transaction");
  };
  send(offsets, Metadata(group, &rd_kafka_consumer_group_metadata_destroy));
  for (const auto& [name, list] : own_groups)
    send(list, Metadata(rd_kafka_consumer_group_metadata_new(name.c_str()),
                        &rd_kafka_consumer_group_metadata_destroy));
  throw_on_error(retried(config_.client_id, "commit_transaction",
                         [&] { return rd_kafka_commit_transaction(producer_.get(), 60000); }),
                 "commit_transaction");
  in_transaction_ = false;
  throw_if_failed();
}

void StreamsProducer::abort_transaction() {
  if (!in_transaction_) return;
  // A failure left here shows at the next begin_transaction (a fatal one replaces the producer).
  if (auto* error = retried(config_.client_id, "abort_transaction",
                            [&] { return rd_kafka_abort_transaction(producer_.get(), 30000); })) {
    spdlog::warn("stream thread {}: abort_transaction: {}", config_.client_id,
                 rd_kafka_error_string(error));
    rd_kafka_error_destroy(error);
  }
  in_transaction_ = false;
  // What failed in it failed in a transaction no one will see; its input is processed again.
  send_error_.clear();
  send_error_code_ = RD_KAFKA_RESP_ERR_NO_ERROR;
}

void StreamsProducer::flush() {
  while (rd_kafka_outq_len(producer_.get()) > 0 && send_error_.empty())
    rd_kafka_flush(producer_.get(), 1000);
  throw_if_failed();
}

void StreamsProducer::await_delivery_reports() {
  for (int i = 0; i < 1000 && rd_kafka_outq_len(producer_.get()) > 0; ++i)
    rd_kafka_poll(producer_.get(), 10);
}

void StreamsProducer::delete_records(const rd_kafka_topic_partition_list_t* before) {
  serve_purge_results();
  if (before->cnt == 0) return;
  rd_kafka_DeleteRecords_t* request = rd_kafka_DeleteRecords_new(before);
  rd_kafka_DeleteRecords(producer_.get(), &request, 1, nullptr, purge_results_.get());
  rd_kafka_DeleteRecords_destroy(request);
}

void StreamsProducer::serve_purge_results() {
  while (rd_kafka_event_t* event = rd_kafka_queue_poll(purge_results_.get(), 0)) {
    const rd_kafka_topic_partition_list_t* parts = nullptr;
    if (rd_kafka_event_error(event)) {
      spdlog::warn("stream thread {}: purging repartition topics failed: {}", config_.client_id,
                   rd_kafka_event_error_string(event));
    } else if (const auto* result = rd_kafka_event_DeleteRecords_result(event)) {
      parts = rd_kafka_DeleteRecords_result_offsets(result);
      for (int i = 0; parts && i < parts->cnt; ++i)
        if (parts->elems[i].err)
          spdlog::warn("stream thread {}: purging {}-{} failed: {}", config_.client_id,
                       parts->elems[i].topic, parts->elems[i].partition,
                       rd_kafka_err2str(parts->elems[i].err));
    }
    rd_kafka_event_destroy(event);
  }
}

}  // namespace oxbow::streams::detail
