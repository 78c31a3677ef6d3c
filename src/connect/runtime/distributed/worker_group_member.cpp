#include "connect/runtime/distributed/worker_group_member.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "common/clock.h"
#include "protocol/errors.h"
#include "protocol/messages/find_coordinator.h"
#include "protocol/messages/heartbeat.h"
#include "protocol/messages/join_group.h"
#include "protocol/messages/leave_group.h"
#include "protocol/messages/sync_group.h"

namespace oxbow::connect::runtime::distributed {

namespace {

namespace wire = oxbow::protocol;
using wire::ErrorCode;

// The API versions spoken: the flexible ones of Kafka 2.5 on, where JoinGroup (7) and SyncGroup
// (5) name the protocol type and protocol for the coordinator to check.
struct Api {
  int16_t key, version;
};
constexpr Api kFindCoordinator{10, 3}, kJoinGroup{11, 7}, kHeartbeat{12, 4}, kLeaveGroup{13, 4},
    kSyncGroup{14, 5};
constexpr const char* kProtocolType = "connect";

template <typename Response, typename Request>
Response ask(client::Connection& to, Api api, const Request& request) {
  return to.call<Response>(api.key, api.version, request);
}

int64_t nowMs() {
  return steady_now_ms();
}

// A failure that ends this attempt; the member's loop drops the connection and retries.
struct RetryLater : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string text(const char* api, int16_t code) {
  return std::string(api) + ": " + client::error_text(code);
}

template <typename T>
void eraseAll(std::vector<T>& from, const std::vector<T>& what) {
  std::erase_if(from,
                [&](const T& x) { return std::find(what.begin(), what.end(), x) != what.end(); });
}

template <typename T>
void appendMissing(std::vector<T>& to, const std::vector<T>& what) {
  for (const auto& x : what)
    if (std::find(to.begin(), to.end(), x) == to.end()) to.push_back(x);
}

template <typename T>
std::vector<T> without(std::vector<T> from, const std::vector<T>& what) {
  eraseAll(from, what);
  return from;
}

}  // namespace

WorkerAssignment completeAssignment(const WorkerAssignment& received,
                                    const std::optional<WorkerAssignment>& owned, int16_t version) {
  WorkerAssignment full = received;
  if (received.error != kNoError) {
    // The leader could not assign: nothing changes until a round that can.
    full.connectors = owned ? owned->connectors : std::vector<std::string>{};
    full.tasks = owned ? owned->tasks : std::vector<ConnectorTaskId>{};
    full.revokedConnectors.clear();
    full.revokedTasks.clear();
    return full;
  }
  if (!owned) return full;
  if (version == kEagerVersion) {
    full.revokedConnectors = without(owned->connectors, received.connectors);
    full.revokedTasks = without(owned->tasks, received.tasks);
    return full;
  }
  appendMissing(full.connectors, without(owned->connectors, received.revokedConnectors));
  appendMissing(full.tasks, without(owned->tasks, received.revokedTasks));
  return full;
}

void carryRevocations(WorkerAssignment& next, const WorkerAssignment& untaken) {
  appendMissing(next.revokedConnectors, without(untaken.revokedConnectors, next.connectors));
  appendMissing(next.revokedTasks, without(untaken.revokedTasks, next.tasks));
}

WorkerGroupMember::WorkerGroupMember(WorkerMemberConfig config, WorkerMemberCallbacks callbacks)
    : config_(std::move(config)), callbacks_(std::move(callbacks)) {
  version_ =
      distributed::protocolVersion(config_.protocol);  // rejects an unknown connect.protocol early
}

WorkerGroupMember::~WorkerGroupMember() {
  stop();
}

void WorkerGroupMember::start() {
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
}

void WorkerGroupMember::stop() {
  std::string memberId, coordinator;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    // The member's thread may wait in a JoinGroup or SyncGroup for as long as a rebalance
    // takes: leaving on a connection of our own ends that wait at once.
    if (rebalancing_) {
      memberId = memberId_;
      coordinator = coordinatorAddress_;
    }
  }
  changed_.notify_all();
  if (!memberId.empty() && !coordinator.empty()) {
    try {
      client::Connection own(coordinator, config_.security, config_.clientId,
                             config_.requestTimeoutMs);
      leave(own, memberId);
    } catch (const std::exception& e) {
      spdlog::info("{}: leaving Connect group {}: {}", config_.clientId, config_.groupId, e.what());
    }
  }
  // From a callback, on the member's own thread, the loop ends once the callback returns.
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

std::optional<std::pair<int32_t, WorkerAssignment>> WorkerGroupMember::takeAssignment() {
  std::lock_guard lock(mutex_);
  return std::exchange(pending_, std::nullopt);
}

bool WorkerGroupMember::takeLost() {
  {
    std::lock_guard lock(mutex_);
    if (!std::exchange(lost_, false)) return false;
  }
  changed_.notify_all();  // the member may rejoin now
  return true;
}

void WorkerGroupMember::requestRejoin() {
  {
    std::lock_guard lock(mutex_);
    rejoin_ = true;
  }
  changed_.notify_all();
}

bool WorkerGroupMember::rebalancing() const {
  std::lock_guard lock(mutex_);
  return rebalancing_;
}

std::string WorkerGroupMember::memberId() const {
  std::lock_guard lock(mutex_);
  return memberId_;
}

int32_t WorkerGroupMember::generation() const {
  std::lock_guard lock(mutex_);
  return generation_;
}

std::pair<int32_t, int32_t> WorkerGroupMember::assigningGenerations() const {
  std::lock_guard lock(mutex_);
  return {assigningGeneration_, generation_};
}

int16_t WorkerGroupMember::protocolVersion() const {
  std::lock_guard lock(mutex_);
  return version_;
}

std::string WorkerGroupMember::fatalError() const {
  std::lock_guard lock(mutex_);
  return fatal_;
}

void WorkerGroupMember::notify() {
  if (callbacks_.wake) callbacks_.wake();
}

// Under mutex_.
bool WorkerGroupMember::rejoinDue() const {
  if (lost_) return false;  // the herder must drop its work first
  return rejoin_ || (rejoinAtMs_ >= 0 && nowMs() >= rejoinAtMs_);
}

bool WorkerGroupMember::sleep(int ms) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, std::chrono::milliseconds(ms), [&] { return stopping_; });
  return !stopping_;
}

