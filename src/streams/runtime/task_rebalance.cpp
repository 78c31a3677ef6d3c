// The task manager's side of rebalances: which tasks the thread runs, made and closed as the
// group assigns and revokes them, where their inputs start, and their restoration's pauses.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "oxbow/streams/errors.h"
#include "rdkafka/offsets.h"
#include "streams/runtime/partition_time.h"
#include "streams/runtime/task_manager.h"
#include "streams/runtime/topology_positions.h"

namespace oxbow::streams::detail {

void TaskManager::index_topologies() {
  subtopologies_.clear();
  latest_start_.clear();
  repartition_topics_.clear();
  for (const auto& topology : *topologies_) {
    for (const auto& spec : topology.graph->internal_topics())
      repartition_topics_.insert(topology.wire(spec.name));
    for (const auto& sub : topology.graph->subtopologies())
      subtopologies_.push_back({&topology, sub});
    // A named topology's task without a position of its own starts where its source's reset
    // policy says (the consumer's, from the instance's group, is not its position).
    bool latest_default = false;
    for (const char* key : {"auto.offset.reset", "consumer.auto.offset.reset"})
      if (config_.app.count(key)) latest_default = config_.app.at(key) == "latest";
    for (const auto& n : topology.graph->nodes()) {
      if (n.kind != NodeDescription::Kind::kSource || n.internal) continue;
      for (const auto& t : n.topics) {
        if (n.consumed.offset_reset == AutoOffsetReset::kLatest ||
            (n.consumed.offset_reset == AutoOffsetReset::kDefault && latest_default))
          latest_start_.insert({topology.name, t});
      }
    }
  }
}

bool TaskManager::runs(const TaskKey& id) const {
  return std::any_of(subtopologies_.begin(), subtopologies_.end(), [&](const TopologySub& s) {
    return s.sub.id == id.subtopology && s.topology->name == id.topology;
  });
}

std::vector<TaskManager::TaskKey> TaskManager::set_topologies(
    std::shared_ptr<const Topologies> next) {
  std::set<std::string> kept;
  for (const auto& t : *next) kept.insert(t.name);
  // The tasks of a removed topology are committed (with all the others) and closed, their
  // inputs leaving the consumer, while the maps still know them.
  std::set<TaskKey> gone;
  for (const auto& [id, t] : tasks_)
    if (!kept.count(id.topology)) gone.insert(id);
  std::vector<TaskKey> removed(gone.begin(), gone.end());
  if (!gone.empty()) {
    Partitions inputs(on_revoked(gone, false), &rd_kafka_topic_partition_list_destroy);
    throw_on_error(rd_kafka_incremental_unassign(consumer_, inputs.get()), "incremental_unassign");
  }
  std::set<TaskKey> standbys;
  for (const auto& [key, sum] : standbys_->offset_sums())
    if (kept.count(key.topology))
      standbys.insert(key);
    else
      removed.push_back(key);
  standbys_->assign(standbys);
  // What a removed topology last committed to its group is no longer compared with anything.
  std::set<std::string> kept_groups;
  for (const auto& t : *next) kept_groups.insert(t.prefix);
  std::erase_if(own_committed_,
                [&](const auto& entry) { return !kept_groups.count(std::get<0>(entry.first)); });
  topologies_ = std::move(next);
  index_topologies();
  publish_group_snapshot();
  return removed;
}

std::unique_ptr<Task> TaskManager::make_task(TaskKey key) {
  // A task of a topology this instance does not run (or no longer has) is not made.
  const TopologySub* found = nullptr;
  for (const auto& s : subtopologies_)
    if (s.sub.id == key.subtopology && s.topology->name == key.topology) found = &s;
  if (!found) return nullptr;
  TaskConfig tc = config_.task;
  tc.subtopology = found->sub.id;
  tc.partition = key.partition;
  tc.topology = key.topology;
  // The topology's internal topics and changelogs are named after its prefix.
  tc.application_id = found->topology->prefix;
  return std::make_unique<Task>(found->topology->graph, found->sub, tc, producer_);
}

bool TaskManager::handle_assignment(const std::set<TaskKey>& assigned,
                                    const std::set<TaskKey>& standby) {
  // A standby becoming active here hands its stores over: made durable and closed first.
  for (const auto& id : assigned)
    if (!tasks_.count(id)) standbys_->release(id);
  std::set<TaskKey> revoked;
  std::vector<TaskKey> added;
  for (const auto& [id, t] : tasks_)
    if (!assigned.count(id)) revoked.insert(id);
  for (const auto& id : assigned)
    if (!tasks_.count(id) && runs(id)) added.push_back(id);
  bool gave_up = !revoked.empty();
  rebalancing_ = true;
  if (gave_up) {
    Partitions inputs(on_revoked(revoked, false), &rd_kafka_topic_partition_list_destroy);
    throw_on_error(rd_kafka_incremental_unassign(consumer_, inputs.get()), "incremental_unassign");
  }
  Partitions inputs(on_assigned(added), &rd_kafka_topic_partition_list_destroy);
  throw_on_error(rd_kafka_incremental_assign(consumer_, inputs.get()), "incremental_assign");
  if (inputs->cnt > 0) learn_leaders(consumer_);
  inputs.reset();
  pause_restoring_tasks();
  standbys_->assign(standby);
  rebalancing_ = !reader_.restoring_tasks().empty();
  publish_group_snapshot();
  return gave_up;
}

void TaskManager::handle_lost_all() {
  std::set<TaskKey> all;
  for (const auto& [id, t] : tasks_) all.insert(id);
  Partitions inputs(on_revoked(all, true), &rd_kafka_topic_partition_list_destroy);
  throw_on_error(rd_kafka_incremental_unassign(consumer_, inputs.get()), "incremental_unassign");
  rebalancing_ = true;
  publish_group_snapshot();
}

rd_kafka_topic_partition_list_t* TaskManager::on_assigned(const std::vector<TaskKey>& ids) {
  auto* inputs = rd_kafka_topic_partition_list_new(static_cast<int>(ids.size()));
  std::vector<Task*> created;
  bool unnamed = false;
  std::vector<std::pair<TaskKey, ActiveTask*>> named;
  for (const auto& id : ids) {
    if (tasks_.count(id)) continue;
    // Made before it is added: opening its stores may wait for the state directory's lock,
    // and queries must not wait with it.
    auto task = make_task(id);
    if (!task) continue;
    ActiveTask* slot = nullptr;
    {
      std::unique_lock lock(tasks_mutex_);
      slot = &tasks_[id];
      slot->task = std::move(task);
    }
    auto& active = *slot;
    created.push_back(active.task.get());
    if (id.topology.empty())
      unnamed = true;
    else
      named.push_back({id, &active});
    std::vector<std::string> read;
    for (const auto& t : active.task->input_topics()) {
      if (id.partition >= producer_.partitions_of(t)) continue;
      auto& readers = by_input_[{t, id.partition}];
      // A partition the consumer holds for another task already stays where it is.
      if (readers.empty()) rd_kafka_topic_partition_list_add(inputs, t.c_str(), id.partition);
      readers.push_back(&active);
      route_ = {};
      read.push_back(t);
    }
    if (read.size() > 1) {
      active.group = std::make_unique<PartitionGroup>(read);
      ++grouped_tasks_;
    }
    spdlog::info("stream thread {}: task {} assigned", config_.client_id, active.task->id());
  }
  // An instance runs its unnamed topology or named ones, never both.
  if (unnamed) resume_stream_times(inputs);
  if (!named.empty()) resume_named_tasks(named, inputs);
  reader_.register_tasks(created);
  for (Task* task : created)
    if (!reader_.restoring(task)) set_queryable(task);
  return inputs;
}

// New tasks start from the stream time their inputs' last commit carries, so that windows closed
// before a restart stay closed after it. One OffsetFetch per assignment; a task whose inputs have
// no commit (or none of Kafka's format) starts from nothing, as in Kafka.
void TaskManager::resume_stream_times(rd_kafka_topic_partition_list_t* inputs) {
  if (inputs->cnt == 0) return;
  auto* committed = rd_kafka_topic_partition_list_copy(inputs);
  auto err = committed_offsets(consumer_, committed);
  if (err) {
    rd_kafka_topic_partition_list_destroy(committed);
    throw StreamsException(std::string("committed offsets of the assigned tasks: ") +
                           rd_kafka_err2str(err));
  }
  for (int i = 0; i < committed->cnt; ++i) {
    const auto& p = committed->elems[i];
    auto it = by_input_.find({p.topic, p.partition});
    if (it == by_input_.end()) continue;
    // The consumer starts from the committed offset it is given here rather than fetch it again
    // itself (without a subscription, librdkafka's own fetch of it can lag by seconds).
    if (p.offset >= 0)
      if (auto* input = rd_kafka_topic_partition_list_find(inputs, p.topic, p.partition))
        input->offset = p.offset;
    if (!p.metadata) continue;
    if (auto time = decode_partition_time(
            std::string_view(static_cast<const char*>(p.metadata), p.metadata_size)))
      it->second.front()->task->resume_stream_time(*time);
  }
  rd_kafka_topic_partition_list_destroy(committed);
}

const NamedGraph& TaskManager::topology_named(const std::string& name) const {
  for (const auto& t : *topologies_)
    if (t.name == name) return t;
  throw StreamsException("no topology named '" + name + "'");
}

void TaskManager::resume_named_tasks(const std::vector<std::pair<TaskKey, ActiveTask*>>& created,
                                     rd_kafka_topic_partition_list_t* inputs) {
  std::map<std::string, std::vector<TopicPartitionKey>> asks;
  for (const auto& [id, active] : created)
    for (const auto& t : active->task->input_topics())
      if (id.partition < producer_.partitions_of(t))
        asks[topology_named(id.topology).prefix].push_back({t, id.partition});
  auto committed = fetch_positions(producer_.handle(), asks);
  auto position_of = [&](const std::string& group, const std::string& t, int32_t partition) {
    auto positions = committed.find(group);
    if (positions == committed.end()) return CommittedPosition{};
    auto it = positions->second.find({t, partition});
    return it == positions->second.end() ? CommittedPosition{} : it->second;
  };
  // Where the reset policies start those without a position: every partition's end asked at
  // once (one by one, a thousand new topologies took minutes, past max.poll.interval.ms).
  ResetStarts starts;
  for (const auto& [id, active] : created)
    for (const auto& t : active->task->input_topics())
      if (id.partition < producer_.partitions_of(t) &&
          position_of(topology_named(id.topology).prefix, t, id.partition).offset < 0)
        starts.want(latest_start_.count({id.topology, t}) > 0, t, id.partition);
  starts.ask(consumer_);
  Partitions seeks(rd_kafka_topic_partition_list_new(0), &rd_kafka_topic_partition_list_destroy);
  for (const auto& [id, active] : created) {
    const std::string& group = topology_named(id.topology).prefix;
    std::optional<int64_t> time;
    for (const auto& t : active->task->input_topics()) {
      if (id.partition >= producer_.partitions_of(t)) continue;
      CommittedPosition at = position_of(group, t, id.partition);
      int64_t start = at.offset >= 0
                          ? at.offset
                          : starts.of(latest_start_.count({id.topology, t}) > 0, t, id.partition);
      if (at.stream_time) time = std::max(time.value_or(*at.stream_time), *at.stream_time);
      active->fetched_next[t] = start;
      own_committed_[{group, t, id.partition}] = at.offset;
      if (auto* input = rd_kafka_topic_partition_list_find(inputs, t.c_str(), id.partition)) {
        input->offset = input->offset < 0 ? start : std::min(input->offset, start);
        continue;
      }
      // The consumer holds the partition for other tasks already: it goes back to the lowest
      // position of its readers when this one starts before the others are.
      int64_t lowest = start;
      for (const ActiveTask* other : by_input_.at({t, id.partition})) {
        auto next = other->fetched_next.find(t);
        if (other != active && next != other->fetched_next.end() && next->second >= 0)
          lowest = std::min(lowest, next->second);
      }
      if (lowest == start)
        rd_kafka_topic_partition_list_add(seeks.get(), t.c_str(), id.partition)->offset = start;
    }
    if (time) active->task->resume_stream_time(*time);
  }
  if (seeks->cnt == 0) return;
  if (rd_kafka_error_t* error = rd_kafka_seek_partitions(consumer_, seeks.get(), 10000)) {
    std::string text = rd_kafka_error_string(error);
    rd_kafka_error_destroy(error);
    throw StreamsException("seeking back a shared input for a new task: " + text);
  }
}

void TaskManager::ResetStarts::want(bool latest, const std::string& topic, int32_t partition) {
  auto& list = latest ? latest_ : earliest_;
  if (!rd_kafka_topic_partition_list_find(list.get(), topic.c_str(), partition))
    rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), partition);
}

