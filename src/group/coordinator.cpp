#include "group/coordinator.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "common/clock.h"

namespace oxbow::group {

GroupCoordinator::GroupCoordinator(CoordinatorOptions options, KeyedLog& log)
    : options_(options), log_(log) {}

GroupCoordinator::~GroupCoordinator() {
  stop();
}

void GroupCoordinator::run(Completions& completions) {
  for (auto& c : completions) c();
  completions.clear();
}

void GroupCoordinator::start() {
  {
    std::lock_guard lock(mutex_);
    log_.replay([this](std::string_view key, std::optional<std::string_view> value,
                       int64_t producer_id) { replay_record(key, value, producer_id); },
                [this](int64_t producer_id, bool commit) { settle_locked(producer_id, commit); });
    restore_groups_locked(now_ms());
    for (const auto& [group_id, offsets] : offsets_) {
      if (consumer_groups_.contains(group_id) || groups_.contains(group_id)) continue;
      auto group = std::make_unique<Group>(group_id, options_.initial_rebalance_delay_ms);
      groups_[group_id] = std::move(group);
    }
    last_expiry_ms_ = now_ms();
  }
  timer_ = std::thread([this] {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      stop_cv_.wait_for(lock, std::chrono::milliseconds(50));
      if (stopping_) break;
      lock.unlock();
      tick(now_ms());
      lock.lock();
    }
  });
}

void GroupCoordinator::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (timer_.joinable()) timer_.join();
}

Group& GroupCoordinator::group_for_join(const std::string& group_id) {
  auto& group = groups_[group_id];
  if (!group || group->state() == GroupState::kDead) {
    group = std::make_unique<Group>(group_id, options_.initial_rebalance_delay_ms);
  }
  return *group;
}

void GroupCoordinator::join(JoinRequest request, JoinCallback done) {
  auto fail = [&](ErrorCode error) {
    JoinResult result;
    result.error = error;
    result.member_id = request.member_id;
    done(result);
  };
  if (request.group_id.empty()) return fail(ErrorCode::kInvalidGroupId);
  if (request.session_timeout_ms < options_.min_session_timeout_ms ||
      request.session_timeout_ms > options_.max_session_timeout_ms) {
    return fail(ErrorCode::kInvalidSessionTimeout);
  }
  if (request.rebalance_timeout_ms < 0) request.rebalance_timeout_ms = request.session_timeout_ms;
  Completions completions;
  bool unknown_member = false, other_protocol = false;
  {
    std::lock_guard lock(mutex_);
    // An empty consumer group turns classic on a classic join; a mixed group is not supported.
    if (auto consumer = consumer_groups_.find(request.group_id);
        consumer != consumer_groups_.end()) {
      other_protocol = !consumer->second->empty();
      if (!other_protocol) {
        consumer_groups_.erase(consumer);
        persist_consumer_group_locked(request.group_id);  // else the timer's pass
      }
    }
    auto it = groups_.find(request.group_id);
    unknown_member = !request.member_id.empty() &&
                     (it == groups_.end() || it->second->state() == GroupState::kDead);
    if (!unknown_member && !other_protocol) {
      group_for_join(request.group_id).join(request, now_ms(), std::move(done), completions);
      persist_classic_group_locked(request.group_id);  // e.g. a static member's new id
    }
  }
  if (other_protocol) return fail(ErrorCode::kInconsistentGroupProtocol);
  if (unknown_member) return fail(ErrorCode::kUnknownMemberId);
  run(completions);
}

