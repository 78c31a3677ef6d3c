#include "group/consumer_group.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/random_id.h"
#include "group/group.h"

namespace oxbow::group {

namespace {

bool owns_any(const std::optional<OwnedPartitions>& owned, const Assignment& partitions) {
  if (!owned) return true;  // not reported: assume it still holds them
  for (const auto& [topic, list] : *owned) {
    auto it = partitions.find(topic);
    if (it == partitions.end()) continue;
    for (int32_t p : list) {
      if (it->second.contains(p)) return true;
    }
  }
  return false;
}

bool is_subset(const std::optional<OwnedPartitions>& owned, const Assignment& of) {
  if (!owned) return false;
  for (const auto& [topic, list] : *owned) {
    auto it = of.find(topic);
    if (it == of.end() && !list.empty()) return false;
    for (int32_t p : list) {
      if (!it->second.contains(p)) return false;
    }
  }
  return true;
}

ErrorCode check_epoch(const ConsumerMember& member, int32_t received,
                      const std::optional<OwnedPartitions>& owned, std::string& message) {
  // A member one epoch behind that owns a subset of its assignment lost the response that moved
  // it on: it is let through, as in Kafka.
  bool behind_but_consistent = received < member.epoch && received == member.previous_epoch &&
                               is_subset(owned, member.assigned);
  if (received == member.epoch || behind_but_consistent) return ErrorCode::kNone;
  message = fmt::format(
      "The consumer group member has a {} member epoch ({}) than the one known by the group "
      "coordinator ({}). The member must abandon all its partitions and rejoin.",
      received > member.epoch ? "greater" : "smaller", received, member.epoch);
  return ErrorCode::kFencedMemberEpoch;
}

// The member's fields a snapshot holds (all but its deadlines).
bool same_snapshot_fields(const ConsumerMember& a, const ConsumerMember& b) {
  return a.instance_id == b.instance_id && a.rack_id == b.rack_id && a.client_id == b.client_id &&
         a.client_host == b.client_host && a.epoch == b.epoch &&
         a.previous_epoch == b.previous_epoch && a.state == b.state &&
         a.rebalance_timeout_ms == b.rebalance_timeout_ms &&
         a.subscribed_topics == b.subscribed_topics && a.subscribed_regex == b.subscribed_regex &&
         a.server_assignor == b.server_assignor && a.assigned == b.assigned &&
         a.pending_revocation == b.pending_revocation;
}

// FNV-1a over the subscribed topics in name order: any change of a name, id or partition count
// changes it.
uint64_t metadata_hash(const std::map<std::string, TopicShape>& topics) {
  uint64_t hash = 14695981039346656037ull;
  auto mix = [&](const void* data, size_t size) {
    for (size_t i = 0; i < size; ++i) {
      hash ^= static_cast<const uint8_t*>(data)[i];
      hash *= 1099511628211ull;
    }
  };
  for (const auto& [name, shape] : topics) {
    mix(name.data(), name.size() + 1);  // with its terminator, so names cannot run together
    mix(shape.id.data(), shape.id.size());
    mix(&shape.partitions, sizeof(shape.partitions));
  }
  return hash;
}

}  // namespace

ConsumerGroup ConsumerGroup::restore(std::string id, const ConsumerGroupSnapshot& snapshot,
                                     const ConsumerGroupOptions& options, int64_t now) {
  ConsumerGroup group(std::move(id));
  group.group_epoch_ = snapshot.group_epoch;
  group.assignment_epoch_ = snapshot.assignment_epoch;
  group.restored_metadata_hash_ = snapshot.metadata_hash;
  group.resolved_regexes_ = snapshot.regexes;
  group.last_regex_refresh_ms_ = now;
  group.empty_since_ms_ = now;
  for (ConsumerMember member : snapshot.members) {
    member.session_deadline_ms = now + options.session_timeout_ms;
    member.revocation_deadline_ms =
        member.state == MemberState::kUnrevokedPartitions ? now + member.rebalance_timeout_ms : 0;
    group.store(std::move(member));
  }
  for (const auto& [member_id, target] : snapshot.targets) {
    if (group.members_.contains(member_id)) group.target_[member_id] = target;
  }
  return group;
}

ConsumerGroupSnapshot ConsumerGroup::snapshot(bool with_members) const {
  ConsumerGroupSnapshot out;
  out.group_epoch = group_epoch_;
  out.assignment_epoch = assignment_epoch_;
  out.metadata_hash = restored_metadata_hash_.value_or(metadata_hash(subscribed_));
  out.regexes = resolved_regexes_;
  if (!with_members) return out;
  for (const auto& [id, member] : members_) {
    out.members.push_back(member);
    out.members.back().session_deadline_ms = 0;
    out.members.back().revocation_deadline_ms = 0;
  }
  out.targets = target_;
  return out;
}

const Assignment* ConsumerGroup::find_target(const std::string& member_id) const {
  auto it = target_.find(member_id);
  return it == target_.end() ? nullptr : &it->second;
}

const Assignment& ConsumerGroup::target_of(const std::string& member_id) const {
  static const Assignment kNone;
  auto it = target_.find(member_id);
  return it == target_.end() ? kNone : it->second;
}

const char* ConsumerGroup::state_name() const {
  if (members_.empty()) return "Empty";
  if (group_epoch_ > assignment_epoch_) return "Assigning";
  for (const auto& [id, m] : members_) {
    if (m.epoch != assignment_epoch_ || m.state != MemberState::kStable) return "Reconciling";
  }
  return "Stable";
}

std::string ConsumerGroup::assignor(const ConsumerGroupOptions& options) const {
  std::map<std::string, int> votes;
  for (const auto& [id, m] : members_) {
    if (m.server_assignor) ++votes[*m.server_assignor];
  }
  auto best = std::max_element(votes.begin(), votes.end(),
                               [](const auto& a, const auto& b) { return a.second < b.second; });
  return best == votes.end() ? options.default_assignor() : best->first;
}

std::optional<std::string> ConsumerGroup::topic_name(const Uuid& id) const {
  for (const auto& [name, shape] : subscribed_) {
    if (shape.id == id) return name;
  }
  return std::nullopt;
}

std::optional<ErrorCode> ConsumerGroup::static_member(const ConsumerHeartbeat& request,
                                                      const std::string& member_id,
                                                      ConsumerMember& out, std::string& message) {
  if (!request.instance_id) return std::nullopt;
  auto it = static_members_.find(*request.instance_id);
  if (it == static_members_.end()) return std::nullopt;
  const ConsumerMember& previous = members_.at(it->second);
  bool joining = request.member_epoch == 0;
  if (!joining && previous.id != member_id) {
    message = fmt::format("Static member {} with instance id {} was fenced by member {}.",
                          member_id, *request.instance_id, previous.id);
    return ErrorCode::kFencedInstanceId;
  }
  if (!joining) return std::nullopt;
  if (previous.epoch != kLeaveGroupStaticEpoch) {
    if (previous.id == member_id) return std::nullopt;
    message = fmt::format(
        "Static member {} with instance id {} cannot join the group because the instance id is "
        "owned by member {}.",
        member_id, *request.instance_id, previous.id);
    return ErrorCode::kUnreleasedInstanceId;
  }
  // The instance is back (under a new member id, or its old one): it takes over its partitions
  // and target, without a rebalance.
  std::string previous_id = previous.id;
  out = previous;
  out.id = member_id;
  out.epoch = 0;
  out.previous_epoch = 0;
  auto target = target_.extract(previous_id);
  remove(previous_id);
  if (!target.empty()) {
    target.key() = member_id;
    target_.insert(std::move(target));
  }
  return ErrorCode::kNone;
}

ErrorCode ConsumerGroup::find_member(const ConsumerHeartbeat& request,
                                     const ConsumerGroupOptions& options, ConsumerMember& out,
                                     bool& fresh, std::string& message) {
  fresh = false;
  std::string member_id = request.member_id.empty() ? random_base64_id() : request.member_id;
  bool joining = request.member_epoch == 0;
  if (static_cast<int64_t>(members_.size()) >= options.max_size && !members_.contains(member_id)) {
    message = fmt::format("The consumer group has reached its maximum capacity of {} members.",
                          options.max_size);
    return ErrorCode::kGroupMaxSizeReached;
  }
  if (auto handled = static_member(request, member_id, out, message)) return *handled;
  auto it = members_.find(member_id);
  if (it == members_.end()) {
    if (!joining) {
      message = request.instance_id
                    ? fmt::format("Instance id {} is unknown.", *request.instance_id)
                    : fmt::format("Member {} is not a member of group {}.", member_id, id_);
      return ErrorCode::kUnknownMemberId;
    }
    out = ConsumerMember{};
    out.id = member_id;
    fresh = true;
    return ErrorCode::kNone;
  }
  out = it->second;
  if (joining) {
    // A member rejoining under its id has given up its partitions (it sends none): it starts
    // over, rather than being fenced again for its epoch.
    out.epoch = 0;
    out.previous_epoch = -1;
    out.state = MemberState::kStable;
    out.assigned.clear();
    out.pending_revocation.clear();
    out.revocation_deadline_ms = 0;
    return ErrorCode::kNone;
  }
  return check_epoch(out, request.member_epoch, request.owned, message);
}

ConsumerHeartbeatResult ConsumerGroup::leave(const ConsumerHeartbeat& request, int64_t now) {
  ConsumerHeartbeatResult result;
  result.member_id = request.member_id;
  result.member_epoch = request.member_epoch;
  std::string member_id = request.member_id;
  if (request.instance_id) {
    auto it = static_members_.find(*request.instance_id);
    if (it == static_members_.end()) {
      result.error = ErrorCode::kUnknownMemberId;
      result.message = fmt::format("Instance id {} is unknown.", *request.instance_id);
      return result;
    }
    if (it->second != member_id) {
      result.error = ErrorCode::kFencedInstanceId;
      result.message = fmt::format("Static member {} with instance id {} was fenced by member {}.",
                                   member_id, *request.instance_id, it->second);
      return result;
    }
  }
  auto it = members_.find(member_id);
  if (it == members_.end()) {
    result.error = ErrorCode::kUnknownMemberId;
    result.message = fmt::format("Member {} is not a member of group {}.", member_id, id_);
    return result;
  }
  if (request.member_epoch == kLeaveGroupStaticEpoch) {
    // A static member leaving for a while keeps its partitions until its session ends.
    ConsumerMember member = it->second;
    member.epoch = kLeaveGroupStaticEpoch;
    member.pending_revocation.clear();
    member.revocation_deadline_ms = 0;
    store(std::move(member));
    return result;
  }
  remove(member_id);
  bump_group_epoch();
  if (members_.empty()) empty_since_ms_ = now;
  return result;
}

std::set<std::string> ConsumerGroup::effective_topics(const ConsumerMember& member) const {
  std::set<std::string> out(member.subscribed_topics.begin(), member.subscribed_topics.end());
  if (member.subscribed_regex) {
    auto it = resolved_regexes_.find(*member.subscribed_regex);
    if (it != resolved_regexes_.end())
      out.insert(it->second.topics.begin(), it->second.topics.end());
  }
  return out;
}

std::map<std::string, TopicShape> ConsumerGroup::subscription_metadata(
    const TopicCatalog& topics) const {
  std::set<std::string> names;
  for (const auto& [id, m] : members_) names.merge(effective_topics(m));
  std::map<std::string, TopicShape> out;
  for (const auto& name : names) {
    if (auto shape = topics.find(name)) out[name] = *shape;
  }
  return out;
}

void ConsumerGroup::refresh_subscription(const TopicCatalog& topics) {
  auto metadata = subscription_metadata(topics);
  bool changed = restored_metadata_hash_ ? metadata_hash(metadata) != *restored_metadata_hash_
                                         : metadata != subscribed_;
  restored_metadata_hash_.reset();
  subscribed_ = std::move(metadata);
  if (changed) bump_group_epoch();
}

void ConsumerGroup::bump_group_epoch() {
  ++group_epoch_;
  changed_own_part();
}

void ConsumerGroup::changed_own_part() {
  own_revision_ = revision_ = next_group_revision();
}

void ConsumerGroup::changed_member(const std::string& member_id) {
  member_revisions_[member_id] = revision_ = next_group_revision();
}

void ConsumerGroup::refresh_regexes(int64_t now, const TopicCatalog& topics) {
  std::map<std::string, ResolvedRegex> resolved;
  for (const auto& [id, m] : members_) {
    if (!m.subscribed_regex || resolved.contains(*m.subscribed_regex)) continue;
    auto names = topics.matching(*m.subscribed_regex);
    resolved[*m.subscribed_regex] = {std::set<std::string>(names.begin(), names.end()), now};
  }
  regex_refresh_due_ = false;
  last_regex_refresh_ms_ = now;
  auto same_topics = [](const auto& a, const auto& b) {
    return a.first == b.first && a.second.topics == b.second.topics;
  };
  if (std::equal(resolved.begin(), resolved.end(), resolved_regexes_.begin(),
                 resolved_regexes_.end(), same_topics))
    return;
  resolved_regexes_ = std::move(resolved);
  changed_own_part();
  refresh_subscription(topics);
}

void ConsumerGroup::update_target(const ConsumerGroupOptions& options) {
  std::vector<AssignorMember> inputs;
  for (const auto& [id, m] : members_) {
    AssignorMember in{id, {}, target_of(id)};
    for (const auto& name : effective_topics(m)) {
      if (subscribed_.contains(name)) in.topics.insert(name);
    }
    inputs.push_back(std::move(in));
  }
  auto before = std::move(target_);
  target_ = assign(assignor(options), inputs, subscribed_);
  for (const auto& [id, member] : members_) {
    const Assignment* was = before.contains(id) ? &before.at(id) : nullptr;
    const Assignment* is = find_target(id);
    if (!was != !is || (was && *was != *is)) changed_member(id);
  }
  assignment_epoch_ = group_epoch_;
  changed_own_part();
}

bool ConsumerGroup::held_by_other(const Uuid& topic, int32_t partition,
                                  const std::string& member_id) const {
  auto it = owners_.find({topic, partition});
  return it != owners_.end() && it->second != member_id;
}

void ConsumerGroup::next_assignment(ConsumerMember& member, int32_t epoch,
                                    const std::optional<OwnedPartitions>& owned, int64_t now) {
  const Assignment& target = target_of(member.id);
  Assignment keep, revoke, add;
  bool unreleased = false;
  std::set<Uuid> topics;
  for (const auto& [t, _] : target) topics.insert(t);
  for (const auto& [t, _] : member.assigned) topics.insert(t);
  for (const auto& topic : topics) {
    auto target_it = target.find(topic);
    auto current_it = member.assigned.find(topic);
    static const std::set<int32_t> kEmpty;
    const auto& wanted = target_it == target.end() ? kEmpty : target_it->second;
    const auto& current = current_it == member.assigned.end() ? kEmpty : current_it->second;
    for (int32_t p : current) (wanted.contains(p) ? keep : revoke)[topic].insert(p);
    for (int32_t p : wanted) {
      if (current.contains(p)) continue;
      if (held_by_other(topic, p, member.id)) {
        unreleased = true;
      } else {
        add[topic].insert(p);
      }
    }
  }
  // As Kafka's member builder: every step records the epoch it leaves as the previous one.
  member.previous_epoch = member.epoch;
  if (!revoke.empty() && owns_any(owned, revoke)) {
    member.state = MemberState::kUnrevokedPartitions;
    member.assigned = std::move(keep);
    member.pending_revocation = std::move(revoke);
    if (member.revocation_deadline_ms == 0)
      member.revocation_deadline_ms = now + member.rebalance_timeout_ms;
    member.epoch = epoch;
    return;
  }
  for (auto& [topic, partitions] : add) keep[topic].merge(partitions);
  member.assigned = std::move(keep);
  member.pending_revocation.clear();
  member.revocation_deadline_ms = 0;
  member.state = unreleased ? MemberState::kUnreleasedPartitions : MemberState::kStable;
  member.epoch = assignment_epoch_;
}

void ConsumerGroup::reconcile(ConsumerMember& member, const std::optional<OwnedPartitions>& owned,
                              int64_t now) {
  switch (member.state) {
    case MemberState::kStable:
      if (member.epoch != assignment_epoch_) next_assignment(member, member.epoch, owned, now);
      break;
    case MemberState::kUnrevokedPartitions:
      if (!owns_any(owned, member.pending_revocation))
        next_assignment(member, member.epoch + 1, owned, now);
      break;
    case MemberState::kUnreleasedPartitions:
      next_assignment(member, member.epoch, owned, now);
      break;
  }
}

void ConsumerGroup::store(ConsumerMember member) {
  auto before = members_.find(member.id);
  if (before == members_.end() || !same_snapshot_fields(before->second, member))
    changed_member(member.id);
  std::erase_if(owners_, [&](const auto& entry) { return entry.second == member.id; });
  for (const auto* partitions : {&member.assigned, &member.pending_revocation}) {
    for (const auto& [topic, list] : *partitions) {
      for (int32_t p : list) owners_[{topic, p}] = member.id;
    }
  }
  if (member.instance_id) static_members_[*member.instance_id] = member.id;
  std::string id = member.id;
  members_.insert_or_assign(id, std::move(member));
}

void ConsumerGroup::remove(std::string member_id) {
  auto it = members_.find(member_id);
  if (it == members_.end()) return;
  std::erase_if(owners_, [&](const auto& entry) { return entry.second == member_id; });
  if (it->second.instance_id) {
    auto s = static_members_.find(*it->second.instance_id);
    if (s != static_members_.end() && s->second == member_id) static_members_.erase(s);
  }
  members_.erase(it);
  target_.erase(member_id);
  member_revisions_.erase(member_id);
  revision_ = next_group_revision();
  forget_unused_regexes();
}

void ConsumerGroup::forget_unused_regexes() {
  auto forgotten = std::erase_if(resolved_regexes_, [&](const auto& entry) {
    return std::none_of(members_.begin(), members_.end(),
                        [&](const auto& m) { return m.second.subscribed_regex == entry.first; });
  });
  if (forgotten > 0) changed_own_part();
}

bool ConsumerGroup::apply(const ConsumerHeartbeat& request, ConsumerMember& member) {
  bool changed = false;
  if (request.instance_id) member.instance_id = request.instance_id;
  if (request.rack_id) member.rack_id = request.rack_id;
  if (request.rebalance_timeout_ms != -1)
    member.rebalance_timeout_ms = request.rebalance_timeout_ms;
  if (request.subscribed_topic_names) {
    auto names = *request.subscribed_topic_names;
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    changed |= member.subscribed_topics != names;
    member.subscribed_topics = std::move(names);
  }
  if (request.subscribed_topic_regex) {
    std::optional<std::string> regex;
    if (!request.subscribed_topic_regex->empty()) regex = request.subscribed_topic_regex;
    if (member.subscribed_regex != regex) {
      // A regex the group has not resolved yet is resolved apart from this heartbeat.
      if (regex && !resolved_regexes_.contains(*regex)) regex_refresh_due_ = true;
      member.subscribed_regex = std::move(regex);
      changed = true;
    }
  }
  if (request.server_assignor && member.server_assignor != request.server_assignor) {
    member.server_assignor = request.server_assignor;
    changed = true;
  }
  member.client_id = request.client_id;
  member.client_host = request.client_host;
  return changed;
}

ConsumerHeartbeatResult ConsumerGroup::heartbeat(const ConsumerHeartbeat& request,
                                                 const TopicCatalog& topics,
                                                 const ConsumerGroupOptions& options, int64_t now) {
  if (request.member_epoch == kLeaveGroupEpoch || request.member_epoch == kLeaveGroupStaticEpoch)
    return leave(request, now);
  ConsumerHeartbeatResult result;
  ConsumerMember member;
  bool fresh = false;
  result.error = find_member(request, options, member, fresh, result.message);
  if (result.error != ErrorCode::kNone) return result;
  Assignment assigned_before = member.assigned;
  bool subscription_changed = apply(request, member) || fresh;
  member.session_deadline_ms = now + options.session_timeout_ms;
  std::string member_id = member.id;
  store(std::move(member));
  forget_unused_regexes();

  if (subscription_changed) {
    bump_group_epoch();
    subscribed_ = subscription_metadata(topics);
    restored_metadata_hash_.reset();
  } else {
    refresh_subscription(topics);  // partitions added, topics created or deleted
  }
  if (group_epoch_ > assignment_epoch_) update_target(options);

  ConsumerMember reconciled = members_.at(member_id);
  reconcile(reconciled, request.owned, now);
  store(reconciled);

  result.member_id = member_id;
  result.member_epoch = reconciled.epoch;
  result.heartbeat_interval_ms = options.heartbeat_interval_ms;
  bool full_request =
      request.member_epoch == 0 ||
      (request.rebalance_timeout_ms != -1 && request.subscribed_topic_names && request.owned);
  if (full_request || reconciled.assigned != assigned_before)
    result.assignment = reconciled.assigned;
  return result;
}

void ConsumerGroup::tick(int64_t now, const TopicCatalog* topics) {
  constexpr int64_t kRegexRefreshIntervalMs = 10'000;  // Kafka's REGEX_BATCH_REFRESH_INTERVAL_MS
  bool has_regex = std::any_of(members_.begin(), members_.end(),
                               [](const auto& m) { return m.second.subscribed_regex.has_value(); });
  if (topics && (regex_refresh_due_ ||
                 (has_regex && now - last_regex_refresh_ms_ >= kRegexRefreshIntervalMs))) {
    refresh_regexes(now, *topics);
  }
  // A restored group learns whether its topics changed while the broker was down.
  if (topics && restored_metadata_hash_) refresh_subscription(*topics);
  std::vector<std::string> expired;
  for (const auto& [id, m] : members_) {
    bool session_over = m.session_deadline_ms <= now;
    bool revocation_over = m.revocation_deadline_ms != 0 && m.revocation_deadline_ms <= now;
    if (session_over || revocation_over) expired.push_back(id);
  }
  for (const auto& id : expired) remove(id);
  if (expired.empty()) return;
  bump_group_epoch();
  if (members_.empty()) empty_since_ms_ = now;
}

ErrorCode ConsumerGroup::check_commit(const std::string& member_id, int32_t member_epoch,
                                      bool transactional, int16_t api_version) const {
  // Without an epoch the commit is an admin client's or a simple consumer's: only while empty.
  if (member_epoch < 0 && members_.empty()) return ErrorCode::kNone;
  auto it = members_.find(member_id);
  if (it == members_.end()) return ErrorCode::kUnknownMemberId;
  if (!transactional && api_version < 9) return ErrorCode::kUnsupportedVersion;
  if (member_epoch != it->second.epoch)
    return transactional ? ErrorCode::kIllegalGeneration : ErrorCode::kStaleMemberEpoch;
  return ErrorCode::kNone;
}

ErrorCode ConsumerGroup::check_fetch(const std::optional<std::string>& member_id,
                                     int32_t member_epoch) const {
  if (!member_id && member_epoch < 0) return ErrorCode::kNone;
  auto it = members_.find(member_id.value_or(""));
  if (it == members_.end()) return ErrorCode::kUnknownMemberId;
  return member_epoch == it->second.epoch ? ErrorCode::kNone : ErrorCode::kStaleMemberEpoch;
}

bool ConsumerGroup::subscribes_to(const std::string& topic) const {
  return subscribed_.contains(topic);
}

}  // namespace oxbow::group
