#pragma once

// librdkafka helpers that every Kafka client of the project (Streams, SQL, the registry, the CLI)
// shares; header-only, so that each keeps linking librdkafka its own way.

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>

namespace oxbow::rdkafka {

// ListOffsets' timestamps for a partition's start and end.
inline constexpr int64_t kEarliest = -2;
inline constexpr int64_t kLatest = -1;

// The offset ListOffsets answers for `timestamp` (kEarliest, kLatest or a time), within
// `timeout_ms`.
inline rd_kafka_resp_err_t list_offset(rd_kafka_t* client, const std::string& topic,
                                       int32_t partition, int64_t timestamp, int64_t* offset,
                                       int timeout_ms) {
  auto* list = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(list, topic.c_str(), partition)->offset = timestamp;
  auto err = rd_kafka_offsets_for_times(client, list, timeout_ms);
  if (!err) err = list->elems[0].err;
  if (!err) *offset = list->elems[0].offset;
  rd_kafka_topic_partition_list_destroy(list);
  return err;
}

// The offsets ListOffsets answers for `timestamp` in each of `partitions` (whose offsets are
// overwritten), all asked in one call: a partition's own error is in its `err`.
inline rd_kafka_resp_err_t list_offsets(rd_kafka_t* client,
                                        rd_kafka_topic_partition_list_t* partitions,
                                        int64_t timestamp, int timeout_ms) {
  for (int i = 0; i < partitions->cnt; ++i) partitions->elems[i].offset = timestamp;
  return partitions->cnt == 0 ? RD_KAFKA_RESP_ERR_NO_ERROR
                              : rd_kafka_offsets_for_times(client, partitions, timeout_ms);
}

// What rd_kafka_query_watermark_offsets answers, within `timeout_ms` in all: in librdkafka 2.0.2
// that call waits forever once the partition's leader is down, whatever its timeout (librdkafka
// #2588, fixed in 2.3.0), and a thread caught in it holds whatever waits for that thread (a
// request, a shutdown). rd_kafka_offsets_for_times keeps its timeout. `low` may be null: the
// start is then not asked for.
inline rd_kafka_resp_err_t query_watermarks(rd_kafka_t* client, const std::string& topic,
                                            int32_t partition, int64_t* low, int64_t* high,
                                            int timeout_ms) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  if (low)
    if (auto err = list_offset(client, topic, partition, kEarliest, low, timeout_ms)) return err;
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return list_offset(client, topic, partition, kLatest, high,
                     static_cast<int>(std::max<int64_t>(left, 1)));
}

}  // namespace oxbow::rdkafka
