#include "streams/runtime/task_manager.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "oxbow/streams/errors.h"
#include "streams/runtime/partition_time.h"

namespace oxbow::streams::detail {

TaskManager::TaskManager(std::shared_ptr<const Topologies> topologies, const ThreadConfig& config,
                         rd_kafka_t* consumer, StreamsProducer& producer, ChangelogReader& reader,
                         GroupClient& group, ThreadMetrics& metrics)
    : topologies_(std::move(topologies)),
      config_(config),
      consumer_(consumer),
      producer_(producer),
      reader_(reader),
      group_(group),
      metrics_(metrics),
      last_commit_ms_(now_ms()) {
  index_topologies();
  standbys_ = std::make_unique<StandbyTasks>(
      config_.app, config_.client_id,
      [this](StandbyTasks::TaskKey key) {
        auto task = make_task(key);
        if (!task) throw StreamsException("standby of unknown task " + key.toString());
        return task;
      },
      [this] { metrics_.standby_applied.add(); });
}

TaskManager::~TaskManager() = default;

void TaskManager::index_topologies() {
  subtopologies_.clear();
  subtopology_of_.clear();
  anchor_of_.clear();
  repartition_topics_.clear();
  for (const auto& topology : *topologies_) {
    for (const auto& spec : topology.graph->internal_topics())
      repartition_topics_.insert(topology.wire(spec.name));
    for (const auto& sub : topology.graph->subtopologies())
      subtopologies_.push_back({&topology, sub});
  }
  // The group sees one anchor topic per sub-topology, the source topic with the most partitions
  // (as Kafka, a sub-topology has as many tasks as its widest input; task p reads partition p of
  // each input that has one), so the anchor's partitions name the sub-topology's tasks.
  for (const auto& [topology, sub] : subtopologies_) {
    SubtopologyKey key{topology->name, sub.id};
    std::set<std::string> sources;
    for (const auto& t : sub.source_topics) sources.insert(topology->wire(t));
    for (const auto& t : sources) {
      subtopology_of_[t] = key;
      auto anchor = anchor_of_.find(key);
      if (anchor == anchor_of_.end() ||
          producer_.partitions_of(t) > producer_.partitions_of(anchor->second))
        anchor_of_[key] = t;
    }
  }
}

std::vector<TaskManager::TaskKey> TaskManager::set_topologies(
    std::shared_ptr<const Topologies> next) {
  std::set<std::string> kept;
  for (const auto& t : *next) kept.insert(t.name);
  // The tasks of a removed topology are committed (with all the others) and closed, their
  // inputs leaving the consumer, while the maps still know them.
  std::vector<TaskKey> removed;
  Partitions anchors(rd_kafka_topic_partition_list_new(0), &rd_kafka_topic_partition_list_destroy);
  for (const auto& [id, t] : tasks_)
    if (!kept.count(id.topology)) {
      removed.push_back(id);
      rd_kafka_topic_partition_list_add(
          anchors.get(), anchor_of_.at({id.topology, id.subtopology}).c_str(), id.partition);
    }
  if (anchors->cnt > 0) {
    Partitions inputs(on_revoked(anchors.get(), false), &rd_kafka_topic_partition_list_destroy);
    throw_on_error(rd_kafka_incremental_unassign(consumer_, inputs.get()), "incremental_unassign");
  }
  std::set<TaskKey> standbys;
  for (const auto& [key, sum] : standbys_->offset_sums())
    if (kept.count(key.topology))
      standbys.insert(key);
    else
      removed.push_back(key);
  standbys_->assign(standbys);
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
  Partitions revoked(rd_kafka_topic_partition_list_new(0), &rd_kafka_topic_partition_list_destroy);
  Partitions added(rd_kafka_topic_partition_list_new(0), &rd_kafka_topic_partition_list_destroy);
  for (const auto& [id, t] : tasks_)
    if (!assigned.count(id))
      rd_kafka_topic_partition_list_add(
          revoked.get(), anchor_of_.at({id.topology, id.subtopology}).c_str(), id.partition);
  for (const auto& id : assigned) {
    // A task of a topology this instance does not run has no anchor.
    auto anchor = anchor_of_.find({id.topology, id.subtopology});
    if (anchor != anchor_of_.end() && !tasks_.count(id))
      rd_kafka_topic_partition_list_add(added.get(), anchor->second.c_str(), id.partition);
  }
  bool gave_up = revoked->cnt > 0;
  rebalancing_ = true;
  if (gave_up) {
    Partitions inputs(on_revoked(revoked.get(), false), &rd_kafka_topic_partition_list_destroy);
    throw_on_error(rd_kafka_incremental_unassign(consumer_, inputs.get()), "incremental_unassign");
  }
  Partitions inputs(on_assigned(added.get()), &rd_kafka_topic_partition_list_destroy);
  throw_on_error(rd_kafka_incremental_assign(consumer_, inputs.get()), "incremental_assign");
  if (inputs->cnt > 0) learn_leaders(consumer_);
  inputs.reset();
  revoked.reset();
  added.reset();
  pause_restoring_tasks();
  standbys_->assign(standby);
  rebalancing_ = !reader_.restoring_tasks().empty();
  publish_group_snapshot();
  return gave_up;
}

void TaskManager::handle_lost_all() {
  auto* all = rd_kafka_topic_partition_list_new(static_cast<int>(tasks_.size()));
  for (const auto& [id, t] : tasks_)
    rd_kafka_topic_partition_list_add(all, anchor_of_.at({id.topology, id.subtopology}).c_str(),
                                      id.partition);
  auto* inputs = on_revoked(all, true);
  throw_on_error(rd_kafka_incremental_unassign(consumer_, inputs), "incremental_unassign");
  rd_kafka_topic_partition_list_destroy(inputs);
  rd_kafka_topic_partition_list_destroy(all);
  rebalancing_ = true;
  publish_group_snapshot();
}

bool TaskManager::update_standbys(bool rebalance_planned, int64_t acceptable_lag) {
  if (standbys_->empty()) return false;
  standbys_->step(5);
  // Better than waiting for probing.rebalance.interval.ms: a warm-up that caught up asks for
  // the rebalance that hands its task over at once.
  if (!rebalance_planned || !standbys_->warmups_caught_up(acceptable_lag)) return false;
  spdlog::info("stream thread {}: warm-up replicas caught up; rebalancing", config_.client_id);
  standbys_->checkpoint();
  publish_group_snapshot();
  return true;
}

rd_kafka_topic_partition_list_t* TaskManager::on_assigned(
    const rd_kafka_topic_partition_list_t* anchors) {
  auto* inputs = rd_kafka_topic_partition_list_new(anchors->cnt);
  std::vector<Task*> created;
  for (int i = 0; i < anchors->cnt; ++i) {
    auto sub_it = subtopology_of_.find(anchors->elems[i].topic);
    if (sub_it == subtopology_of_.end()) continue;
    int32_t partition = anchors->elems[i].partition;
    TaskKey id{sub_it->second.second, partition, sub_it->second.first};
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
    std::vector<std::string> read;
    for (const auto& t : active.task->input_topics()) {
      if (partition >= producer_.partitions_of(t)) continue;
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

rd_kafka_topic_partition_list_t* TaskManager::on_revoked(
    const rd_kafka_topic_partition_list_t* anchors, bool lost) {
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
  // Every input partition of the revoked tasks that the consumer holds.
  std::set<TaskKey> revoked;
  for (int i = 0; i < anchors->cnt; ++i) {
    auto sub = subtopology_of_.find(anchors->elems[i].topic);
    if (sub != subtopology_of_.end())
      revoked.emplace(sub->second.second, anchors->elems[i].partition, sub->second.first);
  }
  auto* inputs = rd_kafka_topic_partition_list_new(0);
  rd_kafka_topic_partition_list_t* held = nullptr;
  if (rd_kafka_assignment(consumer_, &held) == RD_KAFKA_RESP_ERR_NO_ERROR && held) {
    for (int i = 0; i < held->cnt; ++i) {
      auto sub = subtopology_of_.find(held->elems[i].topic);
      if (sub != subtopology_of_.end() &&
          revoked.count({sub->second.second, held->elems[i].partition, sub->second.first}))
        rd_kafka_topic_partition_list_add(inputs, held->elems[i].topic, held->elems[i].partition);
    }
  }
  if (held) rd_kafka_topic_partition_list_destroy(held);
  for (const auto& id : revoked) close_task(id);
  rebalancing_ = !reader_.restoring_tasks().empty();
  return inputs;
}

void TaskManager::close_task(TaskKey id) {
  auto it = tasks_.find(id);
  if (it == tasks_.end()) return;
  Task* task = it->second.task.get();
  bool was_restoring = reader_.unregister(task);
  for (const auto& t : task->input_topics()) {
    seek_on_resume_.erase({t, id.partition});
    by_input_.erase({t, id.partition});
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
  rd_kafka_topic_partition_list_t* assignment = nullptr;
  if (rd_kafka_assignment(consumer_, &assignment) != RD_KAFKA_RESP_ERR_NO_ERROR || !assignment)
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
  std::vector<TaskKey> ids;
  for (const auto& [id, t] : tasks_) ids.push_back(id);
  for (const auto& id : ids) close_task(id);
  auto* inputs = on_assigned(anchors);
  rd_kafka_topic_partition_list_destroy(anchors);
  // Back to the committed offsets (the beginning where none is): reading on from where the
  // consumer is would skip the aborted transaction's input.
  auto err = committed_offsets(consumer_, inputs);
  if (err) {
    rd_kafka_topic_partition_list_destroy(inputs);
    throw StreamsException(std::string("after an aborted transaction: committed offsets: ") +
                           rd_kafka_err2str(err));
  }
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
    if (auto* error = rd_kafka_seek_partitions(consumer_, seeks, 10000))
      rd_kafka_error_destroy(error);
  rd_kafka_topic_partition_list_destroy(seeks);
  rd_kafka_resume_partitions(consumer_, list);
  rd_kafka_topic_partition_list_destroy(list);
  spdlog::info("stream thread {}: task {} restored, processing", config_.client_id, task->id());
}

rd_kafka_topic_partition_list_t* TaskManager::input_partitions(Task* task) const {
  auto* list = rd_kafka_topic_partition_list_new(static_cast<int>(task->input_topics().size()));
  for (const auto& t : task->input_topics())
    rd_kafka_topic_partition_list_add(list, t.c_str(), task->task_partition_id());
  return list;
}

void TaskManager::set_queryable(Task* task) {
  for (auto& [id, t] : tasks_)
    if (t.task.get() == task) {
      std::unique_lock lock(t.lock);
      t.queryable = true;
    }
}

void TaskManager::publish_group_snapshot() {
  PartitionList owned;
  std::map<TaskId, int64_t> offset_sums;
  for (const auto& [id, t] : tasks_) {
    for (const auto& topic : t.task->input_topics())
      if (by_input_.count({topic, id.partition})) owned.emplace_back(topic, id.partition);
    if (!t.task->changelogs().empty()) offset_sums[id] = kLatestOffsetSum;
  }
  for (const auto& [key, sum] : standbys_->offset_sums()) offset_sums.emplace(key, sum);
  group_.publish_owned(std::move(owned), std::move(offset_sums));
}

ActiveTask* TaskManager::route(const rd_kafka_message_t* m) {
  // Records come in runs from one partition: the last one's route saves looking up the task and
  // the offset slot of each.
  if (m->rkt != route_.rkt || m->partition != route_.partition) {
    std::string topic = rd_kafka_topic_name(m->rkt);
    auto it = by_input_.find({topic, m->partition});
    if (it == by_input_.end()) return nullptr;
    route_ = {m->rkt, m->partition, it->second, std::move(topic), nullptr};
  }
  return route_.task;
}

void TaskManager::add_record(PartitionGroup::Message m) {
  ActiveTask* active = route(m.get());
  if (!active) return;
  if (reader_.restoring(active->task.get())) {
    auto [slot, fresh] = seek_on_resume_.try_emplace({route_.topic, m->partition}, m->offset);
    if (!fresh) slot->second = std::min(slot->second, m->offset);
    return;
  }
  if (!route_.fetched_next)
    route_.fetched_next = &active->fetched_next.try_emplace(route_.topic, -1).first->second;
  if (m->offset < *route_.fetched_next) return skip_redelivered(m.get(), *route_.fetched_next);
  *route_.fetched_next = m->offset + 1;
  if (!active->group) {
    std::unique_lock lock(active->lock);
    return process(m.get());
  }
  std::string topic = route_.topic;
  active->buffer(consumer_, topic, std::move(m));
  drain(*active);
}

// librdkafka 2.0.2 can hand out a partition's records again, from an older offset than the last
// one it handed out, without a seek of ours: its fetcher starts over from the offset it last
// started from whenever an operation changes the partition's version without setting that offset
// (a resume of a partition that is not paused is one, fixed in librdkafka 2.4: its issues #4637
// and #4686). CI once saw a whole input partition handed out a second time, in a run with no
// rebalance and no seek. Those records were processed already: processed twice, exactly-once
// would commit their results twice.
void TaskManager::skip_redelivered(const rd_kafka_message_t* m, int64_t expected) {
  metrics_.redelivered_skipped.add();
  int64_t now = now_ms();
  if (now - last_redelivery_log_ms_ < 1000) return;
  last_redelivery_log_ms_ = now;
  spdlog::warn(
      "stream thread {}: the consumer handed out {} [{}] offset {} again (it had handed out up to "
      "{}): skipped, as are the other records handed out twice ({} so far)",
      config_.client_id, route_.topic, m->partition, m->offset, expected - 1,
      metrics_.redelivered_skipped.value());
}

bool TaskManager::process_buffered() {
  bool buffering = false;
  if (grouped_tasks_ > 0)
    for (auto& [id, t] : tasks_)
      if (t.group && t.group->buffered() > 0) {
        drain(t);  // a partition it waited for may have caught up
        buffering = buffering || t.group->buffered() > 0;
      }
  return buffering;
}

void TaskManager::drain(ActiveTask& active) {
  auto caught_up = [this, &active](const std::string& topic) {
    return active.caught_up(consumer_, topic);
  };
  {
    std::unique_lock lock(active.lock);  // once for the run of records released
    while (auto m = active.group->next(caught_up)) process(m.get());
  }
  active.resume_drained(consumer_);
}

bool TaskManager::paused_by_us(const char* topic, int32_t partition) const {
  for (const auto& [id, t] : tasks_)
    if (t.task->task_partition_id() == partition && t.full.count(topic)) return true;
  return false;
}

void TaskManager::process(const rd_kafka_message_t* m) {
  ActiveTask& active = *route(m);
  RawRecord raw = raw_record(m, route_.topic);
  producer_.begin_transaction_if_needed();
  // Latency of one record in 16: two clock reads per record cost more than the histogram shows.
  bool timed = (++processed_ & 15) == 0;
  auto start = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  active.task->process(raw);
  // Made on the first record processed: an entry commits its offset.
  if (!route_.next_offset) route_.next_offset = &active.next_offsets[route_.topic];
  *route_.next_offset = m->offset + 1;
  if (active.task->has_punctuators()) {
    Task& task = *active.task;
    if (task.punctuation_due(false, task.stream_time())) task.punctuate(false, task.stream_time());
  }
  if (active.task->take_commit_request()) commit_requested_ = true;
  metrics_.processed.add();
  if (timed) {
    double seconds = seconds_since(start);
    metrics_.process_latency.observe(seconds);
    active.task->record_latency(seconds);
  }
}

// Wall-clock punctuators, checked once per millisecond of the loop's clock; the time they see is
// the task's clock (the system's).
void TaskManager::punctuate() {
  for (auto& [id, t] : tasks_) {
    Task& task = *t.task;
    if (!task.has_punctuators() || reader_.restoring(&task)) continue;
    int64_t wall = task.wall_clock_ms();
    if (!task.punctuation_due(true, wall)) continue;
    producer_.begin_transaction_if_needed();
    std::unique_lock lock(t.lock);
    task.punctuate(true, wall);
    if (task.take_commit_request()) commit_requested_ = true;
  }
}

void TaskManager::commit() {
  commit_requested_ = false;
  last_commit_ms_ = now_ms();
  if (!standbys_->empty()) {
    standbys_->checkpoint();
    publish_group_snapshot();
  }
  if (tasks_.empty()) return;
  if (config_.exactly_once && !producer_.in_transaction()) return;  // nothing since the last one
  auto start = std::chrono::steady_clock::now();
  try {
    commit_tasks();
  } catch (const TasksMigrated& e) {
    restart_tasks_from_last_commit(e.what());
    return;
  }
  metrics_.commits.add();
  metrics_.commit_latency.observe(seconds_since(start));
}

void TaskManager::commit_tasks() {
  for (auto& [id, t] : tasks_) {
    std::unique_lock lock(t.lock);
    t.task->flush();  // under EOS, inside the open transaction
  }
  Partitions offsets(rd_kafka_topic_partition_list_new(0), &rd_kafka_topic_partition_list_destroy);
  for (auto& [id, t] : tasks_) {
    std::string time = encode_partition_time(t.task->stream_time());
    for (auto& [topic, offset] : t.next_offsets) {
      auto* p = rd_kafka_topic_partition_list_add(offsets.get(), topic.c_str(), id.partition);
      p->offset = offset;
      // The list owns (and frees) its metadata.
      p->metadata = std::malloc(time.size());
      std::memcpy(p->metadata, time.data(), time.size());
      p->metadata_size = time.size();
    }
  }
  if (config_.exactly_once) {
    producer_.commit_transaction(offsets.get(), group_.group_metadata());
  } else {
    // At least once: everything the tasks wrote is acknowledged before their input is committed.
    producer_.flush();
    if (offsets->cnt > 0) group_.commit_offsets(offsets.get());
  }
  offsets.reset();
  checkpoint_tasks();
  purge_repartition_topics();
}

void TaskManager::checkpoint_tasks() {
  producer_.await_delivery_reports();
  for (auto& [id, t] : tasks_) {
    std::unique_lock lock(t.lock);
    t.task->checkpoint(t.next_offsets);
  }
}

// Repartition topics keep records forever (retention.ms -1, as Kafka creates them), so that none
// ages out while the application is down; as Kafka Streams, the thread deletes what it has
// committed from them every repartition.purge.interval.ms. Asynchronous: a purge that fails
// (an older broker, an ACL) is logged and retried with the next.
void TaskManager::purge_repartition_topics() {
  if (repartition_topics_.empty()) return;
  int64_t now = now_ms();
  if (now - last_purge_ms_ < config_.repartition_purge_interval_ms) return;
  last_purge_ms_ = now;
  auto* committed = rd_kafka_topic_partition_list_new(0);
  for (auto& [id, t] : tasks_)
    for (auto& [topic, offset] : t.next_offsets)
      if (repartition_topics_.count(topic))
        rd_kafka_topic_partition_list_add(committed, topic.c_str(), id.partition)->offset = offset;
  producer_.delete_records(committed);
  rd_kafka_topic_partition_list_destroy(committed);
}

void TaskManager::publish_metrics() {
  std::vector<TaskSnapshot> tasks;
  for (auto& [id, t] : tasks_) {
    TaskSnapshot snap{t.task->id(), t.task->counters(), t.task->store_snapshots(), {}};
    for (const auto& topic : t.task->input_topics()) {
      int64_t low = 0, high = 0;
      auto next = t.next_offsets.find(topic);
      if (next == t.next_offsets.end() ||
          rd_kafka_get_watermark_offsets(consumer_, topic.c_str(), id.partition, &low, &high) !=
              RD_KAFKA_RESP_ERR_NO_ERROR ||
          high < 0)
        continue;
      snap.lags.push_back({topic, id.partition, std::max<int64_t>(0, high - next->second)});
    }
    tasks.push_back(std::move(snap));
  }
  std::vector<StorePosition> positions;
  for (auto& [id, t] : tasks_)
    for (const auto& [store, topic] : t.task->changelogs()) {
      int64_t position = reader_.position(topic, id.partition).value_or(-1);
      positions.push_back({store, topic, id.partition, position, -1, false});
    }
  int standby_count = static_cast<int>(standbys_->size());
  for (const auto& p : standbys_->positions())
    positions.push_back({p.store, p.topic, p.partition, p.next, p.end, true});
  std::lock_guard lock(metrics_.mutex);
  metrics_.tasks = std::move(tasks);
  metrics_.positions = std::move(positions);
  metrics_.standby_tasks = standby_count;
}

int TaskManager::read_store(const std::string& topology, const std::string& name,
                            std::optional<int32_t> partition, bool stale,
                            const std::function<bool(KeyValueStore&)>& read, int& restoring,
                            bool& stop) const {
  std::shared_lock tasks_lock(tasks_mutex_);
  int found = 0;
  for (const auto& [id, t] : tasks_) {
    if (id.topology != topology || (partition && id.partition != *partition)) continue;
    KeyValueStore* store = t.task->own_store(name);
    if (!store) continue;
    std::shared_lock lock(t.lock);
    if (!t.queryable) {
      ++restoring;
      continue;
    }
    ++found;
    if (!read(*store)) {
      stop = true;
      break;
    }
  }
  if (stale && !stop && !(partition && found > 0))
    found += standbys_->read_store(topology, name, partition, read, stop);
  return found;
}

void TaskManager::close_active() {
  {
    std::unique_lock lock(tasks_mutex_);
    tasks_.clear();
  }
  by_input_.clear();
  route_ = {};
}

}  // namespace oxbow::streams::detail
