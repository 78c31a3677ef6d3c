#include "group/group.h"

#include <algorithm>
#include <atomic>
#include <random>

#include <spdlog/spdlog.h>

#include "protocol/wire.h"

namespace oxbow::group {

const char* state_name(GroupState state) {
  switch (state) {
    case GroupState::kEmpty:
      return "Empty";
    case GroupState::kPreparingRebalance:
      return "PreparingRebalance";
    case GroupState::kCompletingRebalance:
      return "CompletingRebalance";
    case GroupState::kStable:
      return "Stable";
    case GroupState::kDead:
      return "Dead";
  }
  return "Unknown";
}

const Bytes* Member::metadata_for(const std::string& protocol) const {
  for (const auto& [name, metadata] : protocols) {
    if (name == protocol) return &metadata;
  }
  return nullptr;
}

uint64_t next_group_revision() {
  static std::atomic<uint64_t> next{1};
  return next++;
}

Group::Group(std::string id, int64_t initial_rebalance_delay_ms)
    : id_(std::move(id)), initial_rebalance_delay_ms_(initial_rebalance_delay_ms) {}

Group Group::restore(std::string id, int64_t initial_rebalance_delay_ms,
                     const ClassicGroupSnapshot& snapshot, int64_t now) {
  Group group(std::move(id), initial_rebalance_delay_ms);
  group.generation_ = snapshot.generation;
  group.protocol_type_ = snapshot.protocol_type;
  if (snapshot.members.empty() || !snapshot.protocol) {
    group.empty_since_ms_ = snapshot.state_timestamp_ms >= 0 ? snapshot.state_timestamp_ms : now;
    return group;
  }
  group.state_ = GroupState::kStable;
  group.protocol_name_ = snapshot.protocol;
  for (const auto& m : snapshot.members) {
    Member member;
    member.id = m.id;
    member.instance_id = m.instance_id;
    member.client_id = m.client_id;
    member.client_host = m.client_host;
    member.session_timeout_ms = m.session_timeout_ms;
    member.rebalance_timeout_ms = m.rebalance_timeout_ms;
    member.protocol_type = snapshot.protocol_type;
    member.protocols = {{*snapshot.protocol, m.subscription}};
    member.assignment = m.assignment;
    member.heartbeat_deadline_ms = now + m.session_timeout_ms;
    if (m.instance_id) group.static_members_[*m.instance_id] = m.id;
    group.members_[m.id] = std::move(member);
  }
  bool leader_known = snapshot.leader && group.members_.contains(*snapshot.leader);
  group.leader_ = leader_known ? *snapshot.leader : group.members_.begin()->first;
  return group;
}

std::optional<ClassicGroupSnapshot> Group::snapshot() const {
  bool stable = state_ == GroupState::kStable && protocol_name_;
  bool emptied = state_ == GroupState::kEmpty && generation_ > 0;
  if (!stable && !emptied) return std::nullopt;
  ClassicGroupSnapshot out;
  out.protocol_type = protocol_type_;
  out.generation = generation_;
  if (emptied) {
    out.state_timestamp_ms = empty_since_ms_;
    return out;
  }
  out.protocol = protocol_name_;
  out.leader = leader_;
  for (const auto& [id, m] : members_) {
    const Bytes* subscription = m.metadata_for(*protocol_name_);
    out.members.push_back({id, m.instance_id, m.client_id, m.client_host, m.rebalance_timeout_ms,
                           m.session_timeout_ms, subscription ? *subscription : Bytes{},
                           m.assignment});
  }
  return out;
}

std::string Group::new_member_id(const std::string& client_id,
                                 const std::optional<std::string>& instance_id) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  static const char* hex = "0123456789abcdef";
  std::string suffix;
  for (int i = 0; i < 32; ++i) {
    suffix += hex[rng() & 15];
    if (i == 7 || i == 11 || i == 15 || i == 19) suffix += '-';
  }
  return (instance_id ? *instance_id : client_id) + "-" + suffix;
}

