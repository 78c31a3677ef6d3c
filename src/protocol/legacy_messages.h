#pragma once
// Message sets of magic 0 and 1, the formats before Kafka 0.11, which Produce v0-v2 carry. Like
// Kafka 3, the broker takes them from old clients by converting them to one v2 record batch; it
// never stores or serves them.
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

}  // namespace oxbow::protocol
