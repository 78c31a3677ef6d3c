// The consumer is assigned every partition from its start and never joins its group (the group id
// only satisfies librdkafka); end offsets are asked on the producer's connection, which has no
// long-polling fetch in front of the request.
#include "connect/runtime/distributed/kafka_based_log.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <set>

#include "connect/runtime/distributed/distributed_config.h"
#include "connect/runtime/task_runner.h"
#include "oxbow/connect/config_def.h"
#include "oxbow/connect/errors.h"

namespace oxbow::connect::runtime::distributed {

namespace {

using Clock = std::chrono::steady_clock;
using Metadata = std::unique_ptr<const rd_kafka_metadata_t, decltype(&rd_kafka_metadata_destroy)>;
using Event = std::unique_ptr<rd_kafka_event_t, decltype(&rd_kafka_event_destroy)>;
using Queue = std::unique_ptr<rd_kafka_queue_t, decltype(&rd_kafka_queue_destroy)>;
using PartitionList = std::unique_ptr<rd_kafka_topic_partition_list_t,
                                      decltype(&rd_kafka_topic_partition_list_destroy)>;

constexpr int kPollMs = 100;

rd_kafka_t* newClient(rd_kafka_type_t type, rd_kafka_conf_t* conf, const std::string& clientId) {
  char error[512];
  rd_kafka_t* client = rd_kafka_new(type, conf, error, sizeof error);
  if (client == nullptr) {
    rd_kafka_conf_destroy(conf);
    throw ConnectException("Could not create the client " + clientId + ": " + error);
  }
  return client;
}

Metadata metadata(rd_kafka_t* client, const std::string& topic) {
  const rd_kafka_metadata_t* raw = nullptr;
  rd_kafka_resp_err_t err = rd_kafka_metadata(client, 1, nullptr, &raw, kReadWriteTimeoutMs);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    throw ConnectException("Could not read the metadata of topic " + topic + ": " +
                           rd_kafka_err2str(err));
  }
  return Metadata(raw, &rd_kafka_metadata_destroy);
}

// The topic's partition count, or nullopt when the cluster does not have it.
std::optional<int> partitionsOf(const rd_kafka_metadata_t& metadata, const std::string& topic) {
  for (int i = 0; i < metadata.topic_cnt; ++i) {
    if (topic == metadata.topics[i].topic && metadata.topics[i].err == 0) {
      return metadata.topics[i].partition_cnt;
    }
  }
  return std::nullopt;
}

// Waits for an admin request's result on its own queue.
Event await(rd_kafka_queue_t* queue, const std::string& what) {
  Event event(rd_kafka_queue_poll(queue, kReadWriteTimeoutMs + 5'000), &rd_kafka_event_destroy);
  if (!event) throw ConnectException(what + ": timed out");
  if (rd_kafka_event_error(event.get()) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    throw ConnectException(what + ": " + rd_kafka_event_error_string(event.get()));
  }
  return event;
}

std::string timedOut(const std::string& what, const std::string& topic) {
  return "Timed out after " + std::to_string(kReadWriteTimeoutMs) + " ms " + what + " topic " +
         topic;
}

// The worker's own security settings (security.protocol, sasl.*, ssl.*: what reaches the broker
// for the group too), then the client's overrides. As Kafka's internal clients take the worker's
// settings; one librdkafka does not know (a Java name such as ssl.truststore.location) is left
// out with a warning, as the group's connection leaves it out.
Properties withSecurity(const WorkerConfig& worker, const Properties& overrides) {
  Properties out;
  for (const auto& [name, value] : securitySettings(worker.props)) {
    rd_kafka_conf_t* probe = rd_kafka_conf_new();
    char error[256];
    if (rd_kafka_conf_set(probe, name.c_str(), value.c_str(), error, sizeof error) ==
        RD_KAFKA_CONF_OK) {
      out[name] = value;
    } else {
      // Once per property, not once for each of the six clients a worker's stores create.
      static std::mutex warnedMutex;
      static std::set<std::string> warned;
      std::lock_guard lock(warnedMutex);
      if (warned.insert(name).second) {
        spdlog::warn("connect: the internal topics' clients leave out {}: {}", name, error);
      }
    }
    rd_kafka_conf_destroy(probe);
  }
  for (const auto& [name, value] : overrides) out[name] = value;
  return out;
}

}  // namespace

bool exactlyOnceSourceEnabled(const WorkerConfig& worker) {
  auto it = worker.props.find("exactly.once.source.support");
  return it != worker.props.end() && it->second == "enabled";
}

KafkaBasedLog::KafkaBasedLog(const WorkerConfig& worker, TopicSettings topic,
                             std::string clientIdPrefix, Consumed consumed)
    : worker_(worker),
      topic_(std::move(topic)),
      clientIdPrefix_(std::move(clientIdPrefix)),
      consumed_(std::move(consumed)) {}

KafkaBasedLog::~KafkaBasedLog() {
  stop();
}

void KafkaBasedLog::start() {
  // Java's default partitioner (murmur2 of the key), so that a key lands where Kafka's workers
  // put it and stays in one partition's order whoever writes it.
  rd_kafka_conf_t* producerConf = clientConfig({{"bootstrap.servers", worker_.bootstrapServers},
                                                {"client.id", clientIdPrefix_ + "producer"},
                                                {"acks", "all"},
                                                {"max.in.flight.requests.per.connection", "1"},
                                                {"message.timeout.ms", "0"},
                                                {"linger.ms", "0"},
                                                {"partitioner", "murmur2_random"}},
                                               withSecurity(worker_, worker_.producerOverrides));
  rd_kafka_conf_set_dr_msg_cb(producerConf, &KafkaBasedLog::onDelivery);
  producer_ = newClient(RD_KAFKA_PRODUCER, producerConf, clientIdPrefix_ + "producer");
  producerPoller_ = std::thread([this] {
    while (!stopping_.load()) rd_kafka_poll(producer_, kPollMs);
  });
  ensureTopic();
  // What reading to the end relies on stays, whatever consumer.* says: end-of-partition events
  // (the end past transaction markers), nothing committed, and exactly-once's isolation.
  Properties consumerSettings = withSecurity(worker_, worker_.consumerOverrides);
  consumerSettings["enable.partition.eof"] = "true";
  consumerSettings["enable.auto.commit"] = "false";
  if (topic_.readCommitted) consumerSettings["isolation.level"] = "read_committed";
  rd_kafka_conf_t* consumerConf = clientConfig({{"bootstrap.servers", worker_.bootstrapServers},
                                                {"client.id", clientIdPrefix_ + "consumer"},
                                                {"group.id", clientIdPrefix_ + "reader"},
                                                {"enable.auto.offset.store", "false"},
                                                {"auto.offset.reset", "earliest"},
                                                {"isolation.level", "read_uncommitted"}},
                                               consumerSettings);
  consumer_ = newClient(RD_KAFKA_CONSUMER, consumerConf, clientIdPrefix_ + "consumer");
  // A partition assigned before the consumer knows its leader waits librdkafka's fixed 500 ms
  // before it asks where to start: the topic's metadata first, with a handle so that its
  // partitions take their leaders from it.
  rd_kafka_topic_t* handle = rd_kafka_topic_new(consumer_, topic_.name.c_str(), nullptr);
  const rd_kafka_metadata_t* leaders = nullptr;
  if (rd_kafka_metadata(consumer_, 0, handle, &leaders, kReadWriteTimeoutMs) == 0) {
    rd_kafka_metadata_destroy(leaders);
  }
  rd_kafka_topic_destroy(handle);
  assignAll(partitionCount_);
  follower_ = std::thread([this] { follow(); });
  readToEnd();
  spdlog::info("connect: read topic {} ({} partitions) to its end", topic_.name, partitionCount_);
}

void KafkaBasedLog::ensureTopic() {
  Metadata cluster = metadata(producer_, topic_.name);
  if (auto partitions = partitionsOf(*cluster, topic_.name)) {
    checkCompacted();
    partitionCount_ = *partitions;
    return;
  }
  createTopic(cluster->broker_cnt);
  // The producer took the topic for missing when it asked: wait until it is seen.
  auto deadline = Clock::now() + std::chrono::milliseconds(kReadWriteTimeoutMs);
  while (true) {
    Metadata now = metadata(producer_, topic_.name);
    if (auto partitions = partitionsOf(*now, topic_.name)) {
      partitionCount_ = *partitions;
      return;
    }
    if (Clock::now() >= deadline) throw ConnectException(timedOut("waiting for", topic_.name));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

void KafkaBasedLog::createTopic(int brokers) {
  int replication = topic_.replicationFactor;
  if (replication > brokers) {
    // Kafka would fail the worker; a smaller cluster (a development broker) gets what it allows.
    spdlog::warn(
        "connect: the cluster has {} broker(s): topic {} is created with replication factor {}, "
        "not {}",
        brokers, topic_.name, brokers, replication);
    replication = std::max(brokers, 1);
  }
  const std::string what = "Could not create topic " + topic_.name;
  char error[512];
  rd_kafka_NewTopic_t* newTopic = rd_kafka_NewTopic_new(topic_.name.c_str(), topic_.partitions,
                                                        replication, error, sizeof error);
  if (newTopic == nullptr) throw ConnectException(what + ": " + error);
  rd_kafka_NewTopic_set_config(newTopic, "cleanup.policy", "compact");
  Queue queue(rd_kafka_queue_new(producer_), &rd_kafka_queue_destroy);
  rd_kafka_CreateTopics(producer_, &newTopic, 1, nullptr, queue.get());
  rd_kafka_NewTopic_destroy(newTopic);
  Event event = await(queue.get(), what);
  size_t count = 0;
  const rd_kafka_topic_result_t** results =
      rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(event.get()), &count);
  rd_kafka_resp_err_t err =
      count > 0 ? rd_kafka_topic_result_error(results[0]) : RD_KAFKA_RESP_ERR_NO_ERROR;
  if (err == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
    checkCompacted();  // another worker was first
    return;
  }
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    throw ConnectException(what + ": " + rd_kafka_topic_result_error_string(results[0]));
  }
  spdlog::info("connect: created topic {} ({} partitions, replication factor {}, compacted)",
               topic_.name, topic_.partitions,
               replication < 0 ? "the broker's default" : std::to_string(replication));
}

void KafkaBasedLog::checkCompacted() {
  const std::string what = "Could not describe topic " + topic_.name;
  rd_kafka_ConfigResource_t* resource =
      rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, topic_.name.c_str());
  Queue queue(rd_kafka_queue_new(producer_), &rd_kafka_queue_destroy);
  rd_kafka_DescribeConfigs(producer_, &resource, 1, nullptr, queue.get());
  rd_kafka_ConfigResource_destroy(resource);
  Event event = await(queue.get(), what);
  size_t count = 0;
  const rd_kafka_ConfigResource_t** resources = rd_kafka_DescribeConfigs_result_resources(
      rd_kafka_event_DescribeConfigs_result(event.get()), &count);
  if (count == 0 || rd_kafka_ConfigResource_error(resources[0]) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    // As Kafka: a principal that may not describe configs leaves the policy unchecked.
    spdlog::info("connect: could not verify the cleanup policy of topic {} is compact",
                 topic_.name);
    return;
  }
  size_t entries = 0;
  const rd_kafka_ConfigEntry_t** configs = rd_kafka_ConfigResource_configs(resources[0], &entries);
  for (size_t i = 0; i < entries; ++i) {
    if (std::string(rd_kafka_ConfigEntry_name(configs[i])) != "cleanup.policy") continue;
    const char* value = rd_kafka_ConfigEntry_value(configs[i]);
    std::string policy = value ? value : "";
    policy.erase(std::remove(policy.begin(), policy.end(), ' '), policy.end());
    if (policy == "compact") return;
    const std::string property = topic_.workerProperty.empty() ? "topic" : topic_.workerProperty;
    const std::string purpose = topic_.purpose.empty() ? "its records" : topic_.purpose;
    throw ConfigException("Topic '" + topic_.name + "' supplied via the '" + property +
                          "' property is required to have 'cleanup.policy=compact' to guarantee "
                          "consistency and durability of " +
                          purpose +
                          ", but found the topic currently has 'cleanup.policy=" + policy +
                          "'. Continuing would likely result in eventually losing " + purpose +
                          " and problems restarting this Connect cluster in the future. Change "
                          "the '" +
                          property +
                          "' property in the Connect worker configurations to use a topic with "
                          "'cleanup.policy=compact'.");
  }
}

void KafkaBasedLog::assignAll(int partitions) {
  // From each partition's start offset rather than the logical beginning: a partition waiting for
  // its own ListOffsets answer stays out of the consumer's first fetch, which then long-polls
  // without it, and a write to it is only seen once that fetch times out.
  std::map<int32_t, int64_t> starts = listOffsets(RD_KAFKA_OFFSET_BEGINNING);
  PartitionList list(rd_kafka_topic_partition_list_new(partitions),
                     &rd_kafka_topic_partition_list_destroy);
  std::lock_guard lock(mutex_);
  for (int p = 0; p < partitions; ++p) {
    rd_kafka_topic_partition_list_add(list.get(), topic_.name.c_str(), p)->offset = starts[p];
    positions_[p] = starts[p];
  }
  if (rd_kafka_resp_err_t err = rd_kafka_assign(consumer_, list.get())) {
    throw ConnectException("Could not read topic " + topic_.name + ": " + rd_kafka_err2str(err));
  }
}

std::map<int32_t, int64_t> KafkaBasedLog::listOffsets(int64_t which) {
  PartitionList list(rd_kafka_topic_partition_list_new(partitionCount_),
                     &rd_kafka_topic_partition_list_destroy);
  for (int p = 0; p < partitionCount_; ++p) {
    rd_kafka_topic_partition_list_add(list.get(), topic_.name.c_str(), p)->offset = which;
  }
  // ListOffsets with the earliest or latest timestamp; rd_kafka_query_watermark_offsets
  // (librdkafka 2.0.2) can wait past its timeout once a leader is down.
  rd_kafka_resp_err_t err = rd_kafka_offsets_for_times(producer_, list.get(), kReadWriteTimeoutMs);
  std::map<int32_t, int64_t> out;
  for (int i = 0; err == RD_KAFKA_RESP_ERR_NO_ERROR && i < list->cnt; ++i) {
    err = list->elems[i].err;
    out[list->elems[i].partition] = list->elems[i].offset;
  }
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    throw ConnectException("Could not list the offsets of topic " + topic_.name + ": " +
                           rd_kafka_err2str(err));
  }
  return out;
}

