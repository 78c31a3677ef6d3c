// Kafka's partition time in commit metadata (runtime/partition_time.h).
#include "streams/runtime/partition_time.h"

#include <gtest/gtest.h>

namespace oxbow::streams::detail {
namespace {

TEST(PartitionTime, KafkasCommitMetadataRoundTrips) {
  // Base64 of 01 00 00 01 8b cf e5 68 00: version 1, then 1700000000000 big-endian.
  EXPECT_EQ(encode_partition_time(1700000000000), "AQAAAYvP5WgA");
  EXPECT_EQ(decode_partition_time("AQAAAYvP5WgA"), 1700000000000);
  for (int64_t t : {int64_t{0}, int64_t{-1}, int64_t{42}, int64_t{1} << 62})
    EXPECT_EQ(decode_partition_time(encode_partition_time(t)), t);
  EXPECT_EQ(decode_partition_time(""), std::nullopt);
  EXPECT_EQ(decode_partition_time("AgAAAYvP5WgA"), std::nullopt);  // version 2
  EXPECT_EQ(decode_partition_time("AQAAAYvP5Wg"), std::nullopt);
  EXPECT_EQ(decode_partition_time("AQAAAYvP5Wg!"), std::nullopt);
}

}  // namespace
}  // namespace oxbow::streams::detail