void TaskManager::ResetStarts::ask(rd_kafka_t* client) {
  for (auto* list : {earliest_.get(), latest_.get()}) {
    auto err = rdkafka::list_offsets(
        client, list, list == latest_.get() ? rdkafka::kLatest : rdkafka::kEarliest, 10000);
    for (int i = 0; !err && i < list->cnt; ++i) err = list->elems[i].err;
    if (err)
      throw StreamsException(
          std::string("the offsets of partitions for tasks without a position: ") +
          rd_kafka_err2str(err));
  }
}

int64_t TaskManager::ResetStarts::of(bool latest, const std::string& topic,
                                     int32_t partition) const {
  auto* list = latest ? latest_.get() : earliest_.get();
  auto* found = rd_kafka_topic_partition_list_find(list, topic.c_str(), partition);
  if (!found) throw StreamsException("no start asked for " + topic);
  return found->offset;
}

rd_kafka_topic_partition_list_t* TaskManager::on_revoked(const std::set<TaskKey>& ids, bool lost) {
  if (lost) {
    // The group has moved on without this member: its commit would be refused, and an open
    // transaction's output must not be committed by anyone. The tasks' inputs are processed again
    // from the last commit, wherever they land.
    producer_.abort_transaction();
  } else {
    try {
      // All tasks commit, as Kafka Streams does: a commit covers the thread's whole transaction.
      commit();
    } catch (const std::exception& e) {
      spdlog::warn("stream thread {}: commit on revocation failed: {}", config_.client_id,
                   e.what());
      // Nothing of the open transaction may be committed later beside inputs read again: it is
      // aborted, and the tasks start again from their last commit.
      if (config_.exactly_once) restart_tasks_from_last_commit(e.what());
    }
  }
  // The input partitions that no task left reads.
  auto* inputs = rd_kafka_topic_partition_list_new(0);
  for (const auto& id : ids) {
    auto it = tasks_.find(id);
    if (it == tasks_.end()) continue;
    std::vector<std::string> topics;
    for (const auto& t : it->second.task->input_topics())
      if (by_input_.count({t, id.partition})) topics.push_back(t);
    close_task(id);
    for (const auto& t : topics)
      if (!by_input_.count({t, id.partition}))
        rd_kafka_topic_partition_list_add(inputs, t.c_str(), id.partition);
  }
  rebalancing_ = !reader_.restoring_tasks().empty();
  return inputs;
}

