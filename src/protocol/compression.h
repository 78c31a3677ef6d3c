#pragma once
// Decompression of record-batch payloads (codecs 1-4: gzip, snappy, lz4, zstd). The broker stores
// and serves batches compressed; it only looks inside one to find a record by timestamp.
#include <cstdint>
#include <span>
#include <string>

namespace oxbow::protocol {

// Appends the decompressed bytes to `out`; false for an unknown codec or corrupt input. Output
// beyond `max_output` bytes is refused as corrupt.
bool decompress(int codec, std::span<const uint8_t> input, std::string& out, size_t max_output = 256 << 20);

}  // namespace oxbow::protocol
