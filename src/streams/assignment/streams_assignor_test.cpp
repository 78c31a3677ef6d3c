#include "streams/assignment/streams_assignor.h"

#include <gtest/gtest.h>

namespace oxbow::streams::detail {
namespace {

GroupAssignorContext context() {
  GroupAssignorContext c;
  c.subtopologies = {{0, {"in"}, {}, ""}, {1, {"app-rep"}, {"app-store-changelog"}, ""}};
  c.partitions_of = [](const std::string& t) { return t == "in" ? 2 : 2; };
  c.end_offsets = [](const PartitionList& list) {
    std::map<std::pair<std::string, int32_t>, int64_t> out;
    for (const auto& p : list) out[p] = 1000;
    return out;
  };
  c.config.num_standby_replicas = 1;
  c.now_ms = 5000;
  return c;
}

std::string subscription(const std::string& process, const std::string& endpoint,
                         PartitionList owned, std::map<TaskId, int64_t> sums = {}) {
  SubscriptionInfo info;
  info.process_id = uuid_bytes(process);
  info.endpoint = endpoint;
  info.task_offset_sums = std::move(sums);
  return ConsumerSubscription{{"in", "app-rep"}, info.encode(), std::move(owned)}.encode();
}

const std::string kA = "00000000-0000-0000-0000-00000000000a";
const std::string kB = "00000000-0000-0000-0000-00000000000b";

TEST(StreamsAssignor, TwoInstancesShareTasksAndLearnEveryHost) {
  auto c = context();
  auto out =
      assign_group(c, {{"m1", subscription(kA, "a:1", {})}, {"m2", subscription(kB, "b:2", {})}});
  ASSERT_EQ(out.size(), 2u);
  std::set<TaskId> actives;
  for (const auto& [member, bytes] : out) {
    auto envelope = ConsumerAssignment::decode(bytes);
    auto info = AssignmentInfo::decode(envelope.user_data);
    EXPECT_EQ(info.error_code, 0);
    ASSERT_EQ(info.active_tasks.size(), envelope.partitions.size());
    for (size_t i = 0; i < info.active_tasks.size(); ++i) {
      actives.insert(info.active_tasks[i]);
      // Each partition is paired with its task, partitions sorted by topic and number.
      EXPECT_EQ(info.active_tasks[i].partition, envelope.partitions[i].second);
      if (i > 0) {
        EXPECT_LT(envelope.partitions[i - 1], envelope.partitions[i]);
      }
    }
    EXPECT_EQ(info.active_tasks.size(), 2u);
    // The stateful sub-topology's tasks have a standby on the other instance.
    EXPECT_EQ(info.standby_tasks.size(), 1u);
    EXPECT_EQ(info.active_by_host.size(), 2u);
    EXPECT_TRUE(info.active_by_host.count({"a", 1}));
    EXPECT_TRUE(info.standby_by_host.count({"b", 2}));
  }
  EXPECT_EQ(actives.size(), 4u);
}

TEST(StreamsAssignor, TaskOwnedElsewhereWaitsForItsOwnerToGiveItUp) {
  auto c = context();
  c.config.num_standby_replicas = 0;
  // m1 owns every task; m2 (another instance) joins: half the tasks are due to move, but none is
  // given to m2 while m1 still owns it. The hosts still name m1 for them.
  PartitionList all{{"in", 0}, {"in", 1}, {"app-rep", 0}, {"app-rep", 1}};
  std::map<TaskId, int64_t> running{{{1, 0}, kLatestOffsetSum}, {{1, 1}, kLatestOffsetSum}};
  c.end_offsets = [](const PartitionList& list) {
    std::map<std::pair<std::string, int32_t>, int64_t> out;
    for (const auto& p : list) out[p] = 0;  // no state to wait for
    return out;
  };
  auto out = assign_group(
      c, {{"m1", subscription(kA, "a:1", all, running)}, {"m2", subscription(kB, "b:2", {})}});
  auto m1 = AssignmentInfo::decode(ConsumerAssignment::decode(out["m1"]).user_data);
  auto m2 = AssignmentInfo::decode(ConsumerAssignment::decode(out["m2"]).user_data);
  EXPECT_EQ(m1.active_tasks.size(), 2u);
  EXPECT_TRUE(m2.active_tasks.empty());
  EXPECT_EQ(m2.active_by_host.at({"a", 1}).size(), 4u);
}

TEST(StreamsAssignor, UnreadableSubscriptionGetsAnErrorOthersGoOn) {
  auto c = context();
  auto out = assign_group(c, {{"m1", subscription(kA, "", {})}, {"m2", "garbage"}});
  EXPECT_EQ(AssignmentInfo::decode(ConsumerAssignment::decode(out["m2"]).user_data).error_code, 3);
  auto m1 = AssignmentInfo::decode(ConsumerAssignment::decode(out["m1"]).user_data);
  EXPECT_EQ(m1.error_code, 0);
  EXPECT_EQ(m1.active_tasks.size(), 4u);
  EXPECT_TRUE(m1.active_by_host.empty());  // no application.server: no host is named
}

TEST(StreamsAssignor, WarmupAsksForAProbingRebalance) {
  auto c = context();
  c.config.num_standby_replicas = 0;
  PartitionList all{{"in", 0}, {"in", 1}, {"app-rep", 0}, {"app-rep", 1}};
  std::map<TaskId, int64_t> running{{{1, 0}, kLatestOffsetSum}, {{1, 1}, kLatestOffsetSum}};
  c.end_offsets = [](const PartitionList& list) {
    std::map<std::pair<std::string, int32_t>, int64_t> out;
    for (const auto& p : list) out[p] = 1'000'000;
    return out;
  };
  auto out = assign_group(
      c, {{"m1", subscription(kA, "a:1", all, running)}, {"m2", subscription(kB, "b:2", {})}});
  // The stateless tasks are the ones to move (m1 gives them up this round; m2 takes them in
  // the next); the stateful ones stay where their state is, and nothing warms up.
  auto m1 = AssignmentInfo::decode(ConsumerAssignment::decode(out["m1"]).user_data);
  auto m2 = AssignmentInfo::decode(ConsumerAssignment::decode(out["m2"]).user_data);
  EXPECT_EQ(m1.active_tasks, (std::vector<TaskId>{{1, 0}, {1, 1}}));
  EXPECT_TRUE(m2.active_tasks.empty());
  EXPECT_TRUE(m2.standby_tasks.empty());
  EXPECT_EQ(m2.next_rebalance_ms, AssignmentInfo::kNoRebalance);

  // With state in both sub-topologies, m2 warms two tasks up and a probing rebalance is set.
  c.subtopologies[0].changelogs = {"app-other-changelog"};
  running[{0, 0}] = running[{0, 1}] = kLatestOffsetSum;
  out = assign_group(
      c, {{"m1", subscription(kA, "a:1", all, running)}, {"m2", subscription(kB, "b:2", {})}});
  m2 = AssignmentInfo::decode(ConsumerAssignment::decode(out["m2"]).user_data);
  EXPECT_TRUE(m2.active_tasks.empty());
  EXPECT_EQ(m2.standby_tasks.size(), 2u);
  EXPECT_EQ(m2.next_rebalance_ms, 5000 + c.probing_rebalance_interval_ms);
}

std::string named_subscription(std::vector<std::string> topics, const std::string& process,
                               PartitionList owned, std::map<TaskId, int64_t> sums) {
  SubscriptionInfo info;
  info.process_id = uuid_bytes(process);
  info.task_offset_sums = std::move(sums);
  return ConsumerSubscription{std::move(topics), info.encode(), std::move(owned)}.encode();
}

// Two named topologies in one group, each with a sub-topology 0 over a source topic of its own:
// their tasks are told apart by name, placed together, and paired with their own partitions.
TEST(StreamsAssignor, NamedTopologiesTasksAreAssignedWithTheirTopology) {
  auto c = context();
  c.subtopologies = {{0, {"in1"}, {}, "q1"}, {0, {"in2"}, {"q2-store-changelog"}, "q2"}};
  c.config.num_standby_replicas = 0;
  auto sub = [](const std::string& process, PartitionList owned,
                std::map<TaskId, int64_t> sums = {}) {
    return named_subscription({"in1", "in2"}, process, std::move(owned), std::move(sums));
  };
  auto out = assign_group(c, {{"m1", sub(kA, {})}, {"m2", sub(kB, {})}});
  std::set<TaskId> actives;
  for (const auto& [member, bytes] : out) {
    auto envelope = ConsumerAssignment::decode(bytes);
    auto info = AssignmentInfo::decode(envelope.user_data);
    ASSERT_EQ(info.active_tasks.size(), envelope.partitions.size());
    for (size_t i = 0; i < info.active_tasks.size(); ++i) {
      const TaskId& t = info.active_tasks[i];
      EXPECT_EQ(envelope.partitions[i],
                std::make_pair(t.topology == "q1" ? std::string("in1") : std::string("in2"),
                               t.partition));
      actives.insert(t);
    }
  }
  EXPECT_EQ(actives, (std::set<TaskId>{{0, 0, "q1"}, {0, 1, "q1"}, {0, 0, "q2"}, {0, 1, "q2"}}));

  // A member keeps the tasks whose partitions it owns, by topology: owning in2's partitions
  // (q2's running, stateful tasks) keeps q2's tasks, not q1's of the same numbers.
  std::map<TaskId, int64_t> running{{{0, 0, "q2"}, kLatestOffsetSum},
                                    {{0, 1, "q2"}, kLatestOffsetSum}};
  out = assign_group(c, {{"m1", sub(kA, {{"in2", 0}, {"in2", 1}}, running)}, {"m2", sub(kB, {})}});
  auto m1 = AssignmentInfo::decode(ConsumerAssignment::decode(out["m1"]).user_data);
  EXPECT_EQ(m1.active_tasks, (std::vector<TaskId>{{0, 0, "q2"}, {0, 1, "q2"}}));
}

TEST(StreamsAssignor, TopologiesReadingOneTopicHaveTheirTasksOfAPartitionOnOneMember) {
  auto c = context();
  // q1 and q3 read "in" alone; q2 reads "in2". q3's task is stateful (its lag counts for the unit).
  c.subtopologies = {
      {0, {"in"}, {}, "q1"}, {0, {"in2"}, {}, "q2"}, {0, {"in"}, {"q3-store-changelog"}, "q3"}};
  c.config.num_standby_replicas = 1;
  auto sub = [](const std::string& process, PartitionList owned,
                std::map<TaskId, int64_t> sums = {}) {
    return named_subscription({"in", "in2"}, process, std::move(owned), std::move(sums));
  };
  auto out = assign_group(c, {{"m1", sub(kA, {})}, {"m2", sub(kB, {})}});
  std::map<TaskId, std::string> active_on, standby_on;
  for (const auto& [member, bytes] : out) {
    auto envelope = ConsumerAssignment::decode(bytes);
    auto info = AssignmentInfo::decode(envelope.user_data);
    std::set<std::pair<std::string, int32_t>> partitions(envelope.partitions.begin(),
                                                         envelope.partitions.end());
    EXPECT_EQ(partitions.size(), envelope.partitions.size());  // each partition once
    for (const auto& t : info.active_tasks) {
      EXPECT_TRUE(active_on.emplace(t, member).second) << t.toString();
      EXPECT_TRUE(partitions.count({t.topology == "q2" ? "in2" : "in", t.partition}));
    }
    for (const auto& [t, parts] : info.standby_tasks) standby_on[t] = member;
  }
  EXPECT_EQ(active_on.size(), 6u);
  for (int32_t p = 0; p < 2; ++p) {
    EXPECT_EQ(active_on[TaskId(0, p, "q1")], active_on[TaskId(0, p, "q3")]);
    // The unit is stateful: both its tasks have a standby, together, on the other member.
    ASSERT_TRUE(standby_on.count(TaskId(0, p, "q1")));
    EXPECT_EQ(standby_on[TaskId(0, p, "q1")], standby_on[TaskId(0, p, "q3")]);
    EXPECT_NE(standby_on[TaskId(0, p, "q3")], active_on[TaskId(0, p, "q3")]);
  }

  // m1 runs q3's task of partition 0 (its sum names it) and owns in-0: the unit stays with it.
  std::map<TaskId, int64_t> running{{{0, 0, "q3"}, kLatestOffsetSum}};
  out = assign_group(c, {{"m1", sub(kA, {{"in", 0}}, running)}, {"m2", sub(kB, {})}});
  auto m1 = AssignmentInfo::decode(ConsumerAssignment::decode(out["m1"]).user_data);
  std::set<TaskId> m1_tasks(m1.active_tasks.begin(), m1.active_tasks.end());
  EXPECT_TRUE(m1_tasks.count(TaskId(0, 0, "q1")));
  EXPECT_TRUE(m1_tasks.count(TaskId(0, 0, "q3")));
}

}  // namespace
}  // namespace oxbow::streams::detail
