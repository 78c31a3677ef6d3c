#include "sql/kafka/kafka_topic_access.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <set>
#include <stdexcept>

namespace oxbow::sql {

namespace {

constexpr int kTimeoutMs = 10'000;
constexpr int kPollMs = 100;
constexpr size_t kBatch = 500;

struct KafkaDeleter {
  void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
};
struct QueueDeleter {
  void operator()(rd_kafka_queue_t* q) const { rd_kafka_queue_destroy(q); }
};
struct TopicDeleter {
  void operator()(rd_kafka_topic_t* t) const { rd_kafka_topic_destroy(t); }
};
struct MetadataDeleter {
  void operator()(const rd_kafka_metadata_t* md) const { rd_kafka_metadata_destroy(md); }
};
using Metadata = std::unique_ptr<const rd_kafka_metadata_t, MetadataDeleter>;

[[noreturn]] void fail(const std::string& what, rd_kafka_resp_err_t err) {
  throw std::runtime_error(what + ": " + rd_kafka_err2str(err));
}

rd_kafka_t* make_handle(rd_kafka_type_t type, const std::map<std::string, std::string>& config) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char error[512];
  for (const auto& [key, value] : config)
    if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), error, sizeof error) !=
        RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      throw std::runtime_error(std::string("Kafka client configuration: ") + error);
    }
  rd_kafka_t* rk = rd_kafka_new(type, conf, error, sizeof error);  // owns conf when it succeeds
  if (!rk) {
    rd_kafka_conf_destroy(conf);
    throw std::runtime_error(std::string("Kafka client: ") + error);
  }
  return rk;
}

Metadata metadata(rd_kafka_t* rk, rd_kafka_topic_t* only) {
  const rd_kafka_metadata_t* md = nullptr;
  if (auto err = rd_kafka_metadata(rk, only ? 0 : 1, only, &md, kTimeoutMs))
    fail("Failed to retrieve Kafka Topic names", err);
  return Metadata(md);
}

// Per topic: consumers (a member counted once per partition it is assigned, as ksqlDB counts)
// and the consumer groups with such a member.
void count_consumers(rd_kafka_t* rk, std::map<std::string, TopicInfo*>& topics) {
  const rd_kafka_group_list* groups = nullptr;
  if (auto err = rd_kafka_list_groups(rk, nullptr, &groups, kTimeoutMs))
    fail("Failed to retrieve Kafka consumer groups", err);
  for (int g = 0; g < groups->group_cnt; ++g) {
    const rd_kafka_group_info& group = groups->groups[g];
    std::string protocol_type = group.protocol_type ? group.protocol_type : "";
    if (protocol_type != "consumer" && !protocol_type.empty()) continue;
    std::set<std::string> reached;
    for (int m = 0; m < group.member_cnt; ++m) {
      const auto& member = group.members[m];
      for (const auto& [topic, partitions] : assigned_partitions(
               std::string_view(static_cast<const char*>(member.member_assignment),
                                static_cast<size_t>(std::max(member.member_assignment_size, 0))))) {
        auto it = topics.find(topic);
        if (it == topics.end() || partitions == 0) continue;
        it->second->consumers += partitions;
        reached.insert(topic);
      }
    }
    for (const auto& topic : reached) ++topics[topic]->consumer_groups;
  }
  rd_kafka_group_list_destroy(groups);
}

}  // namespace

std::map<std::string, int> assigned_partitions(std::string_view assignment) {
  std::map<std::string, int> out;
  const auto* p = reinterpret_cast<const unsigned char*>(assignment.data());
  size_t n = assignment.size(), at = 2;  // past the version
  auto number = [&](size_t width) -> int64_t {
    if (at + width > n) throw std::out_of_range("assignment");
    int64_t v = 0;
    for (size_t i = 0; i < width; ++i) v = (v << 8) | p[at + i];
    at += width;
    return width == 4 ? static_cast<int32_t>(v) : static_cast<int16_t>(v);
  };
  try {
    for (int64_t topics = n ? number(4) : 0; topics > 0; --topics) {
      int64_t length = number(2);
      if (length < 0 || at + static_cast<size_t>(length) > n) break;
      std::string topic(reinterpret_cast<const char*>(p + at), static_cast<size_t>(length));
      at += static_cast<size_t>(length);
      int64_t partitions = number(4);
      at += static_cast<size_t>(std::max<int64_t>(partitions, 0)) * 4;
      if (at > n) break;
      out[topic] += static_cast<int>(std::max<int64_t>(partitions, 0));
    }
  } catch (const std::out_of_range&) {
    // a member without a readable assignment counts for nothing
  }
  return out;
}