void GroupCoordinator::sync(SyncRequest request, SyncCallback done) {
  Completions completions;
  {
    std::lock_guard lock(mutex_);
    auto it = groups_.find(request.group_id);
    if (request.group_id.empty()) {
      SyncResult result;
      result.error = ErrorCode::kInvalidGroupId;
      completions.push_back([done, result] { done(result); });
    } else if (it == groups_.end()) {
      SyncResult result;
      result.error = ErrorCode::kUnknownMemberId;
      completions.push_back([done, result] { done(result); });
    } else {
      // The leader's assignment is in the log before any member hears of it.
      auto store = [&](const ClassicGroupSnapshot& stable) {
        return write_classic_group_locked(request.group_id, encode_classic_group_value(stable));
      };
      it->second->sync(request, now_ms(), std::move(done), completions, store);
      persist_classic_group_locked(request.group_id);
    }
  }
  run(completions);
}

ErrorCode GroupCoordinator::heartbeat(const std::string& group_id, const std::string& member_id,
                                      const std::optional<std::string>& instance_id,
                                      int32_t generation) {
  if (group_id.empty()) return ErrorCode::kInvalidGroupId;
  std::lock_guard lock(mutex_);
  auto it = groups_.find(group_id);
  if (it == groups_.end()) return ErrorCode::kUnknownMemberId;
  return it->second->heartbeat(member_id, instance_id, generation, now_ms());
}

ErrorCode GroupCoordinator::leave(const std::string& group_id, const std::string& member_id,
                                  const std::optional<std::string>& instance_id) {
  if (group_id.empty()) return ErrorCode::kInvalidGroupId;
  Completions completions;
  ErrorCode error;
  {
    std::lock_guard lock(mutex_);
    auto it = groups_.find(group_id);
    if (it == groups_.end()) return ErrorCode::kUnknownMemberId;
    error = it->second->leave(member_id, instance_id, now_ms(), completions);
    persist_classic_group_locked(group_id);
  }
  run(completions);
  return error;
}

ConsumerHeartbeatResult GroupCoordinator::consumer_heartbeat(const std::string& group_id,
                                                             const ConsumerHeartbeat& request) {
  auto fail = [&](ErrorCode error, std::string message) {
    ConsumerHeartbeatResult result;
    result.error = error;
    result.message = std::move(message);
    return result;
  };
  std::lock_guard lock(mutex_);
  if (!topics_) return fail(ErrorCode::kCoordinatorNotAvailable, "");
  auto it = consumer_groups_.find(group_id);
  bool created = false;
  if (it == consumer_groups_.end()) {
    auto classic = groups_.find(group_id);
    bool classic_in_use = classic != groups_.end() && !classic->second->members().empty();
    bool leaving = request.member_epoch < 0;
    if (classic_in_use)
      return fail(ErrorCode::kGroupIdNotFound,
                  fmt::format("Group {} is not a consumer group.", group_id));
    if (leaving)
      return fail(ErrorCode::kGroupIdNotFound,
                  fmt::format("Consumer group {} not found.", group_id));
    if (request.member_epoch != 0)
      return fail(ErrorCode::kUnknownMemberId, fmt::format("Member {} is not a member of group {}.",
                                                           request.member_id, group_id));
    // An empty classic group (offsets only) becomes a consumer group; its offsets stay.
    if (classic != groups_.end()) {
      groups_.erase(classic);
      persist_classic_group_locked(group_id);  // else the timer's pass
    }
    it = consumer_groups_.emplace(group_id, std::make_unique<ConsumerGroup>(group_id)).first;
    created = true;
  }
  auto result = it->second->heartbeat(request, *topics_, options_.consumer, now_ms());
  if (created && result.error != ErrorCode::kNone) consumer_groups_.erase(it);
  // As Kafka's coordinator, the member hears of a change only once it is in the log.
  if (!persist_consumer_group_locked(group_id))
    return fail(ErrorCode::kCoordinatorNotAvailable,
                "The coordinator could not write the group's state.");
  return result;
}

void GroupCoordinator::describe_consumer_group(
    const std::string& group_id, const std::function<void(const ConsumerGroup*)>& describe) {
  std::lock_guard lock(mutex_);
  auto it = consumer_groups_.find(group_id);
  describe(it == consumer_groups_.end() ? nullptr : it->second.get());
}

