#pragma once
// A compacted internal topic (`__consumer_offsets`, `__transaction_state`) as a coordinator sees
// it: keyed records appended to numbered partitions, replayed in log order at start-up.
#include <climits>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace oxbow {

// (key, value); a nullopt value is a tombstone that deletes the key.
using KeyedRecords = std::vector<std::pair<std::string, std::optional<std::string>>>;

// The partition of a coordinator key (group id, transactional id), as Kafka picks it:
// abs(Java String.hashCode(key)) % partitions, for ASCII keys.
inline int32_t partition_for_key(std::string_view key, int32_t partitions) {
  int32_t hash = 0;
  for (unsigned char c : key) hash = static_cast<int32_t>(31u * static_cast<uint32_t>(hash) + c);
  // Kafka's Utils.abs maps INT_MIN to 0 rather than overflowing.
  int32_t positive = hash == INT32_MIN ? 0 : (hash < 0 ? -hash : hash);
  return positive % partitions;
}

class KeyedLog {
 public:
  virtual ~KeyedLog() = default;
  virtual int32_t partitions() const = 0;
  // False when the records could not be written.
  virtual bool append(int32_t partition, const KeyedRecords& records) = 0;
  // Appends records inside the producer's transaction; they count once its commit marker is in
  // the log. Returns a Kafka error code (0: written), e.g. when the transaction does not hold
  // the partition or the epoch is stale.
  virtual int16_t append_transactional(int32_t partition, const KeyedRecords& records,
                                       int64_t producer_id, int16_t producer_epoch) = 0;

  // Called for each record in log order; `txn_producer_id` is -1 outside transactions.
  using RecordVisitor = std::function<void(
      std::string_view key, std::optional<std::string_view> value, int64_t txn_producer_id)>;
  // Called for each transaction marker.
  using MarkerVisitor = std::function<void(int64_t producer_id, bool commit)>;
  virtual void replay(const RecordVisitor& on_record, const MarkerVisitor& on_marker) = 0;
};

}  // namespace oxbow