bool Group::protocols_compatible(const JoinRequest& request) const {
  if (request.protocols.empty() || request.protocol_type.empty()) return false;
  if (state_ == GroupState::kEmpty && members_.empty()) return true;
  if (request.protocol_type != protocol_type_) return false;
  // Some protocol must be supported by every member, this one included.
  for (const auto& protocol : request.protocols) {
    const std::string& name = protocol.first;  // not a structured binding: captured below
    bool everyone = std::all_of(members_.begin(), members_.end(), [&](const auto& entry) {
      return entry.first == request.member_id || entry.second.metadata_for(name) != nullptr;
    });
    if (everyone) return true;
  }
  return false;
}

ErrorCode Group::check_static(const std::string& member_id,
                              const std::optional<std::string>& instance_id) const {
  if (!instance_id) return ErrorCode::kNone;
  auto it = static_members_.find(*instance_id);
  if (it != static_members_.end() && it->second != member_id) return ErrorCode::kFencedInstanceId;
  return ErrorCode::kNone;
}

void Group::join(const JoinRequest& request, int64_t now, JoinCallback done, Completions& out) {
  revision_ = next_group_revision();  // e.g. a static member's new id in a stable group
  auto fail = [&](ErrorCode error, std::string member_id = "") {
    JoinResult result;
    result.error = error;
    result.member_id = std::move(member_id);
    out.push_back([done, result] { done(result); });
  };
  if (state_ == GroupState::kDead)
    return fail(ErrorCode::kCoordinatorNotAvailable, request.member_id);
  if (!protocols_compatible(request))
    return fail(ErrorCode::kInconsistentGroupProtocol, request.member_id);

  if (request.member_id.empty()) {
    if (request.group_instance_id) {
      auto known = static_members_.find(*request.group_instance_id);
      std::string id = new_member_id(request.client_id, request.group_instance_id);
      if (known != static_members_.end() && members_.count(known->second)) {
        // A restarted static member takes over its old identity (KIP-345).
        Member member = std::move(members_[known->second]);
        members_.erase(known->second);
        if (member.awaiting_join) {
          JoinResult fenced;
          fenced.error = ErrorCode::kFencedInstanceId;
          out.push_back([cb = member.awaiting_join, fenced] { cb(fenced); });
          member.awaiting_join = nullptr;
        }
        if (member.awaiting_sync) {
          SyncResult fenced;
          fenced.error = ErrorCode::kFencedInstanceId;
          out.push_back([cb = member.awaiting_sync, fenced] { cb(fenced); });
          member.awaiting_sync = nullptr;
        }
        bool was_leader = leader_ == known->second;
        member.id = id;
        member.protocols = request.protocols;
        member.session_timeout_ms = request.session_timeout_ms;
        member.rebalance_timeout_ms = request.rebalance_timeout_ms;
        member.heartbeat_deadline_ms = now + request.session_timeout_ms;
        known->second = id;
        if (was_leader) leader_ = id;
        members_[id] = std::move(member);
        // As in Kafka, new metadata alone (a Streams instance's task lags after a restart) is kept
        // without a rebalance: only a change of the protocol the group would select rebalances.
        if (state_ == GroupState::kStable && select_protocol() == protocol_name_) {
          // Nothing changed for the others: no rebalance, the member syncs to get its assignment.
          // A returning leader is told so: its SyncGroup in a stable group keeps the assignment.
          JoinResult result = join_result_for(members_[id]);
          result.skip_assignment = was_leader;
          out.push_back([done, result] { done(result); });
          return;
        }
        members_[id].awaiting_join = done;
        if (state_ == GroupState::kPreparingRebalance) {
          maybe_complete_join(now, out);
        } else {
          prepare_rebalance(now, out);
        }
        return;
      }
      return add_member(request, id, now, done, out);
    }
    std::string id = new_member_id(request.client_id, std::nullopt);
    if (request.require_known_member_id) {
      pending_members_[id] = now + request.session_timeout_ms;
      return fail(ErrorCode::kMemberIdRequired, id);
    }
    return add_member(request, id, now, done, out);
  }

  if (auto it = pending_members_.find(request.member_id); it != pending_members_.end()) {
    pending_members_.erase(it);
    return add_member(request, request.member_id, now, done, out);
  }
  // The fence comes first, as in Kafka: an old incarnation told UNKNOWN_MEMBER_ID would join
  // afresh and take the instance id back, and the two would fence each other in turn.
  if (auto error = check_static(request.member_id, request.group_instance_id);
      error != ErrorCode::kNone) {
    return fail(error, request.member_id);
  }
  auto it = members_.find(request.member_id);
  bool instance_unknown =
      request.group_instance_id && !static_members_.count(*request.group_instance_id);
  if (it == members_.end() || instance_unknown)
    return fail(ErrorCode::kUnknownMemberId, request.member_id);
  Member& member = it->second;
  bool same_protocols = member.protocols == request.protocols;
  member.protocols = request.protocols;
  member.session_timeout_ms = request.session_timeout_ms;
  member.rebalance_timeout_ms = request.rebalance_timeout_ms;
  member.heartbeat_deadline_ms = now + request.session_timeout_ms;
  switch (state_) {
    case GroupState::kPreparingRebalance:
      if (member.awaiting_join) {
        JoinResult superseded;
        superseded.error = ErrorCode::kRebalanceInProgress;
        out.push_back([cb = member.awaiting_join, superseded] { cb(superseded); });
      }
      member.awaiting_join = done;
      maybe_complete_join(now, out);
      return;
    case GroupState::kCompletingRebalance:
    case GroupState::kStable:
      if (same_protocols && (state_ == GroupState::kCompletingRebalance || leader_ != member.id)) {
        JoinResult result = join_result_for(member);
        out.push_back([done, result] { done(result); });
        return;
      }
      member.awaiting_join = done;
      prepare_rebalance(now, out);
      return;
    default:
      return fail(ErrorCode::kUnknownMemberId, request.member_id);
  }
}