void TaskManager::close_task(TaskKey id) {
  auto it = tasks_.find(id);
  if (it == tasks_.end()) return;
  Task* task = it->second.task.get();
  bool was_restoring = reader_.unregister(task);
  for (const auto& t : task->input_topics()) {
    auto readers = by_input_.find({t, id.partition});
    if (readers == by_input_.end()) continue;
    std::erase(readers->second, &it->second);
    if (!readers->second.empty()) continue;
    by_input_.erase(readers);
    seek_on_resume_.erase({t, id.partition});
  }
  route_ = {};
  spdlog::info("stream thread {}: task {} revoked", config_.client_id, task->id());
  if (it->second.group) --grouped_tasks_;
  {
    std::unique_lock lock(tasks_mutex_);  // waits for queries reading it
    tasks_.erase(it);
  }
  if (was_restoring) reader_.reassign();
}

void TaskManager::pause_restoring_tasks() {
  for (Task* task : reader_.restoring_tasks()) {
    auto* paused = input_partitions(task);
    rd_kafka_pause_partitions(consumer_, paused);
    rd_kafka_topic_partition_list_destroy(paused);
  }
}

void TaskManager::restart_tasks_from_last_commit(const std::string& why) {
  spdlog::warn(
      "stream thread {}: its transaction was aborted ({}); its tasks start again from their last "
      "commit",
      config_.client_id, why);
  producer_.abort_transaction();
  std::vector<TaskKey> ids;
  for (const auto& [id, t] : tasks_) ids.push_back(id);
  for (const auto& id : ids) close_task(id);
  // Their partitions stay the consumer's; made again, the tasks say where each starts.
  auto* inputs = on_assigned(ids);
  // Back to the committed offsets (the beginning where none is): reading on from where the
  // consumer is would skip the aborted transaction's input.
  for (int i = 0; i < inputs->cnt; ++i)
    if (inputs->elems[i].offset < 0) inputs->elems[i].offset = RD_KAFKA_OFFSET_BEGINNING;
  if (rd_kafka_error_t* error = rd_kafka_seek_partitions(consumer_, inputs, 10000)) {
    spdlog::warn("stream thread {}: seeking to the committed offsets: {}", config_.client_id,
                 rd_kafka_error_string(error));
    rd_kafka_error_destroy(error);
  }
  rd_kafka_topic_partition_list_destroy(inputs);
  pause_restoring_tasks();
  rebalancing_ = !reader_.restoring_tasks().empty();
}

