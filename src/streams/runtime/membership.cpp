// A stream thread's membership in the application's group, through Oxbow's own group member
// (streams/assignment/): its subscription (the tasks it runs, its instance's process id and
// application.server), the leader's assignment of the whole group, and the thread's side of each
// assignment it receives: tasks given up (committed and closed, then a rejoin so that the next
// round can place them elsewhere), tasks taken on, the group's hosts for interactive queries,
// and the probing rebalance the leader may ask for.
#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>

#include "oxbow/streams/errors.h"
#include "streams/assignment/streams_assignor.h"
#include "streams/runtime/stream_thread.h"
#include "streams/state/state_directory.h"

namespace oxbow::streams::detail {

namespace {

int64_t epoch_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The first of `keys` the application set, as a number; `fallback` otherwise.
int64_t setting(const Config& app, std::initializer_list<const char*> keys, int64_t fallback) {
  for (const char* key : keys) {
    auto it = app.find(key);
    if (it == app.end() || it->second.empty()) continue;
    try {
      return std::stoll(it->second);
    } catch (const std::exception&) {
      throw std::invalid_argument(std::string(key) + ": not a number: " + it->second);
    }
  }
  return fallback;
}

}  // namespace

void StreamThread::start_membership() {
  const auto& app_id = config_.task.application_id;
  for (const auto& sub : subtopologies_) {
    SubtopologyTopics topics;
    topics.id = sub.id;
    std::set<std::string> sources;
    for (const auto& t : sub.source_topics)
      sources.insert(graph_->is_internal_topic(t) ? app_id + "-" + t : t);
    topics.sources.assign(sources.begin(), sources.end());
    for (const auto& store : sub.stores) {
      const StoreSpec* spec = graph_->store(store);
      if (!spec) continue;
      if (!spec->source_topic.empty())
        topics.changelogs.push_back(spec->source_topic);
      else if (spec->options.logging)
        topics.changelogs.push_back(app_id + "-" + store + "-changelog");
    }
    group_topics_.push_back(std::move(topics));
  }
  for (const auto& t : group_topics_)
    subscribed_topics_.insert(subscribed_topics_.end(), t.sources.begin(), t.sources.end());

  MemberConfig member;
  member.bootstrap_servers = config_.app.at("bootstrap.servers");
  for (const auto& [k, v] : config_.app)
    if (k == "security.protocol" || k.rfind("sasl.", 0) == 0 || k.rfind("ssl.", 0) == 0)
      member.security[k] = v;
  member.group_id = app_id;
  member.client_id = config_.client_id + "-consumer";
  for (const char* key : {"group.instance.id", "consumer.group.instance.id"}) {
    auto it = config_.app.find(key);
    if (it == config_.app.end() || it->second.empty()) continue;
    member.instance_id = it->second + "-" + std::to_string(config_.thread_index);
    break;
  }
  member.session_timeout_ms = static_cast<int32_t>(
      setting(config_.app, {"consumer.session.timeout.ms", "session.timeout.ms"}, 45000));
  member.heartbeat_interval_ms = static_cast<int32_t>(
      setting(config_.app, {"consumer.heartbeat.interval.ms", "heartbeat.interval.ms"}, 3000));
  member.rebalance_timeout_ms = static_cast<int32_t>(
      setting(config_.app, {"consumer.max.poll.interval.ms", "max.poll.interval.ms"}, 300000));
  member.request_timeout_ms = static_cast<int32_t>(
      setting(config_.app, {"consumer.request.timeout.ms", "request.timeout.ms"}, 30000));
  MemberCallbacks callbacks;
  callbacks.subscription = [this] { return subscription_bytes(); };
  callbacks.assign = [this](const std::map<std::string, std::string>& subscriptions) {
    return assign_members(subscriptions);
  };
  standbys_ = std::make_unique<StandbyTasks>(
      config_.app, config_.client_id,
      [this](StandbyTasks::TaskKey key) {
        const Subtopology* sub = nullptr;
        for (const auto& s : subtopologies_)
          if (s.id == key.first) sub = &s;
        if (!sub)
          throw StreamsException("standby of unknown sub-topology " + std::to_string(key.first));
        TaskConfig tc = config_.task;
        tc.subtopology = key.first;
        tc.partition = key.second;
        return std::make_unique<Task>(graph_, *sub, tc, *producer_);
      },
      [metrics = metrics_] { metrics->standby_applied.add(); });
  publish_group_snapshot();
  member_ = std::make_unique<GroupMember>(std::move(member), std::move(callbacks));
  member_->start();
}

// On the member's thread.
std::string StreamThread::subscription_bytes() {
  SubscriptionInfo info;
  info.process_id = uuid_bytes(config_.group.process_id);
  info.endpoint = config_.group.endpoint;
  ConsumerSubscription envelope;
  envelope.topics = subscribed_topics_;
  info.task_offset_sums = local_state_offset_sums();
  {
    std::lock_guard lock(group_mutex_);
    for (const auto& [task, sum] : offset_sums_) info.task_offset_sums[task] = sum;
    envelope.owned = owned_partitions_;
  }
  info.unique_field = static_cast<int8_t>(++subscriptions_sent_);
  envelope.user_data = info.encode();
  return envelope.encode();
}

// On the member's thread, as the group's leader: the producer's handle answers the metadata
// queries (librdkafka's calls are thread-safe).
std::map<std::string, std::string> StreamThread::assign_members(
    const std::map<std::string, std::string>& subscriptions) {
  GroupAssignorContext context;
  context.subtopologies = group_topics_;
  std::map<std::string, int32_t> counts;
  context.partitions_of = [&](const std::string& topic) {
    auto it = counts.find(topic);
    if (it == counts.end())
      it = counts.emplace(topic, partition_count(producer_->handle(), topic)).first;
    return it->second;
  };
  context.end_offsets = [&](const PartitionList& list) {
    std::map<std::pair<std::string, int32_t>, int64_t> out;
    for (const auto& [topic, p] : list) {
      int64_t low = 0, high = 0;
      auto err = rd_kafka_query_watermark_offsets(producer_->handle(), topic.c_str(), p, &low,
                                                  &high, 10000);
      if (err == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION ||
          err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART)
        continue;  // a changelog not created yet: nothing to restore
      if (err) throw StreamsException(topic + ": " + rd_kafka_err2str(err));
      out[{topic, p}] = high;
    }
    return out;
  };
  context.config = config_.group.assignor;
  context.probing_rebalance_interval_ms = config_.group.probing_rebalance_interval_ms;
  context.now_ms = epoch_ms();
  return assign_group(context, subscriptions);
}

// The state this instance has on disk for tasks it does not run, as Kafka Streams reports it:
// each task directory's checkpointed changelog offsets, summed, so that the leader can give a
// task back to where its state still is (a restarted instance).
std::map<TaskId, int64_t> StreamThread::local_state_offset_sums() const {
  std::map<TaskId, int64_t> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(config_.task.state_root, ec)) {
    std::string name = entry.path().filename().string();
    size_t underscore = name.find('_');
    if (!entry.is_directory(ec) || underscore == std::string::npos) continue;
    TaskId id;
    try {
      size_t used = 0;
      id.subtopology = std::stoi(name.substr(0, underscore), &used);
      if (used != underscore) continue;
      id.partition = std::stoi(name.substr(underscore + 1), &used);
      if (used != name.size() - underscore - 1) continue;
    } catch (const std::exception&) {
      continue;
    }
    int64_t sum = 0;
    for (const auto& [tp, offset] : read_checkpoint_file(entry.path().string()))
      if (offset > 0) sum = offset > INT64_MAX - sum ? INT64_MAX : sum + offset;
    if (sum > 0) out[id] = sum;
  }
  return out;
}