void Group::add_member(const JoinRequest& request, const std::string& member_id, int64_t now,
                       JoinCallback done, Completions& out) {
  Member member;
  member.id = member_id;
  member.instance_id = request.group_instance_id;
  member.client_id = request.client_id;
  member.client_host = request.client_host;
  member.session_timeout_ms = request.session_timeout_ms;
  member.rebalance_timeout_ms = request.rebalance_timeout_ms;
  member.protocol_type = request.protocol_type;
  member.protocols = request.protocols;
  member.awaiting_join = std::move(done);
  member.heartbeat_deadline_ms = now + request.session_timeout_ms;
  if (members_.empty()) protocol_type_ = request.protocol_type;
  if (request.group_instance_id) static_members_[*request.group_instance_id] = member_id;
  members_[member_id] = std::move(member);
  if (leader_.empty()) leader_ = member_id;
  if (state_ == GroupState::kPreparingRebalance) {
    maybe_complete_join(now, out);
  } else {
    prepare_rebalance(now, out);
  }
}

void Group::prepare_rebalance(int64_t now, Completions& out) {
  // Assignments of the generation being replaced are void.
  if (state_ == GroupState::kCompletingRebalance)
    fail_waiting_syncs(ErrorCode::kRebalanceInProgress, out);
  int32_t timeout = 0;
  for (const auto& [id, member] : members_)
    timeout = std::max(timeout, member.rebalance_timeout_ms);
  initial_delay_until_ms_ = state_ == GroupState::kEmpty ? now + initial_rebalance_delay_ms_ : 0;
  if (state_ != GroupState::kPreparingRebalance) rebalance_started_ms_ = now;
  state_ = GroupState::kPreparingRebalance;
  rebalance_deadline_ms_ = now + std::max<int64_t>(timeout, initial_rebalance_delay_ms_);
  maybe_complete_join(now, out);
}

