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

}  // namespace oxbow
