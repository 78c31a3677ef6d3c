#include "streams/runtime/kafka_clients.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <utility>

#include "oxbow/streams/errors.h"
#include "rdkafka/offsets.h"
#include "streams/runtime/task.h"

namespace oxbow::streams::detail {

void RdKafkaDeleter::operator()(rd_kafka_t* rk) const {
  if (rk) rd_kafka_destroy(rk);
}

rd_kafka_topic_t* TopicHandles::get(rd_kafka_t* client, const std::string& topic,
                                    rd_kafka_topic_conf_t* conf) {
  auto it = handles_.find(topic);
  if (it != handles_.end()) {
    if (conf) rd_kafka_topic_conf_destroy(conf);
    return it->second;
  }
  rd_kafka_topic_t* handle = rd_kafka_topic_new(client, topic.c_str(), conf);
  if (handle) handles_.emplace(topic, handle);
  return handle;
}

void TopicHandles::clear() {
  for (auto& [name, handle] : handles_) rd_kafka_topic_destroy(handle);
  handles_.clear();
}

namespace {

void set(rd_kafka_conf_t* conf, const std::string& key, const std::string& value) {
  char error[512];
  if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), error, sizeof error) != RD_KAFKA_CONF_OK)
    throw std::invalid_argument(key + ": " + error);
}

bool shared_setting(const std::string& key) {
  return key == "bootstrap.servers" || key == "security.protocol" || key == "client.id" ||
         key.rfind("sasl.", 0) == 0 || key.rfind("ssl.", 0) == 0;
}

}  // namespace

rd_kafka_conf_t* client_conf(const Config& app, ClientRole role, const Config& fixed,
                             const Config& defaults) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  const char* prefix = role == ClientRole::kProducer ? "producer."
                       : role == ClientRole::kAdmin  ? "admin."
                                                     : "consumer.";
  try {
    for (const auto& [k, v] : defaults) set(conf, k, v);
    for (const auto& [k, v] : app)
      if (shared_setting(k)) set(conf, k, v);
    for (const auto& [k, v] : app)
      if (k.rfind(prefix, 0) == 0) set(conf, k.substr(std::string(prefix).size()), v);
    for (const auto& [k, v] : fixed) set(conf, k, v);
    // Streams creates the topics it needs with their own partition counts and settings; a
    // client's lookup of a topic not there yet must not have the broker create it with its
    // defaults (Kafka Streams likewise forces this off on its consumer).
    set(conf, "allow.auto.create.topics", "false");
  } catch (...) {
    rd_kafka_conf_destroy(conf);
    throw;
  }
  return conf;
}

RdKafkaHandle make_client(rd_kafka_type_t type, rd_kafka_conf_t* conf) {
  char error[512];
  rd_kafka_t* rk = rd_kafka_new(type, conf, error, sizeof error);
  if (!rk) {
    rd_kafka_conf_destroy(conf);
    throw std::runtime_error(std::string("cannot create a Kafka client: ") + error);
  }
  return RdKafkaHandle(rk);
}

void learn_leaders(rd_kafka_t* client) {
  const rd_kafka_metadata_t* md = nullptr;
  if (rd_kafka_metadata(client, 0, nullptr, &md, 5000) == RD_KAFKA_RESP_ERR_NO_ERROR)
    rd_kafka_metadata_destroy(md);
}

int32_t partition_count(rd_kafka_t* client, const std::string& topic) {
  rd_kafka_topic_t* t = rd_kafka_topic_new(client, topic.c_str(), nullptr);
  const rd_kafka_metadata_t* md = nullptr;
  auto err = rd_kafka_metadata(client, 0, t, &md, 10000);
  rd_kafka_topic_destroy(t);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
    throw std::runtime_error("metadata of " + topic + ": " + rd_kafka_err2str(err));
  int32_t count = 0;
  if (md->topic_cnt == 1 && md->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR)
    count = md->topics[0].partition_cnt;
  rd_kafka_metadata_destroy(md);
  return count;
}

rd_kafka_resp_err_t query_watermarks(rd_kafka_t* client, const std::string& topic,
                                     int32_t partition, int64_t* low, int64_t* high,
                                     int timeout_ms) {
  return rdkafka::query_watermarks(client, topic, partition, low, high, timeout_ms);
}