KafkaTopicAccess::KafkaTopicAccess(std::map<std::string, std::string> config)
    : config_(std::move(config)) {}

KafkaTopicAccess::~KafkaTopicAccess() {
  if (admin_) rd_kafka_destroy(admin_);
}

rd_kafka_t* KafkaTopicAccess::handle() {
  if (!admin_) admin_ = make_handle(RD_KAFKA_PRODUCER, config_);
  return admin_;
}

std::vector<TopicInfo> KafkaTopicAccess::list_topics(bool consumers) {
  Metadata md = metadata(handle(), nullptr);
  std::vector<TopicInfo> out(static_cast<size_t>(md->topic_cnt));
  std::map<std::string, TopicInfo*> by_name;
  for (int t = 0; t < md->topic_cnt; ++t) {
    const rd_kafka_metadata_topic_t& topic = md->topics[t];
    TopicInfo& info = out[static_cast<size_t>(t)];
    info.name = topic.topic;
    std::vector<std::pair<int32_t, int>> partitions;
    for (int p = 0; p < topic.partition_cnt; ++p)
      partitions.emplace_back(topic.partitions[p].id, topic.partitions[p].replica_cnt);
    std::sort(partitions.begin(), partitions.end());
    for (const auto& [id, replicas] : partitions) info.replicas.push_back(replicas);
    by_name[info.name] = &info;
  }
  if (consumers) count_consumers(handle(), by_name);
  return out;
}

void KafkaTopicAccess::read(const std::string& topic, bool from_beginning,
                            const std::function<bool(const ReadBatch&)>& on_batch) {
  auto config = config_;
  config["enable.partition.eof"] = "true";
  config["enable.auto.commit"] = "false";
  config["enable.auto.offset.store"] = "false";
  std::unique_ptr<rd_kafka_t, KafkaDeleter> rk(make_handle(RD_KAFKA_CONSUMER, config));
  std::unique_ptr<rd_kafka_topic_t, TopicDeleter> rkt(
      rd_kafka_topic_new(rk.get(), topic.c_str(), nullptr));
  if (!rkt) fail(topic, rd_kafka_last_error());
  Metadata md = metadata(rk.get(), rkt.get());
  if (md->topic_cnt != 1 || md->topics[0].err)
    fail(topic, md->topic_cnt ? md->topics[0].err : RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC);
  std::unique_ptr<rd_kafka_queue_t, QueueDeleter> queue(rd_kafka_queue_new(rk.get()));
  std::vector<int32_t> started;
  int64_t start = from_beginning ? RD_KAFKA_OFFSET_BEGINNING : RD_KAFKA_OFFSET_END;
  for (int p = 0; p < md->topics[0].partition_cnt; ++p) {
    int32_t id = md->topics[0].partitions[p].id;
    if (rd_kafka_consume_start_queue(rkt.get(), id, start, queue.get()) == -1)
      fail(topic, rd_kafka_last_error());
    started.push_back(id);
  }
  std::set<int32_t> at_end;
  std::vector<rd_kafka_message_t*> messages(kBatch);
  std::vector<TopicRecord> records;
  bool more = true;
  while (more) {
    ssize_t n = rd_kafka_consume_batch_queue(queue.get(), kPollMs, messages.data(), kBatch);
    if (n < 0) fail(topic, rd_kafka_last_error());
    records.clear();
    for (ssize_t i = 0; i < n; ++i) {
      rd_kafka_message_t* m = messages[static_cast<size_t>(i)];
      if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        at_end.insert(m->partition);
      } else if (!m->err) {
        at_end.erase(m->partition);
        TopicRecord& r = records.emplace_back();
        r.timestamp = rd_kafka_message_timestamp(m, nullptr);
        r.partition = m->partition;
        if (m->key) r.key.emplace(static_cast<const char*>(m->key), m->key_len);
        if (m->payload) r.value.emplace(static_cast<const char*>(m->payload), m->len);
      }
      rd_kafka_message_destroy(m);
    }
    more = on_batch(ReadBatch{records, at_end.size() == started.size()});
  }
  for (int32_t p : started) rd_kafka_consume_stop(rkt.get(), p);
}

}  // namespace oxbow::sql
