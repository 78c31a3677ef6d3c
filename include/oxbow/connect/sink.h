#pragma once
// Sink connectors and tasks (org.apache.kafka.connect.sink): the runtime consumes the connector's
// topics and puts the records to its tasks; a task flushes what it was given before the runtime
// commits the consumer's offsets, so that a restarted task is given again only what it may not
// have written.
#include <compare>
#include <cstdint>
#include <exception>
#include <future>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "oxbow/connect/connector.h"
#include "oxbow/connect/record.h"

namespace oxbow::connect {

struct TopicPartition {
  std::string topic;
  int32_t partition = 0;
  bool operator==(const TopicPartition&) const = default;
  auto operator<=>(const TopicPartition&) const = default;
};

// A consumer offset to commit: the offset of the next record to read, with optional metadata.
struct OffsetAndMetadata {
  int64_t offset = 0;
  std::string metadata{};
  std::optional<int32_t> leaderEpoch{};
  bool operator==(const OffsetAndMetadata&) const = default;
};

using SinkOffsets = std::map<TopicPartition, OffsetAndMetadata>;

// Sends records a sink task could not write through the connector's error handling (KIP-610): to
// its dead letter queue (errors.deadletterqueue.topic.name) and the log (errors.log.enable). With
// errors.tolerance=none, report() reports, then throws ConnectException "Tolerance exceeded in
// error handler", which fails the task.
class ErrantRecordReporter {
 public:
  virtual ~ErrantRecordReporter() = default;
  // Ready once the record is written to the queue; the runtime writes every reported record
  // before it calls preCommit(), so waiting is only for a task that needs more. Reported from
  // put(), a record the runtime gave in that batch is sent with its bytes as read; another is
  // converted back with the connector's converters.
  virtual std::future<void> report(const SinkRecord& record, std::exception_ptr error) = 0;
};

// Nothing beyond ConnectorContext yet; a sink connector is given one of these.
class SinkConnectorContext : public ConnectorContext {};

class SinkTaskContext {
 public:
  virtual ~SinkTaskContext() = default;
  virtual Props configs() const = 0;
  // Rewinds (or advances) the consumer: for a task that keeps its offsets in the sink system.
  virtual void offset(const std::map<TopicPartition, int64_t>& offsets) = 0;
  virtual void offset(const TopicPartition& partition, int64_t offset) = 0;
  // How long to wait before put() is retried after it threw a retriable error.
  virtual void timeout(int64_t timeoutMs) = 0;
  virtual std::set<TopicPartition> assignment() const = 0;
  virtual void pause(const std::vector<TopicPartition>& partitions) = 0;
  virtual void resume(const std::vector<TopicPartition>& partitions) = 0;
  // A hint to commit offsets soon, e.g. right after the task flushed.
  virtual void requestCommit() = 0;
  // Null unless the connector has a dead letter queue or errors.log.enable=true, as in Kafka.
  virtual ErrantRecordReporter* errantRecordReporter() { return nullptr; }
};

class SinkTask : public Task {
 public:
  // The runtime's configs naming what the task consumes (one of them is set).
  static constexpr std::string_view TOPICS_CONFIG = "topics";
  static constexpr std::string_view TOPICS_REGEX_CONFIG = "topics.regex";

  virtual void initialize(SinkTaskContext& context) { context_ = &context; }
  // Records consumed since the last call; the task may buffer them until flush().
  virtual void put(const std::vector<SinkRecord>& records) = 0;
  // Writes out everything put so far. currentOffsets are the offsets past the records put.
  virtual void flush(const SinkOffsets& /*currentOffsets*/) {}
  // Before the runtime commits: the offsets safe to commit (empty: commit nothing). By default
  // flushes and answers currentOffsets.
  virtual SinkOffsets preCommit(const SinkOffsets& currentOffsets) {
    flush(currentOffsets);
    return currentOffsets;
  }
  // Partitions assigned to the task, before their records are put.
  virtual void open(const std::vector<TopicPartition>& /*partitions*/) {}
  // Partitions taken away, after their last records were put and committed.
  virtual void close(const std::vector<TopicPartition>& /*partitions*/) {}

 protected:
  // Null until initialize().
  SinkTaskContext* context() const { return context_; }

 private:
  SinkTaskContext* context_ = nullptr;
};

class SinkConnector : public Connector {
 public:
  static constexpr std::string_view TOPICS_CONFIG = "topics";
  // Told of consumer offsets an operator alters or resets (nullopt) through the REST API; throws
  // ConnectException to refuse them; false, the default, means it does not check them.
  virtual bool alterOffsets(const Props& /*connectorConfig*/,
                            const std::map<TopicPartition, std::optional<int64_t>>& /*offsets*/) {
    return false;
  }
};

}  // namespace oxbow::connect