bool GroupCoordinator::has_members_locked(const std::string& group_id) const {
  auto classic = groups_.find(group_id);
  if (classic != groups_.end() && classic->second->state() != GroupState::kEmpty) return true;
  auto consumer = consumer_groups_.find(group_id);
  return consumer != consumer_groups_.end() && !consumer->second->empty();
}

bool GroupCoordinator::persist(const std::string& group_id, const KeyedRecords& records) {
  if (records.empty()) return true;
  return log_.append(offsets_partition_for(group_id, log_.partitions()), records);
}

void GroupCoordinator::replay_record(std::string_view key_bytes,
                                     std::optional<std::string_view> value_bytes,
                                     int64_t producer_id) {
  if (auto classic_group = classic_group_of_key(key_bytes)) {
    if (value_bytes) {
      written_classic_groups_[*classic_group].value = std::string(*value_bytes);
    } else {
      written_classic_groups_.erase(*classic_group);
    }
    return;
  }
  if (auto consumer_group = consumer_group_of_key(key_bytes)) {
    auto& records = written_consumer_groups_[*consumer_group].records;
    if (value_bytes) {
      records.insert_or_assign(std::string(key_bytes), std::string(*value_bytes));
    } else {
      records.erase(std::string(key_bytes));
      if (records.empty()) written_consumer_groups_.erase(*consumer_group);
    }
    return;
  }
  auto key = decode_offset_key(key_bytes);
  if (!key) return;
  TopicPartition tp{key->topic, key->partition};
  if (producer_id >= 0) {
    if (!value_bytes) return;
    if (auto value = decode_offset_value(*value_bytes)) {
      pending_[producer_id][key->group][tp] = {value->offset, value->leader_epoch, value->metadata,
                                               value->commit_timestamp_ms};
    }
    return;
  }
  auto& offsets = offsets_[key->group];
  if (!value_bytes) {
    offsets.erase(tp);
    if (offsets.empty()) offsets_.erase(key->group);
    return;
  }
  if (auto value = decode_offset_value(*value_bytes)) {
    offsets[tp] = {value->offset, value->leader_epoch, value->metadata, value->commit_timestamp_ms};
  }
}

void GroupCoordinator::restore_groups_locked(int64_t now) {
  for (auto it = written_classic_groups_.begin(); it != written_classic_groups_.end();) {
    auto snapshot = decode_classic_group_value(it->second.value);
    if (!snapshot) {
      spdlog::warn("group {}: its record in __consumer_offsets cannot be read; left out",
                   it->first);
      it = written_classic_groups_.erase(it);
      continue;
    }
    groups_[it->first] = std::make_unique<Group>(
        Group::restore(it->first, options_.initial_rebalance_delay_ms, *snapshot, now));
    ++it;
  }
  for (auto it = written_consumer_groups_.begin(); it != written_consumer_groups_.end();) {
    const auto& [group_id, written] = *it;
    auto snapshot = consumer_group_from_records(written.records);
    if (!snapshot) {
      spdlog::warn("consumer group {}: its records in __consumer_offsets cannot be read; left out",
                   group_id);
      it = written_consumer_groups_.erase(it);
      continue;
    }
    auto group = std::make_unique<ConsumerGroup>(
        ConsumerGroup::restore(group_id, *snapshot, options_.consumer, now));
    // Every member the log names is compared with the group at the first persist pass, so that
    // records of members it no longer has are tombstoned.
    for (const auto& [key, value] : it->second.records) {
      if (auto member_id = consumer_member_of_key(key)) it->second.member_revisions[*member_id] = 0;
    }
    // Its topics are looked up at once (a describe names them), and the first persist pass
    // writes whatever differs from the replayed records (an epoch bump, leftovers).
    if (topics_) group->tick(now, topics_);
    consumer_groups_[group_id] = std::move(group);
    ++it;
  }
}

