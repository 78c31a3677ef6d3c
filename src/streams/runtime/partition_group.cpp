#include "streams/runtime/partition_group.h"

namespace oxbow::streams::detail {

void PartitionGroup::add(const std::string& topic, Message message) {
  queues_[topic].push_back(std::move(message));
  ++buffered_;
}

PartitionGroup::Message PartitionGroup::next(const CaughtUp& caught_up) {
  std::deque<Message>* earliest = nullptr;
  int64_t earliest_time = 0;
  bool waiting = false;
  for (auto& [topic, queue] : queues_) {
    if (queue.empty()) {
      if (!caught_up(topic)) waiting = true;
      continue;
    }
    int64_t time = rd_kafka_message_timestamp(queue.front().get(), nullptr);
    if (!earliest || time < earliest_time) {
      earliest = &queue;
      earliest_time = time;
    }
  }
  if (!earliest || waiting) return nullptr;
  Message out = std::move(earliest->front());
  earliest->pop_front();
  --buffered_;
  return out;
}

}  // namespace oxbow::streams::detail
