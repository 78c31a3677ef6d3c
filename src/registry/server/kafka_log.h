#pragma once
// The registry's SchemaLog on the `_schemas` topic (store/records.h has its formats): created at
// start if missing (one partition, compacted) and refused if it is not so, read from its start
// by a reader thread. The reader only decodes and queues; records are applied to the state on the
// thread that answers requests (sync()), so requests never see a half-applied record. A write is
// produced (acks=all, idempotent) and answered only once the reader has read it back and it is
// applied, as Confluent's KafkaStore waits for its own write.
#include <librdkafka/rdkafka.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "registry/service.h"

namespace oxbow::registry::server {

struct KafkaLogConfig {
  std::string bootstrap_servers;
  std::string topic = "_schemas";
  int replication_factor = 3;  // kafkastore.topic.replication.factor, capped by the brokers
  int timeout_ms = 60000;      // kafkastore.timeout.ms: for a write to be read back
};

class KafkaLog : public SchemaLog {
 public:
  explicit KafkaLog(KafkaLogConfig config);
  ~KafkaLog() override;
  KafkaLog(const KafkaLog&) = delete;
  KafkaLog& operator=(const KafkaLog&) = delete;

  // Checks or creates the topic, starts the reader and reads the topic to its end. Throws
  // std::runtime_error with the reason it cannot.
  void start();
  void stop();

  std::optional<std::string> append(const std::vector<LogRecord>& records) override;
  const store::SchemaState& state() const override { return state_; }
  void sync() override;
  // Applies everything up to the log's present end (others' writes included); false if that
  // cannot be read within the timeout.
  bool catch_up();
  std::string cluster_id() const override { return cluster_id_; }
  // Records the reader refused (malformed, duplicate ids), for the server's log.
  int64_t refused() const { return refused_; }

 private:
  struct Pending {
    int64_t offset;
    std::optional<std::string> key, value;
  };
  void ensure_topic();
  void read_loop();
  // Applies queued records; with `until`, waits (up to the timeout) until that offset is applied.
  bool apply_pending(int64_t until);
  int64_t end_offset();

  KafkaLogConfig config_;
  rd_kafka_t* producer_ = nullptr;
  rd_kafka_t* consumer_ = nullptr;
  std::thread reader_;
  std::atomic<bool> stopping_{false};

  std::mutex mutex_;  // guards queue_ and read_error_
  std::condition_variable arrived_;
  std::deque<Pending> queue_;
  std::string read_error_;

  store::SchemaState state_;  // touched only by the answering thread
  int64_t applied_ = -1;      // the last offset applied
  std::string cluster_id_;
  int64_t refused_ = 0;
};

}  // namespace oxbow::registry::server
