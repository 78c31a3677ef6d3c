#include "registry/server/kafka_log.h"
#include "rdkafka/offsets.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <thread>

namespace oxbow::registry::server {

namespace {

rd_kafka_t* make_client(rd_kafka_type_t type, const KafkaLogConfig& config,
                        const std::vector<std::pair<const char*, std::string>>& settings,
                        void (*delivered)(rd_kafka_t*, const rd_kafka_message_t*,
                                          void*) = nullptr) {
  char error[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  auto set = [&](const char* key, const std::string& value) {
    if (rd_kafka_conf_set(conf, key, value.c_str(), error, sizeof error) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      throw std::runtime_error(std::string(key) + ": " + error);
    }
  };
  set("bootstrap.servers", config.bootstrap_servers);
  // A lookup of the topic must not create it: a broker auto-creating topics would make it with
  // its own num.partitions and cleanup policy, which ensure_topic() would then refuse. The topic
  // is created here, as Confluent's registry does (one partition, compacted).
  set("allow.auto.create.topics", "false");
  for (const auto& [key, value] : settings) set(key, value);
  if (delivered) rd_kafka_conf_set_dr_msg_cb(conf, delivered);
  rd_kafka_t* rk = rd_kafka_new(type, conf, error, sizeof error);
  if (!rk) {
    rd_kafka_conf_destroy(conf);
    throw std::runtime_error(std::string("cannot create a Kafka client: ") + error);
  }
  return rk;
}

struct Delivery {
  rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR__IN_PROGRESS;
  int64_t offset = -1;
};

void on_delivery(rd_kafka_t*, const rd_kafka_message_t* m, void*) {
  auto* d = static_cast<Delivery*>(m->_private);
  if (!d) return;
  d->err = m->err;
  d->offset = m->offset;
}

std::optional<std::string> bytes(const void* data, size_t size) {
  if (!data) return std::nullopt;
  return std::string(static_cast<const char*>(data), size);
}

struct TopicLookup {
  bool exists = false;
  int partitions = 0;
  int brokers = 0;
};

// Asked on a client that cannot auto-create (make_client), as Confluent's registry describes
// the topic without creating it. The answer also tells the client what it now knows of it.
TopicLookup look_up(rd_kafka_t* client, const std::string& name, int timeout_ms) {
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_topic_t* handle = rd_kafka_topic_new(client, name.c_str(), nullptr);
  rd_kafka_resp_err_t err = rd_kafka_metadata(client, 0, handle, &md, timeout_ms);
  rd_kafka_topic_destroy(handle);
  if (err)
    throw std::runtime_error(std::string("cannot reach the cluster: ") + rd_kafka_err2str(err));
  TopicLookup found;
  found.brokers = md->broker_cnt;
  found.exists = md->topic_cnt == 1 && md->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR;
  if (found.exists) found.partitions = md->topics[0].partition_cnt;
  rd_kafka_metadata_destroy(md);
  return found;
}

std::string or_name(const char* text, rd_kafka_resp_err_t err) {
  return text ? text : rd_kafka_err2str(err);
}

// One partition, compacted; the reason it failed, if it did (one made meanwhile by another
// instance is fine).
std::optional<std::string> create(rd_kafka_t* client, const std::string& name, int replication,
                                  int timeout_ms) {
  char error[512];
  rd_kafka_NewTopic_t* topic =
      rd_kafka_NewTopic_new(name.c_str(), 1, replication, error, sizeof error);
  if (!topic) return std::string(error);
  rd_kafka_NewTopic_set_config(topic, "cleanup.policy", "compact");
  rd_kafka_queue_t* queue = rd_kafka_queue_new(client);
  rd_kafka_CreateTopics(client, &topic, 1, nullptr, queue);
  rd_kafka_event_t* event = rd_kafka_queue_poll(queue, timeout_ms);
  std::optional<std::string> failure;
  if (!event) {
    failure = "timed out";
  } else {
    size_t n = 0;
    const auto* result = rd_kafka_event_CreateTopics_result(event);
    const auto** topics = result ? rd_kafka_CreateTopics_result_topics(result, &n) : nullptr;
    if (auto e = rd_kafka_event_error(event))
      failure = or_name(rd_kafka_event_error_string(event), e);
    for (size_t i = 0; i < n && !failure; ++i)
      if (auto e = rd_kafka_topic_result_error(topics[i]);
          e && e != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
        failure = or_name(rd_kafka_topic_result_error_string(topics[i]), e);
    rd_kafka_event_destroy(event);
  }
  rd_kafka_queue_destroy(queue);
  rd_kafka_NewTopic_destroy(topic);
  return failure;
}

}  // namespace

KafkaLog::KafkaLog(KafkaLogConfig config) : config_(std::move(config)) {}

KafkaLog::~KafkaLog() {
  stop();
}

void KafkaLog::start() {
  producer_ = make_client(RD_KAFKA_PRODUCER, config_,
                          {{"acks", "all"}, {"enable.idempotence", "true"}, {"linger.ms", "0"}},
                          on_delivery);
  ensure_topic();
  if (char* id = rd_kafka_clusterid(producer_, config_.timeout_ms)) {
    cluster_id_ = id;
    rd_kafka_mem_free(producer_, id);
  }
  consumer_ = make_client(RD_KAFKA_CONSUMER, config_,
                          {{"group.id", "oxbow-registry-reader"},
                           {"enable.auto.commit", "false"},
                           {"enable.partition.eof", "false"}});
  auto* list = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(list, config_.topic.c_str(), 0)->offset =
      RD_KAFKA_OFFSET_BEGINNING;
  rd_kafka_resp_err_t err = rd_kafka_assign(consumer_, list);
  rd_kafka_topic_partition_list_destroy(list);
  if (err)
    throw std::runtime_error(std::string("cannot read ") + config_.topic + ": " +
                             rd_kafka_err2str(err));
  reader_ = std::thread([this] { read_loop(); });
  int64_t end = end_offset();
  if (end > 0 && !apply_pending(end - 1))
    throw std::runtime_error("could not read " + config_.topic + " to its end (offset " +
                             std::to_string(end) + ") within " +
                             std::to_string(config_.timeout_ms) + " ms");
  spdlog::info("registry: read {} to offset {}: {} subjects, ids up to {}", config_.topic, end,
               state_.subjects(true).size(), state_.max_id());
}

void KafkaLog::stop() {
  stopping_ = true;
  if (reader_.joinable()) reader_.join();
  if (consumer_) {
    rd_kafka_consumer_close(consumer_);
    rd_kafka_destroy(consumer_);
    consumer_ = nullptr;
  }
  if (producer_) {
    rd_kafka_flush(producer_, 5000);
    rd_kafka_destroy(producer_);
    producer_ = nullptr;
  }
}

void KafkaLog::ensure_topic() {
  TopicLookup found = look_up(producer_, config_.topic, config_.timeout_ms);
  if (found.exists && found.partitions != 1)
    throw std::runtime_error("The schema topic " + config_.topic +
                             " should have only 1 partition but has " +
                             std::to_string(found.partitions));
  if (found.exists) return;
  // As Confluent's: kafkastore.topic.replication.factor, at most the brokers there are.
  int replication = std::min(std::max(found.brokers, 1), config_.replication_factor);
  if (auto failure = create(producer_, config_.topic, replication, config_.timeout_ms))
    throw std::runtime_error("cannot create " + config_.topic + ": " + *failure);
  spdlog::info("registry: created {} (1 partition, compacted)", config_.topic);
  // The producer took the topic for missing when it asked, and would answer for it at once
  // with an unknown partition until it learns otherwise.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(config_.timeout_ms);
  while (!look_up(producer_, config_.topic, config_.timeout_ms).exists) {
    if (std::chrono::steady_clock::now() >= deadline)
      throw std::runtime_error("created " + config_.topic + ", which the cluster does not show");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

int64_t KafkaLog::end_offset() {
  int64_t low = 0, high = 0;
  // Asked on the producer's connection: the consumer's has a long-polling fetch in front of it,
  // which a broker answering in order would make this wait behind.
  rd_kafka_resp_err_t err =
      rdkafka::query_watermarks(producer_, config_.topic, 0, &low, &high, config_.timeout_ms);
  if (err)
    throw std::runtime_error("cannot find the end of " + config_.topic + ": " +
                             rd_kafka_err2str(err));
  return high;
}

void KafkaLog::read_loop() {
  while (!stopping_) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer_, 100);
    if (!m) continue;
    if (m->err) {
      if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF)
        spdlog::warn("registry: reading {}: {}", config_.topic, rd_kafka_message_errstr(m));
    } else {
      std::lock_guard lock(mutex_);
      queue_.push_back({m->offset, bytes(m->key, m->key_len), bytes(m->payload, m->len)});
      arrived_.notify_all();
    }
    rd_kafka_message_destroy(m);
  }
}

bool KafkaLog::apply_pending(int64_t until) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(config_.timeout_ms);
  while (true) {
    std::deque<Pending> batch;
    {
      std::unique_lock lock(mutex_);
      if (queue_.empty() && until >= 0 && applied_ < until)
        arrived_.wait_until(lock, deadline, [&] { return !queue_.empty(); });
      batch.swap(queue_);
    }
    for (auto& p : batch) {
      applied_ = p.offset;
      if (!p.key) continue;
      auto key = store::decode_key(*p.key);
      if (!key.value) {
        ++refused_;
        spdlog::warn("registry: skipping offset {} of {}: {}", p.offset, config_.topic, key.error);
        continue;
      }
      std::optional<store::RecordValue> value;
      if (p.value && key.value->type != store::KeyType::kNoop) {
        auto decoded = store::decode_value(*key.value, *p.value);
        if (!decoded.value) {
          ++refused_;
          spdlog::warn("registry: skipping offset {} of {}: {}", p.offset, config_.topic,
                       decoded.error);
          continue;
        }
        value = std::move(decoded.value);
      } else if (key.value->type == store::KeyType::kNoop) {
        continue;
      }
      if (auto error = state_.apply(*key.value, value); !error.empty()) {
        ++refused_;
        spdlog::warn("registry: skipping offset {} of {}: {}", p.offset, config_.topic, error);
      }
    }
    if (until < 0 || applied_ >= until) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
  }
}

void KafkaLog::sync() {
  apply_pending(-1);
}

bool KafkaLog::catch_up() {
  try {
    int64_t end = end_offset();
    return end <= 0 || apply_pending(end - 1);
  } catch (const std::exception& e) {
    spdlog::warn("registry: {}", e.what());
    return false;
  }
}

std::optional<std::string> KafkaLog::append(const std::vector<LogRecord>& records) {
  std::vector<Delivery> deliveries(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    std::string key = store::encode_key(records[i].first);
    std::optional<std::string> value;
    if (records[i].second) value = store::encode_value(*records[i].second);
    rd_kafka_resp_err_t err = rd_kafka_producev(
        producer_, RD_KAFKA_V_TOPIC(config_.topic.c_str()), RD_KAFKA_V_PARTITION(0),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_KEY(key.data(), key.size()),
        RD_KAFKA_V_VALUE((value ? value->data() : nullptr), (value ? value->size() : 0)),
        RD_KAFKA_V_OPAQUE(&deliveries[i]), RD_KAFKA_V_END);
    if (err) {
      rd_kafka_purge(producer_, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
      rd_kafka_flush(producer_, 5000);
      return std::string("cannot write to ") + config_.topic + ": " + rd_kafka_err2str(err);
    }
  }
  if (rd_kafka_flush(producer_, config_.timeout_ms) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    // Nothing may be left to report into `deliveries` once they are gone.
    rd_kafka_purge(producer_, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
    rd_kafka_flush(producer_, 5000);
    return std::string("timed out writing to ") + config_.topic;
  }
  int64_t last = -1;
  for (const auto& d : deliveries) {
    if (d.err != RD_KAFKA_RESP_ERR_NO_ERROR)
      return std::string("cannot write to ") + config_.topic + ": " + rd_kafka_err2str(d.err);
    last = std::max(last, d.offset);
  }
  if (!apply_pending(last)) return "the write to " + config_.topic + " was not read back in time";
  return std::nullopt;
}

}  // namespace oxbow::registry::server