bool GroupCoordinator::persist_consumer_group_locked(const std::string& group_id) {
  auto group = consumer_groups_.find(group_id);
  auto written = written_consumer_groups_.find(group_id);
  bool exists = group != consumer_groups_.end();
  if (written == written_consumer_groups_.end()) {
    if (!exists) return true;
    written = written_consumer_groups_.emplace(group_id, WrittenConsumerGroup{}).first;
  }
  WrittenConsumerGroup& w = written->second;
  if (exists && group->second->revision() == w.revision) return true;
  // The records of the parts that changed, as they are now (nullopt: gone).
  std::map<std::string, std::optional<std::string>> now;
  std::vector<std::pair<std::string, uint64_t>> rewritten_members;  // revision 0: gone
  auto drop = [&](const std::string& key) {
    if (w.records.contains(key)) now.emplace(key, std::nullopt);
  };
  if (!exists) {
    for (const auto& [key, value] : w.records) drop(key);
  } else {
    const ConsumerGroup& g = *group->second;
    if (g.own_revision() != w.own_revision) {
      for (const auto& [key, value] : w.records) {
        if (!consumer_member_of_key(key)) drop(key);
      }
      for (auto& [key, value] : consumer_group_own_records(g.snapshot(false), group_id))
        now[key] = std::move(value);
    }
    for (const auto& [member_id, revision] : g.member_revisions()) {
      auto before = w.member_revisions.find(member_id);
      if (before != w.member_revisions.end() && before->second == revision) continue;
      for (const auto& key : consumer_member_keys(group_id, member_id)) drop(key);
      rewritten_members.emplace_back(member_id, revision);
      const ConsumerMember& member = g.members().at(member_id);
      for (auto& [key, value] : consumer_member_records(member, g.find_target(member_id), group_id))
        now[key] = std::move(value);
    }
    for (const auto& [member_id, revision] : w.member_revisions) {
      if (g.member_revisions().contains(member_id)) continue;
      for (const auto& key : consumer_member_keys(group_id, member_id)) drop(key);
      rewritten_members.emplace_back(member_id, 0);
    }
  }
  KeyedRecords changes;
  for (auto& [key, value] : now) {
    auto before = w.records.find(key);
    bool same =
        value ? before != w.records.end() && before->second == *value : before == w.records.end();
    if (!same) changes.emplace_back(key, std::move(value));
  }
  if (!persist(group_id, changes)) {
    spdlog::warn("consumer group {}: its changes could not be written to __consumer_offsets",
                 group_id);
    return false;
  }
  if (!exists) {
    written_consumer_groups_.erase(written);
    return true;
  }
  for (auto& [key, value] : changes) {
    if (value) {
      w.records.insert_or_assign(key, std::move(*value));
    } else {
      w.records.erase(key);
    }
  }
  w.revision = group->second->revision();
  w.own_revision = group->second->own_revision();
  for (const auto& [member_id, revision] : rewritten_members) {
    if (revision == 0) {
      w.member_revisions.erase(member_id);
    } else {
      w.member_revisions[member_id] = revision;
    }
  }
  return true;
}

bool GroupCoordinator::persist_classic_group_locked(const std::string& group_id) {
  auto group = groups_.find(group_id);
  bool exists = group != groups_.end() && group->second->state() != GroupState::kDead;
  if (!exists) return write_classic_group_locked(group_id, std::nullopt);
  auto written = written_classic_groups_.find(group_id);
  if (written != written_classic_groups_.end() &&
      written->second.revision == group->second->revision())
    return true;
  auto snapshot = group->second->snapshot();
  if (!snapshot) return true;  // mid-rebalance: the last snapshot stands
  if (!write_classic_group_locked(group_id, encode_classic_group_value(*snapshot))) return false;
  written_classic_groups_[group_id].revision = group->second->revision();
  return true;
}