void Group::fail_waiting_syncs(ErrorCode error, Completions& out) {
  for (auto& [id, member] : members_) {
    if (!member.awaiting_sync) continue;
    SyncResult result;
    result.error = error;
    out.push_back([cb = member.awaiting_sync, result] { cb(result); });
    member.awaiting_sync = nullptr;
  }
}

void Group::maybe_complete_join(int64_t now, Completions& out) {
  if (state_ != GroupState::kPreparingRebalance) return;
  if (now < initial_delay_until_ms_) return;
  bool all_joined =
      pending_members_.empty() && std::all_of(members_.begin(), members_.end(), [](const auto& e) {
        return static_cast<bool>(e.second.awaiting_join);
      });
  if (all_joined || now >= rebalance_deadline_ms_) complete_join(now, out);
}

void Group::complete_join(int64_t now, Completions& out) {
  revision_ = next_group_revision();
  // Members that did not rejoin in time are out (static members too: their instance is freed).
  std::vector<std::string> gone;
  for (const auto& [id, member] : members_) {
    if (!member.awaiting_join) gone.push_back(id);
  }
  for (const auto& id : gone) {
    if (members_[id].instance_id) static_members_.erase(*members_[id].instance_id);
    members_.erase(id);
  }
  pending_members_.clear();
  if (!members_.count(leader_)) leader_ = members_.empty() ? "" : members_.begin()->first;
  generation_++;
  if (members_.empty()) {
    state_ = GroupState::kEmpty;
    empty_since_ms_ = now;
    protocol_name_.reset();
    return;
  }
  protocol_name_ = select_protocol();
  state_ = GroupState::kCompletingRebalance;
  for (auto& [id, member] : members_) {
    JoinResult result = join_result_for(member);
    out.push_back([cb = member.awaiting_join, result] { cb(result); });
    member.awaiting_join = nullptr;
    member.heartbeat_deadline_ms = now + member.session_timeout_ms;
  }
}

std::optional<std::string> Group::select_protocol() const {
  // Candidates every member supports; each member votes for its most preferred candidate.
  std::map<std::string, int> votes;
  const Member& any = members_.begin()->second;
  for (const auto& protocol : any.protocols) {
    const std::string& name = protocol.first;  // not a structured binding: captured below
    bool everyone = std::all_of(members_.begin(), members_.end(), [&](const auto& e) {
      return e.second.metadata_for(name) != nullptr;
    });
    if (everyone) votes[name] = 0;
  }
  for (const auto& [id, member] : members_) {
    for (const auto& [name, metadata] : member.protocols) {
      if (votes.count(name)) {
        votes[name]++;
        break;
      }
    }
  }
  std::optional<std::string> best;
  int best_votes = -1;
  for (const auto& [name, metadata] : any.protocols) {
    if (votes.count(name) && votes[name] > best_votes) {
      best = name;
      best_votes = votes[name];
    }
  }
  return best;
}

JoinResult Group::join_result_for(const Member& member) const {
  JoinResult result;
  result.generation = generation_;
  result.protocol_type = protocol_type_;
  result.protocol_name = protocol_name_;
  result.leader = leader_;
  result.member_id = member.id;
  if (member.id == leader_ && protocol_name_) {
    for (const auto& [id, m] : members_) {
      const Bytes* metadata = m.metadata_for(*protocol_name_);
      result.members.push_back({id, m.instance_id, metadata ? *metadata : Bytes{}});
    }
  }
  return result;
}

