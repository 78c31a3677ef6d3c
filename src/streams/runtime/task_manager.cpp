#include "streams/runtime/task_manager.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "oxbow/streams/errors.h"
#include "streams/runtime/partition_time.h"
#include "streams/runtime/topology_positions.h"

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

void TaskManager::set_queryable(Task* task) {
  for (auto& [id, t] : tasks_)
    if (t.task.get() == task) {
      std::unique_lock lock(t.lock);
      t.queryable = true;
    }
}

void TaskManager::publish_group_snapshot() {
  PartitionList owned;
  for (const auto& [input, readers] : by_input_) owned.push_back(input);
  std::map<TaskId, int64_t> offset_sums;
  for (const auto& [id, t] : tasks_)
    if (!t.task->changelogs().empty()) offset_sums[id] = kLatestOffsetSum;
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
    route_ = {m->rkt, m->partition, it->second.front(),
              it->second.size() > 1 ? &it->second : nullptr, std::move(topic)};
  }
  return route_.task;
}

void TaskManager::add_record(PartitionGroup::Message m) {
  ActiveTask* active = route(m.get());
  if (!active) return;
  if (route_.readers) return add_shared_record(m.get());
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

void TaskManager::add_shared_record(const rd_kafka_message_t* m) {
  for (ActiveTask* active : *route_.readers) {
    if (reader_.restoring(active->task.get())) {
      auto [slot, fresh] = seek_on_resume_.try_emplace({route_.topic, m->partition}, m->offset);
      if (!fresh) slot->second = std::min(slot->second, m->offset);
      continue;
    }
    int64_t& next = active->fetched_next.try_emplace(route_.topic, -1).first->second;
    // Before this task's position: the partition went back for a reader that starts earlier.
    if (m->offset < next) continue;
    next = m->offset + 1;
    std::unique_lock lock(active->lock);
    process_in(*active, m, &active->next_offsets[route_.topic]);
  }
}

void TaskManager::process(const rd_kafka_message_t* m) {
  ActiveTask& active = *route(m);
  // Made on the first record processed: an entry commits its offset.
  if (!route_.next_offset) route_.next_offset = &active.next_offsets[route_.topic];
  process_in(active, m, route_.next_offset);
}

void TaskManager::process_in(ActiveTask& active, const rd_kafka_message_t* m,
                             int64_t* next_offset) {
  RawRecord raw = raw_record(m, route_.topic);
  producer_.begin_transaction_if_needed();
  // Latency of one record in 16: two clock reads per record cost more than the histogram shows.
  bool timed = (++processed_ & 15) == 0;
  auto start = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  active.task->process(raw);
  *next_offset = m->offset + 1;
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

namespace {

rd_kafka_topic_partition_t* add_offset(rd_kafka_topic_partition_list_t* list,
                                       const std::string& topic, int32_t partition, int64_t offset,
                                       const std::string& metadata) {
  auto* p = rd_kafka_topic_partition_list_add(list, topic.c_str(), partition);
  p->offset = offset;
  // The list owns (and frees) its metadata.
  p->metadata = std::malloc(metadata.size());
  std::memcpy(p->metadata, metadata.data(), metadata.size());
  p->metadata_size = metadata.size();
  return p;
}

}  // namespace

void TaskManager::commit_tasks() {
  for (auto& [id, t] : tasks_) {
    std::unique_lock lock(t.lock);
    t.task->flush();  // under EOS, inside the open transaction
  }
  // The instance's group: each input partition at its readers' lowest position (the position of
  // the one task reading it but where named topologies share a topic).
  std::map<std::pair<std::string, int32_t>, std::pair<int64_t, int64_t>> lowest;  // offset, time
  for (auto& [id, t] : tasks_)
    for (auto& [topic, offset] : t.next_offsets) {
      auto [it, fresh] = lowest.try_emplace({topic, id.partition}, offset, t.task->stream_time());
      if (!fresh && offset < it->second.first) it->second = {offset, t.task->stream_time()};
    }
  Partitions offsets(rd_kafka_topic_partition_list_new(static_cast<int>(lowest.size())),
                     &rd_kafka_topic_partition_list_destroy);
  for (const auto& [input, at] : lowest)
    add_offset(offsets.get(), input.first, input.second, at.first,
               encode_partition_time(at.second));
  auto own = own_group_offsets();
  try {
    if (config_.exactly_once) {
      producer_.commit_transaction(offsets.get(), group_.group_metadata(), own);
    } else {
      // At least once: everything the tasks wrote is acknowledged before their input is
      // committed; the group's commit first, which a member the group left behind fails.
      producer_.flush();
      if (offsets->cnt > 0) group_.commit_offsets(offsets.get());
      commit_positions(producer_.handle(), own);
    }
  } catch (...) {
    for (auto& [group, list] : own) rd_kafka_topic_partition_list_destroy(list);
    throw;
  }
  for (auto& [group, list] : own) {
    for (int i = 0; i < list->cnt; ++i)
      own_committed_[{group, list->elems[i].topic, list->elems[i].partition}] =
          list->elems[i].offset;
    rd_kafka_topic_partition_list_destroy(list);
  }
  offsets.reset();
  checkpoint_tasks();
  purge_repartition_topics();
}

std::map<std::string, rd_kafka_topic_partition_list_t*> TaskManager::own_group_offsets() {
  std::map<std::string, rd_kafka_topic_partition_list_t*> out;
  for (auto& [id, t] : tasks_) {
    if (id.topology.empty()) continue;
    const std::string& group = topology_named(id.topology).prefix;
    std::string time = encode_partition_time(t.task->stream_time());
    for (auto& [topic, offset] : t.next_offsets) {
      auto last = own_committed_.find({group, topic, id.partition});
      if (last != own_committed_.end() && last->second == offset) continue;
      auto& list = out[group];
      if (!list) list = rd_kafka_topic_partition_list_new(1);
      add_offset(list, topic, id.partition, offset, time);
    }
  }
  return out;
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
