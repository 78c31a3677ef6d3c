#include "common/crc32c.h"

#include <nmmintrin.h>

#include <array>
#include <cstring>

namespace oxbow {
namespace {

constexpr uint32_t kPolynomial = 0x82F63B78;  // reflected Castagnoli

constexpr std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPolynomial : c >> 1;
    table[i] = c;
  }
  return table;
}
constexpr auto kTable = make_table();

uint32_t extend_software(uint32_t crc, const uint8_t* p, size_t n) {
  while (n--) crc = kTable[(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return crc;
}

__attribute__((target("sse4.2"))) uint32_t extend_hardware(uint32_t crc, const uint8_t* p,
                                                          size_t n) {
  uint64_t c = crc;
  while (n >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    c = _mm_crc32_u64(c, word);
    p += 8;
    n -= 8;
  }
  uint32_t c32 = static_cast<uint32_t>(c);
  while (n--) c32 = _mm_crc32_u8(c32, *p++);
  return c32;
}

bool cpu_has_sse42() { return __builtin_cpu_supports("sse4.2"); }

}  // namespace

uint32_t crc32c_extend(uint32_t crc, const void* data, size_t size) {
  static const bool hardware = cpu_has_sse42();
  const auto* p = static_cast<const uint8_t*>(data);
  crc = ~crc;
  crc = hardware ? extend_hardware(crc, p, size) : extend_software(crc, p, size);
  return ~crc;
}

}  // namespace oxbow