void Group::sync(const SyncRequest& request, int64_t now, SyncCallback done, Completions& out,
                 const StoreGroup& store) {
  revision_ = next_group_revision();
  auto reply = [&](ErrorCode error, Bytes assignment = {}) {
    SyncResult result;
    result.error = error;
    result.protocol_type = protocol_type_;
    result.protocol_name = protocol_name_;
    result.assignment = std::move(assignment);
    out.push_back([done, result] { done(result); });
  };
  if (auto error = check_static(request.member_id, request.group_instance_id);
      error != ErrorCode::kNone) {
    return reply(error);
  }
  auto it = members_.find(request.member_id);
  if (it == members_.end()) return reply(ErrorCode::kUnknownMemberId);
  if (request.generation != generation_) return reply(ErrorCode::kIllegalGeneration);
  if ((request.protocol_type && *request.protocol_type != protocol_type_) ||
      (request.protocol_name && *request.protocol_name != protocol_name_)) {
    return reply(ErrorCode::kInconsistentGroupProtocol);
  }
  Member& member = it->second;
  member.heartbeat_deadline_ms = now + member.session_timeout_ms;
  switch (state_) {
    case GroupState::kPreparingRebalance:
      return reply(ErrorCode::kRebalanceInProgress);
    case GroupState::kStable:
      return reply(ErrorCode::kNone, member.assignment);
    case GroupState::kCompletingRebalance:
      member.awaiting_sync = std::move(done);
      if (request.member_id != leader_) return;
      for (auto& [id, m] : members_) m.assignment.clear();
      for (const auto& [id, assignment] : request.assignments) {
        if (auto target = members_.find(id); target != members_.end())
          target->second.assignment = assignment;
      }
      state_ = GroupState::kStable;
      if (store && !store(*snapshot())) {
        state_ = GroupState::kCompletingRebalance;
        for (auto& [id, m] : members_) m.assignment.clear();
        fail_waiting_syncs(ErrorCode::kCoordinatorNotAvailable, out);
        prepare_rebalance(now, out);
        return;
      }
      spdlog::info("group {} generation {} stable: {} members, rebalance took {} ms", id_,
                   generation_, members_.size(), now - rebalance_started_ms_);
      for (auto& [id, m] : members_) {
        if (!m.awaiting_sync) continue;
        SyncResult result;
        result.protocol_type = protocol_type_;
        result.protocol_name = protocol_name_;
        result.assignment = m.assignment;
        out.push_back([cb = m.awaiting_sync, result] { cb(result); });
        m.awaiting_sync = nullptr;
      }
      return;
    default:
      return reply(ErrorCode::kUnknownMemberId);
  }
}

ErrorCode Group::heartbeat(const std::string& member_id,
                           const std::optional<std::string>& instance_id, int32_t generation,
                           int64_t now) {
  if (auto error = check_static(member_id, instance_id); error != ErrorCode::kNone) return error;
  auto it = members_.find(member_id);
  if (it == members_.end()) return ErrorCode::kUnknownMemberId;
  if (generation != generation_) return ErrorCode::kIllegalGeneration;
  it->second.heartbeat_deadline_ms = now + it->second.session_timeout_ms;
  if (state_ == GroupState::kPreparingRebalance) return ErrorCode::kRebalanceInProgress;
  return ErrorCode::kNone;
}

ErrorCode Group::leave(const std::string& member_id, const std::optional<std::string>& instance_id,
                       int64_t now, Completions& out) {
  std::string id = member_id;
  if (instance_id) {
    auto known = static_members_.find(*instance_id);
    if (known == static_members_.end()) return ErrorCode::kUnknownMemberId;
    if (!id.empty() && known->second != id) return ErrorCode::kFencedInstanceId;
    id = known->second;
  }
  if (pending_members_.erase(id)) {
    maybe_complete_join(now, out);
    return ErrorCode::kNone;
  }
  if (!members_.count(id)) return ErrorCode::kUnknownMemberId;
  remove_member(id, now, out);
  return ErrorCode::kNone;
}