void KafkaBasedLog::readToEnd() {
  if (consumer_ == nullptr) throw ConnectException("Topic " + topic_.name + " is not read yet");
  auto deadline = Clock::now() + std::chrono::milliseconds(kReadWriteTimeoutMs);
  std::map<int32_t, int64_t> ends = listOffsets(RD_KAFKA_OFFSET_END);
  std::unique_lock lock(mutex_);
  bool reached = advanced_.wait_until(lock, deadline, [&] {
    for (const auto& [partition, end] : ends) {
      if (positions_[partition] < end) return false;
    }
    return true;
  });
  if (!reached) throw ConnectException(timedOut("reading to the end of", topic_.name));
}

void KafkaBasedLog::follow() {
  while (!stopping_.load()) {
    rd_kafka_message_t* message = rd_kafka_consumer_poll(consumer_, kPollMs);
    if (message == nullptr) continue;
    handle(message);
    rd_kafka_message_destroy(message);
  }
}

void KafkaBasedLog::handle(rd_kafka_message_t* message) {
  if (message->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
    // The end was reached past offsets no record is consumed at (transaction markers).
    std::lock_guard lock(mutex_);
    int64_t& position = positions_[message->partition];
    position = std::max(position, message->offset);
    advanced_.notify_all();
    return;
  }
  if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    spdlog::warn("connect: reading topic {}: {}", topic_.name, rd_kafka_message_errstr(message));
    return;
  }
  if (message->key == nullptr) {
    spdlog::error("connect: skipping a record without a key at {}-{} offset {}", topic_.name,
                  message->partition, message->offset);
  } else {
    std::string key(static_cast<const char*>(message->key), message->key_len);
    std::optional<std::string> value;
    if (message->payload != nullptr) {
      value.emplace(static_cast<const char*>(message->payload), message->len);
    }
    try {
      consumed_(key, value, message->partition, message->offset);
    } catch (const std::exception& e) {
      spdlog::error("connect: skipping record {} at {}-{} offset {}: {}", key, topic_.name,
                    message->partition, message->offset, e.what());
    }
  }
  std::lock_guard lock(mutex_);
  int64_t& position = positions_[message->partition];
  position = std::max(position, message->offset + 1);
  advanced_.notify_all();
}

