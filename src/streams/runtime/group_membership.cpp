#include "streams/runtime/group_membership.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <set>

#include "oxbow/streams/errors.h"
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

namespace {

// Each topic once, though several named topologies may read it.
std::vector<std::string> sources_of(const std::vector<SubtopologyTopics>& subtopologies) {
  std::set<std::string> topics;
  for (const auto& t : subtopologies) topics.insert(t.sources.begin(), t.sources.end());
  return {topics.begin(), topics.end()};
}

}  // namespace

GroupMembership::GroupMembership(std::shared_ptr<const Topologies> topologies,
                                 const ThreadConfig& config, rd_kafka_t* metadata_client)
    : topologies_(std::move(topologies)),
      config_(config),
      metadata_client_(metadata_client),
      group_topics_(group_topics(*topologies_)) {
  const auto& app_id = config_.task.application_id;
  subscribed_topics_ = sources_of(group_topics_);

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
  member_ = std::make_unique<GroupMember>(std::move(member), std::move(callbacks));
}

GroupMembership::~GroupMembership() = default;

void GroupMembership::start() {
  member_->start();
}

void GroupMembership::set_topologies(std::shared_ptr<const Topologies> next) {
  auto topics = group_topics(*next);
  std::vector<std::string> subscribed = sources_of(topics);
  {
    std::lock_guard lock(mutex_);
    group_topics_ = std::move(topics);
    subscribed_topics_ = std::move(subscribed);
  }
  topologies_ = std::move(next);
  member_->request_rejoin();
}

void GroupMembership::publish_owned(PartitionList owned, std::map<TaskId, int64_t> offset_sums) {
  std::lock_guard lock(mutex_);
  owned_partitions_ = std::move(owned);
  offset_sums_ = std::move(offset_sums);
}

// On the member's thread.
std::string GroupMembership::subscription_bytes() {
  SubscriptionInfo info;
  info.process_id = uuid_bytes(config_.group.process_id);
  info.endpoint = config_.group.endpoint;
  ConsumerSubscription envelope;
  info.task_offset_sums = local_state_offset_sums();
  {
    std::lock_guard lock(mutex_);
    envelope.topics = subscribed_topics_;
    for (const auto& [task, sum] : offset_sums_) info.task_offset_sums[task] = sum;
    envelope.owned = owned_partitions_;
  }
  info.unique_field = static_cast<int8_t>(++subscriptions_sent_);
  envelope.user_data = info.encode();
  return envelope.encode();
}

// On the member's thread, as the group's leader (librdkafka's calls are thread-safe).
std::map<std::string, std::string> GroupMembership::assign_members(
    const std::map<std::string, std::string>& subscriptions) {
  GroupAssignorContext context;
  {
    std::lock_guard lock(mutex_);
    context.subtopologies = group_topics_;
  }
  std::map<std::string, int32_t> counts;
  context.partitions_of = [&](const std::string& topic) {
    auto it = counts.find(topic);
    if (it == counts.end())
      it = counts.emplace(topic, partition_count(metadata_client_, topic)).first;
    return it->second;
  };
  context.end_offsets = [&](const PartitionList& list) {
    std::map<std::pair<std::string, int32_t>, int64_t> out;
    for (const auto& [topic, p] : list) {
      int64_t low = 0, high = 0;
      auto err = query_watermarks(metadata_client_, topic, p, &low, &high, 10000);
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
std::map<TaskId, int64_t> GroupMembership::local_state_offset_sums() const {
  std::map<TaskId, int64_t> out;
  for (const auto& [id, path] : task_directories(config_.task.state_root)) {
    int64_t sum = 0;
    for (const auto& [tp, offset] : read_checkpoint_file(path))
      if (offset > 0) sum = offset > INT64_MAX - sum ? INT64_MAX : sum + offset;
    if (sum > 0) out[id] = sum;
  }
  return out;
}

// Each loop round (every few ms): what the member brought since the last look.
void GroupMembership::poll(TaskManager& tasks) {
  member_->polled();
  if (auto fatal = member_->fatal_error(); !fatal.empty())
    throw StreamsException("group membership: " + fatal);
  // Its tasks are someone else's now: dropped without a commit (an open transaction is aborted),
  // to be processed again from the last commit wherever they land.
  if (member_->take_lost()) tasks.handle_lost_all();
  if (auto received = member_->take_assignment()) on_assignment(*received, tasks);
  if (tasks.update_standbys(next_rebalance_ms_ != AssignmentInfo::kNoRebalance,
                            config_.group.assignor.acceptable_recovery_lag)) {
    next_rebalance_ms_ = AssignmentInfo::kNoRebalance;
    member_->request_rejoin();
  }
  if (next_rebalance_ms_ != AssignmentInfo::kNoRebalance && epoch_ms() >= next_rebalance_ms_) {
    next_rebalance_ms_ = AssignmentInfo::kNoRebalance;
    spdlog::info("stream thread {}: probing rebalance", config_.client_id);
    member_->request_rejoin();
  }
}

void GroupMembership::on_assignment(const ReceivedAssignment& received, TaskManager& tasks) {
  generation_ = received.generation;
  AssignmentInfo info;
  if (!received.assignment.user_data.empty())
    info = AssignmentInfo::decode(received.assignment.user_data);
  if (info.error_code == 4)
    throw StreamsException("another instance of the application asked for its shutdown");
  if (info.error_code != 0)
    throw StreamsException("the group's leader could not assign tasks (error " +
                           std::to_string(info.error_code) + ")");
  std::set<TaskManager::TaskKey> assigned(info.active_tasks.begin(), info.active_tasks.end());
  std::set<TaskManager::TaskKey> standby;
  for (const auto& [t, partitions] : info.standby_tasks)
    if (!assigned.count(t)) standby.insert(t);
  bool gave_up = tasks.handle_assignment(assigned, standby);
  if (config_.group.on_hosts) config_.group.on_hosts(info, config_.thread_index);
  next_rebalance_ms_ = info.next_rebalance_ms;
  // Cooperatively, what this member gave up is placed in a next round, once it is free.
  if (gave_up || info.next_rebalance_ms == 0) member_->request_rejoin();
}

void GroupMembership::commit_offsets(const rd_kafka_topic_partition_list_t* offsets) {
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

rd_kafka_consumer_group_metadata_t* GroupMembership::group_metadata() const {
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
