#include "streams/assignment/protocol_data.h"

#include <gtest/gtest.h>

namespace oxbow::streams::detail {
namespace {

std::string hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

TEST(StreamsProtocolData, SubscriptionHasKafkasVersion11Layout) {
  SubscriptionInfo s;
  s.process_id = uuid_bytes("00112233-4455-6677-8899-aabbccddeeff");
  s.endpoint = "h:1";
  s.task_offset_sums[{1, 2}] = kLatestOffsetSum;
  s.unique_field = 7;
  std::string bytes = s.encode();
  // version, latest supported, process id, endpoint with an int32 length, one task (sub-topology,
  // partition, sum, null named topology), unique field, error code, no tags.
  EXPECT_EQ(hex(bytes),
            "0000000b"
            "0000000b"
            "00112233445566778899aabbccddeeff"
            "00000003683a31"
            "00000001"
            "00000001"
            "00000002"
            "fffffffffffffffe"
            "ffff"
            "07"
            "00000000"
            "00000000");
  auto back = SubscriptionInfo::decode(bytes);
  EXPECT_EQ(back.process_id, s.process_id);
  EXPECT_EQ(back.endpoint, "h:1");
  EXPECT_EQ(back.task_offset_sums, s.task_offset_sums);
  EXPECT_EQ(back.unique_field, 7);
}

TEST(StreamsProtocolData, SubscriptionWithTagsAndErrorRoundTrips) {
  SubscriptionInfo s;
  s.process_id = uuid_bytes("ffffffff-0000-0000-0000-000000000001");
  s.task_offset_sums[{0, 0}] = 12345;
  s.task_offset_sums[{3, 9}] = 0;
  s.error_code = 4;
  s.client_tags["zone"] = "eu-1";
  auto back = SubscriptionInfo::decode(s.encode());
  EXPECT_EQ(back.task_offset_sums, s.task_offset_sums);
  EXPECT_EQ(back.error_code, 4);
  EXPECT_EQ(back.client_tags, s.client_tags);
  EXPECT_EQ(uuid_text(back.process_id), "ffffffff-0000-0000-0000-000000000001");
}

TEST(StreamsProtocolData, OlderOrTruncatedSubscriptionsAreRefused) {
  SubscriptionInfo s;
  std::string bytes = s.encode();
  EXPECT_THROW(SubscriptionInfo::decode(bytes.substr(0, bytes.size() - 3)), std::runtime_error);
  std::string v9 = bytes;
  v9[3] = 9;
  EXPECT_THROW(SubscriptionInfo::decode(v9), std::runtime_error);
  // A count far beyond the bytes that follow is refused before anything is allocated for it.
  std::string lying = bytes.substr(0, 8 + 16 + 4) + std::string("\x7f\xff\xff\xff", 4);
  EXPECT_THROW(SubscriptionInfo::decode(lying), std::runtime_error);
}

TEST(StreamsProtocolData, AssignmentRoundTripsWithItsTopicDictionary) {
  AssignmentInfo a;
  a.active_tasks = {{0, 1}, {0, 1}, {1, 1}};
  a.standby_tasks[{0, 2}] = {{"input", 2}, {"app-repartition", 2}};
  a.active_by_host[{"a", 7070}] = {{"input", 1}, {"app-repartition", 1}};
  a.active_by_host[{"b", 7071}] = {{"input", 0}};
  a.standby_by_host[{"b", 7071}] = {{"input", 2}};
  a.next_rebalance_ms = 1234;
  std::string bytes = a.encode();
  auto back = AssignmentInfo::decode(bytes);
  EXPECT_EQ(back.active_tasks, a.active_tasks);
  EXPECT_EQ(back.standby_tasks, a.standby_tasks);
  EXPECT_EQ(back.active_by_host, a.active_by_host);
  EXPECT_EQ(back.standby_by_host, a.standby_by_host);
  EXPECT_EQ(back.next_rebalance_ms, 1234);
  // used and common version, then three task ids of 12 bytes each (named topology length 0).
  EXPECT_EQ(hex(bytes.substr(0, 24)), "0000000b0000000b00000003000000000000000100000000");
  EXPECT_THROW(AssignmentInfo::decode(bytes.substr(0, 40)), std::runtime_error);
}

// Kafka writes a named topology's name in a task id with writeChars (two bytes a character) and
// in an offset sum as a nullable string; a task without one keeps the layouts above.
TEST(StreamsProtocolData, NamedTopologyTasksCarryTheirTopologyBothWays) {
  AssignmentInfo a;
  a.active_tasks = {{0, 1, "q1"}, {0, 1}};
  a.standby_tasks[{2, 0, "q_2"}] = {{"input", 0}};
  std::string bytes = a.encode();
  // Two active tasks; the first: sub-topology 0, partition 1, 2 characters, 'q' and '1'.
  EXPECT_EQ(hex(bytes.substr(8, 20)), "0000000200000000000000010000000200710031");
  auto back = AssignmentInfo::decode(bytes);
  EXPECT_EQ(back.active_tasks, a.active_tasks);
  EXPECT_EQ(back.standby_tasks, a.standby_tasks);

  SubscriptionInfo s;
  s.task_offset_sums[{1, 2, "q1"}] = 5;
  s.task_offset_sums[{1, 2}] = 6;
  auto sums = SubscriptionInfo::decode(s.encode()).task_offset_sums;
  EXPECT_EQ(sums, s.task_offset_sums);
  EXPECT_EQ(sums.size(), 2u);
}

TEST(StreamsProtocolData, ConsumerEnvelopesRoundTrip) {
  ConsumerSubscription s{{"t1", "t2"}, "user", {{"t1", 0}, {"t1", 3}, {"t2", 1}}};
  auto sb = ConsumerSubscription::decode(s.encode());
  EXPECT_EQ(sb.topics, s.topics);
  EXPECT_EQ(sb.user_data, "user");
  EXPECT_EQ(sb.owned, s.owned);
  ConsumerAssignment a{{{"t1", 0}, {"t2", 5}}, "data"};
  auto ab = ConsumerAssignment::decode(a.encode());
  EXPECT_EQ(ab.partitions, a.partitions);
  EXPECT_EQ(ab.user_data, "data");
  // Version 0 subscriptions (no owned partitions) are read too.
  std::string v0 = std::string("\0\0\0\0\0\1\0\1t\0\0\0\0", 13);
  auto old = ConsumerSubscription::decode(v0);
  EXPECT_EQ(old.topics, std::vector<std::string>{"t"});
  EXPECT_TRUE(old.owned.empty());
}

TEST(StreamsProtocolData, UuidTextIsCheckedBothWays) {
  EXPECT_THROW(uuid_bytes("not-a-uuid"), std::invalid_argument);
  EXPECT_THROW(uuid_bytes("00112233-4455-6677-8899-aabbccddee"), std::invalid_argument);
  auto id = uuid_bytes("0A112233-4455-6677-8899-AABBCCDDEEFF");
  EXPECT_EQ(uuid_text(id), "0a112233-4455-6677-8899-aabbccddeeff");
}

}  // namespace
}  // namespace oxbow::streams::detail
