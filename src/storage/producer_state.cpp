#include "storage/producer_state.h"

#include <limits>
#include <sstream>

namespace oxbow::storage {

using protocol::ErrorCode;

namespace {

int32_t last_sequence(int32_t first_seq, int32_t record_count) {
  // Sequences wrap from INT32_MAX to 0.
  int64_t last = static_cast<int64_t>(first_seq) + record_count - 1;
  return static_cast<int32_t>(last % (static_cast<int64_t>(std::numeric_limits<int32_t>::max()) + 1));
}

bool follows(int32_t last_seq, int32_t next_seq) {
  return last_seq == std::numeric_limits<int32_t>::max() ? next_seq == 0 : next_seq == last_seq + 1;
}

}  // namespace

ProducerState::Check ProducerState::check(int64_t producer_id, int16_t epoch, int32_t first_seq,
                                          int32_t record_count) const {
  Check result;
  auto it = producers_.find(producer_id);
  // An unknown producer (new, or its state expired with the log) may start at any sequence.
  if (it == producers_.end()) return result;
  const ProducerEntry& entry = it->second;
  if (epoch < entry.epoch) {
    result.error = ErrorCode::kInvalidProducerEpoch;
    return result;
  }
  if (epoch > entry.epoch) {
    if (first_seq != 0) result.error = ErrorCode::kOutOfOrderSequenceNumber;
    return result;
  }
  int32_t last_seq = last_sequence(first_seq, record_count);
  for (const auto& b : entry.batches) {
    if (b.first_seq == first_seq && b.last_seq == last_seq) {
      result.duplicate = b;
      return result;
    }
  }
  if (!entry.batches.empty() && !follows(entry.batches.back().last_seq, first_seq)) {
    result.error = ErrorCode::kOutOfOrderSequenceNumber;
  }
  return result;
}

void ProducerState::update(int64_t producer_id, int16_t epoch, int32_t first_seq, int32_t record_count,
                           int64_t first_offset, int64_t last_offset, int64_t timestamp) {
  ProducerEntry& entry = producers_[producer_id];
  if (epoch != entry.epoch) {
    entry.epoch = epoch;
    entry.batches.clear();
  }
  entry.last_timestamp = timestamp;
  entry.batches.push_back({first_seq, last_sequence(first_seq, record_count), first_offset, last_offset});
  if (entry.batches.size() > kMaxCachedBatches) entry.batches.pop_front();
}

std::string ProducerState::serialize() const {
  std::ostringstream out;
  for (const auto& [id, entry] : producers_) {
    out << id << ' ' << entry.epoch << ' ' << entry.last_timestamp;
    for (const auto& b : entry.batches) {
      out << ' ' << b.first_seq << ' ' << b.last_seq << ' ' << b.first_offset << ' ' << b.last_offset;
    }
    out << '\n';
  }
  return out.str();
}

bool ProducerState::parse(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::unordered_map<int64_t, ProducerEntry> parsed;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::istringstream fields(line);
    int64_t id;
    ProducerEntry entry;
    if (!(fields >> id >> entry.epoch >> entry.last_timestamp)) return false;
    BatchMetadata b;
    while (fields >> b.first_seq >> b.last_seq >> b.first_offset >> b.last_offset) entry.batches.push_back(b);
    parsed[id] = std::move(entry);
  }
  producers_ = std::move(parsed);
  return true;
}

}  // namespace oxbow::storage
