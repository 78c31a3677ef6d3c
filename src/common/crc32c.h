#pragma once
// CRC-32C (Castagnoli), the checksum of Kafka record batches v2.
#include <cstddef>
#include <cstdint>

namespace oxbow {

// Extends `crc` (0 for a fresh checksum) over `size` bytes at `data`.
uint32_t crc32c_extend(uint32_t crc, const void* data, size_t size);
inline uint32_t crc32c(const void* data, size_t size) {
  return crc32c_extend(0, data, size);
}

}  // namespace oxbow
