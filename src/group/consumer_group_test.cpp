#include "group/consumer_group.h"

#include <gtest/gtest.h>

#include "group/consumer_group_records.h"
#include "group/offset_records.h"

namespace oxbow::group {
namespace {

Uuid topic_id(uint8_t n) {
  Uuid id{};
  id[15] = n;
  return id;
}

class FakeCatalog : public TopicCatalog {
 public:
  std::map<std::string, TopicShape> topics;
  void add(const std::string& name, uint8_t id, int32_t partitions) {
    topics[name] = {topic_id(id), name, partitions};
  }
  std::optional<TopicShape> find(const std::string& name) const override {
    auto it = topics.find(name);
    return it == topics.end() ? std::nullopt : std::optional(it->second);
  }
  // A prefix stands in for a regular expression.
  std::vector<std::string> matching(const std::string& prefix) const override {
    std::vector<std::string> out;
    for (const auto& [name, _] : topics) {
      if (name.starts_with(prefix)) out.push_back(name);
    }
    return out;
  }
};

size_t count(const Assignment& a) {
  size_t n = 0;
  for (const auto& [_, p] : a) n += p.size();
  return n;
}

OwnedPartitions owned(const Assignment& a) {
  OwnedPartitions out;
  for (const auto& [t, p] : a) out.emplace_back(t, std::vector<int32_t>(p.begin(), p.end()));
  return out;
}

TEST(Assignor, UniformBalancesAndKeepsWhatItCan) {
  std::map<std::string, TopicShape> topics{{"t", {topic_id(1), "t", 6}}};
  auto first = assign("uniform", {{"a", {"t"}, {}}, {"b", {"t"}, {}}}, topics);
  EXPECT_EQ(count(first["a"]), 3u);
  EXPECT_EQ(count(first["b"]), 3u);
  auto second = assign(
      "uniform", {{"a", {"t"}, first["a"]}, {"b", {"t"}, first["b"]}, {"c", {"t"}, {}}}, topics);
  EXPECT_EQ(count(second["a"]), 2u);
  EXPECT_EQ(count(second["b"]), 2u);
  EXPECT_EQ(count(second["c"]), 2u);
  // Sticky: what a and b keep came from their previous targets.
  for (const char* m : {"a", "b"}) {
    for (int32_t p : second[m][topic_id(1)]) EXPECT_TRUE(first[m][topic_id(1)].contains(p));
  }
}

TEST(Assignor, UniformKeepsEachMembersLowestPartitions) {
  // The choices librdkafka's own tests expect of Kafka (0113 x_incremental_rebalances).
  std::map<std::string, TopicShape> topics{{"t", {topic_id(1), "t", 6}}};
  Assignment all{{topic_id(1), {0, 1, 2, 3, 4, 5}}};
  auto two = assign("uniform", {{"c0", {"t"}, all}, {"c1", {"t"}, {}}}, topics);
  EXPECT_EQ(two["c0"][topic_id(1)], (std::set<int32_t>{0, 1, 2}));
  EXPECT_EQ(two["c1"][topic_id(1)], (std::set<int32_t>{3, 4, 5}));
  auto three = assign(
      "uniform", {{"c0", {"t"}, two["c0"]}, {"c1", {"t"}, two["c1"]}, {"c2", {"t"}, {}}}, topics);
  EXPECT_EQ(three["c0"][topic_id(1)], (std::set<int32_t>{0, 1}));
  EXPECT_EQ(three["c1"][topic_id(1)], (std::set<int32_t>{3, 4}));
  EXPECT_EQ(three["c2"][topic_id(1)], (std::set<int32_t>{2, 5}));
}

TEST(Assignor, UniformGivesATopicOnlyToItsSubscribers) {
  std::map<std::string, TopicShape> topics{{"x", {topic_id(1), "x", 4}},
                                           {"y", {topic_id(2), "y", 2}}};
  auto out = assign("uniform", {{"a", {"x", "y"}, {}}, {"b", {"x"}, {}}}, topics);
  EXPECT_EQ(out["b"].count(topic_id(2)), 0u);
  EXPECT_EQ(count(out["a"]) + count(out["b"]), 6u);
  EXPECT_EQ(count(out["a"]), 3u);
}

TEST(Assignor, RangeGivesContiguousRanges) {
  std::map<std::string, TopicShape> topics{{"t", {topic_id(1), "t", 5}}};
  auto out = assign("range", {{"b", {"t"}, {}}, {"a", {"t"}, {}}}, topics);
  EXPECT_EQ(out["a"][topic_id(1)], (std::set<int32_t>{0, 1, 2}));
  EXPECT_EQ(out["b"][topic_id(1)], (std::set<int32_t>{3, 4}));
}

class ConsumerGroupTest : public ::testing::Test {
 protected:
  ConsumerGroupTest() { catalog.add("t", 1, 4); }
  ConsumerHeartbeatResult join(const std::string& member, int64_t now = 0,
                               std::optional<std::string> instance = std::nullopt) {
    ConsumerHeartbeat h;
    h.member_id = member;
    h.member_epoch = 0;
    h.instance_id = std::move(instance);
    h.rebalance_timeout_ms = 1000;
    h.subscribed_topic_names = std::vector<std::string>{"t"};
    h.owned = OwnedPartitions{};
    return beat(h, now);
  }
  ConsumerHeartbeatResult beat(const ConsumerHeartbeat& h, int64_t now = 0) {
    return group.heartbeat(h, catalog, options, now);
  }
  ConsumerHeartbeatResult ping(const std::string& member, int32_t epoch,
                               std::optional<Assignment> owns, int64_t now = 0) {
    ConsumerHeartbeat h;
    h.member_id = member;
    h.member_epoch = epoch;
    if (owns) h.owned = owned(*owns);
    return beat(h, now);
  }

