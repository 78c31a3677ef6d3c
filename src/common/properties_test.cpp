#include "common/properties.h"

#include <gtest/gtest.h>

namespace oxbow {

TEST(Properties, ParsesKafkaStyleFile) {
  Properties props;
  auto error = parse_properties(
      "# comment\n! also\nnode.id=0\n  log.dirs = /tmp/x  \nnum.partitions: 3\n\n", props);
  ASSERT_FALSE(error);
  EXPECT_EQ(props.at("node.id"), "0");
  EXPECT_EQ(props.at("log.dirs"), "/tmp/x");
  EXPECT_EQ(props.at("num.partitions"), "3");
}

TEST(Properties, RejectsLineWithoutSeparator) {
  Properties props;
  auto error = parse_properties("a=1\nbogus\n", props);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("line 2"), std::string::npos);
}

TEST(Properties, StrictNumbers) {
  EXPECT_EQ(parse_int64("42"), 42);
  EXPECT_EQ(parse_int64("-1"), -1);
  EXPECT_FALSE(parse_int64("12ms"));
  EXPECT_FALSE(parse_int64(""));
  EXPECT_EQ(parse_bool("true"), true);
  EXPECT_FALSE(parse_bool("yes"));
}

}  // namespace oxbow

namespace oxbow {

TEST(Properties, AsciiCaseMapping) {
  EXPECT_EQ(ascii_lower("SASL_SSL-Listener1"), "sasl_ssl-listener1");
  EXPECT_EQ(ascii_upper("pkcs12"), "PKCS12");
  EXPECT_EQ(ascii_lower("\xc3\x89t\xc3\xa9"),
            "\xc3\x89t\xc3\xa9");  // bytes past ASCII are left alone
}

}  // namespace oxbow
