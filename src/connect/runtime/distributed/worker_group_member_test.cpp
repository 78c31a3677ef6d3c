// Distributed workers' group members against a real coordinator: the suite runs `oxbow broker`
// (OXBOW_BIN, else the binary this build makes) on free loopback ports, and fails without it.
#include "connect/runtime/distributed/worker_group_member.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <set>
#include <thread>

#include "connect/runtime/distributed/incremental_assignor.h"
#include "protocol/messages/describe_groups.h"
#include "protocol/messages/join_group.h"
#include "protocol/messages/leave_group.h"
#include "protocol/messages/sync_group.h"

namespace oxbow::connect::runtime::distributed {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// A loopback port nobody listens on now, below the kernel's ephemeral ports: a client that
// keeps reconnecting to a stopped broker's port from an ephemeral port could otherwise connect to
// itself on it, and keep the broker from binding it again when it restarts.
int unusedPort() {
  static std::mt19937 rng(static_cast<unsigned>(::getpid()));
  for (int attempt = 0; attempt < 200; ++attempt) {
    int port = 20000 + static_cast<int>(rng() % 12000);
    int s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(port));
    bool free = ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    ::close(s);
    if (free) return port;
  }
  return -1;
}

bool waitUntil(const std::function<bool()>& done, std::chrono::milliseconds limit) {
  for (auto end = Clock::now() + limit; !done(); std::this_thread::sleep_for(25ms))
    if (Clock::now() > end) return false;
  return true;
}

