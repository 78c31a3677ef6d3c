#pragma once
// A compacted topic that a distributed worker keeps its state in (Kafka Connect's KafkaBasedLog):
// created when missing, read from its start, then followed on its own thread; writes go through
// one producer. Every worker reads every record of every partition, so each ends with the same
// view whoever wrote.
#include <librdkafka/rdkafka.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "connect/runtime/worker_config.h"

namespace oxbow::connect::runtime::distributed {

struct TopicSettings {
  std::string name;
  int32_t partitions = 1;
  int16_t replicationFactor = 3;  // -1: the broker's default
  // For the refusal of a topic that is not compacted, as Kafka words it: the worker property that
  // named the topic (config.storage.topic) and what the topic holds ("connector configurations").
  std::string workerProperty = {};
  std::string purpose = {};
  // Records of aborted transactions left out, and the log's end waited for past open ones (the
  // config and offsets topics when exactly.once.source.support=enabled, as Kafka reads them).
  bool readCommitted = false;
};

// Whether the worker has exactly.once.source.support=enabled (KIP-618).
bool exactlyOnceSourceEnabled(const WorkerConfig& worker);

// How long readToEnd() and flush() wait, as Kafka's stores bound their reads and writes.
inline constexpr int kReadWriteTimeoutMs = 30'000;

class KafkaBasedLog {
 public:
  // A nullopt value is a tombstone. Called on the log's thread, in offset order per partition;
  // an exception it throws is logged and the record skipped.
  using Consumed =
      std::function<void(const std::string& key, const std::optional<std::string>& value,
                         int32_t partition, int64_t offset)>;
  using Done = std::function<void(const std::string& error)>;  // empty error: acknowledged

  KafkaBasedLog(const WorkerConfig& worker, TopicSettings topic, std::string clientIdPrefix,
                Consumed consumed);
  ~KafkaBasedLog();
  KafkaBasedLog(const KafkaBasedLog&) = delete;
  KafkaBasedLog& operator=(const KafkaBasedLog&) = delete;

  // Creates the topic when missing (compacted; a replication factor above the number of brokers
  // is lowered to it with a warning), refuses an existing topic that is not compacted, reads it
  // to its end, then follows it. ConnectException (ConfigException for the cleanup policy).
  void start();
  // Returns once every record written before the call has been consumed; ConnectException after
  // kReadWriteTimeoutMs.
  void readToEnd();
  // `done` is called once the broker acknowledged the record (or it failed), on the producer's
  // polling thread.
  void send(const std::string& key, const std::optional<std::string>& value, Done done = {});
  // Waits for every send's acknowledgement; ConnectException after kReadWriteTimeoutMs.
  void flush();
  using Record = std::pair<std::string, std::optional<std::string>>;
  // Sends the records in order and waits for their acknowledgements; ConnectException with the
  // first failure, or after kReadWriteTimeoutMs.
  void write(const std::vector<Record>& records);
  void stop();

  const TopicSettings& topic() const { return topic_; }
  // The topic's partitions, as found or created by start().
  int32_t partitionCount() const { return partitionCount_; }

 private:
  static void onDelivery(rd_kafka_t*, const rd_kafka_message_t* message, void*);
  void ensureTopic();
  void createTopic(int brokers);
  void checkCompacted();
  void assignAll(int partitions);
  // Each partition's start (RD_KAFKA_OFFSET_BEGINNING) or end (RD_KAFKA_OFFSET_END).
  std::map<int32_t, int64_t> listOffsets(int64_t which);
  void follow();
  void handle(rd_kafka_message_t* message);

  const WorkerConfig& worker_;
  TopicSettings topic_;
  std::string clientIdPrefix_;
  Consumed consumed_;
  rd_kafka_t* producer_ = nullptr;
  rd_kafka_t* consumer_ = nullptr;
  int32_t partitionCount_ = 0;
  std::thread follower_;
  std::thread producerPoller_;
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::condition_variable advanced_;
  std::map<int32_t, int64_t> positions_;  // the next offset to consume, per partition
};

}  // namespace oxbow::connect::runtime::distributed