  FakeCatalog catalog;
  ConsumerGroupOptions options;
  ConsumerGroup group{"g"};
};

TEST_F(ConsumerGroupTest, PartitionsMoveOnlyAfterRevocation) {
  auto a = join("a");
  ASSERT_EQ(a.error, ErrorCode::kNone);
  EXPECT_EQ(a.member_epoch, 1);
  EXPECT_EQ(count(*a.assignment), 4u);
  auto b = join("b");
  EXPECT_EQ(b.member_epoch, 2);
  EXPECT_EQ(count(*b.assignment), 0u);  // a still holds them
  EXPECT_STREQ(group.state_name(), "Reconciling");
  // Without reporting what it owns, a is assumed to hold them still.
  auto a2 = ping("a", 1, std::nullopt);
  EXPECT_EQ(a2.member_epoch, 1);
  EXPECT_EQ(count(*a2.assignment), 2u);
  EXPECT_FALSE(ping("b", 2, Assignment{}).assignment.has_value());  // unchanged: none sent
  auto a3 = ping("a", 1, *a2.assignment);
  EXPECT_EQ(a3.member_epoch, 2);
  auto b2 = ping("b", 2, Assignment{});
  EXPECT_EQ(count(*b2.assignment), 2u);
  EXPECT_STREQ(group.state_name(), "Stable");
}

TEST_F(ConsumerGroupTest, RevocationTimeoutAndSessionTimeoutRemoveMembers) {
  join("a", 0);
  join("b", 0);
  ping("a", 1, std::nullopt, 10);   // asked to revoke, never does
  group.tick(10 + 1000, &catalog);  // its rebalance timeout
  EXPECT_EQ(group.members().count("a"), 0u);
  group.tick(options.session_timeout_ms + 1, &catalog);
  EXPECT_TRUE(group.empty());
  EXPECT_STREQ(group.state_name(), "Empty");
}

TEST_F(ConsumerGroupTest, EpochChecks) {
  join("a");
  EXPECT_EQ(ping("a", 5, std::nullopt).error, ErrorCode::kFencedMemberEpoch);
  EXPECT_EQ(ping("x", 1, std::nullopt).error, ErrorCode::kUnknownMemberId);
  EXPECT_EQ(group.check_commit("a", 1, false, 9), ErrorCode::kNone);
  EXPECT_EQ(group.check_commit("a", 2, false, 9), ErrorCode::kStaleMemberEpoch);
  EXPECT_EQ(group.check_commit("a", 1, false, 8), ErrorCode::kUnsupportedVersion);
  EXPECT_EQ(group.check_commit("a", 2, true, 3), ErrorCode::kIllegalGeneration);
  EXPECT_EQ(group.check_fetch(std::nullopt, -1), ErrorCode::kNone);
  EXPECT_EQ(group.check_fetch(std::string("a"), 0), ErrorCode::kStaleMemberEpoch);
}

TEST_F(ConsumerGroupTest, StaticMemberReplacesItselfWithoutRebalance) {
  auto first = join("a", 0, "i");
  ConsumerHeartbeat leave;
  leave.member_id = "a";
  leave.member_epoch = kLeaveGroupStaticEpoch;
  leave.instance_id = "i";
  EXPECT_EQ(beat(leave).member_epoch, kLeaveGroupStaticEpoch);
  auto second = join("a2", 0, "i");
  EXPECT_EQ(second.error, ErrorCode::kNone);
  EXPECT_EQ(second.member_epoch, first.member_epoch);
  EXPECT_EQ(second.assignment, first.assignment);
  EXPECT_EQ(group.group_epoch(), 1);
  EXPECT_EQ(join("a3", 0, "i").error, ErrorCode::kUnreleasedInstanceId);
}

TEST_F(ConsumerGroupTest, NewPartitionsBumpTheEpoch) {
  auto a = join("a");
  catalog.add("t", 1, 6);
  auto a2 = ping("a", a.member_epoch, *a.assignment);
  EXPECT_EQ(a2.member_epoch, 2);
  EXPECT_EQ(count(*a2.assignment), 6u);
}

TEST_F(ConsumerGroupTest, ADeletedTopicIsRevoked) {
  auto a = join("a");
  catalog.topics.erase("t");
  auto a2 = ping("a", a.member_epoch, *a.assignment);
  EXPECT_EQ(a2.member_epoch, a.member_epoch);  // stays until it revokes
  EXPECT_EQ(count(*a2.assignment), 0u);
  auto a3 = ping("a", a.member_epoch, Assignment{});
  EXPECT_EQ(a3.member_epoch, a.member_epoch + 1);
  EXPECT_FALSE(group.subscribes_to("t"));
}

TEST_F(ConsumerGroupTest, GroupMaxSize) {
  options.max_size = 1;
  join("a");
  EXPECT_EQ(join("b").error, ErrorCode::kGroupMaxSizeReached);
  EXPECT_EQ(join("a").error, ErrorCode::kNone);  // a member already in may rejoin
}

TEST_F(ConsumerGroupTest, RegexTopicsComeAfterTheHeartbeatThatBringsTheRegex) {
  catalog.add("rx-a", 2, 2);
  ConsumerHeartbeat h;
  h.member_id = "a";
  h.member_epoch = 0;
  h.rebalance_timeout_ms = 1000;
  h.subscribed_topic_names = std::vector<std::string>{"t"};
  h.subscribed_topic_regex = "rx-";
  h.owned = OwnedPartitions{};
  auto first = beat(h);
  EXPECT_EQ(count(*first.assignment), 4u);  // the literal topic only, as in Kafka
  group.tick(1, &catalog);                  // resolves the new regex: a new epoch
  auto second = ping("a", first.member_epoch, *first.assignment, 2);
  EXPECT_EQ(second.member_epoch, first.member_epoch + 1);
  EXPECT_EQ(count(*second.assignment), 6u);
  // A topic created later is found by the periodic refresh.
  catalog.add("rx-b", 3, 1);
  group.tick(5000, &catalog);
  EXPECT_FALSE(ping("a", second.member_epoch, *second.assignment, 5001).assignment);
  group.tick(10'002, &catalog);
  EXPECT_EQ(count(*ping("a", second.member_epoch, *second.assignment, 10'003).assignment), 7u);
}

// What a restart does to a group: its records, written and read back.
ConsumerGroup reload(const ConsumerGroup& group, const ConsumerGroupOptions& options, int64_t now) {
  auto snapshot = consumer_group_from_records(consumer_group_records(group.snapshot(), group.id()));
  EXPECT_TRUE(snapshot.has_value());
  return ConsumerGroup::restore(group.id(), snapshot.value_or(ConsumerGroupSnapshot{}), options,
                                now);
}

TEST_F(ConsumerGroupTest, ARestoredGroupGoesOnWhereItStopped) {
  catalog.add("rx-a", 2, 2);
  auto a = join("a", 0, "static-a");
  ConsumerHeartbeat h;
  h.member_id = "b";
  h.member_epoch = 0;
  h.rebalance_timeout_ms = 2000;
  h.subscribed_topic_names = std::vector<std::string>{"t"};
  h.subscribed_topic_regex = "rx-";
  h.server_assignor = "range";
  h.owned = OwnedPartitions{};
  auto b = beat(h);
  group.tick(1, &catalog);  // b's regex resolved
  // a is asked to give up partitions: the group is mid-reconciliation when it "restarts".
  auto a2 = ping("a", a.member_epoch, std::nullopt, 2);
  ASSERT_EQ(group.members().at("a").state, MemberState::kUnrevokedPartitions);

  ConsumerGroup restored = reload(group, options, 100);
  EXPECT_EQ(consumer_group_records(restored.snapshot(), "g"),
            consumer_group_records(group.snapshot(), "g"));
  EXPECT_EQ(restored.group_epoch(), group.group_epoch());
  EXPECT_EQ(restored.assignment_epoch(), group.assignment_epoch());
  const auto& ra = restored.members().at("a");
  EXPECT_EQ(ra.instance_id, "static-a");
  EXPECT_EQ(ra.pending_revocation, group.members().at("a").pending_revocation);
  EXPECT_EQ(restored.members().at("b").subscribed_regex, "rx-");
  EXPECT_EQ(restored.members().at("b").server_assignor, "range");
  EXPECT_EQ(restored.target_of("b"), group.target_of("b"));
  // Deadlines run from the restore: the session's, and a's time to revoke.
  EXPECT_EQ(ra.session_deadline_ms, 100 + options.session_timeout_ms);
  EXPECT_EQ(ra.revocation_deadline_ms, 100 + 1000);

  // The protocol goes on: a revokes, b gets what a released.
  group = std::move(restored);
  auto a3 = ping("a", a2.member_epoch, *a2.assignment, 150);
  EXPECT_EQ(a3.error, ErrorCode::kNone);
  EXPECT_EQ(a3.member_epoch, group.assignment_epoch());
  auto b2 = ping("b", b.member_epoch, Assignment{}, 160);
  EXPECT_EQ(b2.error, ErrorCode::kNone);
  EXPECT_EQ(count(*b2.assignment), count(group.target_of("b")));
  EXPECT_STREQ(group.state_name(), "Stable");
}

TEST_F(ConsumerGroupTest, ARestoredGroupRebalancesOnlyIfItsTopicsChanged) {
  auto a = join("a");
  ConsumerGroup same = reload(group, options, 10);
  same.tick(11, &catalog);
  EXPECT_EQ(same.group_epoch(), a.member_epoch);
  EXPECT_TRUE(same.subscribes_to("t"));  // its topics are known again
  catalog.add("t", 1, 6);                // partitions added while the broker was down
  ConsumerGroup grown = reload(group, options, 10);
  grown.tick(11, &catalog);
  EXPECT_EQ(grown.group_epoch(), a.member_epoch + 1);
}

TEST_F(ConsumerGroupTest, RevisionMovesOnlyWithWhatASnapshotHolds) {
  auto a = join("a");
  uint64_t before = group.revision();
  ping("a", a.member_epoch, *a.assignment, 5);  // a steady heartbeat: only its deadline moves
  EXPECT_EQ(group.revision(), before);
  join("b", 6);
  EXPECT_GT(group.revision(), before);
}

TEST_F(ConsumerGroupTest, EachMemberAndTheGroupsOwnPartHaveRevisions) {
  auto a = join("a");
  auto b = join("b");  // a new target for both
  auto members = group.member_revisions();
  uint64_t own = group.own_revision();
  ping("b", b.member_epoch, Assignment{}, 1);  // b is still waiting for its partitions
  members = group.member_revisions();
  ping("a", a.member_epoch, std::nullopt, 2);  // a is asked to revoke: a changes, b does not
  EXPECT_NE(group.member_revisions().at("a"), members.at("a"));
  EXPECT_EQ(group.member_revisions().at("b"), members.at("b"));
  EXPECT_EQ(group.own_revision(), own);
  ConsumerHeartbeat leave;
  leave.member_id = "b";
  leave.member_epoch = kLeaveGroupEpoch;
  beat(leave, 3);  // the group's epoch moves; b is gone
  EXPECT_NE(group.own_revision(), own);
  EXPECT_FALSE(group.member_revisions().contains("b"));
}

TEST(ConsumerGroupRecords, KafkaLayoutsAndBadInput) {
  ConsumerGroupSnapshot s;
  s.group_epoch = 7;
  s.assignment_epoch = 7;
  ConsumerMember m;
  m.id = "m";
  m.client_id = "c";
  m.epoch = 7;
  s.members.push_back(m);
  auto records = consumer_group_records(s, "g");
  // Keys: the record type, then the group (and member) as int16-length strings.
  std::string metadata_key("\x00\x03\x00\x01g", 5);
  std::string member_key("\x00\x05\x00\x01g\x00\x01m", 8);
  ASSERT_TRUE(records.contains(metadata_key));
  ASSERT_TRUE(records.contains(member_key));
  EXPECT_EQ(records.size(), 4u);  // metadata, target metadata, member metadata, its assignment
  // The group metadata value: version 0, epoch 7, one tagged field (the hash, 8 bytes).
  EXPECT_EQ(records[metadata_key].substr(0, 9),
            std::string("\x00\x00\x00\x00\x00\x07\x01\x00\x08", 9));
  EXPECT_EQ(consumer_group_of_key(member_key), "g");
  EXPECT_FALSE(consumer_group_of_key(encode_offset_key({"g", "t", 0})));
  auto truncated = records;
  truncated[member_key].pop_back();
  EXPECT_FALSE(consumer_group_from_records(truncated));
  auto orphan = records;
  orphan.erase(metadata_key);
  EXPECT_FALSE(consumer_group_from_records(orphan));
}

}  // namespace
}  // namespace oxbow::group
