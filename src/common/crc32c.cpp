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

// The crc32 instruction has a latency of three cycles but issues every cycle, so three
// independent streams over adjacent blocks run about three times faster than one. The streams'
// registers are then merged: feeding B zero bytes to a register multiplies it by x^(8B), a linear
// map, tabulated here per input byte.
constexpr size_t kLaneBytes = 4096;

struct ShiftTable {
  uint32_t by_byte[4][256];
};

__attribute__((target("sse4.2"))) const ShiftTable& lane_shift_table() {
  static const ShiftTable table = [] {
    ShiftTable t{};
    static const uint8_t zeros[kLaneBytes] = {};
    for (int k = 0; k < 4; ++k) {
      for (uint32_t b = 0; b < 256; ++b) t.by_byte[k][b] = extend_hardware(b << (8 * k), zeros, kLaneBytes);
    }
    return t;
  }();
  return table;
}

uint32_t shift_one_lane(const ShiftTable& t, uint32_t crc) {
  return t.by_byte[0][crc & 0xff] ^ t.by_byte[1][(crc >> 8) & 0xff] ^ t.by_byte[2][(crc >> 16) & 0xff] ^
         t.by_byte[3][crc >> 24];
}

__attribute__((target("sse4.2"))) uint32_t extend_hardware_3way(uint32_t crc, const uint8_t* p, size_t n) {
  const ShiftTable& table = lane_shift_table();
  while (n >= 3 * kLaneBytes) {
    uint64_t c0 = crc, c1 = 0, c2 = 0;
    for (size_t i = 0; i < kLaneBytes; i += 8) {
      uint64_t w0, w1, w2;
      std::memcpy(&w0, p + i, 8);
      std::memcpy(&w1, p + kLaneBytes + i, 8);
      std::memcpy(&w2, p + 2 * kLaneBytes + i, 8);
      c0 = _mm_crc32_u64(c0, w0);
      c1 = _mm_crc32_u64(c1, w1);
      c2 = _mm_crc32_u64(c2, w2);
    }
    uint32_t merged = shift_one_lane(table, static_cast<uint32_t>(c0)) ^ static_cast<uint32_t>(c1);
    crc = shift_one_lane(table, merged) ^ static_cast<uint32_t>(c2);
    p += 3 * kLaneBytes;
    n -= 3 * kLaneBytes;
  }
  return extend_hardware(crc, p, n);
}

bool cpu_has_sse42() { return __builtin_cpu_supports("sse4.2"); }

}  // namespace

uint32_t crc32c_extend(uint32_t crc, const void* data, size_t size) {
  static const bool hardware = cpu_has_sse42();
  const auto* p = static_cast<const uint8_t*>(data);
  crc = ~crc;
  crc = hardware ? extend_hardware_3way(crc, p, size) : extend_software(crc, p, size);
  return ~crc;
}

}  // namespace oxbow
