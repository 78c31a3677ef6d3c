#include "connect/runtime/distributed/incremental_assignor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace oxbow::connect::runtime::distributed {
namespace {

constexpr int32_t kMaxDelay = 300000;

// A group of workers that apply what the leader assigns: they stop what is revoked and start
// what is new, and report what they run at the next round, as the worker coordinator does.
struct Group {
  explicit Group(int32_t maxDelay = kMaxDelay) : assignor(maxDelay) {}

  IncrementalCooperativeAssignor assignor;
  std::map<std::string, WorkerState> members;
  ClusterView cluster{0, {}};
  int64_t now = 1000;
  std::map<std::string, WorkerAssignment> last;

  void join(const std::string& id) { members[id] = {"http://" + id, cluster.configOffset, {}}; }
  void leave(const std::string& id) { members.erase(id); }
  void setConnector(const std::string& name, int tasks) {
    cluster.taskCounts[name] = tasks;
    ++cluster.configOffset;
  }
  void deleteConnector(const std::string& name) {
    cluster.taskCounts.erase(name);
    ++cluster.configOffset;
  }

  // One rebalance; the members apply their assignments, but for `missing` ones (their SyncGroup
  // failed: they go on with what they ran).
  void round(const std::set<std::string>& missing = {}) {
    std::string leader = members.begin()->first;
    last = assignor.assign(leader, "http://" + leader, kSessionedVersion, members, cluster, now);
    ASSERT_EQ(last.size(), members.size());
    for (auto& [id, state] : members) {
      if (missing.count(id)) continue;
      const WorkerAssignment& a = last.at(id);
      ASSERT_EQ(a.error, kNoError);
      if (!state.owned) state.owned = WorkerAssignment{};
      WorkerAssignment& owned = *state.owned;
      for (const auto& c : a.revokedConnectors) std::erase(owned.connectors, c);
      for (const auto& t : a.revokedTasks) std::erase(owned.tasks, t);
      owned.connectors.insert(owned.connectors.end(), a.connectors.begin(), a.connectors.end());
      owned.tasks.insert(owned.tasks.end(), a.tasks.begin(), a.tasks.end());
      state.configOffset = cluster.configOffset;
    }
    expectNothingRunsTwice();
  }

  void expectNothingRunsTwice() const {
    std::set<std::string> connectors;
    std::set<ConnectorTaskId> tasks;
    for (const auto& [id, state] : members) {
      if (!state.owned) continue;
      for (const auto& c : state.owned->connectors)
        EXPECT_TRUE(connectors.insert(c).second) << c << " runs twice";
      for (const auto& t : state.owned->tasks)
        EXPECT_TRUE(tasks.insert(t).second) << toString(t) << " runs twice";
    }
  }

  size_t connectorsOf(const std::string& id) const {
    const auto& s = members.at(id);
    return s.owned ? s.owned->connectors.size() : 0;
  }
  size_t tasksOf(const std::string& id) const {
    const auto& s = members.at(id);
    return s.owned ? s.owned->tasks.size() : 0;
  }
  size_t revokedIn(const std::string& id) const {
    const auto& a = last.at(id);
    return a.revokedConnectors.size() + a.revokedTasks.size();
  }
  size_t newIn(const std::string& id) const {
    const auto& a = last.at(id);
    return a.connectors.size() + a.tasks.size();
  }

