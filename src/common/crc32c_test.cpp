#include "common/crc32c.h"

#include <gtest/gtest.h>

#include <string>

namespace oxbow {

// Check values from RFC 3720 (iSCSI), appendix B.4.
TEST(Crc32c, KnownVectors) {
  std::string zeros(32, '\0');
  EXPECT_EQ(crc32c(zeros.data(), zeros.size()), 0x8A9136AAu);
  std::string ones(32, '\xff');
  EXPECT_EQ(crc32c(ones.data(), ones.size()), 0x62A8AB43u);
  std::string digits = "123456789";
  EXPECT_EQ(crc32c(digits.data(), digits.size()), 0xE3069283u);
}

TEST(Crc32c, ExtendEqualsWhole) {
  std::string text = "the quick brown fox jumps over the lazy dog, twice over";
  uint32_t part = crc32c(text.data(), 13);
  EXPECT_EQ(crc32c_extend(part, text.data() + 13, text.size() - 13),
            crc32c(text.data(), text.size()));
}

// Short and long inputs, on both sides of the sizes where ISA-L changes kernels, against a
// bitwise reference.
TEST(Crc32c, InputsOfManyLengthsMatchBitwiseReference) {
  auto reference = [](const std::string& data) {
    uint32_t crc = ~0u;
    for (unsigned char c : data) {
      crc ^= c;
      for (int k = 0; k < 8; ++k) crc = (crc & 1) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
    }
    return ~crc;
  };
  std::string data;
  uint32_t seed = 12345;
  for (int i = 0; i < 100000; ++i) {
    seed = seed * 1103515245u + 12345u;
    data += static_cast<char>(seed >> 24);
  }
  for (size_t length : {0u, 1u, 15u, 16u, 63u, 64u, 255u, 256u, 1023u, 12287u, 12288u, 12289u,
                        24576u, 50000u, 100000u}) {
    std::string part = data.substr(0, length);
    EXPECT_EQ(crc32c(part.data(), part.size()), reference(part)) << length;
  }
  // Extending in pieces agrees with the whole, whichever path each piece takes.
  uint32_t pieces = crc32c(data.data(), 30000);
  EXPECT_EQ(crc32c_extend(pieces, data.data() + 30000, data.size() - 30000),
            crc32c(data.data(), data.size()));
}

}  // namespace oxbow