bool GroupCoordinator::write_classic_group_locked(const std::string& group_id,
                                                  const std::optional<std::string>& value) {
  auto written = written_classic_groups_.find(group_id);
  bool known = written != written_classic_groups_.end();
  if (known ? value == written->second.value : !value) return true;
  if (!persist(group_id, {{encode_classic_group_key(group_id), value}})) {
    spdlog::warn("group {}: its membership could not be written to __consumer_offsets", group_id);
    return false;
  }
  if (!value) {
    written_classic_groups_.erase(written);
  } else {
    written_classic_groups_[group_id].value = *value;
  }
  return true;
}

void GroupCoordinator::persist_groups_locked() {
  for (const auto& [id, group] : groups_) persist_classic_group_locked(id);
  for (const auto& [id, group] : consumer_groups_) persist_consumer_group_locked(id);
  // Groups written once and gone since: their tombstones.
  auto gone = [](const auto& written, const auto& live) {
    std::vector<std::string> ids;
    for (const auto& [id, entry] : written) {
      if (!live.contains(id)) ids.push_back(id);
    }
    return ids;
  };
  for (const auto& id : gone(written_classic_groups_, groups_)) persist_classic_group_locked(id);
  for (const auto& id : gone(written_consumer_groups_, consumer_groups_))
    persist_consumer_group_locked(id);
}

ErrorCode GroupCoordinator::check_commit_locked(const std::string& group_id,
                                                const std::string& member_id,
                                                const std::optional<std::string>& instance_id,
                                                int32_t generation, CommitKind kind,
                                                int16_t api_version) {
  if (group_id.empty()) return ErrorCode::kInvalidGroupId;
  if (auto consumer = consumer_groups_.find(group_id); consumer != consumer_groups_.end()) {
    return consumer->second->check_commit(member_id, generation, kind == CommitKind::kTransactional,
                                          api_version);
  }
  auto it = groups_.find(group_id);
  if (it == groups_.end() || it->second->state() == GroupState::kDead) {
    // From OffsetCommit v9 an unknown group is named so (Kafka 3.7's coordinator).
    if (generation >= 0)
      return api_version >= 9 ? ErrorCode::kGroupIdNotFound : ErrorCode::kIllegalGeneration;
    // A commit without membership (assign() users) creates a simple, empty group.
    it = groups_
             .insert_or_assign(
                 group_id, std::make_unique<Group>(group_id, options_.initial_rebalance_delay_ms))
             .first;
  }
  return it->second->check_commit(member_id, instance_id, generation, kind);
}

KeyedRecords GroupCoordinator::offset_records(const std::string& group_id,
                                              const std::vector<OffsetCommitEntry>& entries,
                                              int64_t now, std::vector<ErrorCode>& errors) const {
  KeyedRecords records;
  for (size_t i = 0; i < entries.size(); ++i) {
    const auto& e = entries[i];
    std::string metadata = e.metadata.value_or("");
    if (static_cast<int32_t>(metadata.size()) > options_.offset_metadata_max_bytes) {
      errors[i] = ErrorCode::kOffsetMetadataTooLarge;
      continue;
    }
    records.emplace_back(encode_offset_key({group_id, e.topic, e.partition}),
                         encode_offset_value({e.offset, e.leader_epoch, metadata, now}));
  }
  return records;
}

void GroupCoordinator::apply_offsets(const std::vector<OffsetCommitEntry>& entries,
                                     const std::vector<ErrorCode>& errors, int64_t now,
                                     std::map<TopicPartition, CommittedOffset>& into) {
  for (size_t i = 0; i < entries.size(); ++i) {
    if (errors[i] != ErrorCode::kNone) continue;
    const auto& e = entries[i];
    into[{e.topic, e.partition}] = {e.offset, e.leader_epoch, e.metadata.value_or(""), now};
  }
}

