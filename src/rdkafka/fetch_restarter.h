#pragma once
// A fix for a fetch stall of librdkafka 2.0.2, for Streams' threads, Connect's sink tasks and the
// benchmarks' raw pipes alike (header-only: the pipes link librdkafka alone).
#include <librdkafka/rdkafka.h>

#include <cstdint>
#include <cstdlib>
#include <functional>

namespace oxbow::rdkafka {

// librdkafka 2.0.2 stops fetching while queued.min.messages records (or
// queued.max.messages.kbytes) wait in a consumer's queue, and looks again only when its broker
// thread next wakes, up to a second later (2.1 made that fetch.queue.backoff.ms): a consumer that
// drains its queue sooner waits out the rest of that second, which bounded the throughput of
// every application faster than its broker. This notices a queue that filled up and then ran
// dry, and seeks the partitions with records left to their positions: nothing is queued, so
// nothing is dropped, and the fetcher starts again at once. A queue that never fills is never
// touched, so a slow or distant broker sees no extra fetches.
class FetchRestarter {
 public:
  explicit FetchRestarter(rd_kafka_t* consumer);
  // Each record the consumer handed out, with its key and value sizes.
  void got_record(size_t bytes) {
    average_bytes_ += (static_cast<double>(bytes) - average_bytes_) / 64;
    if ((++records_ & 63) == 0) check_queue();
  }
  // The queue filled since the fetcher was last restarted: poll briefly, to notice it run dry.
  bool watching() const { return filled_; }
  // After a poll that returned nothing. `paused(topic, partition)`: partitions the caller paused.
  // Whether it restarted the fetcher.
  bool idle(const std::function<bool(const char* topic, int32_t partition)>& paused);

 private:
  size_t queued() const;
  void check_queue();

  rd_kafka_t* consumer_;
  double min_messages_ = 100000, max_bytes_ = 65536.0 * 1024;
  double average_bytes_ = 0;
  uint64_t records_ = 0;
  bool filled_ = false;
};

inline FetchRestarter::FetchRestarter(rd_kafka_t* consumer) : consumer_(consumer) {
  auto setting = [consumer](const char* name, double& out) {
    char value[64];
    size_t size = sizeof value;
    if (rd_kafka_conf_get(rd_kafka_conf(consumer), name, value, &size) == RD_KAFKA_CONF_OK)
      out = std::strtod(value, nullptr);
  };
  setting("queued.min.messages", min_messages_);
  setting("queued.max.messages.kbytes", max_bytes_);
  max_bytes_ *= 1024;
}

inline size_t FetchRestarter::queued() const {
  rd_kafka_queue_t* queue = rd_kafka_queue_get_consumer(consumer_);
  if (!queue) return 0;
  size_t n = rd_kafka_queue_length(queue);
  rd_kafka_queue_destroy(queue);
  return n;
}

inline void FetchRestarter::check_queue() {
  // Near either limit counts as full: the fetcher decides on the queue as it was a moment ago.
  auto n = static_cast<double>(queued());
  if (n >= 0.9 * min_messages_ || n * average_bytes_ >= 0.9 * max_bytes_) filled_ = true;
}

inline bool FetchRestarter::idle(const std::function<bool(const char*, int32_t)>& paused) {
  if (!filled_ || queued() > 0) return false;
  filled_ = false;
  rd_kafka_topic_partition_list_t* assigned = nullptr;
  if (rd_kafka_assignment(consumer_, &assigned) != RD_KAFKA_RESP_ERR_NO_ERROR) return false;
  rd_kafka_position(consumer_, assigned);
  rd_kafka_topic_partition_list_t* behind = rd_kafka_topic_partition_list_new(assigned->cnt);
  for (int i = 0; i < assigned->cnt; ++i) {
    const auto& p = assigned->elems[i];
    int64_t low = -1, high = -1;
    if (p.offset < 0 || paused(p.topic, p.partition) ||
        rd_kafka_get_watermark_offsets(consumer_, p.topic, p.partition, &low, &high) !=
            RD_KAFKA_RESP_ERR_NO_ERROR ||
        high <= p.offset)
      continue;
    rd_kafka_topic_partition_list_add(behind, p.topic, p.partition)->offset = p.offset;
  }
  bool restarted = behind->cnt > 0;
  if (restarted)
    if (auto* error = rd_kafka_seek_partitions(consumer_, behind, 1000))
      rd_kafka_error_destroy(error);
  rd_kafka_topic_partition_list_destroy(behind);
  rd_kafka_topic_partition_list_destroy(assigned);
  return restarted;
}

}  // namespace oxbow::rdkafka