void WorkerGroupMember::run() {
  int backoff = config_.retryBackoffMs;
  while (true) {
    {
      std::lock_guard lock(mutex_);
      if (stopping_ || !fatal_.empty()) break;
    }
    try {
      step();
      backoff = config_.retryBackoffMs;
    } catch (const std::exception& e) {
      spdlog::warn("{}: Connect group {}: {}; retrying in {} ms", config_.clientId, config_.groupId,
                   e.what(), backoff);
      coordinator_.reset();
      bool lostNews = false;
      {
        std::lock_guard lock(mutex_);
        // A round cut short leaves no generation to heartbeat in: join again.
        rejoin_ = rejoin_ || rebalancing_ || generation_ < 0;
        rebalancing_ = false;
        // Out of touch for a whole session: the group has surely gone on without this worker,
        // so its work must stop before another worker starts it.
        if (lastContactMs_ > 0 && nowMs() - lastContactMs_ > config_.sessionTimeoutMs) {
          lastContactMs_ = 0;
          memberId_.clear();
          lostNews =
              markLost("the coordinator was unreachable for longer than the session timeout");
        }
      }
      if (lostNews) notify();
      if (!sleep(backoff)) break;
      backoff = std::min(backoff * 2, config_.retryBackoffMs * 20);
    }
  }
  leaveGroup();
}

void WorkerGroupMember::step() {
  if (!coordinator_) connectToCoordinator();
  {
    std::unique_lock lock(mutex_);
    if (!rejoinDue()) {
      int wait = config_.heartbeatIntervalMs;
      if (rejoinAtMs_ >= 0)
        wait = static_cast<int>(std::clamp<int64_t>(rejoinAtMs_ - nowMs(), 0, wait));
      changed_.wait_for(lock, std::chrono::milliseconds(wait),
                        [&] { return stopping_ || rejoinDue(); });
      if (stopping_) return;
      if (!rejoinDue()) {
        bool member = generation_ >= 0;
        lock.unlock();
        if (member) heartbeat();
        return;
      }
    }
  }
  joinGroup();
}

void WorkerGroupMember::connectToCoordinator() {
  client::Connection any(config_.bootstrapServers, config_.security, config_.clientId,
                         config_.requestTimeoutMs);
  wire::FindCoordinatorRequest find;
  find.key = config_.groupId;
  find.key_type = 0;  // a group
  auto found = ask<wire::FindCoordinatorResponse>(any, kFindCoordinator, find);
  if (found.error_code != 0)
    throw RetryLater("FindCoordinator: " +
                     client::error_text(found.error_code, found.error_message));
  std::string address = found.host + ":" + std::to_string(found.port);
  coordinator_ = std::make_unique<client::Connection>(address, config_.security, config_.clientId,
                                                      config_.requestTimeoutMs);
  std::lock_guard lock(mutex_);
  coordinatorAddress_ = address;
}

