#include "common/random_id.h"

#include <gtest/gtest.h>

namespace oxbow {

TEST(RandomId, KafkasShapeAndNeverTheSame) {
  auto a = random_base64_id(), b = random_base64_id();
  EXPECT_EQ(a.size(), 22u);
  EXPECT_EQ(a.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
            std::string::npos);
  EXPECT_NE(a, b);
}

}  // namespace oxbow