std::vector<ErrorCode> GroupCoordinator::commit(const std::string& group_id,
                                                const std::string& member_id,
                                                const std::optional<std::string>& instance_id,
                                                int32_t generation,
                                                const std::vector<OffsetCommitEntry>& entries,
                                                int16_t api_version) {
  std::lock_guard lock(mutex_);
  std::vector<ErrorCode> errors(entries.size(),
                                check_commit_locked(group_id, member_id, instance_id, generation,
                                                    CommitKind::kPlain, api_version));
  if (!entries.empty() && errors[0] != ErrorCode::kNone) return errors;
  int64_t now = now_ms();
  auto records = offset_records(group_id, entries, now, errors);
  if (!persist(group_id, records)) {
    std::fill(errors.begin(), errors.end(), ErrorCode::kCoordinatorNotAvailable);
    return errors;
  }
  apply_offsets(entries, errors, now, offsets_[group_id]);
  return errors;
}

std::vector<ErrorCode> GroupCoordinator::commit_transactional(
    const std::string& group_id, int64_t producer_id, int16_t epoch, const std::string& member_id,
    const std::optional<std::string>& instance_id, int32_t generation,
    const std::vector<OffsetCommitEntry>& entries) {
  // Held across the append, so that the transaction's marker (complete_transaction) cannot slip
  // in between the write and the pending offsets it must settle.
  std::lock_guard lock(mutex_);
  std::vector<ErrorCode> errors(entries.size(),
                                check_commit_locked(group_id, member_id, instance_id, generation,
                                                    CommitKind::kTransactional, 0));
  if (!entries.empty() && errors[0] != ErrorCode::kNone) return errors;
  int64_t now = now_ms();
  auto records = offset_records(group_id, entries, now, errors);
  if (!records.empty()) {
    int16_t code = log_.append_transactional(offsets_partition_for(group_id, log_.partitions()),
                                             records, producer_id, epoch);
    if (code != 0) {
      std::fill(errors.begin(), errors.end(), static_cast<ErrorCode>(code));
      return errors;
    }
  }
  apply_offsets(entries, errors, now, pending_[producer_id][group_id]);
  return errors;
}

void GroupCoordinator::complete_transaction(int64_t producer_id, bool commit) {
  std::lock_guard lock(mutex_);
  settle_locked(producer_id, commit);
}

void GroupCoordinator::settle_locked(int64_t producer_id, bool commit) {
  auto it = pending_.find(producer_id);
  if (it == pending_.end()) return;
  if (commit) {
    for (auto& [group_id, offsets] : it->second) {
      for (auto& [tp, offset] : offsets) offsets_[group_id][tp] = offset;
    }
  }
  pending_.erase(it);
}

ErrorCode GroupCoordinator::check_fetch(const std::string& group_id,
                                        const std::optional<std::string>& member_id,
                                        int32_t member_epoch) {
  std::lock_guard lock(mutex_);
  auto consumer = consumer_groups_.find(group_id);
  if (consumer == consumer_groups_.end()) return ErrorCode::kNone;
  return consumer->second->check_fetch(member_id, member_epoch);
}

std::map<TopicPartition, CommittedOffset> GroupCoordinator::fetch(
    const std::string& group_id, const std::optional<std::vector<TopicPartition>>& wanted) {
  std::lock_guard lock(mutex_);
  std::map<TopicPartition, CommittedOffset> out;
  auto it = offsets_.find(group_id);
  if (!wanted) {
    if (it != offsets_.end()) out = it->second;
  } else {
    for (const auto& tp : *wanted) {
      auto found = it == offsets_.end() ? decltype(it->second.end()){} : it->second.find(tp);
      out[tp] =
          it != offsets_.end() && found != it->second.end() ? found->second : CommittedOffset{};
    }
  }
  for (const auto& [producer_id, groups] : pending_) {
    auto group = groups.find(group_id);
    if (group == groups.end()) continue;
    for (const auto& [tp, offset] : group->second) {
      if (wanted && !out.contains(tp)) continue;
      out[tp].pending_transaction = true;
    }
  }
  return out;
}

