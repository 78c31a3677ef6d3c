// A stream thread's side of the group's rebalances (membership.cpp receives them): the tasks an
// assignment makes or a revocation closes, the input partitions they bring, the stream times they
// resume from, and the offset reset policies of sources that set their own.
#include <spdlog/spdlog.h>

#include "oxbow/streams/errors.h"
#include "streams/runtime/partition_time.h"
#include "streams/runtime/stream_thread.h"

namespace oxbow::streams::detail {

rd_kafka_topic_partition_list_t* StreamThread::on_assigned(
    const rd_kafka_topic_partition_list_t* anchors) {
  auto* inputs = rd_kafka_topic_partition_list_new(anchors->cnt);
  std::vector<Task*> created;
  for (int i = 0; i < anchors->cnt; ++i) {
    auto sub_it = subtopology_of_.find(anchors->elems[i].topic);
    if (sub_it == subtopology_of_.end()) continue;
    int32_t partition = anchors->elems[i].partition;
    std::pair<int, int32_t> id{sub_it->second, partition};
    if (tasks_.count(id)) continue;
    const Subtopology* sub = nullptr;
    for (const auto& s : subtopologies_)
      if (s.id == id.first) sub = &s;
    if (!sub) continue;
    TaskConfig tc = config_.task;
    tc.subtopology = sub->id;
    tc.partition = partition;
    // Made before it is added: opening its stores may wait for the state directory's lock,
    // and queries must not wait with it.
    auto task = std::make_unique<Task>(graph_, *sub, tc, *producer_);
    ActiveTask* slot = nullptr;
    {
      std::unique_lock lock(tasks_mutex_);
      slot = &tasks_[id];
      slot->task = std::move(task);
    }
    auto& active = *slot;
    created.push_back(active.task.get());
    std::vector<std::string> read;
    for (const auto& t : active.task->input_topics()) {
      if (partition >= producer_->partitions_of(t)) continue;
      by_input_[{t, partition}] = &active;
      route_ = {};
      rd_kafka_topic_partition_list_add(inputs, t.c_str(), partition);
      read.push_back(t);
    }
    if (read.size() > 1) {
      active.group = std::make_unique<PartitionGroup>(read);
      ++grouped_tasks_;
    }
    spdlog::info("stream thread {}: task {} assigned", config_.client_id, active.task->id());
  }
  resume_stream_times(inputs);
  reader_->register_tasks(created);
  for (Task* task : created)
    if (!reader_->restoring(task)) set_queryable(task);
  return inputs;
}

// New tasks start from the stream time their inputs' last commit carries, so that windows closed
// before a restart stay closed after it. One OffsetFetch per assignment; a task whose inputs have
// no commit (or none of Kafka's format) starts from nothing, as in Kafka.
void StreamThread::resume_stream_times(rd_kafka_topic_partition_list_t* inputs) {
  if (inputs->cnt == 0) return;
  auto* committed = rd_kafka_topic_partition_list_copy(inputs);
  auto err = rd_kafka_committed(consumer_.get(), committed, 10000);
  if (err) {
    rd_kafka_topic_partition_list_destroy(committed);
    throw StreamsException(std::string("committed offsets of the assigned tasks: ") +
                           rd_kafka_err2str(err));
  }
  for (int i = 0; i < committed->cnt; ++i) {
    const auto& p = committed->elems[i];
    // The consumer starts from the committed offset it is given here rather than fetch it again
    // itself (without a subscription, librdkafka's own fetch of it can lag by seconds).
    if (p.offset >= 0)
      if (auto* input = rd_kafka_topic_partition_list_find(inputs, p.topic, p.partition))
        input->offset = p.offset;
    auto it = by_input_.find({p.topic, p.partition});
    if (it == by_input_.end() || !p.metadata) continue;
    if (auto time = decode_partition_time(
            std::string_view(static_cast<const char*>(p.metadata), p.metadata_size)))
      it->second->task->resume_stream_time(*time);
  }
  rd_kafka_topic_partition_list_destroy(committed);
}

rd_kafka_topic_partition_list_t* StreamThread::on_revoked(
    const rd_kafka_topic_partition_list_t* anchors, bool lost) {
  if (lost) {
    // The group has moved on without this member: its commit would be refused, and an open
    // transaction's output must not be committed by anyone. The tasks' inputs are processed again
    // from the last commit, wherever they land.
    producer_->abort_transaction();
  } else {
    try {
      // All tasks commit, as Kafka Streams does: a commit covers the thread's whole transaction.
      // A failed thread commits nothing: what it processed since its last commit is redone.
      if (!failed_) commit();
    } catch (const std::exception& e) {
      spdlog::warn("stream thread {}: commit on revocation failed: {}", config_.client_id,
                   e.what());
    }
  }
  // Every input partition of the revoked tasks that the consumer holds.
  std::set<std::pair<int, int32_t>> revoked;
  for (int i = 0; i < anchors->cnt; ++i) {
    auto sub = subtopology_of_.find(anchors->elems[i].topic);
    if (sub != subtopology_of_.end()) revoked.emplace(sub->second, anchors->elems[i].partition);
  }
  auto* inputs = rd_kafka_topic_partition_list_new(0);
  rd_kafka_topic_partition_list_t* held = nullptr;
  if (rd_kafka_assignment(consumer_.get(), &held) == RD_KAFKA_RESP_ERR_NO_ERROR && held) {
    for (int i = 0; i < held->cnt; ++i) {
      auto sub = subtopology_of_.find(held->elems[i].topic);
      if (sub != subtopology_of_.end() && revoked.count({sub->second, held->elems[i].partition}))
        rd_kafka_topic_partition_list_add(inputs, held->elems[i].topic, held->elems[i].partition);
    }
  }
  if (held) rd_kafka_topic_partition_list_destroy(held);
  for (const auto& id : revoked) close_task(id);
  rebalancing_ = !reader_->restoring_tasks().empty();
  return inputs;
}

void StreamThread::close_task(std::pair<int, int32_t> id) {
  auto it = tasks_.find(id);
  if (it == tasks_.end()) return;
  Task* task = it->second.task.get();
  bool was_restoring = reader_->unregister(task);
  for (const auto& t : task->input_topics()) {
    seek_on_resume_.erase({t, id.second});
    by_input_.erase({t, id.second});
  }
  route_ = {};
  spdlog::info("stream thread {}: task {} revoked", config_.client_id, task->id());
  if (it->second.group) --grouped_tasks_;
  {
    std::unique_lock lock(tasks_mutex_);  // waits for queries reading it
    tasks_.erase(it);
  }
  if (was_restoring) reader_->reassign();
}

// Consumed::withOffsetResetPolicy: where a source topic starts without a committed offset, for
// that topic alone (the consumer's auto.offset.reset, earliest by default, for the others).
void StreamThread::set_offset_reset_policies() {
  for (const auto& n : graph_->nodes()) {
    if (n.kind != NodeDescription::Kind::kSource || n.internal) continue;
    if (n.consumed.offset_reset == AutoOffsetReset::kDefault) continue;
    const char* policy =
        n.consumed.offset_reset == AutoOffsetReset::kLatest ? "latest" : "earliest";
    for (const auto& topic : n.topics) {
      // The consumer's topic settings, with this one changed.
      rd_kafka_topic_conf_t* conf = rd_kafka_default_topic_conf_dup(consumer_.get());
      char error[512] = "librdkafka refused the topic name";
      if (rd_kafka_topic_conf_set(conf, "auto.offset.reset", policy, error, sizeof error) !=
              RD_KAFKA_CONF_OK ||
          !consumer_topics_.get(consumer_.get(), topic, conf))
        throw StreamsException("offset reset policy of " + topic + ": " + error);
    }
  }
}

void StreamThread::restart_tasks_from_last_commit(const std::string& why) {
  spdlog::warn(
      "stream thread {}: the group moved on during a commit ({}); its tasks start again from "
      "their last commit",
      config_.client_id, why);
  rd_kafka_topic_partition_list_t* assignment = nullptr;
  if (rd_kafka_assignment(consumer_.get(), &assignment) != RD_KAFKA_RESP_ERR_NO_ERROR ||
      !assignment)
    throw StreamsException("after a migrated commit: the consumer's assignment is unknown");
  auto* anchors = rd_kafka_topic_partition_list_new(0);
  for (int i = 0; i < assignment->cnt; ++i) {
    auto sub = subtopology_of_.find(assignment->elems[i].topic);
    if (sub == subtopology_of_.end()) continue;
    auto anchor = anchor_of_.find(sub->second);
    if (anchor != anchor_of_.end() && anchor->second == assignment->elems[i].topic)
      rd_kafka_topic_partition_list_add(anchors, assignment->elems[i].topic,
                                        assignment->elems[i].partition);
  }
  rd_kafka_topic_partition_list_destroy(assignment);
  std::vector<std::pair<int, int32_t>> ids;
  for (const auto& [id, t] : tasks_) ids.push_back(id);
  for (const auto& id : ids) close_task(id);
  auto* inputs = on_assigned(anchors);
  rd_kafka_topic_partition_list_destroy(anchors);
  // Back to the committed offsets (the beginning where none is).
  if (rd_kafka_committed(consumer_.get(), inputs, 10000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
    for (int i = 0; i < inputs->cnt; ++i)
      if (inputs->elems[i].offset < 0) inputs->elems[i].offset = RD_KAFKA_OFFSET_BEGINNING;
    if (auto* error = rd_kafka_seek_partitions(consumer_.get(), inputs, 10000))
      rd_kafka_error_destroy(error);
  }
  rd_kafka_topic_partition_list_destroy(inputs);
  for (Task* task : reader_->restoring_tasks()) {
    auto* paused = input_partitions(task);
    rd_kafka_pause_partitions(consumer_.get(), paused);
    rd_kafka_topic_partition_list_destroy(paused);
  }
  rebalancing_ = !reader_->restoring_tasks().empty();
}

void StreamThread::finish_task_restoration(Task* task) {
  set_queryable(task);
  auto* list = input_partitions(task);
  // Records fetched before the pause took effect were not processed: read them again.
  auto* seeks = rd_kafka_topic_partition_list_new(0);
  for (int i = 0; i < list->cnt; ++i) {
    auto it = seek_on_resume_.find({list->elems[i].topic, list->elems[i].partition});
    if (it == seek_on_resume_.end()) continue;
    rd_kafka_topic_partition_list_add(seeks, it->first.first.c_str(), it->first.second)->offset =
        it->second;
    seek_on_resume_.erase(it);
  }
  if (seeks->cnt > 0)
    if (auto* error = rd_kafka_seek_partitions(consumer_.get(), seeks, 10000))
      rd_kafka_error_destroy(error);
  rd_kafka_topic_partition_list_destroy(seeks);
  rd_kafka_resume_partitions(consumer_.get(), list);
  rd_kafka_topic_partition_list_destroy(list);
  spdlog::info("stream thread {}: task {} restored, processing", config_.client_id, task->id());
}

}  // namespace oxbow::streams::detail
