#pragma once
// Record-batch payload codecs 1-4: gzip, snappy, lz4, zstd. The broker decompresses to look
// inside a batch (a timestamp lookup, compaction, conversion to older formats) and compresses when
// a topic's compression.type differs from the producer's codec, when compaction rewrites a
// compressed batch that lost records, and when it converts batches for old fetch versions.
#include <climits>
#include <cstdint>
#include <span>
#include <string>

namespace oxbow::protocol {

// The codec numbers in a record batch's attributes (0: uncompressed).
inline constexpr int kGzipCodec = 1;
inline constexpr int kSnappyCodec = 2;
inline constexpr int kLz4Codec = 3;
inline constexpr int kZstdCodec = 4;

// Appends the decompressed bytes to `out`; false for an unknown codec or corrupt input. Output
// beyond `max_output` bytes is refused as corrupt.
bool decompress(int codec, std::span<const uint8_t> input, std::string& out,
                size_t max_output = 256 << 20);

// A codec's default level. Levels are Kafka's (KIP-390): gzip 1-9 (-1: zlib's default), lz4 1-17
// (9, the default, is lz4's fast mode; others its high-compression mode), zstd -131072-22 (3).
// Snappy has none.
constexpr int kDefaultCompressionLevel = INT32_MIN;

// Appends `input` compressed the way clients expect it (gzip stream, raw snappy, lz4 frame, zstd
// frame); false for an unknown codec or a library failure.
bool compress(int codec, std::span<const uint8_t> input, std::string& out,
              int level = kDefaultCompressionLevel);

}  // namespace oxbow::protocol
