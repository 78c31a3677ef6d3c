#include "group/coordinator.h"

#include <gtest/gtest.h>

namespace oxbow::group {

namespace {

// Keeps appended records in memory, as the log would.
class MemoryOffsetLog : public OffsetLog {
 public:
  int32_t partitions() const override { return 3; }
  bool append(int32_t partition,
              const std::vector<std::pair<std::string, std::optional<std::string>>>& records) override {
    for (const auto& r : records) log.push_back({partition, r.first, r.second});
    return true;
  }
  void replay(const std::function<void(std::string_view, std::optional<std::string_view>)>& visit) override {
    for (const auto& e : log) {
      visit(e.key, e.value ? std::optional<std::string_view>(*e.value) : std::nullopt);
    }
  }
  struct Entry {
    int32_t partition;
    std::string key;
    std::optional<std::string> value;
  };
  std::vector<Entry> log;
};

}  // namespace

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
    auto errors = c.commit("g", "", std::nullopt, -1, {{"t", 0, 10, -1, "m"}, {"t", 1, 20, -1, std::nullopt}});
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

}  // namespace oxbow::group
