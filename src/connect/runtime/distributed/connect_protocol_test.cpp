#include "connect/runtime/distributed/connect_protocol.h"

#include <gtest/gtest.h>

#include <random>

namespace oxbow::connect::runtime::distributed {
namespace {

std::string bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out.push_back(static_cast<char>(v));
  return out;
}

TEST(ConnectProtocol, EagerMetadataIsVersionUrlAndOffset) {
  WorkerState state{"http://a:1", 7, std::nullopt};
  std::string expected = bytes({0, 0, 0, 10}) + "http://a:1" + bytes({0, 0, 0, 0, 0, 0, 0, 7});
  EXPECT_EQ(encodeWorkerState(state, kEagerVersion), expected);
  EXPECT_EQ(decodeWorkerState(expected), state);
}

TEST(ConnectProtocol, CompatibleMetadataWithoutAssignmentHasNullAllocation) {
  WorkerState state{"u", -1, std::nullopt};
  std::string expected = bytes({0, 1, 0, 1, 'u', -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1});
  EXPECT_EQ(encodeWorkerState(state, kCompatibleVersion), expected);
  EXPECT_EQ(decodeWorkerState(expected), state);
}

TEST(ConnectProtocol, SessionedMetadataEmbedsTheOwnedAssignmentWithVersionTwo) {
  WorkerAssignment owned;
  owned.leader = "L";
  owned.leaderUrl = "U";
  owned.configOffset = 3;
  owned.connectors = {"c"};
  owned.tasks = {{"c", 0}};
  WorkerState state{"u", 3, owned};
  std::string assignment = bytes({0,  2,                          // version
                                  0,  0,                          // error
                                  0,  1,  'L', 0,  1, 'U',        // leader, leader url
                                  0,  0,  0,   0,  0, 0,   0, 3,  // config offset
                                  0,  0,  0,   1,                 // one connector entry
                                  0,  1,  'c', 0,  0, 0,   2,     // "c" with two task numbers
                                  -1, -1, -1,  -1, 0, 0,   0, 0,  // the connector itself, task 0
                                  0,  0,  0,   0,                 // no revocations
                                  0,  0,  0,   0});               // delay
  std::string expected = bytes({0, 2, 0, 1, 'u', 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0,
                                static_cast<int>(assignment.size())}) +
                         assignment;
  EXPECT_EQ(encodeWorkerState(state, kSessionedVersion), expected);
  WorkerState decoded = decodeWorkerState(expected);
  owned.version = kSessionedVersion;
  EXPECT_EQ(decoded.owned, owned);
  EXPECT_EQ(decoded.url, "u");
}

TEST(ConnectProtocol, AssignmentV1GroupsTasksUnderTheirConnectorAndCarriesRevocationsAndDelay) {
  WorkerAssignment a;
  a.version = kCompatibleVersion;
  a.leader = "L";
  a.leaderUrl = "";
  a.configOffset = 258;
  a.tasks = {{"b", 1}};
  a.connectors = {"a"};
  a.revokedTasks = {{"a", 2}};
  a.delayMs = 1000;
  std::string expected =
      bytes({0, 1, 0,   0,  0, 1, 'L', 0,  0,  0,  0,  0, 0, 0, 0, 1, 2, 0, 0, 0, 2,  // two entries
             0, 1, 'a', 0,  0, 0, 1,   -1, -1, -1, -1,                                // a: itself
             0, 1, 'b', 0,  0, 0, 1,   0,  0,  0,  1,                                 // b: task 1
             0, 0, 0,   1,  0, 1, 'a', 0,  0,  0,  1,  0, 0, 0, 2,                    // revoked a-2
             0, 0, 3,   -24});                                                        // 1000
  EXPECT_EQ(encodeAssignment(a), expected);
  EXPECT_EQ(decodeAssignment(expected), a);
}

TEST(ConnectProtocol, EagerAssignmentHasNoRevocationsOrDelay) {
  WorkerAssignment a;
  a.version = kEagerVersion;
  a.error = kConfigMismatch;
  a.leader = "L";
  a.leaderUrl = "U";
  a.configOffset = 0;
  std::string expected =
      bytes({0, 0, 0, 1, 0, 1, 'L', 0, 1, 'U', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  EXPECT_EQ(encodeAssignment(a), expected);
  EXPECT_EQ(decodeAssignment(expected), a);
}

TEST(ConnectProtocol, MissingTrailingFieldsAndNullArraysTakeDefaults) {
  // Version 1 up to the config offset only, then with a null assignment array.
  std::string head = bytes({0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5});
  WorkerAssignment a = decodeAssignment(head);
  EXPECT_EQ(a.configOffset, 5);
  EXPECT_TRUE(a.connectors.empty());
  EXPECT_EQ(a.delayMs, 0);
  a = decodeAssignment(head + bytes({-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 9}));
  EXPECT_EQ(a.delayMs, 9);
  // A compatible worker's metadata without its allocation field.
  EXPECT_FALSE(decodeWorkerState(bytes({0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1})).owned);
}

TEST(ConnectProtocol, ProtocolNamesAndWhatEachSettingOffers) {
  EXPECT_EQ(offeredProtocols("sessioned"),
            (std::vector<std::string>{"sessioned", "compatible", "default"}));
  EXPECT_EQ(offeredProtocols("compatible"), (std::vector<std::string>{"compatible", "default"}));
  EXPECT_EQ(offeredProtocols("default"), (std::vector<std::string>{"default"}));
  EXPECT_THROW(protocolVersion("eager"), ProtocolError);
  EXPECT_EQ(protocolName(2), "sessioned");
}

WorkerAssignment sample(std::mt19937& rng) {
  WorkerAssignment a;
  a.version = static_cast<int16_t>(rng() % 3);
  a.error = static_cast<int16_t>(rng() % 2);
  a.leader = "leader-" + std::to_string(rng() % 100);
  a.leaderUrl = "http://h:" + std::to_string(rng() % 65536);
  a.configOffset = static_cast<int64_t>(rng()) - 5;
  for (unsigned i = rng() % 4; i > 0; --i) a.connectors.push_back("c" + std::to_string(i));
  for (unsigned i = rng() % 6; i > 0; --i)
    a.tasks.push_back({"c" + std::to_string(i % 3), static_cast<int32_t>(i)});
  if (a.version == kEagerVersion) return a;
  for (unsigned i = rng() % 3; i > 0; --i) a.revokedConnectors.push_back("r" + std::to_string(i));
  for (unsigned i = rng() % 3; i > 0; --i) a.revokedTasks.push_back({"r", static_cast<int>(i)});
  a.delayMs = static_cast<int32_t>(rng() % 100000);
  return a;
}

// Tasks come back grouped by connector, connectors first: compare as the protocol keeps them.
void normalize(WorkerAssignment& a) {
  std::stable_sort(a.tasks.begin(), a.tasks.end(),
                   [](auto& x, auto& y) { return x.connector < y.connector; });
  std::stable_sort(a.revokedTasks.begin(), a.revokedTasks.end(),
                   [](auto& x, auto& y) { return x.connector < y.connector; });
}

TEST(ConnectProtocol, RandomAssignmentsAndStatesRoundTrip) {
  std::mt19937 rng(44);
  for (int i = 0; i < 500; ++i) {
    WorkerAssignment a = sample(rng);
    WorkerAssignment back = decodeAssignment(encodeAssignment(a));
    normalize(a);
    normalize(back);
    ASSERT_EQ(back, a) << i;
    int16_t version = static_cast<int16_t>(1 + rng() % 2);
    WorkerState s{"http://w" + std::to_string(i), i, a};
    WorkerState decoded = decodeWorkerState(encodeWorkerState(s, version));
    ASSERT_TRUE(decoded.owned);
    EXPECT_EQ(decoded.owned->version, version);
    EXPECT_EQ(decoded.owned->connectors, a.connectors);
  }
}

TEST(ConnectProtocol, TruncatedOrGarbageBytesThrowProtocolError) {
  std::mt19937 rng(7);
  for (int i = 0; i < 300; ++i) {
    WorkerAssignment a = sample(rng);
    a.version = kCompatibleVersion;
    a.connectors.push_back("x");
    std::string whole = encodeWorkerState({"url", 1, a}, kSessionedVersion);
    // Every cut inside a field must throw; cuts at field boundaries after the config offset may
    // parse (missing trailing fields), but never crash.
    for (size_t cut = 0; cut < whole.size(); ++cut) {
      try {
        decodeWorkerState(std::string_view(whole).substr(0, cut));
      } catch (const ProtocolError&) {
      }
    }
    EXPECT_THROW(decodeWorkerState(std::string_view(whole).substr(0, 5)), ProtocolError);
    std::string garbage(rng() % 64, '\0');
    for (char& c : garbage) c = static_cast<char>(rng());
    try {
      decodeAssignment(garbage);
      decodeWorkerState(garbage);
    } catch (const ProtocolError&) {
    }
  }
  EXPECT_THROW(decodeAssignment(bytes({0, 1, 0, 0, 0, 1})), ProtocolError);  // cut in leader
  EXPECT_THROW(decodeAssignment(bytes({-1, -1})), ProtocolError);            // version -1
  // An array claiming more entries than bytes left.
  EXPECT_THROW(
      decodeAssignment(bytes({0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, -1, -1, -1})),
      ProtocolError);
  // A negative string length.
  EXPECT_THROW(decodeWorkerState(bytes({0, 1, -1, -2})), ProtocolError);
}

// Found while writing fuzz_connect_protocol: every task id copies its connector's name, so a
// member's 32 KB name with 3000 task numbers (under 50 KB of metadata) made the leader allocate
// 100 MB, and a one-megabyte JoinGroup gigabytes.
TEST(ConnectProtocol, TaskIdsMayNotMultiplyALongNameWithoutBound) {
  auto assignment = [](size_t nameSize, int32_t tasks) {
    WorkerAssignment a;
    for (int32_t t = 0; t < tasks; ++t) a.tasks.push_back({std::string(nameSize, 'n'), t});
    return a;
  };
  EXPECT_THROW(decodeAssignment(encodeAssignment(assignment(0x7fff, 3000))), ProtocolError);
  EXPECT_THROW(
      decodeWorkerState(encodeWorkerState({"u", 1, assignment(0x7fff, 3000)}, kCompatibleVersion)),
      ProtocolError);
  // A big but real assignment: 20000 tasks of 200-byte names.
  EXPECT_EQ(decodeAssignment(encodeAssignment(assignment(200, 20000))).tasks.size(), 20000u);
}

}  // namespace
}  // namespace oxbow::connect::runtime::distributed