void create_topics(rd_kafka_t* admin, const std::vector<NewTopic>& topics) {
  if (topics.empty()) return;
  std::vector<rd_kafka_NewTopic_t*> specs;
  char error[512];
  for (const auto& t : topics) {
    auto* spec = rd_kafka_NewTopic_new(t.name.c_str(), t.partitions, t.replication_factor, error,
                                       sizeof error);
    if (!spec) throw std::runtime_error("topic " + t.name + ": " + error);
    for (const auto& [k, v] : t.configs) rd_kafka_NewTopic_set_config(spec, k.c_str(), v.c_str());
    specs.push_back(spec);
  }
  rd_kafka_queue_t* queue = rd_kafka_queue_new(admin);
  rd_kafka_CreateTopics(admin, specs.data(), specs.size(), nullptr, queue);
  rd_kafka_event_t* event = rd_kafka_queue_poll(queue, 30000);
  std::string failure;
  if (!event) {
    failure = "no answer to CreateTopics within 30 s";
  } else if (rd_kafka_event_error(event)) {
    failure = rd_kafka_event_error_string(event);
  } else {
    size_t n = 0;
    const auto* result = rd_kafka_event_CreateTopics_result(event);
    const rd_kafka_topic_result_t** results = rd_kafka_CreateTopics_result_topics(result, &n);
    for (size_t i = 0; i < n && failure.empty(); ++i) {
      auto err = rd_kafka_topic_result_error(results[i]);
      if (err != RD_KAFKA_RESP_ERR_NO_ERROR && err != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
        failure = std::string(rd_kafka_topic_result_name(results[i])) + ": " +
                  (rd_kafka_topic_result_error_string(results[i])
                       ? rd_kafka_topic_result_error_string(results[i])
                       : rd_kafka_err2str(err));
    }
  }
  if (event) rd_kafka_event_destroy(event);
  rd_kafka_queue_destroy(queue);
  rd_kafka_NewTopic_destroy_array(specs.data(), specs.size());
  if (!failure.empty()) throw std::runtime_error("cannot create internal topics: " + failure);
}

void delete_group_offsets(rd_kafka_t* admin, const std::string& group,
                          const rd_kafka_topic_partition_list_t* partitions) {
  if (partitions->cnt == 0) return;
  rd_kafka_DeleteConsumerGroupOffsets_t* request =
      rd_kafka_DeleteConsumerGroupOffsets_new(group.c_str(), partitions);
  rd_kafka_queue_t* queue = rd_kafka_queue_new(admin);
  rd_kafka_DeleteConsumerGroupOffsets(admin, &request, 1, nullptr, queue);
  rd_kafka_event_t* event = rd_kafka_queue_poll(queue, 30000);
  std::string failure;
  if (!event) {
    failure = "no answer to OffsetDelete within 30 s";
  } else if (rd_kafka_event_error(event)) {
    failure = rd_kafka_event_error_string(event);
  } else {
    size_t n = 0;
    const auto* result = rd_kafka_event_DeleteConsumerGroupOffsets_result(event);
    const rd_kafka_group_result_t** groups =
        rd_kafka_DeleteConsumerGroupOffsets_result_groups(result, &n);
    for (size_t i = 0; i < n && failure.empty(); ++i) {
      if (const rd_kafka_error_t* error = rd_kafka_group_result_error(groups[i]))
        failure = rd_kafka_error_string(error);
      const auto* list = rd_kafka_group_result_partitions(groups[i]);
      for (int j = 0; list && j < list->cnt && failure.empty(); ++j)
        if (list->elems[j].err != RD_KAFKA_RESP_ERR_NO_ERROR)
          failure = std::string(list->elems[j].topic) + "-" +
                    std::to_string(list->elems[j].partition) + ": " +
                    rd_kafka_err2str(list->elems[j].err);
    }
  }
  if (event) rd_kafka_event_destroy(event);
  rd_kafka_queue_destroy(queue);
  rd_kafka_DeleteConsumerGroupOffsets_destroy(request);
  if (!failure.empty())
    throw std::runtime_error("cannot delete the offsets of group " + group + ": " + failure);
}

rd_kafka_resp_err_t committed_offsets(rd_kafka_t* consumer, rd_kafka_topic_partition_list_t* list) {
  auto deadline = std::chrono::steady_clock::now() + kRetryTimedOutFor;
  for (;;) {
    auto err = rd_kafka_committed(consumer, list, 10000);
    if (err != RD_KAFKA_RESP_ERR__TIMED_OUT || std::chrono::steady_clock::now() >= deadline)
      return err;
    spdlog::warn("the group's committed offsets: {}; asking again", rd_kafka_err2str(err));
  }
}

int64_t committed_offset(rd_kafka_t* consumer, const std::string& topic, int32_t partition) {
  auto* list = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(list, topic.c_str(), partition);
  auto err = committed_offsets(consumer, list);
  int64_t offset = list->elems[0].offset;
  if (!err) err = list->elems[0].err;
  rd_kafka_topic_partition_list_destroy(list);
  if (err)
    throw StreamsException("committed offset of " + topic + "-" + std::to_string(partition) + ": " +
                           rd_kafka_err2str(err));
  return std::max<int64_t>(offset, 0);
}

namespace {

std::optional<std::string_view> view_of(const void* data, size_t size) {
  if (!data) return std::nullopt;
  return std::string_view(static_cast<const char*>(data), size);
}

}  // namespace

RawRecord raw_record(const rd_kafka_message_t* m, std::string_view topic) {
  RawRecord raw;
  raw.topic = topic;
  raw.partition = m->partition;
  raw.offset = m->offset;
  raw.timestamp = rd_kafka_message_timestamp(m, nullptr);
  raw.key = view_of(m->key, m->key_len);
  raw.value = view_of(m->payload, m->len);
  rd_kafka_headers_t* headers = nullptr;
  if (rd_kafka_message_headers(m, &headers) == RD_KAFKA_RESP_ERR_NO_ERROR) {
    const char* name;
    const void* value;
    size_t size;
    for (size_t i = 0; rd_kafka_header_get_all(headers, i, &name, &value, &size) == 0; ++i) {
      std::optional<std::string> bytes;
      if (value) bytes.emplace(static_cast<const char*>(value), size);
      raw.headers.push_back({name, std::move(bytes)});
    }
  }
  return raw;
}

}  // namespace oxbow::streams::detail
