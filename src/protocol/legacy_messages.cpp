#include "protocol/legacy_messages.h"

#include <zlib.h>

#include <optional>
#include <string>

#include "protocol/batch_builder.h"
#include "protocol/compression.h"
#include "protocol/record_batch.h"
#include "protocol/wire.h"

namespace oxbow::protocol {
namespace {

constexpr size_t kEntryOverhead = 12;   // offset + message_size
constexpr size_t kMinMessageSize = 14;  // crc, magic, attributes, key and value lengths
constexpr int kLegacyCodecMask = 0x07;
constexpr int kLegacyLogAppendTimeBit = 0x08;
constexpr int kLz4 = 3;
constexpr int kZstd = 4;
// A set holds at most one produce's worth of records (message.max.bytes, 1 MB by default, when
// compressed); more than this in all once decompressed is taken for a compression bomb.
constexpr size_t kMaxInflatedBytes = 64 << 20;

struct LegacyMessage {
  int8_t magic;
  int8_t attributes;
  int64_t timestamp;  // -1 for magic 0
  std::optional<std::string> key;
  std::optional<std::string> value;
};

std::optional<std::string> read_legacy_bytes(Reader& r) {
  int32_t length = r.i32();
  if (length < 0) return std::nullopt;
  auto bytes = r.take_span(static_cast<size_t>(length));
  return std::string(bytes.begin(), bytes.end());
}

// Parses every entry of `set` into `out`; the error of the first bad one.
ErrorCode parse_set(std::span<const uint8_t> set, std::vector<LegacyMessage>& out) {
  Reader r(std::span(const_cast<uint8_t*>(set.data()), set.size()));
  try {
    while (r.remaining() > 0) {
      if (r.remaining() < kEntryOverhead) return ErrorCode::kCorruptMessage;
      r.i64();  // offset
      int32_t size = r.i32();
      if (size < static_cast<int32_t>(kMinMessageSize) ||
          static_cast<size_t>(size) > r.remaining()) {
        return ErrorCode::kCorruptMessage;
      }
      auto body = r.take_span(static_cast<size_t>(size));
      uint32_t stored_crc = static_cast<uint32_t>(body[0]) << 24 |
                            static_cast<uint32_t>(body[1]) << 16 |
                            static_cast<uint32_t>(body[2]) << 8 | body[3];
      if (static_cast<uint32_t>(::crc32(0, body.data() + 4, static_cast<uInt>(body.size() - 4))) !=
          stored_crc) {
        return ErrorCode::kCorruptMessage;
      }
      Reader m(body.subspan(4));
      LegacyMessage message;
      message.magic = m.i8();
      if (message.magic != 0 && message.magic != 1) return ErrorCode::kCorruptMessage;
      message.attributes = m.i8();
      message.timestamp = message.magic == 1 ? m.i64() : -1;
      message.key = read_legacy_bytes(m);
      message.value = read_legacy_bytes(m);
      if (m.remaining() != 0) return ErrorCode::kCorruptMessage;
      out.push_back(std::move(message));
    }
  } catch (const DecodeError&) {
    return ErrorCode::kCorruptMessage;
  }
  return ErrorCode::kNone;
}

// The records a wrapper's value holds, with the wrapper's LogAppendTime applied as Kafka does.
ErrorCode unwrap(const LegacyMessage& wrapper, std::vector<LegacyMessage>& out,
                 size_t& inflate_budget) {
  int codec = wrapper.attributes & kLegacyCodecMask;
  // Magic 0's lz4 frames carry a header checksum computed the wrong way (Kafka's old framing).
  if (codec > kLz4 || (codec == kLz4 && wrapper.magic == 0))
    return ErrorCode::kUnsupportedForMessageFormat;
  if (!wrapper.value) return ErrorCode::kCorruptMessage;
  std::string inner;
  const auto* packed = reinterpret_cast<const uint8_t*>(wrapper.value->data());
  if (!decompress(codec, {packed, wrapper.value->size()}, inner, inflate_budget))
    return ErrorCode::kCorruptMessage;
  inflate_budget -= inner.size();
  size_t first = out.size();
  if (auto error = parse_set({reinterpret_cast<const uint8_t*>(inner.data()), inner.size()}, out);
      error != ErrorCode::kNone) {
    return error;
  }
  for (size_t i = first; i < out.size(); ++i) {
    auto& message = out[i];
    if ((message.attributes & kLegacyCodecMask) != 0)
      return ErrorCode::kUnsupportedForMessageFormat;
    if (message.magic != wrapper.magic) return ErrorCode::kCorruptMessage;
    if (wrapper.attributes & kLegacyLogAppendTimeBit) message.timestamp = wrapper.timestamp;
  }
  return ErrorCode::kNone;
}

// Big-endian, as the wire has it.
void put_nullable(Writer& out, const std::optional<std::string_view>& bytes) {
  out.i32(bytes ? static_cast<int32_t>(bytes->size()) : -1);
  if (bytes) out.raw(bytes->data(), bytes->size());
}

// One entry of a message set: offset, size, then the message with its CRC.
void put_message(Writer& out, int64_t offset, int8_t magic, int8_t attributes, int64_t timestamp,
                 const std::optional<std::string_view>& key,
                 const std::optional<std::string_view>& value) {
  out.i64(offset);
  size_t size_at = out.reserve_i32();
  size_t crc_at = out.reserve_i32();
  out.i8(magic);
  out.i8(attributes);
  if (magic == 1) out.i64(timestamp);
  put_nullable(out, key);
  put_nullable(out, value);
  const auto& bytes = out.buffer();
  size_t crc_from = crc_at + 4;
  auto crc = ::crc32(0, bytes.data() + crc_from, static_cast<uInt>(bytes.size() - crc_from));
  out.patch_i32(size_at, static_cast<int32_t>(bytes.size() - crc_at));
  out.patch_i32(crc_at, static_cast<int32_t>(static_cast<uint32_t>(crc)));
}

// The messages of one batch's records, appended to `out`.
ErrorCode downconvert_batch(std::span<const uint8_t> batch, const BatchHeader& header, int8_t magic,
                            int64_t first_offset, Writer& out) {
  std::string scratch;
  std::vector<RawRecord> records;
  if (!parse_raw_records(batch, scratch, records)) return ErrorCode::kCorruptMessage;
  if (records.empty()) return ErrorCode::kNone;  // all compacted away
  bool log_append_time = magic == 1 && header.log_append_time();
  auto timestamp_bit = static_cast<int8_t>(log_append_time ? kLegacyLogAppendTimeBit : 0);
  auto timestamp_of = [&](const RawRecord& r) {
    return log_append_time ? header.max_timestamp : r.view.timestamp;
  };
  int codec = header.codec();
  if (codec == kLz4 && magic == 0) codec = 0;
  if (codec == 0) {
    for (const auto& r : records) {
      if (r.view.offset < first_offset) continue;
      put_message(out, r.view.offset, magic, timestamp_bit, timestamp_of(r), r.view.key,
                  r.view.value);
    }
    return ErrorCode::kNone;
  }
  Writer inner;
  int64_t first = records.front().view.offset;
  for (const auto& r : records) {
    int64_t offset = magic == 1 ? r.view.offset - first : r.view.offset;
    put_message(inner, offset, magic, 0, timestamp_of(r), r.view.key, r.view.value);
  }
  std::string packed;
  if (!compress(codec, inner.buffer(), packed)) return ErrorCode::kCorruptMessage;
  put_message(out, records.back().view.offset, magic, static_cast<int8_t>(codec | timestamp_bit),
              header.max_timestamp, std::nullopt, std::string_view(packed));
  return ErrorCode::kNone;
}

}  // namespace

int8_t fetch_magic(int16_t fetch_version) {
  return fetch_version <= 1 ? 0 : fetch_version <= 3 ? 1 : 2;
}

ErrorCode downconvert_batches(std::span<const uint8_t> batches, int8_t magic, int64_t first_offset,
                              size_t max_bytes, std::vector<uint8_t>& out) {
  size_t start = out.size();
  size_t pos = 0;
  Writer converted;
  while (batches.size() - pos >= kBatchHeaderSize) {
    auto header = read_batch_header(batches.data() + pos);
    if (header.batch_length < 0 || header.total_size() > batches.size() - pos) break;  // partial
    auto batch = batches.subspan(pos, header.total_size());
    pos += header.total_size();
    if (header.is_control()) continue;
    if (header.codec() == kZstd) return ErrorCode::kUnsupportedCompressionType;
    auto& messages = converted.buffer();
    messages.clear();
    if (auto error = downconvert_batch(batch, header, magic, first_offset, converted);
        error != ErrorCode::kNone)
      return error;
    if (out.size() > start && out.size() - start + messages.size() > max_bytes) break;
    out.insert(out.end(), messages.begin(), messages.end());
  }
  return ErrorCode::kNone;
}

bool is_legacy_message_set(std::span<const uint8_t> records) {
  return records.size() > kMagicOffset &&
         (records[kMagicOffset] == 0 || records[kMagicOffset] == 1);
}

ErrorCode upconvert_legacy_message_set(std::span<const uint8_t> set, std::vector<uint8_t>& out) {
  std::vector<LegacyMessage> entries;
  if (auto error = parse_set(set, entries); error != ErrorCode::kNone) return error;
  if (entries.empty()) return ErrorCode::kCorruptMessage;
  std::vector<LegacyMessage> messages;
  int codec = 0;
  size_t inflate_budget = kMaxInflatedBytes;
  for (auto& entry : entries) {
    int entry_codec = entry.attributes & kLegacyCodecMask;
    if (entry_codec == 0) {
      messages.push_back(std::move(entry));
      continue;
    }
    if (auto error = unwrap(entry, messages, inflate_budget); error != ErrorCode::kNone)
      return error;
    codec = entry_codec;
  }
  if (messages.empty()) return ErrorCode::kCorruptMessage;

  // Timestamps are deltas from the first known one; none known (magic 0) leaves them all at -1.
  int64_t base_timestamp = -1;
  for (const auto& m : messages) {
    if (m.timestamp >= 0) {
      base_timestamp = m.timestamp;
      break;
    }
  }
  std::vector<OutgoingRecord> records;
  records.reserve(messages.size());
  for (auto& m : messages) {
    int64_t delta = m.timestamp < 0 ? 0 : m.timestamp - base_timestamp;
    records.push_back({std::move(m.key), std::move(m.value), delta});
  }
  out = build_batch(records, base_timestamp);
  // Stored with the producer's codec, as Kafka's conversion keeps compression.type=producer.
  if (codec != 0) {
    auto plain = std::move(out);
    if (!recompress_batches(plain, codec, out)) return ErrorCode::kCorruptMessage;
  }
  return ErrorCode::kNone;
}

}  // namespace oxbow::protocol
