#include "streams/runtime/active_task.h"

#include <algorithm>
#include <utility>

#include "streams/runtime/kafka_clients.h"
#include "streams/runtime/thread_config.h"

namespace oxbow::streams::detail {

void ActiveTask::buffer(rd_kafka_t* consumer, const std::string& topic, PartitionGroup::Message m) {
  int32_t partition = m->partition;
  group->add(topic, std::move(m));
  if (group->buffered(topic) > PartitionGroup::kMaxBufferedPerPartition &&
      full.insert(topic).second) {
    auto* list = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(list, topic.c_str(), partition);
    rd_kafka_pause_partitions(consumer, list);
    rd_kafka_topic_partition_list_destroy(list);
  }
}

void ActiveTask::resume_drained(rd_kafka_t* consumer) {
  for (auto it = full.begin(); it != full.end();) {
    if (group->buffered(*it) > PartitionGroup::kMaxBufferedPerPartition / 2) {
      ++it;
      continue;
    }
    auto* list = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(list, it->c_str(), task->task_partition_id())->offset =
        fetched_next[*it];
    if (auto* error = rd_kafka_seek_partitions(consumer, list, 10000))
      rd_kafka_error_destroy(error);
    rd_kafka_resume_partitions(consumer, list);
    rd_kafka_topic_partition_list_destroy(list);
    it = full.erase(it);
  }
}

bool ActiveTask::caught_up(rd_kafka_t* consumer, const std::string& topic) {
  int32_t partition = task->task_partition_id();
  int64_t low = -1, high = -1;
  if (rd_kafka_get_watermark_offsets(consumer, topic.c_str(), partition, &low, &high) !=
          RD_KAFKA_RESP_ERR_NO_ERROR ||
      high < 0) {
    // Not fetched yet (librdkafka may take a second to start fetching a partition added to the
    // assignment): its end is asked once, rather than holding the task back until then.
    auto [end, fresh] = queried_ends.try_emplace(topic, -1);
    if (fresh && query_watermarks(consumer, topic, partition, &low, &end->second, 5000) !=
                     RD_KAFKA_RESP_ERR_NO_ERROR)
      end->second = -1;
    high = end->second;
    if (high < 0) return false;
    low = std::max<int64_t>(low, 0);
  }
  // Where the consumer stands: past the last record it gave (and any transaction markers after
  // it), or, before it gave any, where the input starts.
  auto* list = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(list, topic.c_str(), partition);
  rd_kafka_position(consumer, list);
  int64_t position = list->elems[0].offset;
  rd_kafka_topic_partition_list_destroy(list);
  if (position < 0) {
    auto [start, fresh] = start_offsets.try_emplace(topic, 0);
    if (fresh) start->second = committed_offset(consumer, topic, partition);
    position = std::max(start->second, low);
  }
  return position >= high;
}

}  // namespace oxbow::streams::detail
