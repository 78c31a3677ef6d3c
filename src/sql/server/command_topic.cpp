#include "sql/server/command_topic.h"

#include "sql/server/entities.h"

#include <librdkafka/rdkafka.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

namespace oxbow::sql::server {

namespace {

using nlohmann::json;

constexpr int kTimeoutMs = 10'000;

struct Delivery {
  rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR__IN_PROGRESS;
  int64_t offset = -1;
};

void on_delivery(rd_kafka_t*, const rd_kafka_message_t* m, void*) {
  if (auto* d = static_cast<Delivery*>(m->_private)) {
    d->err = m->err;
    d->offset = m->offset;
  }
}

json string_map(const std::map<std::string, std::string>& values) {
  json out = json::object();
  for (const auto& [k, v] : values) out[k] = v;
  return out;
}

// Whether the topic exists, and how many brokers the cluster has.
std::pair<bool, int> look_up(rd_kafka_t* rk, const std::string& topic) {
  const rd_kafka_metadata_t* md = nullptr;
  if (auto err = rd_kafka_metadata(rk, 1, nullptr, &md, kTimeoutMs))
    throw std::runtime_error(std::string("metadata: ") + rd_kafka_err2str(err));
  bool exists = false;
  for (int i = 0; i < md->topic_cnt; ++i)
    exists = exists || (topic == md->topics[i].topic && !md->topics[i].err);
  int brokers = md->broker_cnt;
  rd_kafka_metadata_destroy(md);
  return {exists, brokers};
}

}  // namespace

std::string command_key(const Command& command) {
  // ksqlDB quotes a source's name in its command ids: stream/`PAGEVIEWS`/create.
  std::string id = command.id;
  if (id.starts_with("stream/") || id.starts_with("table/")) {
    auto first = id.find('/'), last = id.rfind('/');
    if (last > first)
      id = id.substr(0, first + 1) + "`" + id.substr(first + 1, last - first - 1) + "`" +
           id.substr(last);
  }
  return json(id).dump();
}

std::string command_value(const Command& command) {
  json value = {{"statement", command.statement},
                {"streamsProperties", string_map(command.streams_properties)},
                {"originalProperties", string_map(command.original_properties)}};
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

Command parse_command(const std::string& key, const std::string& value, int64_t offset) {
  json parsed = json::parse(value, nullptr, false);
  auto statement = parsed.is_object() ? parsed.find("statement") : parsed.end();
  if (!parsed.is_object() || statement == parsed.end() || !statement->is_string())
    throw std::runtime_error("the record at offset " + std::to_string(offset) +
                             " holds no statement");
  Command c;
  json id = json::parse(key, nullptr, false);
  c.id = id.is_string() ? id.get<std::string>() : key;
  c.statement = statement->get<std::string>();
  c.streams_properties = text_fields(parsed, "streamsProperties");
  c.original_properties = text_fields(parsed, "originalProperties");
  c.offset = offset;
  return c;
}

std::string command_topic_name(const std::string& service_id) {
  return "_confluent-ksql-" + service_id + "_command_topic";
}

CommandTopic::CommandTopic(ClientConfig config, std::string topic, std::string transactional_id)
    : config_(std::move(config)),
      topic_(std::move(topic)),
      transactional_id_(std::move(transactional_id)),
      // A statement is answered only once every in-sync replica has it, written once even when
      // the client retries, and bounded in time so that a lost cluster fails the request.
      producer_(new_kafka_client(RD_KAFKA_PRODUCER, config_,
                                 {{"acks", "all"},
                                  {"enable.idempotence", "true"},
                                  {"linger.ms", "0"},
                                  {"message.timeout.ms", std::to_string(kTimeoutMs)}},
                                 on_delivery)) {}

CommandTopic::~CommandTopic() {
  abort();
  rd_kafka_flush(producer_, kTimeoutMs);
  rd_kafka_destroy(producer_);
}

void CommandTopic::create_if_missing() {
  auto [exists, brokers] = look_up(producer_, topic_);
  if (exists) return;
  char error[512];
  const int replication = std::clamp(brokers, 1, 3);
  rd_kafka_NewTopic_t* spec =
      rd_kafka_NewTopic_new(topic_.c_str(), 1, replication, error, sizeof error);
  if (!spec) throw std::runtime_error(topic_ + ": " + error);
  rd_kafka_NewTopic_set_config(spec, "retention.ms", "-1");
  rd_kafka_NewTopic_set_config(spec, "cleanup.policy", "delete");
  rd_kafka_NewTopic_set_config(spec, "min.insync.replicas", replication >= 3 ? "2" : "1");
  rd_kafka_queue_t* queue = rd_kafka_queue_new(producer_);
  rd_kafka_CreateTopics(producer_, &spec, 1, nullptr, queue);
  rd_kafka_event_t* event = rd_kafka_queue_poll(queue, 2 * kTimeoutMs);
  std::string failure = event ? "" : "timed out";
  if (event && rd_kafka_event_error(event)) failure = rd_kafka_event_error_string(event);
  if (event && failure.empty()) {
    size_t n = 0;
    const auto** topics =
        rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(event), &n);
    for (size_t i = 0; i < n; ++i)
      if (auto err = rd_kafka_topic_result_error(topics[i]);
          err && err != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
        failure = rd_kafka_err2str(err);
  }
  if (event) rd_kafka_event_destroy(event);
  rd_kafka_queue_destroy(queue);
  rd_kafka_NewTopic_destroy(spec);
  if (!failure.empty()) throw std::runtime_error("creating " + topic_ + ": " + failure);
  spdlog::info("sql-server: created the command topic {}", topic_);
}

namespace {

// Whether `error` (owned, destroyed here) is none; `what` gets its text.
bool succeeded(rd_kafka_error_t* error, std::string& what) {
  if (!error) return true;
  what = rd_kafka_error_string(error);
  rd_kafka_error_destroy(error);
  return false;
}

// Destroys a transactional producer whose transaction failed, off the request's thread: with the
// cluster gone, librdkafka 2.0.2's rd_kafka_destroy of a producer whose init_transactions or
// abort_transaction timed out never returns, and the request (with the engine's lock) and the
// shutdown that waits for it would wait forever. Its queued records are purged first, so that it
// holds nothing to deliver if the cluster comes back.
void reap(rd_kafka_t* producer) {
  rd_kafka_purge(producer, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
  std::thread([producer] { rd_kafka_destroy(producer); }).detach();
}

}  // namespace

void CommandTopic::begin() {
  abort();
  transaction_ = new_kafka_client(RD_KAFKA_PRODUCER, config_,
                                  {{"transactional.id", transactional_id_},
                                   {"acks", "all"},
                                   {"linger.ms", "0"},
                                   {"transaction.timeout.ms", std::to_string(6 * kTimeoutMs)},
                                   {"message.timeout.ms", std::to_string(kTimeoutMs)}},
                                  on_delivery);
  std::string what;
  if (!succeeded(rd_kafka_init_transactions(transaction_, kTimeoutMs), what) ||
      !succeeded(rd_kafka_begin_transaction(transaction_), what)) {
    reap(transaction_);
    transaction_ = nullptr;
    throw std::runtime_error(topic_ + ": beginning a transaction: " + what);
  }
  learn_topic(transaction_);
}

void CommandTopic::learn_topic(rd_kafka_s* producer) const {
  // A new producer learns the topic's partitions on its first record, and librdkafka 2.0.2 then
  // adds the partition to the transaction a second later: each statement took 1 s. Asked here,
  // the record is registered and sent at once. A failure shows again when the record is sent.
  rd_kafka_topic_t* topic = rd_kafka_topic_new(producer, topic_.c_str(), nullptr);
  const rd_kafka_metadata_t* metadata = nullptr;
  if (rd_kafka_metadata(producer, 0, topic, &metadata, kTimeoutMs) == RD_KAFKA_RESP_ERR_NO_ERROR)
    rd_kafka_metadata_destroy(metadata);
  rd_kafka_topic_destroy(topic);
}

void CommandTopic::abort() {
  if (!transaction_) return;
  std::string what;
  if (!succeeded(rd_kafka_abort_transaction(transaction_, kTimeoutMs), what))
    spdlog::warn("sql-server: {}: aborting: {}", topic_, what);
  reap(transaction_);
  transaction_ = nullptr;
}

int64_t CommandTopic::append(const Command& command) {
  if (!transaction_) return produce(producer_, command);
  std::string what;
  try {
    int64_t offset = produce(transaction_, command);
    if (succeeded(rd_kafka_commit_transaction(transaction_, kTimeoutMs), what)) {
      rd_kafka_destroy(transaction_);
      transaction_ = nullptr;
      return offset;
    }
    what = topic_ + ": " + what;
  } catch (const std::exception& e) {
    what = e.what();
  }
  abort();
  // Most often another server began a transaction meanwhile: its producer fenced this one, whose
  // record librdkafka then purges.
  throw std::runtime_error(what +
                           " (the transaction did not commit: another server may be "
                           "writing at the same time)");
}

int64_t CommandTopic::produce(rd_kafka_t* producer, const Command& command) {
  std::string key = command_key(command), value = command_value(command);
  Delivery delivery;
  auto err = rd_kafka_producev(
      producer, RD_KAFKA_V_TOPIC(topic_.c_str()), RD_KAFKA_V_PARTITION(0),
      RD_KAFKA_V_KEY(key.data(), key.size()), RD_KAFKA_V_VALUE(value.data(), value.size()),
      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_OPAQUE(&delivery), RD_KAFKA_V_END);
  if (err) throw std::runtime_error(topic_ + ": " + rd_kafka_err2str(err));
  // The delivery report comes within message.timeout.ms, success or not.
  while (delivery.err == RD_KAFKA_RESP_ERR__IN_PROGRESS) rd_kafka_poll(producer, 100);
  if (delivery.err) throw std::runtime_error(topic_ + ": " + rd_kafka_err2str(delivery.err));
  return delivery.offset;
}

}  // namespace oxbow::sql::server