  // Every configured connector and task runs exactly once, and the loads differ by one at most.
  void expectBalancedAndComplete() const {
    std::set<std::string> connectors;
    std::set<ConnectorTaskId> tasks;
    size_t minC = SIZE_MAX, maxC = 0, minT = SIZE_MAX, maxT = 0;
    for (const auto& [id, state] : members) {
      minC = std::min(minC, connectorsOf(id));
      maxC = std::max(maxC, connectorsOf(id));
      minT = std::min(minT, tasksOf(id));
      maxT = std::max(maxT, tasksOf(id));
      if (!state.owned) continue;
      connectors.insert(state.owned->connectors.begin(), state.owned->connectors.end());
      tasks.insert(state.owned->tasks.begin(), state.owned->tasks.end());
    }
    std::set<std::string> wantC;
    std::set<ConnectorTaskId> wantT;
    for (const auto& [c, n] : cluster.taskCounts) {
      wantC.insert(c);
      for (int t = 0; t < n; ++t) wantT.insert({c, t});
    }
    EXPECT_EQ(connectors, wantC);
    EXPECT_EQ(tasks, wantT);
    EXPECT_LE(maxC - minC, 1u);
    EXPECT_LE(maxT - minT, 1u);
  }
};

// The workers running the connectors (name -> task count) after a first round.
void start(Group& g, std::initializer_list<const char*> workers,
           const std::map<std::string, int>& connectors) {
  for (const char* id : workers) g.join(id);
  for (const auto& [name, tasks] : connectors) g.setConnector(name, tasks);
  g.round();
}

// w1 and w2 running connector "a" and its `tasks` tasks.
void startTwo(Group& g, int tasks) {
  start(g, {"w1", "w2"}, {{"a", tasks}});
}

// Each member's connector (or task) count, sorted: the shape Kafka's assignor tests check.
std::vector<size_t> connectorCounts(const Group& g) {
  std::vector<size_t> out;
  for (const auto& [id, state] : g.members) out.push_back(g.connectorsOf(id));
  std::sort(out.begin(), out.end());
  return out;
}
std::vector<size_t> taskCounts(const Group& g) {
  std::vector<size_t> out;
  for (const auto& [id, state] : g.members) out.push_back(g.tasksOf(id));
  std::sort(out.begin(), out.end());
  return out;
}
using Counts = std::vector<size_t>;

// Kafka's testAssignmentsWhenWorkersJoinAfterRevocations: revoking rounds that follow each other
// wait a growing delay; rounds in between place what was revoked without revoking more.
TEST(IncrementalAssignor, SuccessiveRevokingRoundsBackOff) {
  Group g;
  start(g, {"worker1"}, {{"connector1", 4}, {"connector2", 4}, {"connector3", 4}});
  EXPECT_EQ(connectorCounts(g), (Counts{3}));
  g.join("worker2");
  g.round();
  EXPECT_EQ(connectorCounts(g), (Counts{0, 2}));
  EXPECT_EQ(taskCounts(g), (Counts{0, 6}));
  g.join("worker3");
  g.round();
  EXPECT_GT(g.assignor.delayMs(), 0);
  EXPECT_EQ(connectorCounts(g), (Counts{0, 1, 2}));
  EXPECT_EQ(taskCounts(g), (Counts{3, 3, 6}));
  g.now += g.assignor.delayMs();
  g.join("worker4");
  g.round();
  EXPECT_EQ(connectorCounts(g), (Counts{0, 0, 1, 1}));
  EXPECT_EQ(taskCounts(g), (Counts{0, 3, 3, 3}));
  g.join("worker5");
  g.round();
  EXPECT_GT(g.assignor.delayMs(), 40);
  EXPECT_EQ(connectorCounts(g), (Counts{0, 0, 1, 1, 1}));
  EXPECT_EQ(taskCounts(g), (Counts{1, 2, 3, 3, 3}));
  g.now += g.assignor.delayMs();
  g.join("worker6");
  g.round();
  EXPECT_EQ(g.assignor.delayMs(), 0);
  EXPECT_EQ(connectorCounts(g), (Counts{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(taskCounts(g), (Counts{0, 1, 2, 2, 2, 2}));
  g.round();
  EXPECT_EQ(taskCounts(g), (Counts{2, 2, 2, 2, 2, 2}));
  g.expectBalancedAndComplete();
}

// Kafka's testWorkerJoiningDuringDelayedRebalance: nothing is revoked while a delay runs.
TEST(IncrementalAssignor, WorkerJoiningDuringADelayWaitsForItsEnd) {
  Group g;
  start(g, {"worker1"}, {{"connector1", 4}, {"connector2", 4}, {"connector3", 4}});
  g.join("worker2");
  g.round();
  g.join("worker3");
  g.round();
  EXPECT_GT(g.assignor.delayMs(), 0);
  EXPECT_EQ(taskCounts(g), (Counts{3, 3, 6}));
  g.now += g.assignor.delayMs() / 2;
  g.join("worker4");
  g.round();
  EXPECT_GT(g.assignor.delayMs(), 0);
  EXPECT_EQ(g.revokedIn("worker1") + g.revokedIn("worker2") + g.revokedIn("worker3"), 0u);
  EXPECT_EQ(connectorCounts(g), (Counts{0, 0, 1, 2}));
  EXPECT_EQ(taskCounts(g), (Counts{0, 3, 3, 6}));
  g.now += g.assignor.delayMs();
  g.join("worker5");
  g.round();
  EXPECT_EQ(g.assignor.delayMs(), 0);
  EXPECT_EQ(connectorCounts(g), (Counts{0, 0, 0, 1, 1}));
  EXPECT_EQ(taskCounts(g), (Counts{0, 0, 2, 3, 3}));
  g.round();
  EXPECT_EQ(connectorCounts(g), (Counts{0, 0, 1, 1, 1}));
  EXPECT_EQ(taskCounts(g), (Counts{2, 2, 2, 3, 3}));
  g.expectBalancedAndComplete();
}

// Kafka's testTaskAssignmentWhenWorkerBounces: the delay counts down across rounds, and a worker
// back empty-handed before it ends gets the held-back work when it ends.
TEST(IncrementalAssignor, DelayCountsDownAcrossRoundsAndTheReturningWorkerGetsTheWork) {
  Group g;
  start(g, {"worker1", "worker2"}, {{"connector1", 4}, {"connector2", 4}});
  EXPECT_EQ(taskCounts(g), (Counts{4, 4}));
  g.leave("worker2");
  g.round();
  EXPECT_EQ(g.assignor.delayMs(), kMaxDelay);
  EXPECT_EQ(g.newIn("worker1"), 0u);
  g.now += kMaxDelay / 2;
  g.round();
  EXPECT_EQ(g.assignor.delayMs(), kMaxDelay / 2);
  g.now += kMaxDelay / 4;
  g.join("worker2");
  g.round();
  EXPECT_EQ(g.assignor.delayMs(), kMaxDelay / 4);
  EXPECT_EQ(g.newIn("worker1") + g.newIn("worker2"), 0u);
  g.now += kMaxDelay / 4;
  g.round();
  EXPECT_EQ(g.assignor.delayMs(), 0);
  EXPECT_EQ(g.revokedIn("worker1") + g.revokedIn("worker2"), 0u);
  EXPECT_EQ(connectorCounts(g), (Counts{1, 1}));
  EXPECT_EQ(taskCounts(g), (Counts{4, 4}));
  g.expectBalancedAndComplete();
}

// Kafka's testTaskAssignmentWhenLeaderBounces: a new leader remembers nothing, so the old
// leader's work is placed at once, and the old leader back is an ordinary new worker.
TEST(IncrementalAssignor, NewLeaderPlacesTheOldLeadersWorkAtOnce) {
  Group g;
  start(g, {"worker1", "worker2", "worker3"}, {{"connector1", 4}, {"connector2", 4}});
  EXPECT_EQ(taskCounts(g), (Counts{2, 3, 3}));
  g.leave("worker1");
  g.assignor = IncrementalCooperativeAssignor(kMaxDelay);
  g.round();
  EXPECT_EQ(g.assignor.delayMs(), 0);
  EXPECT_EQ(connectorCounts(g), (Counts{1, 1}));
  EXPECT_EQ(taskCounts(g), (Counts{4, 4}));
  g.join("worker1");
  g.round();
  EXPECT_EQ(connectorCounts(g), (Counts{0, 1, 1}));
  EXPECT_EQ(taskCounts(g), (Counts{0, 3, 3}));
  g.round();
  EXPECT_EQ(taskCounts(g), (Counts{2, 3, 3}));
  g.expectBalancedAndComplete();
}

// Kafka's testTaskAssignmentWhenTasksDuplicatedInWorkerAssignment: what two workers both claim
// is revoked from both, then placed once.
TEST(IncrementalAssignor, WorkClaimedByTwoWorkersIsRevokedFromBothThenPlacedOnce) {
  Group g;
  start(g, {"worker1"}, {{"connector1", 4}, {"connector2", 4}});
  WorkerAssignment claimed;
  claimed.connectors = {"connector1"};
  for (int t = 0; t < 4; ++t) claimed.tasks.push_back({"connector1", t});
  g.members["worker2"] = {"http://worker2", g.cluster.configOffset, claimed};
  g.round();
  EXPECT_EQ(g.last.at("worker1").revokedConnectors, std::vector<std::string>{"connector1"});
  EXPECT_EQ(g.last.at("worker2").revokedTasks.size(), 4u);
  EXPECT_EQ(connectorCounts(g), (Counts{0, 1}));
  EXPECT_EQ(taskCounts(g), (Counts{0, 4}));
  g.round();
  EXPECT_EQ(g.revokedIn("worker1") + g.revokedIn("worker2"), 0u);
  EXPECT_EQ(connectorCounts(g), (Counts{1, 1}));
  EXPECT_EQ(taskCounts(g), (Counts{4, 4}));
  g.expectBalancedAndComplete();
  g.round();
  EXPECT_EQ(g.newIn("worker1") + g.newIn("worker2"), 0u);
}

TEST(IncrementalAssignor, FirstRoundSpreadsConnectorsAndTasksSeparately) {
  Group g;
  start(g, {"w1", "w2"}, {{"a", 4}, {"b", 3}});
  EXPECT_EQ(g.connectorsOf("w1"), 1u);
  EXPECT_EQ(g.connectorsOf("w2"), 1u);
  EXPECT_EQ(g.tasksOf("w1") + g.tasksOf("w2"), 7u);
  g.expectBalancedAndComplete();
  EXPECT_EQ(g.last.at("w1").delayMs, 0);
  EXPECT_EQ(g.last.at("w1").leader, "w1");
  EXPECT_EQ(g.last.at("w2").configOffset, 2);
}

TEST(IncrementalAssignor, JoiningWorkerGetsWorkAfterJustEnoughIsRevoked) {
  Group g;
  start(g, {"w1", "w2"}, {{"a", 6}, {"b", 6}});
  g.join("w3");
  g.round();
  // Revoking round: 12 tasks over 3 is 4 each, so w1 and w2 give up 2 tasks each; two connectors
  // over three members are balanced already (one member may have none).
  EXPECT_EQ(g.last.at("w1").revokedTasks.size() + g.last.at("w2").revokedTasks.size(), 4u);
  EXPECT_TRUE(g.last.at("w1").revokedConnectors.empty());
  EXPECT_TRUE(g.last.at("w2").revokedConnectors.empty());
  EXPECT_EQ(g.newIn("w3"), 0u);  // nothing is handed out in the round that revokes it
  g.round();
  EXPECT_EQ(g.tasksOf("w3"), 4u);
  EXPECT_EQ(g.newIn("w1") + g.newIn("w2"), 0u);  // only the revoked work moved
  EXPECT_EQ(g.revokedIn("w1") + g.revokedIn("w2") + g.revokedIn("w3"), 0u);
  g.expectBalancedAndComplete();
}

TEST(IncrementalAssignor, LeavingWorkersWorkIsHeldBackForTheDelayThenReassigned) {
  Group g;
  start(g, {"w1", "w2", "w3"}, {{"a", 3}, {"b", 3}, {"c", 3}});
  g.expectBalancedAndComplete();
  g.leave("w3");
  g.now += 10;
  g.round();
  EXPECT_EQ(g.last.at("w1").delayMs, kMaxDelay);
  EXPECT_EQ(g.newIn("w1") + g.newIn("w2"), 0u);
  EXPECT_EQ(g.tasksOf("w1") + g.tasksOf("w2"), 6u);
  // A rejoin before the delay ends: the rest of the delay.
  g.now += 100000;
  g.round();
  EXPECT_EQ(g.last.at("w2").delayMs, kMaxDelay - 100000);
  EXPECT_EQ(g.newIn("w1") + g.newIn("w2"), 0u);
  // When the delay is over the held-back work is given out, and nothing is held any more.
  g.now += 200000;
  g.round();
  EXPECT_EQ(g.last.at("w1").delayMs, 0);
  EXPECT_EQ(g.newIn("w1") + g.newIn("w2"), 4u);  // w3's connector and three tasks
  g.expectBalancedAndComplete();
}

TEST(IncrementalAssignor, WorkerThatComesBackWithinTheDelayKeepsItsWork) {
  Group g;
  startTwo(g, 4);
  WorkerState w2 = g.members.at("w2");
  g.leave("w2");
  g.round();
  EXPECT_GT(g.last.at("w1").delayMs, 0);
  // The same worker rejoins (its session had not expired, or it rejoined with what it runs).
  g.members["w2"] = w2;
  g.now += 5000;
  g.round();
  EXPECT_EQ(g.last.at("w1").delayMs, 0);
  EXPECT_EQ(g.newIn("w1") + g.newIn("w2") + g.revokedIn("w1") + g.revokedIn("w2"), 0u);
  g.expectBalancedAndComplete();
}

TEST(IncrementalAssignor, RestartedWorkerJoiningEmptyDuringTheDelayReceivesTheLostWork) {
  Group g;
  startTwo(g, 4);
  size_t lostTasks = g.tasksOf("w2"), lostConnectors = g.connectorsOf("w2");
  g.leave("w2");
  g.round();
  g.join("w2-restarted");  // a new member id, nothing owned
  g.now += 1000;
  g.round();
  EXPECT_EQ(g.newIn("w2-restarted"), 0u);
  EXPECT_GT(g.last.at("w1").delayMs, 0);
  g.now += kMaxDelay;
  g.round();
  EXPECT_EQ(g.tasksOf("w2-restarted"), lostTasks);
  EXPECT_EQ(g.connectorsOf("w2-restarted"), lostConnectors);
  EXPECT_EQ(g.newIn("w1"), 0u);
  g.expectBalancedAndComplete();
}

TEST(IncrementalAssignor, NoDelayReassignsAtOnce) {
  Group g(0);
  startTwo(g, 4);
  g.leave("w2");
  g.round();
  EXPECT_EQ(g.last.at("w1").delayMs, 0);
  EXPECT_EQ(g.tasksOf("w1"), 4u);
  EXPECT_EQ(g.connectorsOf("w1"), 1u);
}

TEST(IncrementalAssignor, DeletedConnectorIsRevokedWithItsTasks) {
  Group g;
  start(g, {"w1", "w2"}, {{"a", 2}, {"b", 2}});
  g.deleteConnector("a");
  g.round();
  size_t revoked = 0;
  for (auto id : {"w1", "w2"}) {
    for (const auto& c : g.last.at(id).revokedConnectors) EXPECT_EQ(c, "a");
    for (const auto& t : g.last.at(id).revokedTasks) EXPECT_EQ(t.connector, "a");
    revoked += g.revokedIn(id);
  }
  EXPECT_EQ(revoked, 3u);
  g.round();
  g.expectBalancedAndComplete();
  EXPECT_EQ(g.last.at("w1").revokedTasks.size() + g.last.at("w2").revokedTasks.size(), 0u);
}

TEST(IncrementalAssignor, TaskCountChangesAddAndRevokeTasks) {
  Group g;
  startTwo(g, 2);
  g.setConnector("a", 5);
  g.round();
  EXPECT_EQ(g.newIn("w1") + g.newIn("w2"), 3u);
  g.expectBalancedAndComplete();
  g.setConnector("a", 1);
  g.round();
  std::vector<ConnectorTaskId> revoked = g.last.at("w1").revokedTasks;
  revoked.insert(revoked.end(), g.last.at("w2").revokedTasks.begin(),
                 g.last.at("w2").revokedTasks.end());
  std::sort(revoked.begin(), revoked.end());
  EXPECT_EQ(revoked, (std::vector<ConnectorTaskId>{{"a", 1}, {"a", 2}, {"a", 3}, {"a", 4}}));
  g.round();
  g.expectBalancedAndComplete();
}

TEST(IncrementalAssignor, StoppedConnectorIsAssignedWithoutTasks) {
  Group g;
  g.join("w1");
  g.setConnector("stopped", 0);
  g.round();
  EXPECT_EQ(g.last.at("w1").connectors, std::vector<std::string>{"stopped"});
  EXPECT_TRUE(g.last.at("w1").tasks.empty());
}

TEST(IncrementalAssignor, LeaderBehindTheConfigAnswersConfigMismatchToEveryone) {
  IncrementalCooperativeAssignor assignor(kMaxDelay);
  std::map<std::string, WorkerState> members{{"a", {"ua", 5, {}}}, {"b", {"ub", 9, {}}}};
  auto out = assignor.assign("a", "ua", kSessionedVersion, members, {7, {{"c", 1}}}, 0);
  ASSERT_EQ(out.size(), 2u);
  for (const auto& [id, a] : out) {
    EXPECT_EQ(a.error, kConfigMismatch);
    EXPECT_EQ(a.configOffset, 9);
    EXPECT_EQ(a.leader, "a");
    EXPECT_TRUE(a.connectors.empty());
  }
}

TEST(IncrementalAssignor, EagerProtocolDealsEverythingRoundRobin) {
  IncrementalCooperativeAssignor assignor(kMaxDelay);
  std::map<std::string, WorkerState> members{{"a", {"ua", 1, {}}}, {"b", {"ub", 1, {}}}};
  auto out = assignor.assign("a", "ua", kEagerVersion, members, {1, {{"x", 2}, {"y", 1}}}, 0);
  EXPECT_EQ(out.at("a").connectors, std::vector<std::string>{"x"});
  EXPECT_EQ(out.at("b").connectors, std::vector<std::string>{"y"});
  EXPECT_EQ(out.at("a").tasks, (std::vector<ConnectorTaskId>{{"x", 0}, {"y", 0}}));
  EXPECT_EQ(out.at("b").tasks, (std::vector<ConnectorTaskId>{{"x", 1}}));
  EXPECT_EQ(out.at("a").version, kEagerVersion);
}

TEST(IncrementalAssignor, NewLeaderStopsWorkTheConfigNoLongerHas) {
  Group g;
  g.join("w1");
  g.setConnector("a", 2);
  g.round();
  g.deleteConnector("a");
  IncrementalCooperativeAssignor fresh(kMaxDelay);
  auto out = fresh.assign("w1", "u", kCompatibleVersion, g.members, g.cluster, g.now);
  EXPECT_EQ(out.at("w1").revokedConnectors, std::vector<std::string>{"a"});
  EXPECT_EQ(out.at("w1").revokedTasks.size(), 2u);
}

TEST(IncrementalAssignor, MemberThatMissedARoundNeverRunsWhatAnotherRuns) {
  Group g;
  start(g, {"w1", "w2"}, {{"a", 6}});
  g.join("w3");
  g.round({"w1"});  // w1 misses the revocation of one of its tasks
  g.round();        // ... so the leader leaves it with w1 this round, and revokes it again later
  for (int i = 0; i < 5; ++i) {
    g.now += 1000;  // past the backoff between successive revoking rounds
    g.round();
  }
  g.expectBalancedAndComplete();
}

TEST(IncrementalAssignor, RandomJoinsLeavesAndConfigChangesSettleBalanced) {
  std::mt19937 rng(20261207);
  for (int run = 0; run < 60; ++run) {
    int32_t maxDelay = rng() % 2 ? kMaxDelay : 0;
    Group g(maxDelay);
    int nextId = 0;
    g.join("w" + std::to_string(nextId++));
    for (int step = 0; step < 25; ++step) {
      switch (rng() % 6) {
        case 0:
          g.join("w" + std::to_string(nextId++));
          break;
        case 1:
          if (g.members.size() > 1) {
            auto it = g.members.begin();
            std::advance(it, rng() % g.members.size());
            g.leave(it->first);
          }
          break;
        case 2:
        case 3:
          g.setConnector("c" + std::to_string(rng() % 8), static_cast<int>(rng() % 6));
          break;
        case 4:
          if (!g.cluster.taskCounts.empty()) {
            auto it = g.cluster.taskCounts.begin();
            std::advance(it, rng() % g.cluster.taskCounts.size());
            g.deleteConnector(it->first);
          }
          break;
        case 5:
          // Leadership moves: the new leader remembers no earlier round.
          g.assignor = IncrementalCooperativeAssignor(maxDelay);
          break;
      }
      g.now += rng() % 50000;
      std::set<std::string> missing;
      if (rng() % 5 == 0) {
        auto it = g.members.begin();
        std::advance(it, rng() % g.members.size());
        missing.insert(it->first);
      }
      g.round(missing);
      if (HasFailure()) return;
    }
    // Let it settle: members rejoin when their delay ends.
    for (int i = 0; i < 12; ++i) {
      g.now += kMaxDelay + 1;
      g.round();
    }
    SCOPED_TRACE("run " + std::to_string(run));
    g.expectBalancedAndComplete();
    if (HasFailure()) return;
  }
}

}  // namespace
}  // namespace oxbow::connect::runtime::distributed
