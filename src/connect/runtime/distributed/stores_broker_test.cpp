// The distributed worker's stores against a real broker: `oxbow broker` (OXBOW_BIN, else the
// build's binary) started on free loopback ports for the suite; skipped when there is no binary.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <thread>

#include "connect/runtime/distributed/config_backing_store.h"
#include "connect/runtime/distributed/kafka_offset_store.h"
#include "connect/runtime/distributed/status_backing_store.h"
#include "oxbow/connect/config_def.h"

namespace oxbow::connect::runtime::distributed {
namespace {

using namespace std::chrono_literals;

int freePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

bool accepts(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return ok;
}

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds timeout = 15s) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

class StoresWithBroker : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const char* fromEnv = std::getenv("OXBOW_BIN");
    binary_ = fromEnv ? fromEnv : OXBOW_DEFAULT_BIN;
    if (::access(binary_.c_str(), X_OK) != 0) return;
    dir_ = std::filesystem::temp_directory_path() /
           ("oxbow-connect-stores-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_ / "data");
    port_ = freePort();
    saslPort_ = freePort();
    adminPort_ = freePort();
    startBroker();
  }

  // On the same ports and data as before, when restarted.
  static void startBroker() {
    // PLAINTEXT, and SASL_PLAINTEXT with one PLAIN user for the security settings' test.
    std::string listener = "PLAINTEXT://127.0.0.1:" + std::to_string(port_) +
                           ",SASL_PLAINTEXT://127.0.0.1:" + std::to_string(saslPort_);
    std::vector<std::string> args = {
        binary_,
        "broker",
        "--override",
        "listeners=" + listener,
        "--override",
        "advertised.listeners=" + listener,
        "--override",
        "log.dirs=" + (dir_ / "data").string(),
        "--override",
        "admin.listener=127.0.0.1:" + std::to_string(adminPort_),
        "--override",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config="
        "org.apache.kafka.common.security.plain.PlainLoginModule required "
        "user_alice=\"alice-secret\";"};
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    std::string log = (dir_ / "broker.log").string();
    broker_ = ::fork();
    if (broker_ == 0) {
      // The broker dies with the test, even one that crashes.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::execv(binary_.c_str(), argv.data());
      ::_exit(127);
    }
    if (broker_ < 0) {
      broker_ = 0;
      return;
    }
    if (!eventually([] { return accepts(port_); }, 30s)) stopBroker();
  }

