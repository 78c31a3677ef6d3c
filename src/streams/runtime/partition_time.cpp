#include "streams/runtime/partition_time.h"

namespace oxbow::streams::detail {

namespace {

constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr uint8_t kVersion = 1;

}  // namespace

// Nine bytes are three groups of three: twelve characters, no padding.
std::string encode_partition_time(int64_t time) {
  uint8_t bytes[9] = {kVersion};
  for (int i = 0; i < 8; ++i)
    bytes[1 + i] = static_cast<uint8_t>(static_cast<uint64_t>(time) >> (56 - 8 * i));
  std::string out;
  for (int g = 0; g < 9; g += 3) {
    uint32_t n = uint32_t{bytes[g]} << 16 | uint32_t{bytes[g + 1]} << 8 | bytes[g + 2];
    for (int shift = 18; shift >= 0; shift -= 6) out.push_back(kAlphabet[n >> shift & 63]);
  }
  return out;
}

std::optional<int64_t> decode_partition_time(std::string_view metadata) {
  if (metadata.size() != 12) return std::nullopt;
  uint8_t bytes[9];
  for (int g = 0; g < 3; ++g) {
    uint32_t n = 0;
    for (int k = 0; k < 4; ++k) {
      auto at = kAlphabet.find(metadata[4 * g + k]);
      if (at == std::string_view::npos) return std::nullopt;
      n = n << 6 | static_cast<uint32_t>(at);
    }
    for (int k = 0; k < 3; ++k) bytes[3 * g + k] = static_cast<uint8_t>(n >> (16 - 8 * k));
  }
  if (bytes[0] != kVersion) return std::nullopt;
  uint64_t time = 0;
  for (int i = 1; i < 9; ++i) time = time << 8 | bytes[i];
  return static_cast<int64_t>(time);
}

}  // namespace oxbow::streams::detail