std::vector<GroupOverview> GroupCoordinator::list(const std::vector<std::string>& states_filter) {
  std::lock_guard lock(mutex_);
  std::vector<GroupOverview> out;
  for (const auto& [id, group] : groups_) {
    if (group->state() == GroupState::kDead) continue;
    std::string state = state_name(group->state());
    if (!states_filter.empty() && std::none_of(states_filter.begin(), states_filter.end(),
                                               [&](const auto& s) { return s == state; })) {
      continue;
    }
    out.push_back({id, group->protocol_type(), state, "classic"});
  }
  for (const auto& [id, group] : consumer_groups_) {
    std::string state = group->state_name();
    if (!states_filter.empty() && std::none_of(states_filter.begin(), states_filter.end(),
                                               [&](const auto& s) { return s == state; })) {
      continue;
    }
    out.push_back({id, "consumer", state, "consumer"});
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.group_id < b.group_id; });
  return out;
}

GroupDescription GroupCoordinator::describe(const std::string& group_id) {
  std::lock_guard lock(mutex_);
  GroupDescription d;
  d.group_id = group_id;
  auto it = groups_.find(group_id);
  if (it == groups_.end()) {
    d.state = "Dead";
    return d;
  }
  const Group& g = *it->second;
  d.state = state_name(g.state());
  d.protocol_type = g.protocol_type();
  bool stable = g.state() == GroupState::kStable;
  d.protocol_name = stable ? g.protocol_name().value_or("") : "";
  for (const auto& [id, m] : g.members()) {
    MemberDescription md{id, m.instance_id, m.client_id, m.client_host, {}, {}};
    if (stable && g.protocol_name()) {
      if (const Bytes* meta = m.metadata_for(*g.protocol_name())) md.metadata = *meta;
      md.assignment = m.assignment;
    }
    d.members.push_back(std::move(md));
  }
  return d;
}

ErrorCode GroupCoordinator::delete_group(const std::string& group_id) {
  Completions completions;
  {
    std::lock_guard lock(mutex_);
    if (auto consumer = consumer_groups_.find(group_id); consumer != consumer_groups_.end()) {
      if (!consumer->second->empty()) return ErrorCode::kNonEmptyGroup;
      groups_[group_id] = std::make_unique<Group>(group_id, options_.initial_rebalance_delay_ms);
      consumer_groups_.erase(consumer);
      if (!persist_consumer_group_locked(group_id)) return ErrorCode::kCoordinatorNotAvailable;
    }
    auto it = groups_.find(group_id);
    if (it == groups_.end() || it->second->state() == GroupState::kDead)
      return ErrorCode::kGroupIdNotFound;
    if (it->second->state() != GroupState::kEmpty) return ErrorCode::kNonEmptyGroup;
    KeyedRecords tombstones;
    for (const auto& [tp, offset] : offsets_[group_id]) {
      tombstones.emplace_back(encode_offset_key({group_id, tp.first, tp.second}), std::nullopt);
    }
    if (!persist(group_id, tombstones)) return ErrorCode::kCoordinatorNotAvailable;
    offsets_.erase(group_id);
    it->second->mark_dead(completions);
    groups_.erase(it);
    persist_classic_group_locked(group_id);  // its tombstone; else the timer's pass
  }
  run(completions);
  return ErrorCode::kNone;
}

std::vector<ErrorCode> GroupCoordinator::delete_offsets(
    const std::string& group_id, const std::vector<TopicPartition>& partitions,
    ErrorCode& group_error) {
  std::vector<ErrorCode> errors(partitions.size(), ErrorCode::kNone);
  group_error = ErrorCode::kNone;
  std::lock_guard lock(mutex_);
  auto it = groups_.find(group_id);
  auto consumer = consumer_groups_.find(group_id);
  bool classic = it != groups_.end() && it->second->state() != GroupState::kDead;
  if (!classic && consumer == consumer_groups_.end()) {
    group_error = ErrorCode::kGroupIdNotFound;
    return errors;
  }
  auto subscribed = [&](const std::string& topic) {
    if (!classic) return consumer->second->subscribes_to(topic);
    return it->second->state() != GroupState::kEmpty && it->second->subscribes_to(topic);
  };
  KeyedRecords tombstones;
  auto& offsets = offsets_[group_id];
  for (size_t i = 0; i < partitions.size(); ++i) {
    const auto& tp = partitions[i];
    if (subscribed(tp.first)) {
      errors[i] = ErrorCode::kGroupSubscribedToTopic;
      continue;
    }
    if (offsets.erase(tp))
      tombstones.emplace_back(encode_offset_key({group_id, tp.first, tp.second}), std::nullopt);
  }
  if (!persist(group_id, tombstones)) group_error = ErrorCode::kCoordinatorNotAvailable;
  return errors;
}