  static void TearDownTestSuite() {
    stopBroker();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  static void stopBroker() {
    if (broker_ <= 0) return;
    ::kill(broker_, SIGTERM);
    int status = 0;
    ::waitpid(broker_, &status, 0);
    broker_ = 0;
  }

  void SetUp() override {
    if (broker_ <= 0) GTEST_SKIP() << "no oxbow binary to start a broker with";
    worker_.bootstrapServers = "127.0.0.1:" + std::to_string(port_);
  }

  // A topic name of its own for each test.
  std::string topic(const std::string& what) {
    return std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "-" +
           what;
  }

  // Creates a topic as an operator might, outside the stores.
  void createTopic(const std::string& name, int partitions, const char* cleanupPolicy) {
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "bootstrap.servers", worker_.bootstrapServers.c_str(), nullptr, 0);
    char error[256];
    rd_kafka_t* admin = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
    rd_kafka_NewTopic_t* newTopic =
        rd_kafka_NewTopic_new(name.c_str(), partitions, 1, error, sizeof error);
    rd_kafka_NewTopic_set_config(newTopic, "cleanup.policy", cleanupPolicy);
    rd_kafka_queue_t* queue = rd_kafka_queue_new(admin);
    rd_kafka_CreateTopics(admin, &newTopic, 1, nullptr, queue);
    rd_kafka_event_t* event = rd_kafka_queue_poll(queue, 30'000);
    EXPECT_NE(event, nullptr);
    EXPECT_EQ(rd_kafka_event_error(event), RD_KAFKA_RESP_ERR_NO_ERROR);
    rd_kafka_event_destroy(event);
    rd_kafka_NewTopic_destroy(newTopic);
    rd_kafka_queue_destroy(queue);
    rd_kafka_destroy(admin);
  }

  static inline std::string binary_;
  static inline pid_t broker_ = 0;
  static inline int port_ = 0;
  static inline int saslPort_ = 0;
  static inline int adminPort_ = 0;
  static inline std::filesystem::path dir_;
  WorkerConfig worker_;
};

TEST_F(StoresWithBroker, ConfigsSurviveARestartAndReachAnotherWorker) {
  TopicSettings settings{topic("configs"), 1, 3};  // three replicas asked of one broker
  std::atomic<int> restarts = 0, tasksUpdated = 0;
  ConfigBackingStore::Listener listener;
  listener.restartRequested = [&](const RestartRequest& request) {
    if (request.connector == "c" && request.includeTasks && !request.onlyFailed) ++restarts;
  };
  listener.taskConfigsUpdated = [&](const std::vector<std::string>&) { ++tasksUpdated; };
  std::atomic<bool> loggerSet = false;
  listener.loggerLevelChanged = [&](const std::string& logger, const std::string& level) {
    if (logger == "org.example" && level == "DEBUG") loggerSet = true;
  };
  ConfigBackingStore first(worker_, settings, listener);
  first.start();
  first.putConnectorConfig("c", {{"name", "c"}, {"tasks.max", "2"}}, TargetState::STOPPED);
  first.putTaskConfigs("c", {{{"task", "0"}}, {{"task", "1"}}});
  first.putRestartRequest({"c", true, false});
  first.putLoggerLevel("org.example", "DEBUG");
  EXPECT_TRUE(eventually([&] { return restarts.load() == 1 && loggerSet.load(); }));
  EXPECT_EQ(tasksUpdated.load(), 1);

  std::atomic<int> updates = 0, removals = 0;
  ConfigBackingStore::Listener secondListener;
  secondListener.connectorConfigUpdated = [&](const std::string&) { ++updates; };
  secondListener.connectorConfigRemoved = [&](const std::string&) { ++removals; };
  ConfigBackingStore second(worker_, settings, secondListener);
  second.start();
  ClusterConfigState state = second.snapshot();
  EXPECT_EQ(state.connectorConfigs.at("c").at("tasks.max"), "2");
  EXPECT_EQ(state.targetStates.at("c"), TargetState::STOPPED);
  ASSERT_EQ(state.taskConfigs.at("c").size(), 2u);
  EXPECT_EQ(state.taskConfigs.at("c")[1].at("task"), "1");
  EXPECT_EQ(state.offset, first.snapshot().offset);
  EXPECT_EQ(updates.load(), 0);  // what start() read is no news

  first.putTargetState("c", TargetState::STARTED);
  first.putConnectorConfig("d", {{"name", "d"}}, std::nullopt);
  first.removeConnectorConfig("c");
  second.refresh();
  state = second.snapshot();
  EXPECT_EQ(state.connectorConfigs.count("c"), 0u);
  EXPECT_EQ(state.targetStates.at("d"), TargetState::STARTED);
  EXPECT_EQ(updates.load(), 1);
  EXPECT_EQ(removals.load(), 1);
  first.stop();
  second.stop();
}

TEST_F(StoresWithBroker, MalformedConfigRecordsAreSkipped) {
  TopicSettings settings{topic("configs"), 1, 1};
  {
    KafkaBasedLog raw(worker_, settings, "raw-", [](auto&&...) {});
    raw.start();
    raw.write({{"connector-a", "not json"},
               {"connector-a", R"({"properties":{"name":"a"}})"},
               {"task-a-0", "[1]"},
               {"commit-a", R"({"tasks":"x"})"},
               {"garbage", "{}"},
               {"target-state-a", R"({"state":"NOPE"})"}});
    raw.stop();
  }
  ConfigBackingStore store(worker_, settings, {});
  store.start();
  ClusterConfigState state = store.snapshot();
  EXPECT_EQ(state.connectorConfigs.at("a").at("name"), "a");
  EXPECT_EQ(state.targetStates.at("a"), TargetState::STARTED);
  EXPECT_TRUE(state.taskConfigs.empty());
  store.stop();
}

TEST_F(StoresWithBroker, ATopicThatIsNotCompactedIsRefused) {
  TopicSettings settings{topic("deleted"), 1, 1};
  createTopic(settings.name, 1, "delete");  // the stores create theirs compacted
  StatusBackingStore store(worker_, settings);
  try {
    store.start();
    FAIL() << "started on a topic that is not compacted";
  } catch (const ConfigException& e) {
    EXPECT_NE(std::string(e.what()).find("'status.storage.topic' property is required to have "
                                         "'cleanup.policy=compact'"),
              std::string::npos)
        << e.what();
  }
  store.stop();
}

TEST_F(StoresWithBroker, AConfigTopicOfSeveralPartitionsIsRefused) {
  TopicSettings settings{topic("configs"), 1, 1};
  createTopic(settings.name, 2, "compact");
  ConfigBackingStore store(worker_, settings, {});
  try {
    store.start();
    FAIL() << "started on a config topic of two partitions";
  } catch (const ConfigException& e) {
    EXPECT_NE(std::string(e.what()).find("'config.storage.topic' property is required to have a "
                                         "single partition"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(StoresWithBroker, StoresCarryOnWhenTheBrokerRestarts) {
  ConfigBackingStore configs(worker_, {topic("configs"), 1, 1}, {});
  StatusBackingStore statuses(worker_, {topic("status"), 5, 1});
  KafkaOffsetBackingStore offsets(worker_, {topic("offsets"), 25, 1});
  configs.start();
  statuses.start();
  offsets.start();
  configs.putConnectorConfig("c", {{"name", "c"}}, std::nullopt);
  stopBroker();
  // Written while the broker is down: delivered once it is back.
  statuses.putConnector("c", {"RUNNING", "", "w", 1});
  startBroker();
  ASSERT_GT(broker_, 0) << "the broker did not come back";
  statuses.flush();
  ValueMap partition{{Value("p"), Value("x")}};
  offsets.commit("c", {{partition, ValueMap{{Value("n"), Value(int64_t{1})}}}});
  configs.putConnectorConfig("d", {{"name", "d"}}, std::nullopt);
  EXPECT_EQ(configs.snapshot().connectorConfigs.size(), 2u);
  EXPECT_TRUE(eventually([&] { return statuses.connector("c").has_value(); }));
  EXPECT_TRUE(offsets.offset("c", partition).has_value());
  configs.stop();
  statuses.stop();
  offsets.stop();
}

TEST_F(StoresWithBroker, StatusesAndTopics) {
  TopicSettings settings{topic("status"), 5, 1};
  StatusBackingStore first(worker_, settings);
  first.start();
  first.putConnector("c", {"RUNNING", "", "w1:8083", 1});
  first.putTask("c", 0, {"RUNNING", "", "w2:8083", 5});
  first.putTask("c", 1, {"FAILED", "boom", "w1:8083", 1});
  first.putTopic("c", "orders", 0);
  first.flush();
  ASSERT_TRUE(eventually([&] { return first.tasks("c").size() == 2; }));
  // Another worker's newer generation stands against a safe write of an older one...
  first.putTaskSafe("c", 0, {"UNASSIGNED", "", "w1:8083", 3});
  // ...and a stale UNASSIGNED read over a RUNNING of a newer generation is ignored.
  first.putTask("c", 0, {"UNASSIGNED", "", "w3:8083", 4});
  first.putTaskSafe("c", 1, {"RUNNING", "", "w1:8083", 6});
  first.flush();
  ASSERT_TRUE(eventually([&] { return first.tasks("c").at(1).state == "RUNNING"; }));

  StatusBackingStore second(worker_, settings);
  second.start();
  EXPECT_EQ(second.connector("c"), (StatusRecord{"RUNNING", "", "w1:8083", 1}));
  std::map<int, StatusRecord> tasks = second.tasks("c");
  EXPECT_EQ(tasks.at(0), (StatusRecord{"RUNNING", "", "w2:8083", 5}));
  EXPECT_EQ(tasks.at(1).generation, 6);
  EXPECT_EQ(second.topics("c"), std::vector<std::string>{"orders"});

  second.resetTopics("c");
  second.flush();
  EXPECT_TRUE(eventually([&] { return first.topics("c").empty(); }));
  first.deleteConnector("c");
  first.flush();
  EXPECT_TRUE(eventually([&] { return !second.connector("c") && second.tasks("c").empty(); }));
  first.stop();
  second.stop();
}

TEST_F(StoresWithBroker, OffsetsSurviveARestart) {
  TopicSettings settings{topic("offsets"), 25, 1};
  ValueMap fileA{{Value("filename"), Value("/tmp/a")}};
  ValueMap fileB{{Value("filename"), Value("/tmp/b")}};
  auto position = [](int64_t n) { return ValueMap{{Value("position"), Value(n)}}; };
  {
    KafkaOffsetBackingStore store(worker_, settings);
    store.start();
    store.commit("src", {{fileA, position(10)}, {fileB, position(20)}});
    store.commit("src", {{fileA, position(11)}});
    store.commit("other", {{fileA, position(99)}});
    EXPECT_EQ(store.offset("src", fileA), position(11));
    store.stop();
  }
  KafkaOffsetBackingStore store(worker_, settings);
  store.start();
  EXPECT_EQ(store.offset("src", fileA), position(11));
  EXPECT_EQ(store.offset("src", fileB), position(20));
  EXPECT_EQ(store.connectorOffsets("src").size(), 2u);
  store.alter("src", {{fileB, std::nullopt}});
  EXPECT_FALSE(store.offset("src", fileB));
  EXPECT_EQ(store.connectorOffsets("src").size(), 1u);
  EXPECT_EQ(store.offset("other", fileA), position(99));
  store.stop();
}

// With exactly-once sources, offsets are written in the tasks' transactions: an aborted one's
// must not count.
TEST_F(StoresWithBroker, WithExactlyOnceSourcesAbortedOffsetsAreLeftOut) {
  worker_.props["exactly.once.source.support"] = "enabled";
  // Overrides that would undo what reading to the end past transaction markers relies on.
  worker_.consumerOverrides["isolation.level"] = "read_uncommitted";
  worker_.consumerOverrides["enable.partition.eof"] = "false";
  TopicSettings settings{topic("offsets"), 5, 1};
  KafkaOffsetBackingStore store(worker_, settings);
  store.start();
  ValueMap partition{{Value("p"), Value("x")}};
  std::string key = offset_records::key("c", partition);
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char error[256];
  rd_kafka_conf_set(conf, "bootstrap.servers", worker_.bootstrapServers.c_str(), error,
                    sizeof error);
  rd_kafka_conf_set(conf, "transactional.id", settings.name.c_str(), error, sizeof error);
  rd_kafka_t* producer = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
  ASSERT_NE(producer, nullptr) << error;
  auto transaction = [&](const std::string& value, bool commit) {
    ASSERT_EQ(rd_kafka_begin_transaction(producer), nullptr);
    ASSERT_EQ(rd_kafka_producev(producer, RD_KAFKA_V_TOPIC(settings.name.c_str()),
                                RD_KAFKA_V_KEY(key.data(), key.size()),
                                RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                                RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
              RD_KAFKA_RESP_ERR_NO_ERROR);
    ASSERT_EQ(rd_kafka_flush(producer, 30'000), RD_KAFKA_RESP_ERR_NO_ERROR);  // in the log
    rd_kafka_error_t* failure = commit ? rd_kafka_commit_transaction(producer, 30'000)
                                       : rd_kafka_abort_transaction(producer, 30'000);
    EXPECT_EQ(failure, nullptr) << rd_kafka_error_string(failure);
  };
  ASSERT_EQ(rd_kafka_init_transactions(producer, 30'000), nullptr);
  transaction(R"({"n":1})", true);
  transaction(R"({"n":2})", false);
  rd_kafka_destroy(producer);
  EXPECT_EQ(store.offset("c", partition), (ValueMap{{Value("n"), Value(int64_t{1})}}));
  KafkaOffsetBackingStore restarted(worker_, settings);
  restarted.start();
  EXPECT_EQ(restarted.offset("c", partition), (ValueMap{{Value("n"), Value(int64_t{1})}}));
  store.stop();
  restarted.stop();
}

// The internal topics' clients take the worker's own security settings, as Kafka's do; a Java
// name librdkafka does not know is left out rather than refused.
TEST_F(StoresWithBroker, StoresUseTheWorkersSecuritySettings) {
  worker_.bootstrapServers = "127.0.0.1:" + std::to_string(saslPort_);
  worker_.props["security.protocol"] = "SASL_PLAINTEXT";
  worker_.props["sasl.mechanisms"] = "PLAIN";
  worker_.props["sasl.username"] = "alice";
  worker_.props["sasl.password"] = "alice-secret";
  worker_.props["ssl.truststore.location"] = "/nonexistent/truststore.jks";
  StatusBackingStore first(worker_, {topic("status"), 1, 1});
  first.start();
  first.putConnector("c", {"RUNNING", "", "w", 1});
  first.flush();
  first.stop();
  StatusBackingStore second(worker_, {topic("status"), 1, 1});
  second.start();
  EXPECT_TRUE(second.connector("c").has_value());
  second.stop();
}

// *.storage.replication.factor=-1 creates the topic with the broker's default (KIP-464).
TEST_F(StoresWithBroker, AReplicationFactorOfMinusOneTakesTheBrokersDefault) {
  ConfigBackingStore store(worker_, {topic("configs"), 1, -1}, {});
  store.start();
  store.putConnectorConfig("c", {{"name", "c"}}, std::nullopt);
  EXPECT_EQ(store.snapshot().connectorConfigs.size(), 1u);
  store.stop();
}

}  // namespace
}  // namespace oxbow::connect::runtime::distributed
