#include "common/base64.h"

#include <gtest/gtest.h>

namespace oxbow {
namespace {

TEST(Base64, RoundTripsWithPaddingAndRefusesWhatIsNotBase64) {
  EXPECT_EQ(base64(""), "");
  EXPECT_EQ(base64("hi!"), "aGkh");
  EXPECT_EQ(base64(std::string("\x01\x02", 2)), "AQI=");
  EXPECT_EQ(base64("a"), "YQ==");
  EXPECT_EQ(unbase64("YQ=="), std::optional<std::string>("a"));
  EXPECT_EQ(unbase64("AQI="), std::optional<std::string>(std::string("\x01\x02", 2)));
  EXPECT_EQ(unbase64("abc"), std::nullopt);
  EXPECT_EQ(unbase64("a*b="), std::nullopt);
}

}  // namespace
}  // namespace oxbow
