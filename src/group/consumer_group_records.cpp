#include "group/consumer_group_records.h"

#include <vector>

#include "protocol/wire.h"

namespace oxbow::group {

namespace pr = oxbow::protocol;

namespace {

enum RecordType : int16_t {
  kGroupMetadata = 3,
  kMemberMetadata = 5,
  kTargetAssignmentMetadata = 6,
  kTargetAssignmentMember = 7,
  kCurrentMemberAssignment = 8,
  kRegularExpression = 16,
};
constexpr int16_t kValueVersion = 0;
constexpr uint32_t kMetadataHashTag = 0;

std::string key(RecordType type, const std::string& group,
                const std::optional<std::string>& second = std::nullopt) {
  pr::Writer w;
  w.i16(type);
  w.string(group, false);
  if (second) w.string(*second, false);
  return w.str();
}

void write_strings(pr::Writer& w, const auto& strings) {
  w.array_length(static_cast<int32_t>(strings.size()), true);
  for (const auto& s : strings) w.string(s, true);
}

void write_assignment(pr::Writer& w, const Assignment& assignment) {
  w.array_length(static_cast<int32_t>(assignment.size()), true);
  for (const auto& [topic, partitions] : assignment) {
    w.uuid(topic);
    w.array_length(static_cast<int32_t>(partitions.size()), true);
    for (int32_t p : partitions) w.i32(p);
    w.empty_tagged_fields();
  }
}

std::string group_metadata_value(const ConsumerGroupSnapshot& s) {
  pr::Writer w;
  w.i16(kValueVersion);
  w.i32(s.group_epoch);
  w.uvarint(1);  // one tagged field
  w.uvarint(kMetadataHashTag);
  w.uvarint(8);
  w.i64(static_cast<int64_t>(s.metadata_hash));
  return w.str();
}

std::string member_metadata_value(const ConsumerMember& m) {
  pr::Writer w;
  w.i16(kValueVersion);
  w.nullable_string(m.instance_id, true);
  w.nullable_string(m.rack_id, true);
  w.string(m.client_id, true);
  w.string(m.client_host, true);
  write_strings(w, m.subscribed_topics);
  w.nullable_string(m.subscribed_regex, true);
  w.i32(m.rebalance_timeout_ms);
  w.nullable_string(m.server_assignor, true);
  w.empty_tagged_fields();
  return w.str();
}

std::string epoch_value(int32_t epoch) {
  pr::Writer w;
  w.i16(kValueVersion);
  w.i32(epoch);
  w.empty_tagged_fields();
  return w.str();
}

std::string target_member_value(const Assignment& target) {
  pr::Writer w;
  w.i16(kValueVersion);
  write_assignment(w, target);
  w.empty_tagged_fields();
  return w.str();
}

std::string current_assignment_value(const ConsumerMember& m) {
  pr::Writer w;
  w.i16(kValueVersion);
  w.i32(m.epoch);
  w.i32(m.previous_epoch);
  w.i8(static_cast<int8_t>(m.state));
  write_assignment(w, m.assigned);
  write_assignment(w, m.pending_revocation);
  w.empty_tagged_fields();
  return w.str();
}

std::string regex_value(const ResolvedRegex& regex) {
  pr::Writer w;
  w.i16(kValueVersion);
  write_strings(w, regex.topics);
  w.i64(0);  // Kafka's metadata image version; there is none here
  w.i64(regex.resolved_ms);
  w.empty_tagged_fields();
  return w.str();
}

// ---- decoding

struct Key {
  int16_t type;
  std::string group;
  std::string second;  // member id or regex
};

std::optional<Key> decode_key(std::string_view bytes) {
  std::vector<uint8_t> copy(bytes.begin(), bytes.end());
  pr::Reader r(copy);
  try {
    Key k{r.i16(), {}, {}};
    switch (k.type) {
      case kGroupMetadata:
      case kTargetAssignmentMetadata:
        k.group = r.string(false);
        return k;
      case kMemberMetadata:
      case kTargetAssignmentMember:
      case kCurrentMemberAssignment:
      case kRegularExpression:
        k.group = r.string(false);
        k.second = r.string(false);
        return k;
      default:
        return std::nullopt;
    }
  } catch (const pr::DecodeError&) {
    return std::nullopt;
  }
}

std::vector<std::string> read_strings(pr::Reader& r) {
  int32_t n = r.array_length(true);
  std::vector<std::string> out;
  for (int32_t i = 0; i < n; ++i) out.push_back(r.string(true));
  return out;
}

Assignment read_assignment(pr::Reader& r) {
  Assignment out;
  int32_t topics = r.array_length(true);
  for (int32_t i = 0; i < topics; ++i) {
    auto& partitions = out[r.uuid()];
    int32_t n = r.array_length(true);
    for (int32_t j = 0; j < n; ++j) partitions.insert(r.i32());
    r.skip_tagged_fields();
  }
  return out;
}

// Reads a value's closing tagged fields: the metadata hash of a group metadata record (0 when
// absent), none of the other records'.
uint64_t read_metadata_hash(pr::Reader& r) {
  uint64_t hash = 0;
  uint32_t fields = r.uvarint();
  for (uint32_t i = 0; i < fields; ++i) {
    uint32_t tag = r.uvarint();
    uint32_t size = r.uvarint();
    if (tag == kMetadataHashTag && size == 8) {
      hash = static_cast<uint64_t>(r.i64());
    } else {
      r.take_span(size);
    }
  }
  return hash;
}

// Applies one record's value to the snapshot (up to its closing tagged fields); `members`
// collects members by id.
void read_value(const Key& k, pr::Reader& r, ConsumerGroupSnapshot& s,
                std::map<std::string, ConsumerMember>& members) {
  if (r.i16() != kValueVersion) throw pr::DecodeError("unknown record version");
  switch (k.type) {
    case kGroupMetadata:
      s.group_epoch = r.i32();
      return;
    case kTargetAssignmentMetadata:
      s.assignment_epoch = r.i32();
      return;
    case kMemberMetadata: {
      auto& m = members[k.second];
      m.id = k.second;
      m.instance_id = r.nullable_string(true);
      m.rack_id = r.nullable_string(true);
      m.client_id = r.string(true);
      m.client_host = r.string(true);
      m.subscribed_topics = read_strings(r);
      m.subscribed_regex = r.nullable_string(true);
      m.rebalance_timeout_ms = r.i32();
      m.server_assignor = r.nullable_string(true);
      return;
    }
    case kTargetAssignmentMember:
      s.targets[k.second] = read_assignment(r);
      return;
    case kCurrentMemberAssignment: {
      auto& m = members[k.second];
      m.epoch = r.i32();
      m.previous_epoch = r.i32();
      int8_t state = r.i8();
      if (state < 0 || state > static_cast<int8_t>(MemberState::kUnreleasedPartitions))
        throw pr::DecodeError("unknown member state");
      m.state = static_cast<MemberState>(state);
      m.assigned = read_assignment(r);
      m.pending_revocation = read_assignment(r);
      return;
    }
    case kRegularExpression: {
      auto topics = read_strings(r);
      r.i64();  // version
      s.regexes[k.second] = {{topics.begin(), topics.end()}, r.i64()};
      return;
    }
  }
}

}  // namespace

GroupRecords consumer_group_own_records(const ConsumerGroupSnapshot& snapshot,
                                        const std::string& group_id) {
  GroupRecords out;
  out[key(kGroupMetadata, group_id)] = group_metadata_value(snapshot);
  out[key(kTargetAssignmentMetadata, group_id)] = epoch_value(snapshot.assignment_epoch);
  for (const auto& [regex, resolved] : snapshot.regexes)
    out[key(kRegularExpression, group_id, regex)] = regex_value(resolved);
  return out;
}

GroupRecords consumer_member_records(const ConsumerMember& member, const Assignment* target,
                                     const std::string& group_id) {
  GroupRecords out;
  out[key(kMemberMetadata, group_id, member.id)] = member_metadata_value(member);
  out[key(kCurrentMemberAssignment, group_id, member.id)] = current_assignment_value(member);
  if (target) out[key(kTargetAssignmentMember, group_id, member.id)] = target_member_value(*target);
  return out;
}

std::vector<std::string> consumer_member_keys(const std::string& group_id,
                                              const std::string& member_id) {
  return {key(kMemberMetadata, group_id, member_id),
          key(kTargetAssignmentMember, group_id, member_id),
          key(kCurrentMemberAssignment, group_id, member_id)};
}

GroupRecords consumer_group_records(const ConsumerGroupSnapshot& snapshot,
                                    const std::string& group_id) {
  GroupRecords out = consumer_group_own_records(snapshot, group_id);
  for (const auto& m : snapshot.members) {
    auto target = snapshot.targets.find(m.id);
    out.merge(consumer_member_records(
        m, target == snapshot.targets.end() ? nullptr : &target->second, group_id));
  }
  return out;
}

std::optional<std::string> consumer_group_of_key(std::string_view key) {
  auto k = decode_key(key);
  if (!k) return std::nullopt;
  return k->group;
}

std::optional<std::string> consumer_member_of_key(std::string_view key) {
  auto k = decode_key(key);
  bool of_member = k && (k->type == kMemberMetadata || k->type == kTargetAssignmentMember ||
                         k->type == kCurrentMemberAssignment);
  if (!of_member) return std::nullopt;
  return k->second;
}

std::optional<ConsumerGroupSnapshot> consumer_group_from_records(const GroupRecords& records) {
  ConsumerGroupSnapshot s;
  std::map<std::string, ConsumerMember> members;
  bool has_metadata = false;
  try {
    for (const auto& [key_bytes, value_bytes] : records) {
      auto k = decode_key(key_bytes);
      if (!k) return std::nullopt;
      has_metadata |= k->type == kGroupMetadata;
      std::vector<uint8_t> copy(value_bytes.begin(), value_bytes.end());
      pr::Reader r(copy);
      read_value(*k, r, s, members);
      uint64_t hash = read_metadata_hash(r);  // the value's tagged fields
      if (k->type == kGroupMetadata) s.metadata_hash = hash;
    }
  } catch (const pr::DecodeError&) {
    return std::nullopt;
  }
  if (!has_metadata) return std::nullopt;
  // A member is one with metadata; an assignment record without it is a leftover.
  std::erase_if(members, [](const auto& m) { return m.second.id.empty(); });
  std::erase_if(s.targets, [&](const auto& t) { return !members.contains(t.first); });
  for (auto& [id, m] : members) s.members.push_back(std::move(m));
  return s;
}

}  // namespace oxbow::group