void WorkerGroupMember::joinGroup() {
  std::string memberId;
  {
    std::lock_guard lock(mutex_);
    rejoin_ = false;
    rejoinAtMs_ = -1;
    rebalancing_ = true;
    memberId = memberId_;
  }
  WorkerState state = callbacks_.state();
  {
    // What this worker was assigned, taken by the herder yet or not: reporting less would let
    // the leader hand the rest to another worker as well.
    std::lock_guard lock(mutex_);
    state.owned = owned_;
  }
  wire::JoinGroupRequest join;
  join.group_id = config_.groupId;
  join.session_timeout_ms = config_.sessionTimeoutMs;
  join.rebalance_timeout_ms = config_.rebalanceTimeoutMs;
  join.protocol_type = kProtocolType;
  for (const auto& name : offeredProtocols(config_.protocol)) {
    std::string metadata = encodeWorkerState(state, distributed::protocolVersion(name));
    join.protocols.push_back({name, {metadata.begin(), metadata.end()}});
  }
  // The answer comes once every member rejoined, up to the rebalance timeout.
  coordinator_->set_timeout(config_.rebalanceTimeoutMs + config_.requestTimeoutMs);
  wire::JoinGroupResponse joined;
  // A new member is first told its id (KIP-394), then joins with it.
  for (int attempt = 0; attempt < 2; ++attempt) {
    join.member_id = memberId;
    joined = ask<wire::JoinGroupResponse>(*coordinator_, kJoinGroup, join);
    if (!joined.member_id.empty()) {
      memberId = joined.member_id;
      std::lock_guard lock(mutex_);
      memberId_ = memberId;
    }
    if (static_cast<ErrorCode>(joined.error_code) != ErrorCode::kMemberIdRequired) break;
  }
  lastContactMs_ = nowMs();
  if (joined.error_code != 0) {
    coordinator_->set_timeout(config_.requestTimeoutMs);
    handleGroupError(joined.error_code, "JoinGroup");
    return;
  }
  int16_t version = distributed::protocolVersion(joined.protocol_name.value_or(""));
  std::map<std::string, WorkerState> members;
  if (joined.leader == joined.member_id) {
    for (const auto& m : joined.members) {
      try {
        members[m.member_id] = decodeWorkerState(
            std::string_view(reinterpret_cast<const char*>(m.metadata.data()), m.metadata.size()));
      } catch (const ProtocolError& e) {
        // Without an assignment that member fails its round and rejoins; the others go on.
        spdlog::warn("{}: Connect group {}: member {}: {}", config_.clientId, config_.groupId,
                     m.member_id, e.what());
      }
    }
  }
  {
    std::lock_guard lock(mutex_);
    assigningGeneration_ = joined.generation_id;
  }
  syncGroup(joined.generation_id, joined.member_id, joined.leader, version, members);
}

void WorkerGroupMember::syncGroup(int32_t generation, const std::string& memberId,
                                  const std::string& leader, int16_t version,
                                  const std::map<std::string, WorkerState>& members) {
  wire::SyncGroupRequest sync;
  sync.group_id = config_.groupId;
  sync.generation_id = generation;
  sync.member_id = memberId;
  sync.protocol_type = kProtocolType;
  sync.protocol_name = protocolName(version);
  if (leader == memberId) {
    for (auto [member, assignment] : callbacks_.assign(leader, version, members)) {
      assignment.version = version;
      std::string bytes = encodeAssignment(assignment);
      sync.assignments.push_back({member, {bytes.begin(), bytes.end()}});
    }
  }
  // A follower waits for the leader's assignment; if the leader died, the coordinator answers
  // once the leader's session expired.
  coordinator_->set_timeout(config_.sessionTimeoutMs + config_.requestTimeoutMs);
  auto synced = ask<wire::SyncGroupResponse>(*coordinator_, kSyncGroup, sync);
  coordinator_->set_timeout(config_.requestTimeoutMs);
  lastContactMs_ = nowMs();
  if (synced.error_code != 0) {
    handleGroupError(synced.error_code, "SyncGroup");
    return;
  }
  completeRound(generation, memberId, version,
                std::string_view(reinterpret_cast<const char*>(synced.assignment.data()),
                                 synced.assignment.size()));
}

