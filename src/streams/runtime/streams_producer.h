#pragma once
// A stream thread's producer, which is also the RecordCollector its tasks write to: Kafka
// Streams' StreamsProducer (the client, its transactions under exactly-once) and
// RecordCollectorImpl (sends, the offsets changelog writes reached, the production exception
// handler) in one class, since here one producer serves one thread. Writes are asynchronous; a
// failed one is kept and fails the thread at its next check (throw_if_failed), unless the
// production exception handler lets it go.
#include <librdkafka/rdkafka.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "oxbow/streams/errors.h"
#include "streams/runtime/kafka_clients.h"
#include "streams/runtime/thread_config.h"
#include "streams/runtime/thread_metrics.h"

namespace oxbow::streams::detail {

// The open transaction could only be aborted (the group moved on, the broker bumped the
// producer's epoch, a write timed out): every task is made again from its last commit, its
// stores restored and its inputs read again from the committed offsets, as Kafka handles a
// TaskMigratedException or TaskCorruptedException.
struct TasksMigrated : CollectorError {
  using CollectorError::CollectorError;
};

class StreamsProducer : public RecordCollector {
 public:
  // Makes the producer; under exactly-once, transactional with its transactions initialized.
  StreamsProducer(const ThreadConfig& config, ThreadMetrics& metrics);
  ~StreamsProducer() override;
  StreamsProducer(const StreamsProducer&) = delete;
  StreamsProducer& operator=(const StreamsProducer&) = delete;

  // For metadata queries (librdkafka's calls are thread-safe); it stays valid when a failed
  // producer is replaced.
  rd_kafka_t* handle() const { return producer_.get(); }

  // RecordCollector: what tasks write, and the partition counts their partitioners ask for.
  void send(const std::string& topic, const std::optional<std::string>& key,
            const std::optional<std::string>& value, int64_t timestamp, const Headers& headers,
            int32_t partition, int64_t* delivered) override;
  int64_t* delivery_slot(const std::string& topic, int32_t partition) override;
  int32_t partitions_of(const std::string& topic) override;

  // Exactly-once: a transaction is open from the first record processed after a commit.
  void begin_transaction_if_needed();
  bool in_transaction() const { return in_transaction_; }
  // Sends the input offsets (unless there are none) with the group's metadata (taken) into the
  // transaction and commits it, calling again while librdkafka says the call may be retried;
  // throws TasksMigrated when the transaction could only be aborted.
  // `own_groups`: named topologies' positions, each into its group without generation
  // (topology_positions.h), after the group's (which fences a zombie's transaction).
  void commit_transaction(
      const rd_kafka_topic_partition_list_t* offsets, rd_kafka_consumer_group_metadata_t* group,
      const std::map<std::string, rd_kafka_topic_partition_list_t*>& own_groups = {});
  // Aborts the open transaction, if any.
  void abort_transaction();

  // At least once: returns once every write is acknowledged, or one failed (then throws).
  void flush();
  // Serves the delivery reports that arrived (each raises its changelog's delivery slot).
  void serve_delivery_reports() { rd_kafka_poll(producer_.get(), 0); }
  // Before checkpoints: every delivery report served, so each changelog's slot holds its last
  // written offset.
  void await_delivery_reports();
  // Throws when a write failed that the production exception handler did not let go; under
  // exactly-once, TasksMigrated when the failure was transient (the transaction is aborted).
  void throw_if_failed();
  // On the way out: what is still queued gets up to `timeout_ms` to be written.
  void close(int timeout_ms) { rd_kafka_flush(producer_.get(), timeout_ms); }

  // Deletes the records before the given offsets (DeleteRecords, asynchronous: a failure is
  // logged when the next purge starts).
  void delete_records(const rd_kafka_topic_partition_list_t* before);

 private:
  static void delivered(rd_kafka_t*, const rd_kafka_message_t* message, void* opaque);
  // Makes the librdkafka producer; under exactly-once, transactional with its transactions
  // initialized.
  void open();
  [[noreturn]] void replace_failed_producer(const std::string& why);
  void throw_on_error(rd_kafka_error_t* error, const char* step);
  // A write that failed: skipped when the handler says continue, else the thread fails.
  // `refused`: the producer refused it before sending (too large, ...), so no transaction holds
  // it and the handler may let it go under exactly-once too.
  void write_failed(const ProductionError& failure, rd_kafka_resp_err_t code, bool changelog,
                    bool refused);
  static bool transient(rd_kafka_resp_err_t code);
  // Under exactly-once, a write's failure that only an abort gets out of: a fatal producer fails
  // the thread, else the transaction is aborted and TasksMigrated thrown.
  [[noreturn]] void transaction_failed(const std::string& what, rd_kafka_resp_err_t code);
  bool production_handler_continues(const ProductionError& failure);
  void serve_purge_results();

  const ThreadConfig& config_;
  ThreadMetrics& metrics_;
  // Highest delivered offset per changelog partition; declared before the producer, whose
  // delivery callbacks write here until it is gone.
  std::map<std::pair<std::string, int32_t>, int64_t> delivered_offsets_;
  RdKafkaHandle producer_;
  std::vector<RdKafkaHandle> retired_;  // producers replaced after a fatal error
  // Answers to the DeleteRecords requests; destroyed before producer_, which sends them.
  struct QueueDeleter {
    void operator()(rd_kafka_queue_t* q) const { rd_kafka_queue_destroy(q); }
  };
  std::unique_ptr<rd_kafka_queue_t, QueueDeleter> purge_results_;
  TopicHandles topics_;  // after producer_: destroyed before it
  std::map<std::string, int32_t> partition_counts_;
  std::string send_error_;
  rd_kafka_resp_err_t send_error_code_ = RD_KAFKA_RESP_ERR_NO_ERROR;
  bool in_transaction_ = false;
};

}  // namespace oxbow::streams::detail