class Broker {
 public:
  void start() {
    const char* env = std::getenv("OXBOW_BIN");
    binary_ = env && *env ? env : OXBOW_BUILT_BIN;
    dir_ = std::filesystem::temp_directory_path() /
           ("oxbow-connect-group-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_ / "logs");
    if (port_ < 0) port_ = unusedPort();  // a restart keeps its port
    std::string plaintext = "PLAINTEXT://127.0.0.1:" + std::to_string(port_);
    std::vector<std::string> args{binary_, "broker"};
    for (std::string o : {"listeners=" + plaintext, "advertised.listeners=" + plaintext,
                          "log.dirs=" + (dir_ / "logs").string(),
                          "admin.listener=127.0.0.1:" + std::to_string(unusedPort()),
                          std::string("group.initial.rebalance.delay.ms=0")}) {
      args.push_back("--override");
      args.push_back(o);
    }
    pid_ = ::fork();
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // no broker outlives a crashed or killed test
      int log = ::open((dir_ / "broker.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(log, 1);
      ::dup2(log, 2);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(binary_.c_str(), argv.data());
      ::_exit(127);
    }
  }
  bool ready() const {
    try {
      client::Connection probe(bootstrap(), {}, "probe", 1000);
      return true;
    } catch (const client::ConnectionError&) {
      return false;
    }
  }
  void halt() {
    if (pid_ > 0 && ::kill(pid_, SIGTERM) == 0) ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  void stop() {
    halt();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  std::string bootstrap() const { return "127.0.0.1:" + std::to_string(port_); }
  std::string logTail() const {
    std::ifstream in(dir_ / "broker.log");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return text.substr(text.size() > 3000 ? text.size() - 3000 : 0);
  }
  const std::string& binary() const { return binary_; }

 private:
  std::string binary_;
  std::filesystem::path dir_;
  int port_ = -1;
  pid_t pid_ = -1;
};

Broker broker;

class BrokerEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    broker.start();
    ASSERT_TRUE(waitUntil([] { return broker.ready(); }, 30s))
        << "no broker from " << broker.binary() << " (set OXBOW_BIN)\n"
        << broker.logTail();
  }
  void TearDown() override { broker.stop(); }
};

const auto* const kEnvironment = ::testing::AddGlobalTestEnvironment(new BrokerEnvironment);

constexpr int32_t kDelay = 2000;  // scheduled.rebalance.max.delay.ms for these groups
const ClusterView kCluster{5, {{"alpha", 3}, {"beta", 2}}};

// One worker: its member and a herder's bare minimum (apply assignments, rejoin after revoking
// and when a scheduled delay ends), driven by the test's polling.
struct Worker {
  Worker(const std::string& group, const std::string& name, const std::string& protocol)
      : assignor(kDelay) {
    WorkerMemberConfig config;
    config.bootstrapServers = broker.bootstrap();
    config.groupId = group;
    config.clientId = name;
    config.sessionTimeoutMs = 6000;
    config.heartbeatIntervalMs = 300;
    config.rebalanceTimeoutMs = 10000;
    config.requestTimeoutMs = 5000;
    config.protocol = protocol;
    WorkerMemberCallbacks callbacks;
    callbacks.state = [this, name] { return WorkerState{"http://" + name, configOffset, {}}; };
    callbacks.assign = [this, name](const std::string& leader, int16_t version,
                                    const std::map<std::string, WorkerState>& members) {
      ++assignRounds;
      auto [current, lastCompleted] = member->assigningGenerations();
      return assignor.assign(leader, "http://" + name, version, members, kCluster,
                             Clock::now().time_since_epoch() / 1ms, lastCompleted, current);
    };
    member = std::make_unique<WorkerGroupMember>(config, callbacks);
  }

  void poll() {
    while (auto taken = member->takeAssignment()) {
      auto& [gen, a] = *taken;
      generation = gen;
      mismatches += a.error == kConfigMismatch;
      running = a;
      version = a.version;
      if (!a.revokedConnectors.empty() || !a.revokedTasks.empty()) member->requestRejoin();
      rejoinAt = a.delayMs > 0 ? Clock::now() + std::chrono::milliseconds(a.delayMs)
                               : Clock::time_point::max();
    }
    if (member->takeLost()) {
      running = {};
      ++lost;
    }
    if (Clock::now() >= rejoinAt) {
      rejoinAt = Clock::time_point::max();
      member->requestRejoin();
    }
  }

  IncrementalCooperativeAssignor assignor;  // used while this worker leads
  std::unique_ptr<WorkerGroupMember> member;
  std::atomic<int> assignRounds = 0;
  int32_t generation = -1;
  int16_t version = -1;
  int lost = 0, mismatches = 0;
  std::atomic<int64_t> configOffset = kCluster.configOffset;  // how far it read the config
  WorkerAssignment running;
  Clock::time_point rejoinAt = Clock::time_point::max();
};

// Every connector and task of kCluster runs on exactly one of the workers, all in one generation,
// loads within one.
bool settled(const std::vector<Worker*>& workers) {
  std::multiset<std::string> connectors;
  std::multiset<ConnectorTaskId> tasks;
  size_t least = SIZE_MAX, most = 0;
  for (Worker* w : workers) {
    w->poll();
    if (w->generation != workers.front()->generation || w->member->rebalancing()) return false;
    connectors.insert(w->running.connectors.begin(), w->running.connectors.end());
    tasks.insert(w->running.tasks.begin(), w->running.tasks.end());
    least = std::min(least, w->running.tasks.size());
    most = std::max(most, w->running.tasks.size());
  }
  return connectors == std::multiset<std::string>{"alpha", "beta"} && tasks.size() == 5 &&
         std::set<ConnectorTaskId>(tasks.begin(), tasks.end()).size() == 5 && most - least <= 1;
}

std::string_view text(const std::vector<uint8_t>& bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

protocol::DescribeGroupsResponse::DescribedGroup describe(const std::string& group) {
  client::Connection c(broker.bootstrap(), {}, "describe", 5000);
  protocol::DescribeGroupsRequest request;
  request.groups = {group};
  auto response = c.call<protocol::DescribeGroupsResponse>(15, 1, request);
  return response.groups.at(0);
}

TEST(WorkerGroupMember, ThreeWorkersShareTheWorkAndTheRestTakeOverWhenOneStops) {
  Worker a("connect-three", "a", "sessioned"), b("connect-three", "b", "sessioned"),
      c("connect-three", "c", "sessioned");
  for (Worker* w : {&a, &b, &c}) w->member->start();
  ASSERT_TRUE(waitUntil([&] { return settled({&a, &b, &c}); }, 60s));
  EXPECT_EQ(a.version, kSessionedVersion);
  EXPECT_GT(a.assignRounds + b.assignRounds + c.assignRounds, 0);
  std::set<std::string> ids{a.member->memberId(), b.member->memberId(), c.member->memberId()};
  EXPECT_EQ(ids.size(), 3u);

  ASSERT_TRUE(waitUntil([] { return describe("connect-three").group_state == "Stable"; }, 30s));
  auto group = describe("connect-three");
  EXPECT_EQ(group.error_code, 0);
  EXPECT_EQ(group.protocol_type, "connect");
  EXPECT_EQ(group.protocol_data, "sessioned");
  EXPECT_EQ(group.members.size(), 3u);
  std::set<std::string> urls;
  for (const auto& m : group.members) {
    urls.insert(decodeWorkerState(text(m.member_metadata)).url);
    EXPECT_EQ(decodeAssignment(text(m.member_assignment)).version, kSessionedVersion);
  }
  EXPECT_EQ(urls, (std::set<std::string>{"http://a", "http://b", "http://c"}));

  // A follower leaves: the leader holds its work back for the delay, then gives it out.
  std::vector<Worker*> stay, all{&a, &b, &c};
  Worker* leaving = nullptr;
  for (Worker* w : all) {
    if (w->member->memberId() != a.running.leader && !leaving)
      leaving = w;
    else
      stay.push_back(w);
  }
  ASSERT_TRUE(leaving);
  int32_t before = a.generation;
  size_t heldBack = leaving->running.connectors.size() + leaving->running.tasks.size();
  auto left = Clock::now();
  leaving->member->stop();
  ASSERT_TRUE(waitUntil(
      [&] {
        for (Worker* w : stay) w->poll();
        return stay[0]->generation > before && stay[1]->generation > before;
      },
      30s));
  EXPECT_GT(stay[0]->running.delayMs, 0);
  size_t running = 0;
  for (Worker* w : stay) running += w->running.connectors.size() + w->running.tasks.size();
  EXPECT_EQ(running + heldBack, 7u);
  ASSERT_TRUE(waitUntil([&] { return settled(stay); }, 60s));
  EXPECT_GE(Clock::now() - left, std::chrono::milliseconds(kDelay) - 200ms);
  EXPECT_EQ(describe("connect-three").members.size(), 2u);
  for (Worker* w : stay) w->member->stop();
  EXPECT_EQ(describe("connect-three").group_state, "Empty");
}

TEST(WorkerGroupMember, AWorkerTheGroupForgotDropsItsWorkAndRejoins) {
  Worker a("connect-forgot", "a", "sessioned"), b("connect-forgot", "b", "sessioned");
  a.member->start();
  b.member->start();
  ASSERT_TRUE(waitUntil([&] { return settled({&a, &b}); }, 60s));
  std::string forgotten = b.member->memberId();
  // An operator removes b from the group (as kafka-consumer-groups --delete --members would).
  client::Connection admin(broker.bootstrap(), {}, "admin", 5000);
  protocol::LeaveGroupRequest remove;
  remove.group_id = "connect-forgot";
  remove.members.push_back({forgotten, std::nullopt, std::nullopt});
  ASSERT_EQ(admin.call<protocol::LeaveGroupResponse>(13, 4, remove).error_code, 0);
  // b's next heartbeat finds it unknown: its work is lost, and it joins again as a new member.
  ASSERT_TRUE(waitUntil(
      [&] {
        b.poll();
        return b.lost > 0;
      },
      30s));
  EXPECT_TRUE(b.running.connectors.empty() && b.running.tasks.empty());
  ASSERT_TRUE(waitUntil(
      [&] {
        return settled({&a, &b}) && b.member->memberId() != forgotten;
      },
      60s));
  EXPECT_EQ(a.lost, 0);
}

// A member that joins once through its own connection and then never rejoins: a rebalance waits
// for it up to its rebalance timeout.
void joinAndFallSilent(client::Connection& c, const std::string& group) {
  protocol::JoinGroupRequest join;
  join.group_id = group;
  join.session_timeout_ms = 60000;
  join.rebalance_timeout_ms = 60000;
  join.protocol_type = "connect";
  std::string metadata = encodeWorkerState({"http://silent", 5, std::nullopt}, kSessionedVersion);
  join.protocols.push_back({"sessioned", {metadata.begin(), metadata.end()}});
  c.set_timeout(30000);
  auto joined = c.call<protocol::JoinGroupResponse>(11, 7, join);
  join.member_id = joined.member_id;  // KIP-394: join again with the id given
  joined = c.call<protocol::JoinGroupResponse>(11, 7, join);
  ASSERT_EQ(joined.error_code, 0);
  protocol::SyncGroupRequest sync;
  sync.group_id = group;
  sync.generation_id = joined.generation_id;
  sync.member_id = joined.member_id;
  sync.protocol_type = "connect";
  sync.protocol_name = "sessioned";
  ASSERT_EQ(c.call<protocol::SyncGroupResponse>(14, 5, sync).error_code, 0);
}

TEST(WorkerGroupMember, StopEndsAJoinThatWaitsForAnotherMember) {
  Worker a("connect-stuck", "a", "sessioned");
  a.member->start();
  ASSERT_TRUE(waitUntil([&] { return settled({&a}); }, 60s));
  client::Connection silent(broker.bootstrap(), {}, "silent", 30000);
  joinAndFallSilent(silent, "connect-stuck");
  a.member->requestRejoin();
  ASSERT_TRUE(waitUntil([&] { return a.member->rebalancing(); }, 10s));
  std::this_thread::sleep_for(300ms);  // into the JoinGroup, which waits for the silent member
  ASSERT_TRUE(a.member->rebalancing());
  auto stopping = Clock::now();
  a.member->stop();
  EXPECT_LT(Clock::now() - stopping, 5s);
  auto group = describe("connect-stuck");
  ASSERT_LE(group.members.size(), 1u);
  if (!group.members.empty()) {
    EXPECT_NE(group.members[0].member_id, a.member->memberId());
  }
}

TEST(WorkerGroupMember, WorkersStopTheirWorkWhileTheCoordinatorIsGoneAndRejoinWhenItIsBack) {
  Worker a("connect-outage", "a", "sessioned"), b("connect-outage", "b", "sessioned");
  a.member->start();
  b.member->start();
  ASSERT_TRUE(waitUntil([&] { return settled({&a, &b}); }, 60s));
  broker.halt();
  // Past a session without the coordinator, nothing may run: the group surely moved on.
  ASSERT_TRUE(waitUntil(
      [&] {
        a.poll();
        b.poll();
        return a.lost > 0 && b.lost > 0;
      },
      30s));
  EXPECT_TRUE(a.running.tasks.empty() && b.running.tasks.empty());
  broker.start();
  ASSERT_TRUE(waitUntil([] { return broker.ready(); }, 30s)) << broker.logTail();
  EXPECT_TRUE(waitUntil([&] { return settled({&a, &b}); }, 90s));
}

TEST(WorkerGroupMember, ALeaderBehindTheConfigAssignsNothingUntilItCaughtUp) {
  Worker a("connect-behind", "a", "sessioned");
  a.member->start();
  ASSERT_TRUE(waitUntil([&] { return settled({&a}); }, 60s));
  Worker b("connect-behind", "b", "sessioned");
  b.configOffset = kCluster.configOffset + 4;  // b read further than the leader's view
  b.member->start();
  // CONFIG_MISMATCH to both, round after round (the members rejoin by themselves); a keeps what
  // it ran, b gets nothing.
  ASSERT_TRUE(waitUntil(
      [&] {
        a.poll();
        b.poll();
        return a.mismatches >= 2 && b.mismatches >= 2;
      },
      30s));
  EXPECT_TRUE(b.running.connectors.empty() && b.running.tasks.empty());
  EXPECT_EQ(a.running.tasks.size(), 5u);
  EXPECT_EQ(b.running.configOffset, kCluster.configOffset + 4);
  b.configOffset = kCluster.configOffset;  // as if the leader caught up
  EXPECT_TRUE(waitUntil([&] { return settled({&a, &b}); }, 60s));
}

TEST(WorkerGroupMember, TheGroupSpeaksTheProtocolEveryMemberOffers) {
  Worker newer("connect-mixed", "newer", "sessioned"),
      older("connect-mixed", "older", "compatible");
  newer.member->start();
  older.member->start();
  ASSERT_TRUE(waitUntil([&] { return settled({&newer, &older}); }, 60s));
  EXPECT_EQ(newer.version, kCompatibleVersion);
  // A member that gave work up rejoins once more: the group is Stable after that round.
  EXPECT_TRUE(waitUntil([] { return describe("connect-mixed").group_state == "Stable"; }, 30s));
  EXPECT_EQ(describe("connect-mixed").protocol_data, "compatible");
  newer.member->stop();
  older.member->stop();

  Worker eager("connect-eager", "eager", "default"), other("connect-eager", "other", "sessioned");
  eager.member->start();
  other.member->start();
  ASSERT_TRUE(waitUntil([&] { return settled({&eager, &other}); }, 60s));
  EXPECT_EQ(other.version, kEagerVersion);
  EXPECT_TRUE(waitUntil([] { return describe("connect-eager").group_state == "Stable"; }, 30s));
  EXPECT_EQ(describe("connect-eager").protocol_data, "default");
}

}  // namespace
}  // namespace oxbow::connect::runtime::distributed