void KafkaBasedLog::send(const std::string& key, const std::optional<std::string>& value,
                         Done done) {
  if (producer_ == nullptr) throw ConnectException("Topic " + topic_.name + " is not open");
  auto* callback = new Done(std::move(done));
  void* payload = value ? const_cast<char*>(value->data()) : nullptr;
  size_t length = value ? value->size() : 0;
  rd_kafka_resp_err_t err = rd_kafka_producev(
      producer_, RD_KAFKA_V_TOPIC(topic_.name.c_str()),
      RD_KAFKA_V_KEY(const_cast<char*>(key.data()), key.size()), RD_KAFKA_V_VALUE(payload, length),
      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_OPAQUE(callback), RD_KAFKA_V_END);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    std::unique_ptr<Done> owned(callback);
    std::string error = "Could not write to topic " + topic_.name + ": " + rd_kafka_err2str(err);
    if (*owned) (*owned)(error);
    throw ConnectException(error);
  }
}

void KafkaBasedLog::onDelivery(rd_kafka_t*, const rd_kafka_message_t* message, void*) {
  std::unique_ptr<Done> done(static_cast<Done*>(message->_private));
  if (!done || !*done) return;
  std::string error;
  if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) error = rd_kafka_err2str(message->err);
  try {
    (*done)(error);
  } catch (const std::exception& e) {
    spdlog::error("connect: a write's callback failed: {}", e.what());
  }
}

