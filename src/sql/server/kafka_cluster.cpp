#include "sql/server/kafka_cluster.h"

#include <librdkafka/rdkafka.h>

#include <functional>
#include <stdexcept>

#include "sql/execution/processing_log.h"

namespace oxbow::sql::server {

namespace {

// Bounds every request, so that an unreachable cluster fails a statement instead of hanging it.
constexpr int kRequestTimeoutMs = 10'000;

struct HandleDeleter {
  void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
  void operator()(rd_kafka_queue_t* q) const { rd_kafka_queue_destroy(q); }
  void operator()(rd_kafka_event_t* e) const { rd_kafka_event_destroy(e); }
  void operator()(rd_kafka_AdminOptions_t* o) const { rd_kafka_AdminOptions_destroy(o); }
};
template <class T>
using Owned = std::unique_ptr<T, HandleDeleter>;

[[noreturn]] void fail(const std::string& subject, const std::string& message) {
  throw std::runtime_error(subject + ": " + message);
}

rd_kafka_t* new_producer(const ClientConfig& config, const ClientConfig& extra = {}) {
  return new_kafka_client(RD_KAFKA_PRODUCER, config, extra);
}

// The names of `wanted` the cluster does not have.
std::vector<std::pair<std::string, int>> missing(
    rd_kafka_t* rk, const std::vector<std::pair<std::string, int>>& wanted) {
  const rd_kafka_metadata_t* md = nullptr;
  if (auto err = rd_kafka_metadata(rk, 1, nullptr, &md, kRequestTimeoutMs))
    fail("metadata", rd_kafka_err2str(err));
  std::vector<std::pair<std::string, int>> out;
  for (const auto& topic : wanted) {
    bool found = false;
    for (int i = 0; i < md->topic_cnt && !found; ++i)
      found = topic.first == md->topics[i].topic && !md->topics[i].err;
    if (!found) out.push_back(topic);
  }
  rd_kafka_metadata_destroy(md);
  return out;
}

// Runs one admin request through `call(options, queue)` and returns its result event; throws
// when it timed out or failed as a whole.
Owned<rd_kafka_event_t> admin_request(
    rd_kafka_t* rk, rd_kafka_admin_op_t op, const std::string& subject,
    const std::function<void(rd_kafka_AdminOptions_t*, rd_kafka_queue_t*)>& call) {
  char error[512];
  Owned<rd_kafka_AdminOptions_t> options{rd_kafka_AdminOptions_new(rk, op)};
  rd_kafka_AdminOptions_set_request_timeout(options.get(), kRequestTimeoutMs, error, sizeof error);
  rd_kafka_AdminOptions_set_operation_timeout(options.get(), kRequestTimeoutMs, error,
                                              sizeof error);
  Owned<rd_kafka_queue_t> queue{rd_kafka_queue_new(rk)};
  call(options.get(), queue.get());
  Owned<rd_kafka_event_t> event{rd_kafka_queue_poll(queue.get(), 2 * kRequestTimeoutMs)};
  if (!event) fail(subject, "timed out");
  if (rd_kafka_event_error(event.get())) fail(subject, rd_kafka_event_error_string(event.get()));
  return event;
}

// Fails on the first topic whose error is not `tolerated`.
void check_topics(const rd_kafka_topic_result_t** results, size_t count,
                  rd_kafka_resp_err_t tolerated) {
  for (size_t i = 0; i < count; ++i) {
    auto err = rd_kafka_topic_result_error(results[i]);
    if (err && err != tolerated) {
      const char* text = rd_kafka_topic_result_error_string(results[i]);
      fail(rd_kafka_topic_result_name(results[i]), text ? text : rd_kafka_err2str(err));
    }
  }
}

}  // namespace

rd_kafka_t* new_kafka_client(int type, const ClientConfig& config, const ClientConfig& extra,
                             void (*delivered)(rd_kafka_t*, const rd_kafka_message_t*, void*)) {
  char error[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  for (const auto* settings : {&config, &extra})
    for (const auto& [key, value] : *settings)
      if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), error, sizeof error) !=
          RD_KAFKA_CONF_OK) {
        rd_kafka_conf_destroy(conf);
        fail(key, error);
      }
  if (delivered) rd_kafka_conf_set_dr_msg_cb(conf, delivered);
  rd_kafka_t* rk = rd_kafka_new(static_cast<rd_kafka_type_t>(type), conf, error, sizeof error);
  if (!rk) {
    rd_kafka_conf_destroy(conf);
    fail("kafka client", error);
  }
  return rk;
}

void create_missing_topics(const ClientConfig& config,
                           const std::vector<std::pair<std::string, int>>& wanted) {
  if (wanted.empty()) return;
  Owned<rd_kafka_t> rk{new_producer(config)};
  auto absent = missing(rk.get(), wanted);
  if (absent.empty()) return;
  char error[512];
  std::vector<rd_kafka_NewTopic_t*> topics;
  for (const auto& [name, partitions] : absent)
    topics.push_back(rd_kafka_NewTopic_new(name.c_str(), partitions, -1, error, sizeof error));
  auto event =
      admin_request(rk.get(), RD_KAFKA_ADMIN_OP_CREATETOPICS, "creating topics",
                    [&](rd_kafka_AdminOptions_t* options, rd_kafka_queue_t* queue) {
                      rd_kafka_CreateTopics(rk.get(), topics.data(), topics.size(), options, queue);
                      for (auto* t : topics) rd_kafka_NewTopic_destroy(t);
                    });
  size_t count = 0;
  const auto** results =
      rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(event.get()), &count);
  check_topics(results, count, RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS);
}

