#pragma once
// Kafka Streams' PartitionGroup: a task that reads several partitions (a join's two sides, merged
// streams, a table beside a stream) takes their records in timestamp order, so that a join sees
// the table as it was when the stream record happened rather than as fetching happened to
// interleave them. Records wait here, per partition, until the task can tell which comes next:
// every partition has one buffered, or those that have none are known to be caught up with their
// log (Kafka's max.task.idle.ms = 0: wait for data that exists, never for data not yet written).
#include <librdkafka/rdkafka.h>

#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace oxbow::streams::detail {

class PartitionGroup {
 public:
  struct MessageDeleter {
    void operator()(rd_kafka_message_t* m) const { rd_kafka_message_destroy(m); }
  };
  using Message = std::unique_ptr<rd_kafka_message_t, MessageDeleter>;
  // Whether a partition with nothing buffered has nothing more to give now.
  using CaughtUp = std::function<bool(const std::string& topic)>;

  // A partition holding more than this is paused by the stream thread until it drains to half
  // (Kafka's buffered.records.per.partition); order is never given up for memory.
  static constexpr size_t kMaxBufferedPerPartition = 1000;

  explicit PartitionGroup(const std::vector<std::string>& topics) {
    for (const auto& t : topics) queues_[t];
  }
  void add(const std::string& topic, Message message);
  // The next record in timestamp order (ties: the topic first by name), or null when a
  // partition without records may still have earlier ones.
  Message next(const CaughtUp& caught_up);
  size_t buffered() const { return buffered_; }
  size_t buffered(const std::string& topic) const {
    auto it = queues_.find(topic);
    return it == queues_.end() ? 0 : it->second.size();
  }

 private:
  std::map<std::string, std::deque<Message>> queues_;
  size_t buffered_ = 0;
};

}  // namespace oxbow::streams::detail
