// How the group member turns a round's assignment into what the worker runs (no broker needed).
#include <gtest/gtest.h>

#include "connect/runtime/distributed/worker_group_member.h"

namespace oxbow::connect::runtime::distributed {
namespace {

WorkerAssignment running(std::vector<std::string> connectors, std::vector<ConnectorTaskId> tasks) {
  WorkerAssignment a;
  a.connectors = std::move(connectors);
  a.tasks = std::move(tasks);
  return a;
}

TEST(MemberAssignment, AnIncrementalAssignmentAddsToWhatTheWorkerKept) {
  WorkerAssignment received = running({"b"}, {{"b", 0}});
  received.revokedTasks = {{"a", 1}};
  received.delayMs = 7;
  auto full = completeAssignment(received, running({"a"}, {{"a", 0}, {"a", 1}}), kSessionedVersion);
  EXPECT_EQ(full.connectors, (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(full.tasks, (std::vector<ConnectorTaskId>{{"b", 0}, {"a", 0}}));
  EXPECT_EQ(full.revokedTasks, (std::vector<ConnectorTaskId>{{"a", 1}}));
  EXPECT_EQ(full.delayMs, 7);
  // The first assignment is the whole of it.
  EXPECT_EQ(completeAssignment(received, std::nullopt, kCompatibleVersion), received);
}

TEST(MemberAssignment, AnEagerAssignmentReplacesEverythingAndRevokesWhatIsGone) {
  WorkerAssignment received = running({"b"}, {{"a", 0}});
  received.version = kEagerVersion;
  auto full = completeAssignment(received, running({"a", "b"}, {{"a", 0}, {"a", 1}, {"b", 0}}),
                                 kEagerVersion);
  EXPECT_EQ(full.connectors, (std::vector<std::string>{"b"}));
  EXPECT_EQ(full.tasks, (std::vector<ConnectorTaskId>{{"a", 0}}));
  EXPECT_EQ(full.revokedConnectors, (std::vector<std::string>{"a"}));
  EXPECT_EQ(full.revokedTasks, (std::vector<ConnectorTaskId>{{"a", 1}, {"b", 0}}));
}

TEST(MemberAssignment, AnAssignmentWithAnErrorChangesNothing) {
  WorkerAssignment failed;
  failed.error = kConfigMismatch;
  failed.configOffset = 12;
  for (int16_t version : {kEagerVersion, kSessionedVersion}) {
    auto full = completeAssignment(failed, running({"a"}, {{"a", 0}}), version);
    EXPECT_EQ(full.connectors, (std::vector<std::string>{"a"}));
    EXPECT_EQ(full.tasks, (std::vector<ConnectorTaskId>{{"a", 0}}));
    EXPECT_TRUE(full.revokedConnectors.empty() && full.revokedTasks.empty());
    EXPECT_EQ(full.error, kConfigMismatch);
    EXPECT_EQ(full.configOffset, 12);
  }
  EXPECT_TRUE(completeAssignment(failed, std::nullopt, kSessionedVersion).tasks.empty());
}

TEST(MemberAssignment, RevocationsOfARoundTheHerderDidNotTakeStillCount) {
  WorkerAssignment untaken = running({}, {});
  untaken.revokedConnectors = {"a"};
  untaken.revokedTasks = {{"a", 1}, {"a", 2}};
  WorkerAssignment next = running({}, {{"a", 2}});  // the next round gave a-2 back
  next.revokedTasks = {{"a", 3}};
  carryRevocations(next, untaken);
  EXPECT_EQ(next.revokedConnectors, (std::vector<std::string>{"a"}));
  EXPECT_EQ(next.revokedTasks, (std::vector<ConnectorTaskId>{{"a", 3}, {"a", 1}}));
}

}  // namespace
}  // namespace oxbow::connect::runtime::distributed
