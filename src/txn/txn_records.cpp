#include "txn/txn_records.h"

#include <array>
#include <map>
#include <vector>

#include "protocol/wire.h"

namespace oxbow::txn {

namespace pr = oxbow::protocol;

namespace {

constexpr std::array<const char*, 8> kStateNames = {
    "Empty",          "Ongoing",       "PrepareCommit", "PrepareAbort",
    "CompleteCommit", "CompleteAbort", "Dead",          "PrepareEpochFence"};

}  // namespace

const char* state_name(TxnState state) {
  auto index = static_cast<size_t>(state);
  return index < kStateNames.size() ? kStateNames[index] : "Unknown";
}

std::optional<TxnState> state_from_name(std::string_view name) {
  for (size_t i = 0; i < kStateNames.size(); ++i) {
    if (name == kStateNames[i]) return static_cast<TxnState>(i);
  }
  return std::nullopt;
}

std::string encode_txn_key(const std::string& transactional_id) {
  pr::Writer w;
  w.i16(0);
  w.string(transactional_id, false);
  return w.str();
}

std::string encode_txn_value(const TxnMetadata& m) {
  pr::Writer w;
  w.i16(0);
  w.i64(m.producer_id);
  w.i16(m.producer_epoch);
  w.i32(m.timeout_ms);
  w.i8(static_cast<int8_t>(m.state));
  std::map<std::string, std::vector<int32_t>> by_topic;
  for (const auto& [topic, partition] : m.partitions) by_topic[topic].push_back(partition);
  w.array_length(static_cast<int32_t>(by_topic.size()), false);
  for (const auto& [topic, partitions] : by_topic) {
    w.string(topic, false);
    w.array_length(static_cast<int32_t>(partitions.size()), false);
    for (int32_t p : partitions) w.i32(p);
  }
  w.i64(m.last_update_ms);
  w.i64(m.start_ms);
  return w.str();
}

std::optional<std::string> decode_txn_key(std::string_view bytes) {
  std::vector<uint8_t> copy(bytes.begin(), bytes.end());
  pr::Reader r(copy);
  try {
    if (r.i16() != 0) return std::nullopt;
    return r.string(false);
  } catch (const pr::DecodeError&) {
    return std::nullopt;
  }
}

std::optional<TxnMetadata> decode_txn_value(std::string_view bytes) {
  std::vector<uint8_t> copy(bytes.begin(), bytes.end());
  pr::Reader r(copy);
  try {
    if (r.i16() != 0) return std::nullopt;
    TxnMetadata m;
    m.producer_id = r.i64();
    m.producer_epoch = r.i16();
    m.timeout_ms = r.i32();
    int8_t state = r.i8();
    if (state < 0 || state > static_cast<int8_t>(TxnState::kPrepareEpochFence)) return std::nullopt;
    m.state = static_cast<TxnState>(state);
    int32_t topics = r.i32();
    for (int32_t t = 0; t < topics; ++t) {
      std::string topic = r.string(false);
      int32_t count = r.i32();
      if (count < 0) return std::nullopt;
      for (int32_t i = 0; i < count; ++i) m.partitions.emplace(topic, r.i32());
    }
    m.last_update_ms = r.i64();
    m.start_ms = r.i64();
    return m;
  } catch (const pr::DecodeError&) {
    return std::nullopt;
  }
}

}  // namespace oxbow::txn
