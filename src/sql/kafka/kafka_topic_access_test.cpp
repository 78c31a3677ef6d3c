// What SHOW TOPICS EXTENDED reads from a consumer group member: its assignment in the consumer
// protocol's format, and nothing from one that does not read.
#include "sql/kafka/kafka_topic_access.h"

#include <gtest/gtest.h>

namespace oxbow::sql {
namespace {

std::string be(int64_t v, int width) {
  std::string out;
  for (int i = width - 1; i >= 0; --i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
  return out;
}

std::string topic(const std::string& name, std::initializer_list<int> partitions) {
  std::string out = be(static_cast<int64_t>(name.size()), 2) + name +
                    be(static_cast<int64_t>(partitions.size()), 4);
  for (int p : partitions) out += be(p, 4);
  return out;
}

TEST(KafkaTopicAccessTest, AssignmentsCountPartitionsPerTopic) {
  std::string assignment = be(1, 2) + be(2, 4) + topic("orders", {0, 2}) + topic("clicks", {1}) +
                           be(3, 4) + "abc";  // user data
  EXPECT_EQ(assigned_partitions(assignment),
            (std::map<std::string, int>{{"clicks", 1}, {"orders", 2}}));
  EXPECT_TRUE(assigned_partitions("").empty());  // a member not yet assigned
  // Truncated anywhere: what was read whole counts, the rest does not.
  for (size_t cut = 0; cut < assignment.size(); ++cut) {
    auto partial = assigned_partitions(assignment.substr(0, cut));
    EXPECT_LE(partial.size(), 2u);
    if (cut < 6 + topic("orders", {0, 2}).size()) {
      EXPECT_TRUE(partial.empty()) << cut;
    }
  }
  EXPECT_TRUE(assigned_partitions(be(0, 2) + be(1, 4) + be(-1, 2)).empty());
}

}  // namespace
}  // namespace oxbow::sql
