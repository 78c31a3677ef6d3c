#include "streams/runtime/streams_producer.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <stdexcept>

namespace oxbow::streams::detail {

StreamsProducer::StreamsProducer(const ThreadConfig& config, ThreadMetrics& metrics)
    : config_(config), metrics_(metrics) {
  // murmur2 on the key bytes, as Java's producer: Java consumers and Kafka Streams agree on
  // where a key lives.
  auto* pconf = client_conf(config_.app, ClientRole::kProducer,
                            {{"client.id", config_.client_id + "-producer"},
                             {"partitioner", "murmur2_random"},
                             {"acks", "all"},
                             {"enable.idempotence", "true"},
                             {"linger.ms", "5"},
                             {"allow.auto.create.topics", "false"}});
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
  write_failed({topic, partition, key, value, rd_kafka_err2str(err)}, delivered != nullptr, true);
  if (!send_error_.empty()) throw StreamsException("cannot send to " + send_error_);
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
  if (m->err)
    self->write_failed({rd_kafka_topic_name(m->rkt), m->partition, bytes_of(m->key, m->key_len),
                        bytes_of(m->payload, m->len), rd_kafka_err2str(m->err)},
                       m->_private != nullptr, false);
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

void StreamsProducer::write_failed(const ProductionError& failure, bool changelog, bool refused) {
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
  if (send_error_.empty()) send_error_ = failure.topic + ": " + failure.error;
}

void StreamsProducer::throw_if_failed() const {
  if (!send_error_.empty()) throw StreamsException("a write failed: " + send_error_);
}

void StreamsProducer::throw_on_error(rd_kafka_error_t* error, const char* step) {
  if (!error) return;
  std::string text = std::string(step) + ": " + rd_kafka_error_string(error);
  bool abortable = rd_kafka_error_txn_requires_abort(error);
  rd_kafka_resp_err_t code = rd_kafka_error_code(error);
  rd_kafka_error_destroy(error);
  if (abortable && in_transaction_) {
    // The transaction's output and offsets are dropped; the stores are ahead of what is committed,
    // so the tasks start again from the last commit: the thread fails, or, when the group merely
    // moved on (Kafka's TaskMigratedException), it rebuilds its tasks and goes on.
    abort_transaction();
    if (code == RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION ||
        code == RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID ||
        code == RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS ||
        code == RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID)
      throw TasksMigrated(text);
  }
  throw StreamsException(text);
}

void StreamsProducer::begin_transaction_if_needed() {
  if (!config_.exactly_once || in_transaction_) return;
  throw_on_error(rd_kafka_begin_transaction(producer_.get()), "begin_transaction");
  in_transaction_ = true;
}

void StreamsProducer::commit_transaction(const rd_kafka_topic_partition_list_t* offsets,
                                         rd_kafka_consumer_group_metadata_t* group) {
  rd_kafka_error_t* error = nullptr;
  if (offsets->cnt > 0)
    error = rd_kafka_send_offsets_to_transaction(producer_.get(), offsets, group, 60000);
  rd_kafka_consumer_group_metadata_destroy(group);
  throw_on_error(error, "send_offsets_to_transaction");
  throw_on_error(rd_kafka_commit_transaction(producer_.get(), 60000), "commit_transaction");
  in_transaction_ = false;
  throw_if_failed();
}

void StreamsProducer::abort_transaction() {
  if (!in_transaction_) return;
  if (auto* error = rd_kafka_abort_transaction(producer_.get(), 30000))
    rd_kafka_error_destroy(error);
  in_transaction_ = false;
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
