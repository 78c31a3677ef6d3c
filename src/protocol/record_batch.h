#pragma once
// Record batches (message format v2), the unit in which Oxbow stores and serves data.
//
// A batch is a 61-byte header followed by its records (compressed as a whole when the codec bits
// are set):
//   offset  size  field
//        0     8  base_offset            rewritten by the broker on append
//        8     4  batch_length           bytes after this field
//       12     4  partition_leader_epoch rewritten by the broker on append
//       16     1  magic                  2
//       17     4  crc                    CRC-32C of bytes [21, end)
//       21     2  attributes             bits 0-2 codec, 3 timestamp type, 4 transactional, 5
//                                          control, 6 delete horizon
//       23     4  last_offset_delta
//       27     8  base_timestamp         with bit 6: the delete horizon (see below)
//       35     8  max_timestamp
//       43     8  producer_id
//       51     2  producer_epoch
//       53     4  base_sequence
//       57     4  record_count
// Since the CRC starts at attributes, the broker can assign offsets and the leader epoch without
// recomputing it; setting LogAppendTime changes covered bytes and so does recompute it.
//
// The delete horizon (Kafka's KIP-534) is the log cleaner's: a batch whose tombstones or
// transaction marker a pass keeps for the first time is stamped with the time after which a later
// pass may drop them, held in base_timestamp (record timestamps stay base + delta, their deltas
// re-encoded).
#include <cstddef>
#include <cstdint>
#include <span>

#include "protocol/errors.h"

namespace oxbow::protocol {

inline constexpr size_t kBatchHeaderSize = 61;
inline constexpr size_t kBatchLengthOffset = 8;
inline constexpr size_t kBatchLogOverhead = 12;  // base_offset + batch_length
inline constexpr size_t kMagicOffset = 16;
inline constexpr size_t kCrcOffset = 17;
inline constexpr size_t kAttributesOffset = 21;
inline constexpr size_t kBaseTimestampOffset = 27;
inline constexpr size_t kMaxTimestampOffset = 35;

inline constexpr int16_t kCodecMask = 0x07;
inline constexpr int16_t kTimestampTypeBit = 0x08;
inline constexpr int16_t kTransactionalBit = 0x10;
inline constexpr int16_t kControlBit = 0x20;
inline constexpr int16_t kDeleteHorizonBit = 0x40;

struct BatchHeader {
  int64_t base_offset;
  int32_t batch_length;
  int32_t partition_leader_epoch;
  int8_t magic;
  uint32_t crc;
  int16_t attributes;
  int32_t last_offset_delta;
  int64_t base_timestamp;
  int64_t max_timestamp;
  int64_t producer_id;
  int16_t producer_epoch;
  int32_t base_sequence;
  int32_t record_count;

  size_t total_size() const { return kBatchLogOverhead + static_cast<size_t>(batch_length); }
  int64_t last_offset() const { return base_offset + last_offset_delta; }
  int codec() const { return attributes & kCodecMask; }
  bool is_control() const { return attributes & kControlBit; }
  bool is_transactional() const { return attributes & kTransactionalBit; }
  bool log_append_time() const { return attributes & kTimestampTypeBit; }
  bool has_delete_horizon() const { return attributes & kDeleteHorizonBit; }
};

// Reads the header fields; `p` must hold at least kBatchHeaderSize bytes.
BatchHeader read_batch_header(const uint8_t* p);
// Reads only base_offset and batch_length (the 12-byte log overhead every magic shares).
void read_log_overhead(const uint8_t* p, int64_t& base_offset, int32_t& batch_length);

void write_i64(uint8_t* p, int64_t v);
void write_i32(uint8_t* p, int32_t v);
void write_i16(uint8_t* p, int16_t v);

// What the append path needs to know about a produce request's records.
struct BatchesSummary {
  int batch_count = 0;
  int64_t record_count = 0;  // offsets the batches will take
  int64_t max_timestamp = -1;
};

// Validates every batch in `records` as a produce path must: whole batches only, magic 2, a length
// that fits, a CRC that matches, a record count consistent with last_offset_delta. Returns
// kCorruptMessage for bad framing or CRC, kUnsupportedForMessageFormat for magic 0/1,
// kInvalidRecord for an impossible batch, kNone otherwise.
ErrorCode validate_batches(std::span<const uint8_t> records, BatchesSummary& summary);

// Assigns offsets from `base_offset` on, stamps the leader epoch and, when `log_append_time_ms`
// is not -1, switches the batch to LogAppendTime with that time (recomputing the CRC).
// Call only on records that validate_batches accepted.
void assign_offsets(std::span<uint8_t> records, int64_t base_offset, int32_t leader_epoch,
                    int64_t log_append_time_ms);

struct OffsetAndTimestamp {
  int64_t offset;
  int64_t timestamp;
};

// The first record of a whole batch with timestamp >= ts (compressed batches are unpacked), or,
// with ts = kLargestTimestamp, the first record carrying the batch's largest timestamp. Falls back
// to the batch's base offset and largest timestamp if the records cannot be read.
inline constexpr int64_t kLargestTimestamp = INT64_MIN;
OffsetAndTimestamp find_record_by_timestamp(std::span<const uint8_t> batch, int64_t ts);

}  // namespace oxbow::protocol
