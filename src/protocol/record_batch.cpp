#include "protocol/record_batch.h"

#include <string>
#include "common/crc32c.h"

#include "protocol/compression.h"
#include "protocol/wire.h"

namespace oxbow::protocol {
namespace {

template <typename T>
T read_be(const uint8_t* p) {
  T v = 0;
  for (size_t i = 0; i < sizeof(T); ++i) v = static_cast<T>((v << 8) | p[i]);
  return v;
}

template <typename T>
void write_be(uint8_t* p, T v) {
  for (size_t i = 0; i < sizeof(T); ++i)
    p[i] = static_cast<uint8_t>(v >> (8 * (sizeof(T) - 1 - i)));
}

}  // namespace

void write_i64(uint8_t* p, int64_t v) {
  write_be(p, static_cast<uint64_t>(v));
}
void write_i32(uint8_t* p, int32_t v) {
  write_be(p, static_cast<uint32_t>(v));
}
void write_i16(uint8_t* p, int16_t v) {
  write_be(p, static_cast<uint16_t>(v));
}

void read_log_overhead(const uint8_t* p, int64_t& base_offset, int32_t& batch_length) {
  base_offset = static_cast<int64_t>(read_be<uint64_t>(p));
  batch_length = static_cast<int32_t>(read_be<uint32_t>(p + 8));
}

BatchHeader read_batch_header(const uint8_t* p) {
  BatchHeader h;
  h.base_offset = static_cast<int64_t>(read_be<uint64_t>(p));
  h.batch_length = static_cast<int32_t>(read_be<uint32_t>(p + 8));
  h.partition_leader_epoch = static_cast<int32_t>(read_be<uint32_t>(p + 12));
  h.magic = static_cast<int8_t>(p[16]);
  h.crc = read_be<uint32_t>(p + 17);
  h.attributes = static_cast<int16_t>(read_be<uint16_t>(p + 21));
  h.last_offset_delta = static_cast<int32_t>(read_be<uint32_t>(p + 23));
  h.base_timestamp = static_cast<int64_t>(read_be<uint64_t>(p + 27));
  h.max_timestamp = static_cast<int64_t>(read_be<uint64_t>(p + 35));
  h.producer_id = static_cast<int64_t>(read_be<uint64_t>(p + 43));
  h.producer_epoch = static_cast<int16_t>(read_be<uint16_t>(p + 51));
  h.base_sequence = static_cast<int32_t>(read_be<uint32_t>(p + 53));
  h.record_count = static_cast<int32_t>(read_be<uint32_t>(p + 57));
  return h;
}

ErrorCode validate_batches(std::span<const uint8_t> records, BatchesSummary& summary) {
  summary = {};
  size_t pos = 0;
  if (records.empty()) return ErrorCode::kCorruptMessage;
  while (pos < records.size()) {
    size_t left = records.size() - pos;
    if (left < kBatchLogOverhead + 5) return ErrorCode::kCorruptMessage;
    const uint8_t* p = records.data() + pos;
    int8_t magic = static_cast<int8_t>(p[kMagicOffset]);
    if (magic == 0 || magic == 1) return ErrorCode::kUnsupportedForMessageFormat;
    if (magic != 2) return ErrorCode::kCorruptMessage;
    if (left < kBatchHeaderSize) return ErrorCode::kCorruptMessage;
    BatchHeader h = read_batch_header(p);
    if (h.batch_length < static_cast<int32_t>(kBatchHeaderSize - kBatchLogOverhead) ||
        h.total_size() > left) {
      return ErrorCode::kCorruptMessage;
    }
    uint32_t crc = crc32c(p + kAttributesOffset, h.total_size() - kAttributesOffset);
    if (crc != h.crc) return ErrorCode::kCorruptMessage;
    if (h.record_count <= 0 || h.last_offset_delta != h.record_count - 1) {
      return ErrorCode::kInvalidRecord;
    }
    // Uncompressed records take at least 7 bytes each: a larger count cannot be true.
    if (h.codec() == 0 &&
        static_cast<size_t>(h.record_count) * 7 > h.total_size() - kBatchHeaderSize) {
      return ErrorCode::kInvalidRecord;
    }
    if (h.codec() > 4) return ErrorCode::kInvalidRecord;
    summary.batch_count++;
    summary.record_count += h.record_count;
    if (h.max_timestamp > summary.max_timestamp) summary.max_timestamp = h.max_timestamp;
    pos += h.total_size();
  }
  return ErrorCode::kNone;
}

void assign_offsets(std::span<uint8_t> records, int64_t base_offset, int32_t leader_epoch,
                    int64_t log_append_time_ms) {
  size_t pos = 0;
  while (pos + kBatchHeaderSize <= records.size()) {
    uint8_t* p = records.data() + pos;
    BatchHeader h = read_batch_header(p);
    write_i64(p, base_offset);
    write_i32(p + 12, leader_epoch);
    if (log_append_time_ms >= 0) {
      write_i16(p + kAttributesOffset, static_cast<int16_t>(h.attributes | kTimestampTypeBit));
      write_i64(p + kMaxTimestampOffset, log_append_time_ms);
      uint32_t crc = crc32c(p + kAttributesOffset, h.total_size() - kAttributesOffset);
      write_be<uint32_t>(p + kCrcOffset, crc);
    }
    base_offset += h.last_offset_delta + 1;
    pos += h.total_size();
  }
}

OffsetAndTimestamp find_record_by_timestamp(std::span<const uint8_t> batch, int64_t ts) {
  BatchHeader h = read_batch_header(batch.data());
  OffsetAndTimestamp fallback{h.base_offset, h.max_timestamp};
  // LogAppendTime gives every record the batch's time.
  if (h.log_append_time()) return fallback;
  if (ts == kLargestTimestamp) ts = h.max_timestamp;
  auto payload = batch.subspan(kBatchHeaderSize, h.total_size() - kBatchHeaderSize);
  std::string records;
  if (h.codec() == 0) {
    records.assign(payload.begin(), payload.end());
  } else if (!decompress(h.codec(), payload, records)) {
    return fallback;
  }
  Reader r(std::span(reinterpret_cast<uint8_t*>(records.data()), records.size()));
  try {
    for (int32_t i = 0; i < h.record_count; ++i) {
      int32_t length = r.varint();
      size_t start = r.position();
      r.i8();  // attributes
      int64_t timestamp = h.base_timestamp + r.varlong();
      int64_t offset = h.base_offset + r.varint();
      if (timestamp >= ts) return {offset, timestamp};
      size_t used = r.position() - start;
      if (length < 0 || static_cast<size_t>(length) < used) break;
      r.take_span(static_cast<size_t>(length) - used);
    }
  } catch (const DecodeError&) {
  }
  return fallback;
}

}  // namespace oxbow::protocol
