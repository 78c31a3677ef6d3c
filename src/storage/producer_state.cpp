#include "storage/producer_state.h"

#include <algorithm>
#include <limits>
#include <sstream>

namespace oxbow::storage {

using protocol::ErrorCode;

namespace {

int32_t last_sequence(int32_t first_seq, int32_t record_count) {
  // Sequences wrap from INT32_MAX to 0.
  int64_t last = static_cast<int64_t>(first_seq) + record_count - 1;
  return static_cast<int32_t>(last %
                              (static_cast<int64_t>(std::numeric_limits<int32_t>::max()) + 1));
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
  if (first_seq < 0) return result;
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

ErrorCode ProducerState::check_transactional(int64_t producer_id, int16_t epoch) const {
  auto it = producers_.find(producer_id);
  if (it == producers_.end()) return ErrorCode::kInvalidTxnState;
  const ProducerEntry& entry = it->second;
  if (entry.txn_first_offset >= 0 || entry.allowed_txn_epoch == epoch) return ErrorCode::kNone;
  return ErrorCode::kInvalidTxnState;
}

void ProducerState::update(int64_t producer_id, int16_t epoch, int32_t first_seq,
                           int32_t record_count, int64_t first_offset, int64_t last_offset,
                           int64_t timestamp, bool transactional) {
  ProducerEntry& entry = producers_[producer_id];
  if (epoch != entry.epoch) {
    entry.epoch = epoch;
    entry.batches.clear();
  }
  entry.last_timestamp = timestamp;
  if (first_seq >= 0) {
    entry.batches.push_back(
        {first_seq, last_sequence(first_seq, record_count), first_offset, last_offset});
    if (entry.batches.size() > kMaxCachedBatches) entry.batches.pop_front();
  }
  if (transactional && entry.txn_first_offset < 0) {
    entry.txn_first_offset = first_offset;
    entry.allowed_txn_epoch = -1;
    open_[first_offset] = producer_id;
  }
}

ErrorCode ProducerState::allow_transaction(int64_t producer_id, int16_t epoch) {
  ProducerEntry& entry = producers_[producer_id];
  if (epoch < entry.epoch) return ErrorCode::kInvalidProducerEpoch;
  entry.allowed_txn_epoch = epoch;
  return ErrorCode::kNone;
}

bool ProducerState::check_marker(int64_t producer_id, int16_t epoch) const {
  auto it = producers_.find(producer_id);
  return it == producers_.end() || epoch >= it->second.epoch;
}

void ProducerState::complete_transaction(int64_t producer_id, int16_t epoch, bool commit,
                                         int32_t coordinator_epoch, int64_t marker_offset) {
  ProducerEntry& entry = producers_[producer_id];
  if (epoch > entry.epoch) {
    entry.epoch = epoch;
    entry.batches.clear();
  }
  entry.coordinator_epoch = coordinator_epoch;
  entry.allowed_txn_epoch = -1;
  if (entry.txn_first_offset < 0) return;
  open_.erase(entry.txn_first_offset);
  if (!commit) aborted_.push_back({producer_id, entry.txn_first_offset, marker_offset});
  entry.txn_first_offset = -1;
}

int64_t ProducerState::last_stable_offset(int64_t high_watermark) const {
  return open_.empty() ? high_watermark : std::min(open_.begin()->first, high_watermark);
}

std::vector<AbortedTransaction> ProducerState::aborted_between(int64_t from, int64_t to) const {
  std::vector<AbortedTransaction> found;
  auto it = std::lower_bound(
      aborted_.begin(), aborted_.end(), from,
      [](const AbortedTransaction& a, int64_t offset) { return a.last_offset < offset; });
  for (; it != aborted_.end(); ++it) {
    if (it->first_offset < to) found.push_back(*it);
  }
  return found;
}

void ProducerState::trim_before(int64_t log_start_offset) {
  std::erase_if(aborted_,
                [&](const AbortedTransaction& a) { return a.last_offset < log_start_offset; });
}

namespace {
constexpr const char* kSnapshotHeader = "oxbow-producer-snapshot 2";
}

std::string ProducerState::serialize() const {
  std::ostringstream out;
  out << kSnapshotHeader << '\n';
  for (const auto& [id, entry] : producers_) {
    out << "p " << id << ' ' << entry.epoch << ' ' << entry.last_timestamp << ' '
        << entry.txn_first_offset << ' ' << entry.coordinator_epoch;
    for (const auto& b : entry.batches) {
      out << ' ' << b.first_seq << ' ' << b.last_seq << ' ' << b.first_offset << ' '
          << b.last_offset;
    }
    out << '\n';
  }
  for (const auto& a : aborted_)
    out << "a " << a.producer_id << ' ' << a.first_offset << ' ' << a.last_offset << '\n';
  return out.str();
}

bool ProducerState::parse(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != kSnapshotHeader) return false;
  ProducerState parsed;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::istringstream fields(line);
    std::string kind;
    fields >> kind;
    if (kind == "a") {
      AbortedTransaction a;
      if (!(fields >> a.producer_id >> a.first_offset >> a.last_offset)) return false;
      parsed.aborted_.push_back(a);
      continue;
    }
    int64_t id;
    ProducerEntry entry;
    if (kind != "p" || !(fields >> id >> entry.epoch >> entry.last_timestamp >>
                         entry.txn_first_offset >> entry.coordinator_epoch)) {
      return false;
    }
    BatchMetadata b;
    while (fields >> b.first_seq >> b.last_seq >> b.first_offset >> b.last_offset)
      entry.batches.push_back(b);
    if (entry.txn_first_offset >= 0) parsed.open_[entry.txn_first_offset] = id;
    parsed.producers_[id] = std::move(entry);
  }
  *this = std::move(parsed);
  return true;
}

}  // namespace oxbow::storage