void WorkerGroupMember::completeRound(int32_t generation, const std::string& memberId,
                                      int16_t version, std::string_view bytes) {
  WorkerAssignment received;
  try {
    received = decodeAssignment(bytes);
  } catch (const ProtocolError& e) {
    // The leader gave this member nothing readable (it could not read our metadata?): try again.
    {
      std::lock_guard lock(mutex_);
      rejoin_ = true;
      rebalancing_ = false;
    }
    throw RetryLater(std::string("SyncGroup's assignment: ") + e.what());
  }
  {
    std::lock_guard lock(mutex_);
    WorkerAssignment full = completeAssignment(received, owned_, version);
    if (pending_) carryRevocations(full, pending_->second);
    owned_ = full;
    owned_->revokedConnectors.clear();
    owned_->revokedTasks.clear();
    owned_->delayMs = 0;
    // The leader could not assign (it is behind the config): rejoin once the herder caught up,
    // or after a heartbeat interval.
    if (received.error != kNoError) rejoinAtMs_ = nowMs() + config_.heartbeatIntervalMs;
    generation_ = generation;
    memberId_ = memberId;
    version_ = version;
    rebalancing_ = false;
    pending_.emplace(generation, std::move(full));
  }
  notify();
}

void WorkerGroupMember::heartbeat() {
  wire::HeartbeatRequest beat;
  {
    std::lock_guard lock(mutex_);
    beat.generation_id = generation_;
    beat.member_id = memberId_;
  }
  beat.group_id = config_.groupId;
  auto answer = ask<wire::HeartbeatResponse>(*coordinator_, kHeartbeat, beat);
  lastContactMs_ = nowMs();
  if (answer.error_code != 0) handleGroupError(answer.error_code, "Heartbeat");
}

// The answer to a group request that failed: rejoin, lose the membership, give up, or retry
// after a backoff (the coordinator moved or failed).
void WorkerGroupMember::handleGroupError(int16_t code, const char* api) {
  auto error = static_cast<ErrorCode>(code);
  bool lostNews = false;
  {
    std::lock_guard lock(mutex_);
    rebalancing_ = false;
    switch (error) {
      case ErrorCode::kRebalanceInProgress:
      case ErrorCode::kIllegalGeneration:
        // A round this worker has not joined yet: it rejoins keeping its work, which the leader
        // sees in its metadata.
        rejoin_ = true;
        return;
      case ErrorCode::kUnknownMemberId:
        memberId_.clear();
        lostNews = markLost(text(api, code));
        break;
      case ErrorCode::kInconsistentGroupProtocol:
      case ErrorCode::kGroupAuthorizationFailed:
      case ErrorCode::kInvalidSessionTimeout:
      case ErrorCode::kGroupMaxSizeReached:
        fatal_ = text(api, code);
        spdlog::error("{}: Connect group {}: {}", config_.clientId, config_.groupId, fatal_);
        return;
      case ErrorCode::kNotCoordinator:
      case ErrorCode::kCoordinatorNotAvailable:
      case ErrorCode::kCoordinatorLoadInProgress:
        // The group moved to another coordinator (or it is loading it): a member of a completed
        // round goes on heartbeating there, without a rebalance; a round under way starts again.
        rejoin_ = rejoin_ || std::string_view(api) != "Heartbeat";
        throw RetryLater(text(api, code));
      default:
        rejoin_ = true;
        throw RetryLater(text(api, code));
    }
  }
  if (lostNews) notify();
}

// Under mutex_. True when the herder has work to drop (and must be woken to hear it).
bool WorkerGroupMember::markLost(const std::string& why) {
  rejoin_ = true;
  generation_ = -1;
  pending_.reset();
  if (!owned_) return false;  // nothing runs: nothing to drop
  spdlog::warn(
      "{}: Connect group {}: membership lost ({}); this worker's connectors and tasks stop",
      config_.clientId, config_.groupId, why);
  owned_.reset();
  lost_ = true;
  return true;
}

void WorkerGroupMember::leaveGroup() {
  std::string memberId;
  {
    std::lock_guard lock(mutex_);
    memberId = memberId_;
    generation_ = -1;
  }
  if (memberId.empty()) return;
  try {
    if (!coordinator_) connectToCoordinator();
    leave(*coordinator_, memberId);
  } catch (const std::exception& e) {
    spdlog::info("{}: leaving Connect group {}: {}", config_.clientId, config_.groupId, e.what());
  }
}

void WorkerGroupMember::leave(client::Connection& coordinator, const std::string& memberId) {
  wire::LeaveGroupRequest request;
  request.group_id = config_.groupId;
  request.members.push_back({memberId, std::nullopt, std::nullopt});
  auto answer = ask<wire::LeaveGroupResponse>(coordinator, kLeaveGroup, request);
  int16_t error = answer.error_code;
  for (const auto& m : answer.members) error = error ? error : m.error_code;
  if (error != 0)
    spdlog::info("{}: leaving Connect group {}: {}", config_.clientId, config_.groupId,
                 client::error_text(error));
}

}  // namespace oxbow::connect::runtime::distributed