void Group::remove_member(const std::string& member_id, int64_t now, Completions& out) {
  revision_ = next_group_revision();
  auto it = members_.find(member_id);
  if (it == members_.end()) return;
  Member& member = it->second;
  if (member.awaiting_join) {
    JoinResult gone;
    gone.error = ErrorCode::kUnknownMemberId;
    out.push_back([cb = member.awaiting_join, gone] { cb(gone); });
  }
  if (member.awaiting_sync) {
    SyncResult gone;
    gone.error = ErrorCode::kUnknownMemberId;
    out.push_back([cb = member.awaiting_sync, gone] { cb(gone); });
  }
  if (member.instance_id) static_members_.erase(*member.instance_id);
  members_.erase(it);
  if (leader_ == member_id) leader_ = members_.empty() ? "" : members_.begin()->first;
  switch (state_) {
    case GroupState::kStable:
    case GroupState::kCompletingRebalance:
      if (members_.empty()) {
        generation_++;
        state_ = GroupState::kEmpty;
        empty_since_ms_ = now;
        protocol_name_.reset();
      } else {
        prepare_rebalance(now, out);
      }
      break;
    case GroupState::kPreparingRebalance:
      maybe_complete_join(now, out);
      break;
    default:
      break;
  }
}

ErrorCode Group::check_commit(const std::string& member_id,
                              const std::optional<std::string>& instance_id, int32_t generation,
                              CommitKind kind) const {
  // Without a generation the commit is an admin client's or a consumer's that manages its own
  // partitions: taken while the group is empty, whatever member id it names (as Kafka).
  if (generation < 0 && state_ == GroupState::kEmpty) return ErrorCode::kNone;
  if (generation < 0 && member_id.empty() && !instance_id) {
    bool open = kind == CommitKind::kTransactional || members_.empty();
    return open ? ErrorCode::kNone : ErrorCode::kUnknownMemberId;
  }
  if (auto error = check_static(member_id, instance_id); error != ErrorCode::kNone) return error;
  if (!members_.count(member_id)) return ErrorCode::kUnknownMemberId;
  if (generation != generation_) return ErrorCode::kIllegalGeneration;
  // A member of this generation that has not had its assignment yet (Kafka's order and code).
  if (kind == CommitKind::kPlain && state_ == GroupState::kCompletingRebalance) {
    return ErrorCode::kRebalanceInProgress;
  }
  return ErrorCode::kNone;
}

void Group::tick(int64_t now, Completions& out) {
  for (auto it = pending_members_.begin(); it != pending_members_.end();) {
    it = it->second <= now ? pending_members_.erase(it) : std::next(it);
  }
  std::vector<std::string> expired;
  for (const auto& [id, member] : members_) {
    bool waiting = member.awaiting_join || member.awaiting_sync;
    if (!waiting && member.heartbeat_deadline_ms <= now) expired.push_back(id);
  }
  for (const auto& id : expired) remove_member(id, now, out);
  maybe_complete_join(now, out);
}

void Group::mark_dead(Completions& out) {
  std::vector<std::string> ids;
  for (const auto& [id, member] : members_) ids.push_back(id);
  for (const auto& id : ids) remove_member(id, 0, out);
  state_ = GroupState::kDead;
}

bool Group::subscribes_to(const std::string& topic) const {
  if (protocol_type_ != "consumer" || !protocol_name_) return false;
  for (const auto& [id, member] : members_) {
    const Bytes* metadata = member.metadata_for(*protocol_name_);
    if (!metadata || metadata->size() < 2) continue;
    // ConsumerProtocolSubscription: version int16, topics [string], ... (classic encodings).
    Bytes copy = *metadata;
    protocol::Reader r(copy);
    try {
      r.i16();
      int32_t n = r.array_length(false);
      for (int32_t i = 0; i < n; ++i) {
        if (r.string(false) == topic) return true;
      }
    } catch (const protocol::DecodeError&) {
    }
  }
  return false;
}

}  // namespace oxbow::group
