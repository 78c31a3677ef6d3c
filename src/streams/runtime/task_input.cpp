// How a stream thread hands fetched records to its tasks: at once, or, for a task that reads
// several partitions, through its partition group in timestamp order, pausing a partition whose
// buffer is full (runtime/partition_group.h).
#include "streams/runtime/stream_thread.h"

namespace oxbow::streams::detail {

void StreamThread::dispatch(PartitionGroup::Message m) {
  ActiveTask* active = route(m.get());
  if (!active) return;
  if (reader_->restoring(active->task.get())) {
    auto [slot, fresh] = seek_on_resume_.try_emplace({route_.topic, m->partition}, m->offset);
    if (!fresh) slot->second = std::min(slot->second, m->offset);
    return;
  }
  if (!active->group) {
    std::unique_lock lock(active->lock);
    return process(m.get());
  }
  std::string topic = route_.topic;
  int32_t partition = m->partition;
  active->fetched_next[topic] = m->offset + 1;
  active->group->add(topic, std::move(m));
  if (active->group->buffered(topic) > PartitionGroup::kMaxBufferedPerPartition &&
      active->full.insert(topic).second) {
    auto* list = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(list, topic.c_str(), partition);
    rd_kafka_pause_partitions(consumer_.get(), list);
    rd_kafka_topic_partition_list_destroy(list);
  }
  drain(*active);
}

void StreamThread::drain(ActiveTask& active) {
  auto caught_up = [this, &active](const std::string& topic) {
    return this->caught_up(active, topic);
  };
  {
    std::unique_lock lock(active.lock);  // once for the run of records released
    while (auto m = active.group->next(caught_up)) process(m.get());
  }
  resume_drained(active);
}

// A paused partition whose buffer has drained to half resumes from the record after the last one
// it buffered (records librdkafka held when the pause took effect may have been dropped).
void StreamThread::resume_drained(ActiveTask& active) {
  for (auto it = active.full.begin(); it != active.full.end();) {
    if (active.group->buffered(*it) > PartitionGroup::kMaxBufferedPerPartition / 2) {
      ++it;
      continue;
    }
    auto* list = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(list, it->c_str(), active.task->task_partition_id())->offset =
        active.fetched_next[*it];
    if (auto* error = rd_kafka_seek_partitions(consumer_.get(), list, 10000))
      rd_kafka_error_destroy(error);
    rd_kafka_resume_partitions(consumer_.get(), list);
    rd_kafka_topic_partition_list_destroy(list);
    it = active.full.erase(it);
  }
}

bool StreamThread::paused_by_us(const char* topic, int32_t partition) const {
  for (const auto& [id, t] : tasks_)
    if (t.task->task_partition_id() == partition && t.full.count(topic)) return true;
  return false;
}

bool StreamThread::caught_up(ActiveTask& active, const std::string& topic) {
  int32_t partition = active.task->task_partition_id();
  int64_t low = -1, high = -1;
  if (rd_kafka_get_watermark_offsets(consumer_.get(), topic.c_str(), partition, &low, &high) !=
          RD_KAFKA_RESP_ERR_NO_ERROR ||
      high < 0) {
    // Not fetched yet (librdkafka may take a second to start fetching a partition added to the
    // assignment): its end is asked once, rather than holding the task back until then.
    auto [end, fresh] = active.queried_ends.try_emplace(topic, -1);
    if (fresh && rd_kafka_query_watermark_offsets(consumer_.get(), topic.c_str(), partition, &low,
                                                  &end->second, 5000) != RD_KAFKA_RESP_ERR_NO_ERROR)
      end->second = -1;
    high = end->second;
    if (high < 0) return false;
    low = std::max<int64_t>(low, 0);
  }
  // Where the consumer stands: past the last record it gave (and any transaction markers after
  // it), or, before it gave any, where the input starts.
  auto* list = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(list, topic.c_str(), partition);
  rd_kafka_position(consumer_.get(), list);
  int64_t position = list->elems[0].offset;
  rd_kafka_topic_partition_list_destroy(list);
  if (position < 0) {
    auto [start, fresh] = active.start_offsets.try_emplace(topic, 0);
    if (fresh) start->second = committed_offset(consumer_.get(), topic, partition);
    position = std::max(start->second, low);
  }
  return position >= high;
}

}  // namespace oxbow::streams::detail
