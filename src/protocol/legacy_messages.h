#pragma once
// Message sets of magic 0 and 1, the formats before Kafka 0.11, which Produce v0-v2 and Fetch v0-v3
// carry. Like Kafka 3, the broker takes them from old clients by converting them to one v2 record
// batch, and converts the v2 batches it stores back for old fetchers; it never stores them.
//
// A message set is a sequence of entries:
//   offset        int64   ignored on produce
//   message_size  int32   bytes of the message that follows
//   message:
//     crc         uint32  CRC-32 (zlib's) of the rest of the message
//     magic       int8    0 or 1
//     attributes  int8    bits 0-2 codec (1 gzip, 2 snappy, 3 lz4); magic 1: bit 3 LogAppendTime
//     timestamp   int64   magic 1 only
//     key         int32 length (-1: null), bytes
//     value       int32 length (-1: null), bytes
// A compressed message is a wrapper whose value is the compressed message set of its records,
// uncompressed messages of the wrapper's magic. Magic 0 has no timestamps: converted records get
// none (-1), as in Kafka.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "protocol/errors.h"

namespace oxbow::protocol {

// Whether `records` starts with a magic 0 or 1 message (the magic byte sits where v2 keeps its).
bool is_legacy_message_set(std::span<const uint8_t> records);

// One v2 batch (no producer, offsets from 0, compressed with the messages' codec) holding every
// message of `set`, in `out`. kCorruptMessage for a malformed set, a bad CRC or a compressed set
// that does not decompress; kUnsupportedForMessageFormat for a nested wrapper or an unknown codec.
ErrorCode upconvert_legacy_message_set(std::span<const uint8_t> set, std::vector<uint8_t>& out);

// The magic a Fetch version can carry: 0 for v0-v1, 1 for v2-v3, 2 from v4.
int8_t fetch_magic(int16_t fetch_version);

// Appends to `out` the records of each whole v2 batch of `batches` as messages of `magic` (0 or
// 1), as Kafka converts them for Fetch v0-v3: control batches and record headers are dropped; an
// uncompressed batch gives one message per record, a compressed one a wrapper of its codec whose
// offset is its last record's (inner offsets relative for magic 1, absolute for magic 0; lz4 is
// left uncompressed for magic 0, whose lz4 framing was Kafka's own broken one); magic 0 drops
// timestamps. Uncompressed messages before `first_offset` (the fetch's) are left out, as Kafka
// leaves them out: old clients may not skip them. The batches whose messages would take `out` past
// `max_bytes` are left out, except the first, so that a fetch always moves on, as Kafka's lazy
// conversion (KIP-283) does. kUnsupportedCompressionType for a zstd batch, which no older format
// holds; kCorruptMessage for a batch that does not parse.
ErrorCode downconvert_batches(std::span<const uint8_t> batches, int8_t magic, int64_t first_offset,
                              size_t max_bytes, std::vector<uint8_t>& out);

}  // namespace oxbow::protocol