void StreamThread::publish_group_snapshot() {
  std::lock_guard lock(group_mutex_);
  owned_partitions_.clear();
  offset_sums_.clear();
  for (const auto& [id, t] : tasks_) {
    for (const auto& topic : t.task->input_topics())
      if (by_input_.count({topic, id.second})) owned_partitions_.emplace_back(topic, id.second);
    if (!t.task->changelogs().empty()) offset_sums_[{id.first, id.second}] = kLatestOffsetSum;
  }
  if (standbys_)
    for (const auto& [key, sum] : standbys_->offset_sums())
      offset_sums_.emplace(TaskId{key.first, key.second}, sum);
}

// Each loop round (every few ms): what the member brought since the last look.
void StreamThread::poll_group() {
  member_->polled();
  if (auto fatal = member_->fatal_error(); !fatal.empty())
    throw StreamsException("group membership: " + fatal);
  if (member_->take_lost()) {
    // Its tasks are someone else's now: dropped without a commit (an open transaction is
    // aborted), to be processed again from the last commit wherever they land.
    auto* all = rd_kafka_topic_partition_list_new(static_cast<int>(tasks_.size()));
    for (const auto& [id, t] : tasks_)
      rd_kafka_topic_partition_list_add(all, anchor_of_.at(id.first).c_str(), id.second);
    auto* inputs = on_revoked(all, true);
    throw_on_error(rd_kafka_incremental_unassign(consumer_.get(), inputs), "incremental_unassign");
    rd_kafka_topic_partition_list_destroy(inputs);
    rd_kafka_topic_partition_list_destroy(all);
    rebalancing_ = true;
    publish_group_snapshot();
  }
  if (auto received = member_->take_assignment()) apply_assignment(*received);
  if (!standbys_->empty()) {
    standbys_->step(5);
    // Better than waiting for probing.rebalance.interval.ms: a warm-up that caught up asks for
    // the rebalance that hands its task over at once.
    if (next_rebalance_ms_ != AssignmentInfo::kNoRebalance &&
        standbys_->warmups_caught_up(config_.group.assignor.acceptable_recovery_lag)) {
      spdlog::info("stream thread {}: warm-up replicas caught up; rebalancing", config_.client_id);
      standbys_->checkpoint();
      publish_group_snapshot();
      next_rebalance_ms_ = AssignmentInfo::kNoRebalance;
      member_->request_rejoin();
    }
  }
  if (next_rebalance_ms_ != AssignmentInfo::kNoRebalance && epoch_ms() >= next_rebalance_ms_) {
    next_rebalance_ms_ = AssignmentInfo::kNoRebalance;
    spdlog::info("stream thread {}: probing rebalance", config_.client_id);
    member_->request_rejoin();
  }
}

