#pragma once
// Record-batch payload codecs 1-4: gzip, snappy, lz4, zstd. The broker stores and serves batches
// as produced; it decompresses to look inside one (a timestamp lookup, compaction) and compresses
// only when compaction rewrites a compressed batch that lost records.
#include <cstdint>
#include <span>
#include <string>

namespace oxbow::protocol {

// Appends the decompressed bytes to `out`; false for an unknown codec or corrupt input. Output
// beyond `max_output` bytes is refused as corrupt.
bool decompress(int codec, std::span<const uint8_t> input, std::string& out,
                size_t max_output = 256 << 20);

// Appends `input` compressed the way clients expect it (gzip stream, raw snappy, lz4 frame, zstd
// frame); false for an unknown codec or a library failure.
bool compress(int codec, std::span<const uint8_t> input, std::string& out);

}  // namespace oxbow::protocol