bool GroupCoordinator::drop_offsets_locked(OffsetsByGroup::iterator& group,
                                           const OffsetFilter& drop) {
  auto& offsets = group->second;
  KeyedRecords tombstones;
  for (auto o = offsets.begin(); o != offsets.end();) {
    if (drop(o->first, o->second)) {
      tombstones.emplace_back(encode_offset_key({group->first, o->first.first, o->first.second}),
                              std::nullopt);
      o = offsets.erase(o);
    } else {
      ++o;
    }
  }
  bool persisted = persist(group->first, tombstones);
  if (!offsets.empty()) {
    ++group;
    return persisted;
  }
  auto members = groups_.find(group->first);
  if (members != groups_.end() && members->second->members().empty()) groups_.erase(members);
  auto consumer = consumer_groups_.find(group->first);
  if (consumer != consumer_groups_.end() && consumer->second->empty())
    consumer_groups_.erase(consumer);
  group = offsets_.erase(group);
  return persisted;
}

void GroupCoordinator::forget_topic(const std::string& topic) {
  std::lock_guard lock(mutex_);
  for (auto it = offsets_.begin(); it != offsets_.end();) {
    std::string group_id = it->first;
    auto of_topic = [&](const TopicPartition& tp, const CommittedOffset&) {
      return tp.first == topic;
    };
    if (!drop_offsets_locked(it, of_topic))
      spdlog::warn(
          "group {}: the deleted topic {}'s offsets are gone from memory but not from "
          "__consumer_offsets; they come back on restart",
          group_id, topic);
  }
}

void GroupCoordinator::expire_offsets_locked(int64_t now) {
  // An empty consumer group without offsets is gone at once, as in Kafka's cleanup.
  std::erase_if(consumer_groups_, [&](const auto& entry) {
    return entry.second->empty() && !offsets_.contains(entry.first);
  });
  for (auto it = offsets_.begin(); it != offsets_.end();) {
    if (has_members_locked(it->first)) {
      ++it;
      continue;
    }
    auto group = groups_.find(it->first);
    auto consumer = consumer_groups_.find(it->first);
    int64_t empty_since = group != groups_.end()               ? group->second->empty_since_ms()
                          : consumer != consumer_groups_.end() ? consumer->second->empty_since_ms()
                                                               : 0;
    // KIP-211: offsets of an empty group expire a retention period after the later of their
    // commit and the moment the group became empty.
    drop_offsets_locked(it, [&](const TopicPartition&, const CommittedOffset& o) {
      return std::max(o.commit_timestamp_ms, empty_since) + options_.offsets_retention_ms <= now;
    });
  }
}

void GroupCoordinator::tick(int64_t now) {
  Completions completions;
  {
    std::lock_guard lock(mutex_);
    for (auto& [id, group] : groups_) group->tick(now, completions);
    for (auto& [id, group] : consumer_groups_) group->tick(now, topics_);
    if (now - last_expiry_ms_ >= 60'000) {
      last_expiry_ms_ = now;
      expire_offsets_locked(now);
    }
    // Expired members, ended rebalances, regex results and groups gone with their offsets.
    persist_groups_locked();
  }
  run(completions);
}

}  // namespace oxbow::group
