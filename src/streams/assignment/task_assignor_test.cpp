#include "streams/assignment/task_assignor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace oxbow::streams::detail {
namespace {

std::set<TaskId> tasks_of(int subtopologies, int partitions) {
  std::set<TaskId> out;
  for (int s = 0; s < subtopologies; ++s)
    for (int p = 0; p < partitions; ++p) out.insert({s, p});
  return out;
}

std::map<TaskId, int64_t> ends_of(const std::set<TaskId>& tasks, int64_t end) {
  std::map<TaskId, int64_t> out;
  for (const auto& t : tasks) out[t] = end;
  return out;
}

// Every task active exactly once; no client both active and standby for a task.
void expect_valid(const AssignorResult& r, const std::set<TaskId>& tasks) {
  std::map<TaskId, int> actives;
  for (const auto& [id, a] : r.clients) {
    for (const auto& t : a.active) {
      ++actives[t];
      EXPECT_FALSE(a.standby.count(t)) << id << " holds " << t.toString() << " twice";
    }
    for (const auto& t : a.warmup) EXPECT_TRUE(a.standby.count(t));
  }
  for (const auto& t : tasks) EXPECT_EQ(actives[t], 1) << t.toString();
}

TEST(TaskAssignor, NewGroupIsBalancedByThreads) {
  auto tasks = tasks_of(2, 3);
  std::map<std::string, ClientState> clients{{"a", {2, {}, {}}}, {"b", {1, {}, {}}}};
  auto r = assign_tasks(clients, tasks, ends_of(tasks, 0), {});
  expect_valid(r, tasks);
  EXPECT_EQ(r.clients["a"].active.size(), 4u);
  EXPECT_EQ(r.clients["b"].active.size(), 2u);
  EXPECT_FALSE(r.probing_rebalance_needed);
}

TEST(TaskAssignor, BalancedAssignmentStaysWhereItIs) {
  auto tasks = tasks_of(1, 4);
  std::map<std::string, ClientState> clients{
      {"a", {1, {{0, 2}, {0, 3}}, {{{0, 2}, kLatestOffsetSum}, {{0, 3}, kLatestOffsetSum}}}},
      {"b", {1, {{0, 0}, {0, 1}}, {{{0, 0}, kLatestOffsetSum}, {{0, 1}, kLatestOffsetSum}}}}};
  auto r = assign_tasks(clients, tasks, ends_of(tasks, 500), {});
  expect_valid(r, tasks);
  EXPECT_EQ(r.clients["a"].active, (std::set<TaskId>{{0, 2}, {0, 3}}));
  EXPECT_EQ(r.clients["b"].active, (std::set<TaskId>{{0, 0}, {0, 1}}));
}

TEST(TaskAssignor, StandbysGoToOtherClientsAndSpread) {
  auto tasks = tasks_of(1, 6);
  std::map<std::string, ClientState> clients{
      {"a", {1, {}, {}}}, {"b", {1, {}, {}}}, {"c", {1, {}, {}}}};
  AssignorConfig config;
  config.num_standby_replicas = 1;
  auto r = assign_tasks(clients, tasks, ends_of(tasks, 0), config);
  expect_valid(r, tasks);
  std::map<TaskId, int> standbys;
  for (const auto& [id, a] : r.clients) {
    EXPECT_EQ(a.active.size(), 2u);
    EXPECT_EQ(a.standby.size(), 2u) << id;
    for (const auto& t : a.standby) ++standbys[t];
  }
  for (const auto& t : tasks) EXPECT_EQ(standbys[t], 1);
  // Two standbys asked for with two clients: one each can hold only one (the other is active).
  config.num_standby_replicas = 2;
  std::map<std::string, ClientState> two{{"a", {1, {}, {}}}, {"b", {1, {}, {}}}};
  auto r2 = assign_tasks(two, tasks, ends_of(tasks, 0), config);
  expect_valid(r2, tasks);
  EXPECT_EQ(r2.clients["a"].standby.size() + r2.clients["b"].standby.size(), 6u);
}

TEST(TaskAssignor, FailoverPicksTheCaughtUpStandby) {
  auto tasks = tasks_of(1, 3);
  auto ends = ends_of(tasks, 1'000'000);
  // "a" ran 0_0 and died; "c" has a caught-up standby of it, "b" has nothing of it.
  std::map<std::string, ClientState> clients{
      {"b", {1, {{0, 1}}, {{{0, 1}, kLatestOffsetSum}}}},
      {"c", {1, {{0, 2}}, {{{0, 2}, kLatestOffsetSum}, {{0, 0}, 999'990}}}}};
  AssignorConfig config;
  config.num_standby_replicas = 1;
  auto r = assign_tasks(clients, tasks, ends, config);
  expect_valid(r, tasks);
  EXPECT_TRUE(r.clients["c"].active.count({0, 0}));
  // The standby of the moved task is rebuilt on the other client.
  EXPECT_TRUE(r.clients["b"].standby.count({0, 0}));
}

TEST(TaskAssignor, NewClientWarmsUpBeforeTakingTasks) {
  auto tasks = tasks_of(1, 6);
  auto ends = ends_of(tasks, 1'000'000);
  std::map<std::string, ClientState> clients{{"a", {1, {{0, 0}, {0, 1}, {0, 2}}, {}}},
                                             {"b", {1, {{0, 3}, {0, 4}, {0, 5}}, {}}},
                                             {"c", {1, {}, {}}}};
  for (const auto& t : clients["a"].previous_active) clients["a"].offset_sums[t] = kLatestOffsetSum;
  for (const auto& t : clients["b"].previous_active) clients["b"].offset_sums[t] = kLatestOffsetSum;
  AssignorConfig config;
  config.max_warmup_replicas = 1;
  auto r = assign_tasks(clients, tasks, ends, config);
  expect_valid(r, tasks);
  // Nothing moves to "c" yet: it would have to restore. It warms up one task (the budget).
  EXPECT_TRUE(r.clients["c"].active.empty());
  EXPECT_EQ(r.clients["c"].warmup.size(), 1u);
  EXPECT_TRUE(r.probing_rebalance_needed);
  EXPECT_EQ(r.clients["a"].active, clients["a"].previous_active);
  EXPECT_EQ(r.clients["b"].active, clients["b"].previous_active);

  // The probing rebalance: "c" caught up on the warmed task (within acceptable.recovery.lag), so
  // it takes it, and warms up the next one.
  TaskId warmed = *r.clients["c"].warmup.begin();
  clients["c"].offset_sums[warmed] = 1'000'000 - config.acceptable_recovery_lag;
  auto r2 = assign_tasks(clients, tasks, ends, config);
  expect_valid(r2, tasks);
  EXPECT_EQ(r2.clients["c"].active, std::set<TaskId>{warmed});
  EXPECT_EQ(r2.clients["c"].warmup.size(), 1u);
  EXPECT_FALSE(r2.clients["c"].warmup.count(warmed));
  EXPECT_TRUE(r2.probing_rebalance_needed);
}

TEST(TaskAssignor, StatelessTasksMoveAtOnce) {
  auto tasks = tasks_of(1, 4);
  std::map<std::string, ClientState> clients{{"a", {1, {{0, 0}, {0, 1}, {0, 2}, {0, 3}}, {}}},
                                             {"b", {1, {}, {}}}};
  auto r = assign_tasks(clients, tasks, {}, {});
  expect_valid(r, tasks);
  EXPECT_EQ(r.clients["a"].active.size(), 2u);
  EXPECT_EQ(r.clients["b"].active.size(), 2u);
  EXPECT_FALSE(r.probing_rebalance_needed);
}

// Scaling one instance out to three (word count: six stateless tasks, six counting ones), the
// new instances' warm-ups caught up on some counting tasks: each new instance runs a counting task
// it caught up on, not only the stateless ones it took before. (When the stateless tasks a client
// owned were placed before the stateful tasks their owner gave up, two's four stateless tasks
// filled its share, three took both caught-up counting tasks, and two never ran one.)
TEST(TaskAssignor, EveryClientRunsItsShareOfTheStatefulTasks) {
  auto stateless = tasks_of(1, 6);
  std::set<TaskId> tasks = stateless;
  std::map<TaskId, int64_t> ends;
  std::map<TaskId, int64_t> running;
  for (int p = 0; p < 6; ++p) {
    tasks.insert({1, p});
    ends[{1, p}] = 1'000'000;
    running[{1, p}] = kLatestOffsetSum;
  }
  // one ran everything; two and three took stateless tasks in earlier rounds, and their warm-ups
  // caught up on the last counting tasks (two on 1_5, three on 1_4 and 1_5).
  std::set<TaskId> counting;
  for (int p = 0; p < 6; ++p) counting.insert({1, p});
  std::map<std::string, ClientState> clients{
      {"one", {1, counting, running}},
      {"two", {1, {{0, 1}, {0, 3}, {0, 4}, {0, 5}}, {{{1, 5}, 1'000'000}}}},
      {"three", {1, {{0, 0}, {0, 2}}, {{{1, 4}, 1'000'000}, {{1, 5}, 1'000'000}}}}};
  auto r = assign_tasks(clients, tasks, ends, {});
  expect_valid(r, tasks);
  for (const char* id : {"one", "two", "three"}) {
    const auto& active = r.clients[id].active;
    auto stateful = std::count_if(active.begin(), active.end(),
                                  [](const TaskId& t) { return t.subtopology == 1; });
    EXPECT_GE(stateful, 1) << id;
    EXPECT_EQ(active.size(), 4u) << id;
  }
  // The counting tasks two and three take are the ones they caught up on: nothing to warm up.
  EXPECT_TRUE(r.clients["two"].active.count({1, 5}));
  EXPECT_TRUE(r.clients["three"].active.count({1, 4}));
  EXPECT_FALSE(r.probing_rebalance_needed);
}

TEST(TaskAssignor, NoCaughtUpClientMeansTheLeastBehindTakesIt) {
  auto tasks = tasks_of(1, 1);
  std::map<std::string, ClientState> clients{{"a", {1, {}, {{{0, 0}, 100}}}},
                                             {"b", {1, {}, {{{0, 0}, 900'000}}}}};
  auto r = assign_tasks(clients, tasks, ends_of(tasks, 1'000'000), {});
  expect_valid(r, tasks);
  EXPECT_TRUE(r.clients["b"].active.count({0, 0}));
}

// Random groups (clients with 1-3 threads, random histories and lags): the invariants hold, and
// when every client is caught up on every task the actives are balanced to within one task per
// thread and nothing warms up.
TEST(TaskAssignor, RandomGroupsKeepTheInvariants) {
  std::mt19937 random(20261205);
  for (int round = 0; round < 500; ++round) {
    int n_clients = 1 + static_cast<int>(random() % 5);
    auto tasks = tasks_of(1 + static_cast<int>(random() % 3), 1 + static_cast<int>(random() % 8));
    bool all_caught_up = random() % 2 == 0;
    std::map<TaskId, int64_t> ends;
    for (const auto& t : tasks)
      if (random() % 4 != 0) ends[t] = 100'000;
    std::map<std::string, ClientState> clients;
    for (int c = 0; c < n_clients; ++c) {
      auto& state = clients[std::string(1, static_cast<char>('a' + c))];
      state.capacity = 1 + static_cast<int32_t>(random() % 3);
      for (const auto& t : tasks) {
        if (random() % n_clients == 0) state.previous_active.insert(t);
        if (all_caught_up)
          state.offset_sums[t] = 100'000;
        else if (random() % 3 == 0)
          state.offset_sums[t] = static_cast<int64_t>(random() % 100'001);
      }
    }
    AssignorConfig config;
    config.num_standby_replicas = static_cast<int32_t>(random() % 3);
    config.max_warmup_replicas = 1 + static_cast<int32_t>(random() % 3);
    auto r = assign_tasks(clients, tasks, ends, config);
    expect_valid(r, tasks);
    size_t warmups = 0;
    for (const auto& [id, a] : r.clients) warmups += a.warmup.size();
    EXPECT_LE(warmups, static_cast<size_t>(config.max_warmup_replicas));
    for (const auto& t : tasks) {
      int standbys = 0;
      for (const auto& [id, a] : r.clients) standbys += a.standby.count(t) && !a.warmup.count(t);
      int expected = ends.count(t) ? std::min(config.num_standby_replicas, n_clients - 1) : 0;
      EXPECT_EQ(standbys, expected) << "round " << round << " task " << t.toString();
    }
    if (all_caught_up) {
      EXPECT_EQ(warmups, 0u);
      EXPECT_FALSE(r.probing_rebalance_needed);
      // Per thread: no client could give one task to another and leave both nearer the mean.
      for (const auto& [x, ax] : r.clients)
        for (const auto& [y, ay] : r.clients)
          EXPECT_FALSE((ay.active.size() + 1) * clients[x].capacity <
                       ax.active.size() * clients[y].capacity)
              << "round " << round << ": " << x << " has " << ax.active.size() << ", " << y
              << " has " << ay.active.size();
    }
  }
}

}  // namespace
}  // namespace oxbow::streams::detail