void TaskManager::on_restored(Task* task) {
  set_queryable(task);
  auto* list = input_partitions(task);
  // Records fetched before the pause took effect were not processed: read them again. A
  // partition another task reads that still restores stays paused.
  auto* seeks = rd_kafka_topic_partition_list_new(0);
  auto* resumed = rd_kafka_topic_partition_list_new(0);
  for (int i = 0; i < list->cnt; ++i) {
    std::pair<std::string, int32_t> key{list->elems[i].topic, list->elems[i].partition};
    auto readers = by_input_.find(key);
    if (readers != by_input_.end() &&
        std::any_of(readers->second.begin(), readers->second.end(), [&](const ActiveTask* a) {
          return a->task.get() != task && reader_.restoring(a->task.get());
        }))
      continue;
    rd_kafka_topic_partition_list_add(resumed, key.first.c_str(), key.second);
    auto it = seek_on_resume_.find(key);
    if (it == seek_on_resume_.end()) continue;
    rd_kafka_topic_partition_list_add(seeks, it->first.first.c_str(), it->first.second)->offset =
        it->second;
    seek_on_resume_.erase(it);
  }
  if (seeks->cnt > 0)
    if (auto* error = rd_kafka_seek_partitions(consumer_, seeks, 10000))
      rd_kafka_error_destroy(error);
  rd_kafka_topic_partition_list_destroy(seeks);
  rd_kafka_resume_partitions(consumer_, resumed);
  rd_kafka_topic_partition_list_destroy(resumed);
  rd_kafka_topic_partition_list_destroy(list);
  spdlog::info("stream thread {}: task {} restored, processing", config_.client_id, task->id());
}

rd_kafka_topic_partition_list_t* TaskManager::input_partitions(Task* task) const {
  auto* list = rd_kafka_topic_partition_list_new(static_cast<int>(task->input_topics().size()));
  for (const auto& t : task->input_topics())
    rd_kafka_topic_partition_list_add(list, t.c_str(), task->task_partition_id());
  return list;
}

}  // namespace oxbow::streams::detail
