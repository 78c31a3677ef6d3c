#include "group/classic_group_records.h"

#include <vector>

#include "protocol/wire.h"

namespace oxbow::group {

namespace pr = oxbow::protocol;

namespace {

constexpr int16_t kKeyVersion = 2;
constexpr int16_t kWrittenVersion = 3;
constexpr int16_t kLastVersion = 4;
constexpr int16_t kFirstFlexibleVersion = 4;

ClassicGroupSnapshot::MemberRecord read_member(pr::Reader& r, int16_t version) {
  bool flexible = version >= kFirstFlexibleVersion;
  ClassicGroupSnapshot::MemberRecord m;
  m.id = r.string(flexible);
  if (version >= 3) m.instance_id = r.nullable_string(flexible);
  m.client_id = r.string(flexible);
  m.client_host = r.string(flexible);
  m.rebalance_timeout_ms = version >= 1 ? r.i32() : 0;
  m.session_timeout_ms = r.i32();
  if (version == 0) m.rebalance_timeout_ms = m.session_timeout_ms;  // Kafka's default for v0
  m.subscription = r.bytes(flexible);
  m.assignment = r.bytes(flexible);
  if (flexible) r.skip_tagged_fields();
  return m;
}

}  // namespace

std::string encode_classic_group_key(const std::string& group) {
  pr::Writer w;
  w.i16(kKeyVersion);
  w.string(group, false);
  return w.str();
}

std::string encode_classic_group_value(const ClassicGroupSnapshot& g) {
  pr::Writer w;
  w.i16(kWrittenVersion);
  w.string(g.protocol_type, false);
  w.i32(g.generation);
  w.nullable_string(g.protocol, false);
  w.nullable_string(g.leader, false);
  w.i64(g.state_timestamp_ms);
  w.array_length(static_cast<int32_t>(g.members.size()), false);
  for (const auto& m : g.members) {
    w.string(m.id, false);
    w.nullable_string(m.instance_id, false);
    w.string(m.client_id, false);
    w.string(m.client_host, false);
    w.i32(m.rebalance_timeout_ms);
    w.i32(m.session_timeout_ms);
    w.bytes(m.subscription, false);
    w.bytes(m.assignment, false);
  }
  return w.str();
}

std::optional<std::string> classic_group_of_key(std::string_view key) {
  std::vector<uint8_t> copy(key.begin(), key.end());
  pr::Reader r(copy);
  try {
    if (r.i16() != kKeyVersion) return std::nullopt;
    return r.string(false);
  } catch (const pr::DecodeError&) {
    return std::nullopt;
  }
}

std::optional<ClassicGroupSnapshot> decode_classic_group_value(std::string_view bytes) {
  std::vector<uint8_t> copy(bytes.begin(), bytes.end());
  pr::Reader r(copy);
  try {
    int16_t version = r.i16();
    if (version < 0 || version > kLastVersion) return std::nullopt;
    bool flexible = version >= kFirstFlexibleVersion;
    ClassicGroupSnapshot g;
    g.protocol_type = r.string(flexible);
    g.generation = r.i32();
    g.protocol = r.nullable_string(flexible);
    g.leader = r.nullable_string(flexible);
    if (version >= 2) g.state_timestamp_ms = r.i64();
    int32_t members = r.array_length(flexible);
    for (int32_t i = 0; i < members; ++i) g.members.push_back(read_member(r, version));
    if (flexible) r.skip_tagged_fields();
    return g;
  } catch (const pr::DecodeError&) {
    return std::nullopt;
  }
}

}  // namespace oxbow::group
