#include "group/coordinator.h"

#include <gtest/gtest.h>

#include "common/clock.h"

namespace oxbow::group {

namespace {

// Keeps appended records in memory, as the log would.
class MemoryOffsetLog : public KeyedLog {
 public:
  int32_t partitions() const override { return 3; }
  bool append(int32_t partition, const KeyedRecords& records) override {
    if (refuse) return false;
    for (const auto& r : records) log.push_back({partition, r.first, r.second, -1, false, false});
    return true;
  }
  bool refuse = false;  // a log that cannot be written
  int16_t append_transactional(int32_t partition, const KeyedRecords& records, int64_t producer_id,
                               int16_t) override {
    for (const auto& r : records)
      log.push_back({partition, r.first, r.second, producer_id, false, false});
    return 0;
  }
  void marker(int64_t producer_id, bool commit) {
    log.push_back({0, "", std::nullopt, producer_id, true, commit});
  }
  void replay(const RecordVisitor& on_record, const MarkerVisitor& on_marker) override {
    for (const auto& e : log) {
      if (e.is_marker) {
        on_marker(e.producer_id, e.commit);
      } else {
        on_record(e.key, e.value ? std::optional<std::string_view>(*e.value) : std::nullopt,
                  e.producer_id);
      }
    }
  }
  struct Entry {
    int32_t partition;
    std::string key;
    std::optional<std::string> value;
    int64_t producer_id;
    bool is_marker;
    bool commit;
  };
  std::vector<Entry> log;
};

// One topic "t" of four partitions.
class OneTopic : public TopicCatalog {
 public:
  std::optional<TopicShape> find(const std::string& name) const override {
    if (name != "t") return std::nullopt;
    return TopicShape{Uuid{1}, "t", 4};
  }
  std::vector<std::string> matching(const std::string&) const override { return {}; }
};

ConsumerHeartbeat consumer_join(const std::string& member) {
  ConsumerHeartbeat h;
  h.member_id = member;
  h.rebalance_timeout_ms = 1000;
  h.subscribed_topic_names = std::vector<std::string>{"t"};
  h.owned = OwnedPartitions{};
  return h;
}

ConsumerHeartbeat consumer_ping(const std::string& member, int32_t epoch,
                                const std::optional<Assignment>& owned) {
  ConsumerHeartbeat h;
  h.member_id = member;
  h.member_epoch = epoch;
  if (owned) {
    h.owned = OwnedPartitions{};
    for (const auto& [t, p] : *owned)
      h.owned->emplace_back(t, std::vector<int32_t>(p.begin(), p.end()));
  }
  return h;
}
}  // namespace

TEST(Coordinator, ConsumerGroupsSurviveARestart) {
  MemoryOffsetLog log;
  OneTopic topics;
  ConsumerHeartbeatResult a, b;
  {
    GroupCoordinator c({}, log);
    c.set_topic_catalog(&topics);
    c.start();
    a = c.consumer_heartbeat("cg", consumer_join("a"));
    b = c.consumer_heartbeat("cg", consumer_join("b"));
    ASSERT_EQ(b.error, ErrorCode::kNone);
    c.consumer_heartbeat("cg", consumer_ping("b", b.member_epoch, Assignment{}));
    size_t written = log.log.size();
    // A heartbeat that changes nothing a restart needs writes nothing.
    c.consumer_heartbeat("cg", consumer_ping("b", b.member_epoch, Assignment{}));
    EXPECT_EQ(log.log.size(), written);
  }
  GroupCoordinator c({}, log);
  c.set_topic_catalog(&topics);
  c.start();
  // a still owns all four partitions and is asked to give two up, at the epoch it had.
  auto a2 = c.consumer_heartbeat("cg", consumer_ping("a", a.member_epoch, std::nullopt));
  ASSERT_EQ(a2.error, ErrorCode::kNone);
  EXPECT_EQ(a2.member_epoch, a.member_epoch);
  auto a3 = c.consumer_heartbeat("cg", consumer_ping("a", a2.member_epoch, *a2.assignment));
  EXPECT_EQ(a3.member_epoch, b.member_epoch);
  auto b2 = c.consumer_heartbeat("cg", consumer_ping("b", b.member_epoch, Assignment{}));
  ASSERT_TRUE(b2.assignment);
  EXPECT_EQ(b2.assignment->at(Uuid{1}).size(), 2u);
  EXPECT_EQ(c.commit("cg", "b", std::nullopt, b2.member_epoch, {{"t", 2, 5, -1, std::nullopt}})[0],
            ErrorCode::kNone);
  c.consumer_heartbeat("cg", consumer_ping("a", kLeaveGroupEpoch, std::nullopt));
  c.consumer_heartbeat("cg", consumer_ping("b", kLeaveGroupEpoch, std::nullopt));
  EXPECT_EQ(c.delete_group("cg"), ErrorCode::kNone);
  c.stop();

  // Deleted: its records are tombstoned, so nothing comes back.
  GroupCoordinator after({}, log);
  after.set_topic_catalog(&topics);
  after.start();
  bool found = true;
  after.describe_consumer_group("cg", [&](const ConsumerGroup* g) { found = g != nullptr; });
  EXPECT_FALSE(found);
  EXPECT_EQ(after.consumer_heartbeat("cg", consumer_ping("a", 3, std::nullopt)).error,
            ErrorCode::kUnknownMemberId);
}

TEST(Coordinator, ARestoredConsumerGroupTombstonesRecordsOfMembersItDoesNotHave) {
  MemoryOffsetLog log;
  OneTopic topics;
  {
    GroupCoordinator c({}, log);
    c.set_topic_catalog(&topics);
    c.start();
    c.consumer_heartbeat("cg", consumer_join("a"));
  }
  // A target record of a member with no metadata, as a log cut short could hold.
  Assignment none;
  ConsumerMember ghost;
  ghost.id = "ghost";
  std::string ghost_key = consumer_member_keys("cg", "ghost")[1];
  log.append(0, {{ghost_key, consumer_member_records(ghost, &none, "cg").at(ghost_key)}});
  GroupCoordinator c({}, log);
  c.set_topic_catalog(&topics);
  c.start();
  size_t before = log.log.size();
  c.tick(now_ms());
  ASSERT_EQ(log.log.size(), before + 1);
  EXPECT_EQ(log.log.back().key, ghost_key);
  EXPECT_FALSE(log.log.back().value);
  bool has_a = false;
  c.describe_consumer_group(
      "cg", [&](const ConsumerGroup* g) { has_a = g && g->members().contains("a"); });
  EXPECT_TRUE(has_a);
}

TEST(Coordinator, ClassicGroupsSurviveARestart) {
  MemoryOffsetLog log;
  CoordinatorOptions options;
  options.initial_rebalance_delay_ms = 0;
  JoinRequest request;
  request.group_id = "cl";
  request.client_id = "client";
  request.session_timeout_ms = 10000;
  request.rebalance_timeout_ms = 10000;
  request.protocol_type = "consumer";
  request.protocols = {{"range", Bytes{1}}};
  JoinResult joined;
  std::optional<SyncResult> synced;
  {
    GroupCoordinator c(options, log);
    c.start();
    c.join(request, [&](JoinResult r) { joined = r; });
    ASSERT_EQ(joined.error, ErrorCode::kNone);
    size_t before_sync = log.log.size();
    SyncRequest sync{"cl",
                     joined.generation,
                     joined.member_id,
                     std::nullopt,
                     std::nullopt,
                     std::nullopt,
                     {{joined.member_id, Bytes{7}}}};
    // A log that refuses the record: the member is not told an assignment that is not kept.
    log.refuse = true;
    c.sync(sync, [&](SyncResult r) { synced = r; });
    ASSERT_TRUE(synced);
    EXPECT_EQ(synced->error, ErrorCode::kCoordinatorNotAvailable);
    log.refuse = false;
    request.member_id = sync.member_id;
    joined = {};
    c.join(request, [&](JoinResult r) { joined = r; });
    ASSERT_EQ(joined.error, ErrorCode::kNone);
    sync.generation = joined.generation;
    synced.reset();
    before_sync = log.log.size();
    c.sync(sync, [&](SyncResult r) { synced = r; });
    ASSERT_TRUE(synced && synced->error == ErrorCode::kNone);
    EXPECT_EQ(log.log.size(), before_sync + 1);  // the group's record, before the answer
    EXPECT_EQ(c.heartbeat("cl", joined.member_id, std::nullopt, joined.generation),
              ErrorCode::kNone);
    EXPECT_EQ(log.log.size(), before_sync + 1);  // heartbeats write nothing
  }
  {
    GroupCoordinator c(options, log);
    c.start();
    EXPECT_EQ(c.heartbeat("cl", joined.member_id, std::nullopt, joined.generation),
              ErrorCode::kNone);
    auto described = c.describe("cl");
    EXPECT_EQ(described.state, "Stable");
    ASSERT_EQ(described.members.size(), 1u);
    EXPECT_EQ(described.members[0].assignment, Bytes{7});
    EXPECT_EQ(c.leave("cl", joined.member_id, std::nullopt), ErrorCode::kNone);
    EXPECT_EQ(c.delete_group("cl"), ErrorCode::kNone);
  }
  GroupCoordinator c(options, log);
  c.start();
  EXPECT_EQ(c.describe("cl").state, "Dead");  // deleted: tombstoned
}

TEST(OffsetRecords, KeyAndValueRoundTrip) {
  auto key = decode_offset_key(encode_offset_key({"grp", "topic", 7}));
  ASSERT_TRUE(key);
  EXPECT_EQ(key->group, "grp");
  EXPECT_EQ(key->topic, "topic");
  EXPECT_EQ(key->partition, 7);
  auto value = decode_offset_value(encode_offset_value({42, 3, "meta", 1000}));
  ASSERT_TRUE(value);
  EXPECT_EQ(value->offset, 42);
  EXPECT_EQ(value->leader_epoch, 3);
  EXPECT_EQ(value->metadata, "meta");
}

TEST(OffsetRecords, PartitionMatchesJavaHashCode) {
  // "abc".hashCode() == 96354 in Java.
  EXPECT_EQ(offsets_partition_for("abc", 50), 96354 % 50);
  EXPECT_GE(offsets_partition_for("a-much-longer-group-name-that-overflows", 50), 0);
}

TEST(Coordinator, SimpleCommitsSurviveReplayAndDeletion) {
  MemoryOffsetLog log;
  {
    GroupCoordinator c({}, log);
    c.start();
    auto errors = c.commit("g", "", std::nullopt, -1,
                           {{"t", 0, 10, -1, "m"}, {"t", 1, 20, -1, std::nullopt}});
    EXPECT_EQ(errors, (std::vector<ErrorCode>{ErrorCode::kNone, ErrorCode::kNone}));
    c.commit("g", "", std::nullopt, -1, {{"t", 0, 11, -1, std::nullopt}});
    EXPECT_EQ(c.commit("g", "someone", std::nullopt, 5, {{"t", 0, 99, -1, std::nullopt}})[0],
              ErrorCode::kUnknownMemberId);
  }
  GroupCoordinator c({}, log);
  c.start();
  auto offsets = c.fetch("g", std::nullopt);
  ASSERT_EQ(offsets.size(), 2u);
  EXPECT_EQ(offsets[TopicPartition("t", 0)].offset, 11);
  EXPECT_EQ(offsets[TopicPartition("t", 1)].offset, 20);
  auto missing = c.fetch("g", std::vector<TopicPartition>{{"t", 5}});
  EXPECT_EQ(missing[TopicPartition("t", 5)].offset, -1);
  ASSERT_EQ(c.list({}).size(), 1u);
  EXPECT_EQ(c.delete_group("g"), ErrorCode::kNone);
  EXPECT_EQ(c.delete_group("g"), ErrorCode::kGroupIdNotFound);
  GroupCoordinator after({}, log);
  after.start();
  EXPECT_TRUE(after.fetch("g", std::nullopt).empty());
}

TEST(Coordinator, CommitsWithoutAGenerationAsKafka) {
  MemoryOffsetLog log;
  GroupCoordinator c({}, log);
  // A consumer that assigns its own partitions may still name its member id (librdkafka's
  // consumer protocol does): without a generation, an empty group takes the commit.
  EXPECT_EQ(c.commit("g", "its-own-id", std::nullopt, -1, {{"t", 0, 1, -1, std::nullopt}})[0],
            ErrorCode::kNone);
  // A generation for a group that does not exist: GROUP_ID_NOT_FOUND from OffsetCommit v9 on.
  EXPECT_EQ(c.commit("h", "m", std::nullopt, 3, {{"t", 0, 1, -1, std::nullopt}}, 9)[0],
            ErrorCode::kGroupIdNotFound);
  EXPECT_EQ(c.commit("h", "m", std::nullopt, 3, {{"t", 0, 1, -1, std::nullopt}}, 8)[0],
            ErrorCode::kIllegalGeneration);
}

TEST(Coordinator, JoinValidatesSessionTimeoutAndGroupId) {
  MemoryOffsetLog log;
  GroupCoordinator c({}, log);
  JoinRequest r;
  r.group_id = "g";
  r.session_timeout_ms = 10;
  r.protocol_type = "consumer";
  r.protocols = {{"range", {}}};
  std::optional<JoinResult> result;
  c.join(r, [&](JoinResult res) { result = res; });
  ASSERT_TRUE(result);
  EXPECT_EQ(result->error, ErrorCode::kInvalidSessionTimeout);
  r.group_id = "";
  r.session_timeout_ms = 10000;
  c.join(r, [&](JoinResult res) { result = res; });
  EXPECT_EQ(result->error, ErrorCode::kInvalidGroupId);
  r.group_id = "other";
  r.member_id = "ghost";
  c.join(r, [&](JoinResult res) { result = res; });
  EXPECT_EQ(result->error, ErrorCode::kUnknownMemberId);
}

TEST(Coordinator, ExpiresOffsetsOfEmptyGroups) {
  MemoryOffsetLog log;
  CoordinatorOptions options;
  options.offsets_retention_ms = 1000;
  GroupCoordinator c(options, log);
  c.start();
  c.commit("g", "", std::nullopt, -1, {{"t", 0, 10, -1, std::nullopt}});
  c.tick(INT64_MAX / 2);
  EXPECT_TRUE(c.fetch("g", std::nullopt).empty());
  ASSERT_FALSE(log.log.empty());
  EXPECT_FALSE(log.log.back().value.has_value());  // a tombstone was written
}

TEST(Coordinator, DeletedTopicTakesItsOffsetsFromEveryGroup) {
  MemoryOffsetLog log;
  {
    GroupCoordinator c({}, log);
    c.start();
    c.commit("g", "", std::nullopt, -1, {{"t", 0, 10, -1, std::nullopt}, {"t", 1, 5, -1, {}}});
    c.commit("g", "", std::nullopt, -1, {{"other", 0, 7, -1, std::nullopt}});
    c.commit("only-t", "", std::nullopt, -1, {{"t", 2, 3, -1, std::nullopt}});
    c.forget_topic("t");
    auto left = c.fetch("g", std::nullopt);
    ASSERT_EQ(left.size(), 1u);
    EXPECT_EQ(left[TopicPartition("other", 0)].offset, 7);
    EXPECT_TRUE(c.fetch("only-t", std::nullopt).empty());
    EXPECT_EQ(c.describe("only-t").state, "Dead");
  }
  GroupCoordinator after({}, log);  // the tombstones hold after a restart
  after.start();
  EXPECT_EQ(after.fetch("g", std::nullopt).size(), 1u);
  EXPECT_TRUE(after.fetch("only-t", std::nullopt).empty());
}

CommittedOffset offset_of(GroupCoordinator& c, const std::vector<TopicPartition>& wanted) {
  return c.fetch("g", wanted).at(wanted[0]);
}

TEST(GroupCoordinator, TransactionalOffsetsCountOnlyOnceCommitted) {
  MemoryOffsetLog log;
  std::vector<TopicPartition> wanted{{"t", 0}};
  {
    GroupCoordinator c({}, log);
    c.start();
    ASSERT_EQ(c.commit("g", "", std::nullopt, -1, {{"t", 0, 5, -1, std::nullopt}})[0],
              ErrorCode::kNone);
    ASSERT_EQ(c.commit_transactional("g", 77, 0, "", std::nullopt, -1,
                                     {{"t", 0, 9, -1, std::nullopt}})[0],
              ErrorCode::kNone);
    auto during = offset_of(c, wanted);
    EXPECT_EQ(during.offset, 5);
    EXPECT_TRUE(during.pending_transaction);
    log.marker(77, false);  // what the partition writes before telling the coordinator
    c.complete_transaction(77, false);
    EXPECT_EQ(offset_of(c, wanted).offset, 5);
    EXPECT_FALSE(offset_of(c, wanted).pending_transaction);
    c.commit_transactional("g", 77, 0, "", std::nullopt, -1, {{"t", 0, 12, -1, std::nullopt}});
    log.marker(77, true);
    c.complete_transaction(77, true);
    EXPECT_EQ(offset_of(c, wanted).offset, 12);
    c.stop();
  }
  // Replayed: the aborted offset 9 is dropped, the committed 12 applied, and an open
  // transaction's offset stays pending.
  log.append_transactional(
      0, {{encode_offset_key({"g", "t", 0}), encode_offset_value({20, -1, "", 0})}}, 88, 0);
  GroupCoordinator c({}, log);
  c.start();
  auto replayed = offset_of(c, wanted);
  EXPECT_EQ(replayed.offset, 12);
  EXPECT_TRUE(replayed.pending_transaction);
  c.complete_transaction(88, true);
  EXPECT_EQ(offset_of(c, wanted).offset, 20);
  c.stop();
}

}  // namespace oxbow::group