void StreamThread::apply_assignment(const ReceivedAssignment& received) {
  generation_ = received.generation;
  AssignmentInfo info;
  if (!received.assignment.user_data.empty())
    info = AssignmentInfo::decode(received.assignment.user_data);
  if (info.error_code == 4)
    throw StreamsException("another instance of the application asked for its shutdown");
  if (info.error_code != 0)
    throw StreamsException("the group's leader could not assign tasks (error " +
                           std::to_string(info.error_code) + ")");
  std::set<std::pair<int, int32_t>> assigned, standby;
  for (const auto& t : info.active_tasks) assigned.emplace(t.subtopology, t.partition);
  for (const auto& [t, partitions] : info.standby_tasks)
    if (!assigned.count({t.subtopology, t.partition})) standby.emplace(t.subtopology, t.partition);
  // A standby becoming active here hands its stores over: made durable and closed first.
  for (const auto& id : assigned)
    if (!tasks_.count(id)) standbys_->release(id);
  auto* revoked = rd_kafka_topic_partition_list_new(0);
  auto* added = rd_kafka_topic_partition_list_new(0);
  for (const auto& [id, t] : tasks_)
    if (!assigned.count(id))
      rd_kafka_topic_partition_list_add(revoked, anchor_of_.at(id.first).c_str(), id.second);
  for (const auto& id : assigned) {
    auto anchor = anchor_of_.find(id.first);
    if (anchor != anchor_of_.end() && !tasks_.count(id))
      rd_kafka_topic_partition_list_add(added, anchor->second.c_str(), id.second);
  }
  bool gave_up = revoked->cnt > 0;
  rebalancing_ = true;
  try {
    if (gave_up) {
      auto* inputs = on_revoked(revoked, false);
      throw_on_error(rd_kafka_incremental_unassign(consumer_.get(), inputs),
                     "incremental_unassign");
      rd_kafka_topic_partition_list_destroy(inputs);
    }
    auto* inputs = on_assigned(added);
    throw_on_error(rd_kafka_incremental_assign(consumer_.get(), inputs), "incremental_assign");
    if (inputs->cnt > 0) learn_leaders(consumer_.get());
    rd_kafka_topic_partition_list_destroy(inputs);
  } catch (...) {
    rd_kafka_topic_partition_list_destroy(revoked);
    rd_kafka_topic_partition_list_destroy(added);
    throw;
  }
  rd_kafka_topic_partition_list_destroy(revoked);
  rd_kafka_topic_partition_list_destroy(added);
  for (Task* task : reader_->restoring_tasks()) {
    auto* paused = input_partitions(task);
    rd_kafka_pause_partitions(consumer_.get(), paused);
    rd_kafka_topic_partition_list_destroy(paused);
  }
  standbys_->assign(standby);
  rebalancing_ = !reader_->restoring_tasks().empty();
  publish_group_snapshot();
  if (config_.group.on_hosts) config_.group.on_hosts(info, config_.thread_index);
  next_rebalance_ms_ = info.next_rebalance_ms;
  // Cooperatively, what this member gave up is placed in a next round, once it is free.
  if (gave_up || info.next_rebalance_ms == 0) member_->request_rejoin();
}

void StreamThread::commit_offsets(const rd_kafka_topic_partition_list_t* offsets) {
  std::vector<GroupMember::Offset> list;
  for (int i = 0; i < offsets->cnt; ++i) {
    const auto& p = offsets->elems[i];
    list.push_back({p.topic, p.partition, p.offset,
                    p.metadata ? std::string(static_cast<const char*>(p.metadata), p.metadata_size)
                               : std::string()});
  }
  try {
    member_->commit(list);
  } catch (const CommitRefused& e) {
    // The group is rebalancing (the same offsets go with the next commit) or moved on without
    // this member (the member finds out and the tasks are dropped): processing goes on.
    spdlog::warn("stream thread {}: commit failed: {}", config_.client_id, e.what());
  } catch (const client::ConnectionError& e) {
    spdlog::warn("stream thread {}: commit failed: {}", config_.client_id, e.what());
  }
}

rd_kafka_consumer_group_metadata_t* StreamThread::group_metadata() const {
  std::string instance;
  for (const char* key : {"group.instance.id", "consumer.group.instance.id"}) {
    auto it = config_.app.find(key);
    if (it != config_.app.end() && !it->second.empty()) {
      instance = it->second + "-" + std::to_string(config_.thread_index);
      break;
    }
  }
  return rd_kafka_consumer_group_metadata_new_with_genid(
      config_.task.application_id.c_str(), generation_.id, generation_.member_id.c_str(),
      instance.empty() ? nullptr : instance.c_str());
}

}  // namespace oxbow::streams::detail
