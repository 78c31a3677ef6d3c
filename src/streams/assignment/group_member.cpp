#include "streams/assignment/group_member.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "protocol/errors.h"
#include "protocol/messages/find_coordinator.h"
#include "protocol/messages/heartbeat.h"
#include "protocol/messages/join_group.h"
#include "protocol/messages/leave_group.h"
#include "protocol/messages/offset_commit.h"
#include "protocol/messages/sync_group.h"

namespace oxbow::streams::detail {

namespace {

namespace pr = oxbow::protocol;
using pr::ErrorCode;

// Versions every broker from Kafka 2.3 (static membership) to 4.x and Redpanda serves.
constexpr int16_t kFindCoordinatorVersion = 2;
constexpr int16_t kJoinGroupVersion = 5;
constexpr int16_t kSyncGroupVersion = 3;
constexpr int16_t kHeartbeatVersion = 3;
constexpr int16_t kLeaveGroupVersion = 3;
constexpr int16_t kOffsetCommitVersion = 7;
constexpr const char* kProtocolName = "stream";

ErrorCode code_of(int16_t e) {
  return static_cast<ErrorCode>(e);
}

bool coordinator_moved(ErrorCode e) {
  return e == ErrorCode::kNotCoordinator || e == ErrorCode::kCoordinatorNotAvailable ||
         e == ErrorCode::kCoordinatorLoadInProgress;
}

// A retriable failure that ends this attempt; the member's loop tries again after a pause.
struct Retry : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string coordinator_of(client::Connection& c, const std::string& group) {
  pr::FindCoordinatorRequest request;
  request.key = group;
  request.key_type = 0;
  auto response = c.call<pr::FindCoordinatorResponse>(10, kFindCoordinatorVersion, request);
  if (response.error_code != 0)
    throw Retry("FindCoordinator: " +
                client::error_text(response.error_code, response.error_message));
  return response.host + ":" + std::to_string(response.port);
}

int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

GroupMember::GroupMember(MemberConfig config, MemberCallbacks callbacks)
    : config_(std::move(config)), callbacks_(std::move(callbacks)) {}

GroupMember::~GroupMember() {
  stop(leave_on_stop_);
}

void GroupMember::start() {
  polled();
  thread_ = std::thread([this] { run(); });
}

void GroupMember::stop(bool leave) {
  {
    std::lock_guard lock(mutex_);
    if (stop_ && !thread_.joinable()) return;
    stop_ = true;
    leave_on_stop_ = leave;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::optional<ReceivedAssignment> GroupMember::take_assignment() {
  std::lock_guard lock(mutex_);
  auto out = std::move(pending_);
  pending_.reset();
  return out;
}

bool GroupMember::take_lost() {
  std::lock_guard lock(mutex_);
  if (!lost_) return false;
  lost_ = false;
  pending_.reset();
  rejoin_ = true;
  wake_.notify_all();
  return true;
}

void GroupMember::polled() {
  last_poll_ms_.store(steady_ms(), std::memory_order_relaxed);
}

bool GroupMember::poll_overdue() const {
  return steady_ms() - last_poll_ms_.load(std::memory_order_relaxed) > config_.rebalance_timeout_ms;
}

void GroupMember::request_rejoin() {
  std::lock_guard lock(mutex_);
  rejoin_ = true;
  wake_.notify_all();
}

std::string GroupMember::fatal_error() const {
  std::lock_guard lock(mutex_);
  return fatal_;
}

Generation GroupMember::generation() const {
  std::lock_guard lock(mutex_);
  return generation_;
}

bool GroupMember::wait_for(int ms, bool or_rejoin) {
  std::unique_lock lock(mutex_);
  wake_.wait_for(lock, std::chrono::milliseconds(ms),
                 [&] { return stop_ || (or_rejoin && rejoin_ && !lost_); });
  return !stop_;
}

void GroupMember::run() {
  int backoff_ms = 100;
  while (true) {
    {
      std::lock_guard lock(mutex_);
      if (stop_ || !fatal_.empty()) break;
    }
    try {
      step();
      backoff_ms = 100;
    } catch (const std::exception& e) {
      spdlog::warn("{}: group {}: {}", config_.client_id, config_.group_id, e.what());
      connection_.reset();
      {
        std::lock_guard lock(mutex_);
        coordinator_.clear();
      }
      if (!wait_for(backoff_ms, false)) break;
      backoff_ms = std::min(backoff_ms * 2, 2000);
    }
  }
  bool leave;
  {
    std::lock_guard lock(mutex_);
    leave = leave_on_stop_ && !config_.instance_id && !member_id_.empty();
  }
  if (leave) {
    try {
      leave_group();
    } catch (const std::exception& e) {
      spdlog::info("{}: leaving group {}: {}", config_.client_id, config_.group_id, e.what());
    }
  }
}

void GroupMember::step() {
  if (!connection_) find_coordinator();
  bool join;
  {
    std::lock_guard lock(mutex_);
    // After a loss the stream thread must drop its tasks before the member claims any again.
    join = rejoin_ && !lost_;
  }
  if (join) {
    try {
      join_and_sync();
    } catch (...) {
      // Whatever cut the round short (a timeout, a lost connection, a coordinator that moved),
      // the member has no generation it can heartbeat in: the next step joins again.
      std::lock_guard lock(mutex_);
      rejoin_ = true;
      throw;
    }
    return;
  }
  if (!wait_for(config_.heartbeat_interval_ms, true)) return;
  bool due;
  {
    std::lock_guard lock(mutex_);
    due = !rejoin_ && !lost_ && generation_.id >= 0;
  }
  if (due && poll_overdue()) return leave_for_poll_timeout();
  if (due) heartbeat();
}

void GroupMember::leave_for_poll_timeout() {
  spdlog::warn(
      "{}: group {}: the stream thread has not polled for longer than max.poll.interval.ms "
      "({} ms), which usually means a record takes too long to process; leaving the group, to "
      "rejoin once the thread polls again",
      config_.client_id, config_.group_id, config_.rebalance_timeout_ms);
  // A static member does not leave: its session's end frees its tasks (as Kafka's consumer).
  if (!config_.instance_id) {
    try {
      leave_group();
    } catch (const std::exception& e) {
      spdlog::info("{}: leaving group {}: {}", config_.client_id, config_.group_id, e.what());
    }
  }
  std::lock_guard lock(mutex_);
  forget_member_id();
  set_lost("max.poll.interval.ms exceeded");
}

void GroupMember::find_coordinator() {
  client::Connection bootstrap(config_.bootstrap_servers, config_.security, config_.client_id,
                               config_.request_timeout_ms);
  std::string coordinator = coordinator_of(bootstrap, config_.group_id);
  connection_ = std::make_unique<client::Connection>(coordinator, config_.security,
                                                     config_.client_id, config_.request_timeout_ms);
  std::lock_guard lock(mutex_);
  coordinator_ = coordinator;
}

void GroupMember::join_and_sync() {
  std::string member_id;
  {
    std::lock_guard lock(mutex_);
    member_id = member_id_;
    rejoin_ = false;
  }
  pr::JoinGroupRequest join;
  join.group_id = config_.group_id;
  join.session_timeout_ms = config_.session_timeout_ms;
  join.rebalance_timeout_ms = config_.rebalance_timeout_ms;
  join.group_instance_id = config_.instance_id;
  join.protocol_type = "consumer";
  std::string subscription = callbacks_.subscription();
  join.protocols.push_back({kProtocolName, {subscription.begin(), subscription.end()}});
  // The coordinator answers once every member rejoined: up to a rebalance timeout.
  connection_->set_timeout(config_.rebalance_timeout_ms + config_.request_timeout_ms);
  pr::JoinGroupResponse joined;
  for (int attempt = 0;; ++attempt) {
    join.member_id = member_id;
    joined = connection_->call<pr::JoinGroupResponse>(11, kJoinGroupVersion, join);
    // KIP-394: a new member first learns its id, then joins with it. The id is kept from here
    // on, so that a round cut short is resumed as the same member instead of leaving a phantom
    // one behind for a session timeout.
    if (!joined.member_id.empty()) {
      member_id = joined.member_id;
      std::lock_guard lock(mutex_);
      member_id_ = member_id;
    }
    if (code_of(joined.error_code) == ErrorCode::kMemberIdRequired && attempt < 2) continue;
    break;
  }
  ErrorCode error = code_of(joined.error_code);
  if (error != ErrorCode::kNone) {
    connection_->set_timeout(config_.request_timeout_ms);
    std::lock_guard lock(mutex_);
    rejoin_ = true;
    if (error == ErrorCode::kUnknownMemberId || error == ErrorCode::kIllegalGeneration) {
      // The group went on without this member: whatever it held is someone else's now.
      if (error == ErrorCode::kUnknownMemberId) forget_member_id();
      set_lost("JoinGroup: " + client::error_text(joined.error_code));
      return;
    }
    if (error == ErrorCode::kFencedInstanceId || error == ErrorCode::kInconsistentGroupProtocol ||
        error == ErrorCode::kGroupAuthorizationFailed || error == ErrorCode::kInvalidSessionTimeout)
      fatal_ = "JoinGroup: " + client::error_text(joined.error_code);
    if (coordinator_moved(error) || fatal_.empty())
      throw Retry("JoinGroup: " + client::error_text(joined.error_code));
    return;
  }
  pr::SyncGroupRequest sync;
  sync.group_id = config_.group_id;
  sync.generation_id = joined.generation_id;
  sync.member_id = joined.member_id;
  sync.group_instance_id = config_.instance_id;
  if (joined.leader == joined.member_id) {
    std::map<std::string, std::string> subscriptions;
    for (const auto& m : joined.members)
      subscriptions[m.member_id] = std::string(m.metadata.begin(), m.metadata.end());
    for (const auto& [member, bytes] : callbacks_.assign(subscriptions))
      sync.assignments.push_back({member, {bytes.begin(), bytes.end()}});
  }
  // A follower's SyncGroup is answered once the leader sent the assignment, or, if the leader
  // died, once its session expired and the group rebalances: wait that long (as librdkafka does)
  // rather than give up and find the same dead leader again.
  connection_->set_timeout(config_.session_timeout_ms + config_.request_timeout_ms);
  auto synced = connection_->call<pr::SyncGroupResponse>(14, kSyncGroupVersion, sync);
  connection_->set_timeout(config_.request_timeout_ms);
  error = code_of(synced.error_code);
  std::lock_guard lock(mutex_);
  generation_ = {joined.generation_id, joined.member_id};
  if (error != ErrorCode::kNone) {
    rejoin_ = true;
    if (error == ErrorCode::kUnknownMemberId || error == ErrorCode::kIllegalGeneration) {
      if (error == ErrorCode::kUnknownMemberId) forget_member_id();
      set_lost("SyncGroup: " + client::error_text(synced.error_code));
      return;
    }
    if (error == ErrorCode::kRebalanceInProgress) return;
    throw Retry("SyncGroup: " + client::error_text(synced.error_code));
  }
  ReceivedAssignment received;
  received.generation = generation_;
  if (!synced.assignment.empty())
    received.assignment = ConsumerAssignment::decode(std::string_view(
        reinterpret_cast<const char*>(synced.assignment.data()), synced.assignment.size()));
  pending_ = std::move(received);
}

void GroupMember::heartbeat() {
  Generation g = generation();
  pr::HeartbeatRequest request;
  request.group_id = config_.group_id;
  request.generation_id = g.id;
  request.member_id = g.member_id;
  request.group_instance_id = config_.instance_id;
  auto response = connection_->call<pr::HeartbeatResponse>(12, kHeartbeatVersion, request);
  ErrorCode error = code_of(response.error_code);
  if (error == ErrorCode::kNone) return;
  std::lock_guard lock(mutex_);
  if (error == ErrorCode::kRebalanceInProgress) {
    rejoin_ = true;
  } else if (error == ErrorCode::kUnknownMemberId || error == ErrorCode::kIllegalGeneration ||
             error == ErrorCode::kFencedInstanceId) {
    if (error == ErrorCode::kUnknownMemberId) forget_member_id();
    if (error == ErrorCode::kFencedInstanceId)
      fatal_ = "Heartbeat: " + client::error_text(response.error_code);
    set_lost("Heartbeat: " + client::error_text(response.error_code));
  } else {
    throw Retry("Heartbeat: " + client::error_text(response.error_code));
  }
}

// Under mutex_.
void GroupMember::forget_member_id() {
  generation_ = {};
  member_id_.clear();
}

// Under mutex_.
void GroupMember::set_lost(const std::string& why) {
  spdlog::warn("{}: group {}: membership lost ({}); its tasks are dropped", config_.client_id,
               config_.group_id, why);
  lost_ = true;
  rejoin_ = true;
  pending_.reset();
}

void GroupMember::leave_group() {
  std::string member_id;
  {
    std::lock_guard lock(mutex_);
    member_id = member_id_;
  }
  if (!connection_) find_coordinator();
  pr::LeaveGroupRequest request;
  request.group_id = config_.group_id;
  request.members.push_back({member_id, std::nullopt, std::nullopt});
  connection_->call<pr::LeaveGroupResponse>(13, kLeaveGroupVersion, request);
}

void GroupMember::commit(const std::vector<Offset>& offsets) {
  if (offsets.empty()) return;
  Generation g = generation();
  std::string coordinator;
  {
    std::lock_guard lock(mutex_);
    coordinator = coordinator_;
  }
  if (coordinator.empty()) throw CommitRefused("no group coordinator known yet");
  if (!commit_connection_ || commit_coordinator_ != coordinator) {
    commit_connection_.reset();
    commit_connection_ = std::make_unique<client::Connection>(
        coordinator, config_.security, config_.client_id, config_.request_timeout_ms);
    commit_coordinator_ = coordinator;
  }
  pr::OffsetCommitRequest request;
  request.group_id = config_.group_id;
  request.generation_id = g.id;
  request.member_id = g.member_id;
  request.group_instance_id = config_.instance_id;
  std::map<std::string, size_t> topic_at;
  for (const auto& o : offsets) {
    auto [it, fresh] = topic_at.emplace(o.topic, request.topics.size());
    if (fresh) request.topics.push_back({o.topic, {}});
    pr::OffsetCommitRequest::OffsetCommitRequestPartition p;
    p.partition_index = o.partition;
    p.committed_offset = o.offset;
    p.committed_metadata = o.metadata;
    request.topics[it->second].partitions.push_back(std::move(p));
  }
  pr::OffsetCommitResponse response;
  try {
    response = commit_connection_->call<pr::OffsetCommitResponse>(8, kOffsetCommitVersion, request);
  } catch (const client::ConnectionError&) {
    commit_connection_.reset();
    throw;
  }
  for (const auto& t : response.topics)
    for (const auto& p : t.partitions) {
      ErrorCode error = code_of(p.error_code);
      if (error == ErrorCode::kNone) continue;
      if (coordinator_moved(error)) commit_connection_.reset();
      CommitRefused refused("OffsetCommit " + t.name + "-" + std::to_string(p.partition_index) +
                            ": " + client::error_text(p.error_code));
      refused.retriable = error == ErrorCode::kRebalanceInProgress || coordinator_moved(error);
      throw refused;
    }
}

}  // namespace oxbow::streams::detail