void KafkaBasedLog::write(const std::vector<Record>& records) {
  struct Pending {
    std::mutex mutex;
    std::condition_variable done;
    size_t left = 0;
    std::string error;
  };
  auto pending = std::make_shared<Pending>();
  pending->left = records.size();
  for (const auto& [key, value] : records) {
    send(key, value, [pending](const std::string& error) {
      std::lock_guard lock(pending->mutex);
      if (pending->error.empty()) pending->error = error;
      --pending->left;
      pending->done.notify_all();
    });
  }
  std::unique_lock lock(pending->mutex);
  if (!pending->done.wait_for(lock, std::chrono::milliseconds(kReadWriteTimeoutMs),
                              [&] { return pending->left == 0; })) {
    throw ConnectException(timedOut("writing to", topic_.name));
  }
  if (!pending->error.empty()) {
    throw ConnectException("Could not write to topic " + topic_.name + ": " + pending->error);
  }
}

void KafkaBasedLog::flush() {
  if (producer_ == nullptr) return;
  if (rd_kafka_flush(producer_, kReadWriteTimeoutMs) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    throw ConnectException(timedOut("writing to", topic_.name));
  }
}

void KafkaBasedLog::stop() {
  stopping_ = true;
  // Wake both threads from their polls rather than wait out the poll's timeout.
  if (consumer_ != nullptr && follower_.joinable()) {
    rd_kafka_queue_t* queue = rd_kafka_queue_get_consumer(consumer_);
    rd_kafka_queue_yield(queue);
    rd_kafka_queue_destroy(queue);
  }
  if (producer_ != nullptr && producerPoller_.joinable()) {
    rd_kafka_queue_t* queue = rd_kafka_queue_get_main(producer_);
    rd_kafka_queue_yield(queue);
    rd_kafka_queue_destroy(queue);
  }
  if (follower_.joinable()) follower_.join();
  if (consumer_ != nullptr) {
    rd_kafka_consumer_close(consumer_);
    rd_kafka_destroy(consumer_);
    consumer_ = nullptr;
  }
  if (producerPoller_.joinable()) producerPoller_.join();
  if (producer_ != nullptr) {
    if (rd_kafka_flush(producer_, 5'000) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      spdlog::warn("connect: stopping with writes to topic {} unacknowledged", topic_.name);
      rd_kafka_purge(producer_, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
      rd_kafka_poll(producer_, 0);
    }
    rd_kafka_destroy(producer_);
    producer_ = nullptr;
  }
}

}  // namespace oxbow::connect::runtime::distributed