void delete_topic(const ClientConfig& config, const std::string& topic) {
  Owned<rd_kafka_t> rk{new_producer(config)};
  rd_kafka_DeleteTopic_t* deleted = rd_kafka_DeleteTopic_new(topic.c_str());
  auto event = admin_request(rk.get(), RD_KAFKA_ADMIN_OP_DELETETOPICS, "deleting " + topic,
                             [&](rd_kafka_AdminOptions_t* options, rd_kafka_queue_t* queue) {
                               rd_kafka_DeleteTopics(rk.get(), &deleted, 1, options, queue);
                               rd_kafka_DeleteTopic_destroy(deleted);
                             });
  size_t count = 0;
  const auto** results =
      rd_kafka_DeleteTopics_result_topics(rd_kafka_event_DeleteTopics_result(event.get()), &count);
  check_topics(results, count, RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART);
}

std::vector<std::pair<std::string, int>> source_topics(const Catalog& catalog) {
  std::vector<std::pair<std::string, int>> topics;
  for (const auto& [name, source] : catalog.sources())
    if (source.partitions) topics.emplace_back(source.topic, *source.partitions);
  return topics;
}

void produce_records(const ClientConfig& config, const std::vector<InsertedRecord>& records) {
  if (records.empty()) return;
  Owned<rd_kafka_t> rk{new_producer(config, {{"enable.idempotence", "true"}})};
  for (const auto& r : records) {
    // The macros cast their arguments without parentheses: plain variables only.
    void* key = r.key ? const_cast<char*>(r.key->data()) : nullptr;
    size_t key_size = r.key ? r.key->size() : 0;
    auto err = rd_kafka_producev(
        rk.get(), RD_KAFKA_V_TOPIC(r.topic.c_str()), RD_KAFKA_V_KEY(key, key_size),
        RD_KAFKA_V_VALUE(const_cast<char*>(r.value.data()), r.value.size()),
        RD_KAFKA_V_TIMESTAMP(r.timestamp), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_END);
    if (err) fail(r.topic, rd_kafka_err2str(err));
  }
  if (auto err = rd_kafka_flush(rk.get(), kRequestTimeoutMs))
    fail("INSERT VALUES", rd_kafka_err2str(err));
}

std::optional<std::string> cluster_id(const ClientConfig& config, int timeout_ms) {
  Owned<rd_kafka_t> rk{new_producer(config)};
  char* id = rd_kafka_clusterid(rk.get(), timeout_ms);
  if (!id) return std::nullopt;
  std::string out = id;
  rd_kafka_mem_free(rk.get(), id);
  return out;
}

std::string processing_log_statement(const std::string& topic) {
  return "CREATE STREAM KSQL_PROCESSING_LOG (LOGGER STRING, LEVEL STRING, TIME BIGINT, MESSAGE "
         "STRUCT<TYPE INT, DESERIALIZATIONERROR STRUCT<TARGET STRING, ERRORMESSAGE STRING, "
         "RECORDB64 STRING, CAUSE ARRAY<STRING>, `topic` STRING>, RECORDPROCESSINGERROR "
         "STRUCT<ERRORMESSAGE STRING, RECORD STRING, CAUSE ARRAY<STRING>>, PRODUCTIONERROR "
         "STRUCT<ERRORMESSAGE STRING>, SERIALIZATIONERROR STRUCT<TARGET STRING, ERRORMESSAGE "
         "STRING, RECORD STRING, CAUSE ARRAY<STRING>, `topic` STRING>, KAFKASTREAMSTHREADERROR "
         "STRUCT<ERRORMESSAGE STRING, THREADNAME STRING, CAUSE ARRAY<STRING>>>) WITH "
         "(KAFKA_TOPIC='" +
         topic + "', VALUE_FORMAT='JSON', PARTITIONS=1);";
}

TopicProcessingLog::TopicProcessingLog(const ClientConfig& config, std::string topic)
    : producer_(new_producer(config)), topic_(std::move(topic)) {}

TopicProcessingLog::~TopicProcessingLog() {
  rd_kafka_flush(producer_, kRequestTimeoutMs);
  rd_kafka_destroy(producer_);
}

void TopicProcessingLog::log(const ProcessingLogEntry& entry) {
  std::string value = processing_log_json(entry);
  rd_kafka_producev(producer_, RD_KAFKA_V_TOPIC(topic_.c_str()),
                    RD_KAFKA_V_VALUE(value.data(), value.size()),
                    RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
  rd_kafka_poll(producer_, 0);
}

}  // namespace oxbow::sql::server
