// The internal topics' record formats and the config topic's state, without a broker.
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <random>

#include "connect/runtime/distributed/config_records.h"
#include "connect/runtime/distributed/kafka_offset_store.h"
#include "connect/runtime/distributed/status_records.h"

namespace oxbow::connect::runtime::distributed {
namespace {

namespace cr = config_records;
namespace sr = status_records;

TEST(ConfigRecords, KeysAndValuesAsKafkaWritesThem) {
  EXPECT_EQ(cr::connectorKey("c"), "connector-c");
  EXPECT_EQ(cr::targetStateKey("c"), "target-state-c");
  EXPECT_EQ(cr::taskKey("my-conn", 2), "task-my-conn-2");
  EXPECT_EQ(cr::commitKey("c"), "commit-c");
  EXPECT_EQ(cr::restartKey("c"), "restart-connector-c");
  EXPECT_EQ(cr::connectorConfigValue({{"name", "c"}, {"tasks.max", "2"}}),
            R"({"properties":{"name":"c","tasks.max":"2"}})");
  EXPECT_EQ(cr::commitValue(3), R"({"tasks":3})");
  EXPECT_EQ(cr::targetStateValue(TargetState::PAUSED), R"({"state":"PAUSED","state.v2":"PAUSED"})");
  // Workers older than KIP-875 read "state" only, and take STOPPED for PAUSED.
  EXPECT_EQ(cr::targetStateValue(TargetState::STOPPED),
            R"({"state":"PAUSED","state.v2":"STOPPED"})");
  EXPECT_EQ(cr::restartValue({"c", true, false}), R"({"include-tasks":true,"only-failed":false})");
}

class ConfigStateTest : public ::testing::Test {
 protected:
  std::optional<ConfigEvent> apply(const std::string& key, std::optional<std::string> value) {
    return state.apply(key, value, offset++);
  }
  void connector(const std::string& name) {
    apply(cr::connectorKey(name), cr::connectorConfigValue({{"name", name}}));
  }
  ConfigState state;
  int64_t offset = 0;
};

TEST_F(ConfigStateTest, TaskConfigsCountOnlyOnceCommitted) {
  connector("c");
  apply(cr::taskKey("c", 0), cr::taskConfigValue({{"t", "0"}}));
  apply(cr::taskKey("c", 1), cr::taskConfigValue({{"t", "1"}}));
  ClusterConfigState before = state.snapshot();
  EXPECT_EQ(before.taskConfigs.count("c"), 0u);
  EXPECT_EQ(before.targetStates.at("c"), TargetState::STARTED);
  auto event = apply(cr::commitKey("c"), cr::commitValue(2));
  ASSERT_TRUE(event);
  EXPECT_EQ(event->kind, ConfigEvent::Kind::TASK_CONFIGS_UPDATED);
  ClusterConfigState after = state.snapshot();
  ASSERT_EQ(after.taskConfigs.at("c").size(), 2u);
  EXPECT_EQ(after.taskConfigs.at("c")[1].at("t"), "1");
  EXPECT_EQ(after.taskCount("c"), 2);
  EXPECT_EQ(after.offset, 4);
  EXPECT_TRUE(after.inconsistent.empty());
}

TEST_F(ConfigStateTest, ACommitWithMissingTasksMarksTheConnectorInconsistent) {
  connector("c");
  apply(cr::taskKey("c", 1), cr::taskConfigValue({{"t", "1"}}));
  EXPECT_FALSE(apply(cr::commitKey("c"), cr::commitValue(2)));
  ClusterConfigState snapshot = state.snapshot();
  EXPECT_TRUE(snapshot.inconsistent.contains("c"));
  EXPECT_EQ(snapshot.taskConfigs.count("c"), 0u);
  EXPECT_EQ(snapshot.taskCount("c"), 2);
  // The deferred task was dropped: a complete set written again repairs it.
  apply(cr::taskKey("c", 0), cr::taskConfigValue({{"t", "0"}}));
  EXPECT_FALSE(apply(cr::commitKey("c"), cr::commitValue(2)));
  apply(cr::taskKey("c", 0), cr::taskConfigValue({{"t", "0"}}));
  apply(cr::taskKey("c", 1), cr::taskConfigValue({{"t", "1"}}));
  EXPECT_TRUE(apply(cr::commitKey("c"), cr::commitValue(2)));
  EXPECT_TRUE(state.snapshot().inconsistent.empty());
  EXPECT_EQ(state.snapshot().taskConfigs.at("c").size(), 2u);
}

TEST_F(ConfigStateTest, MoreTasksThanTheCommitCountIsFine) {
  connector("c");
  apply(cr::taskKey("c", 1), cr::taskConfigValue({{"t", "old"}}));
  apply(cr::taskKey("c", 0), cr::taskConfigValue({{"t", "0"}}));
  apply(cr::commitKey("c"), cr::commitValue(1));
  EXPECT_EQ(state.snapshot().taskConfigs.at("c").size(), 1u);
}

TEST_F(ConfigStateTest, ConnectorNamesWithDashes) {
  connector("my-conn-1");
  apply(cr::taskKey("my-conn-1", 0), cr::taskConfigValue({{"t", "0"}}));
  apply(cr::commitKey("my-conn-1"), cr::commitValue(1));
  EXPECT_EQ(state.snapshot().taskConfigs.at("my-conn-1").at(0).at("t"), "0");
}

TEST_F(ConfigStateTest, RemovalAndTargetStates) {
  connector("c");
  auto stopped = apply(cr::targetStateKey("c"), cr::targetStateValue(TargetState::STOPPED));
  ASSERT_TRUE(stopped);
  EXPECT_EQ(stopped->kind, ConfigEvent::Kind::TARGET_STATE_CHANGED);
  EXPECT_EQ(state.snapshot().targetStates.at("c"), TargetState::STOPPED);
  EXPECT_FALSE(apply(cr::targetStateKey("c"), cr::targetStateValue(TargetState::STOPPED)));
  // An older worker's record has "state" only.
  apply(cr::targetStateKey("c"), R"({"state":"PAUSED"})");
  EXPECT_EQ(state.snapshot().targetStates.at("c"), TargetState::PAUSED);
  auto removed = apply(cr::connectorKey("c"), std::nullopt);
  ASSERT_TRUE(removed);
  EXPECT_EQ(removed->kind, ConfigEvent::Kind::CONNECTOR_REMOVED);
  apply(cr::targetStateKey("c"), std::nullopt);
  EXPECT_TRUE(state.snapshot().connectorConfigs.empty());
  EXPECT_TRUE(state.snapshot().targetStates.empty());
}

TEST_F(ConfigStateTest, AStateWrittenBeforeTheConnectorIsItsInitialState) {
  EXPECT_FALSE(apply(cr::targetStateKey("c"), cr::targetStateValue(TargetState::STOPPED)));
  connector("c");
  EXPECT_EQ(state.snapshot().targetStates.at("c"), TargetState::STOPPED);
}

TEST_F(ConfigStateTest, ACommitOfADeletedConnectorIsIgnored) {
  apply(cr::taskKey("gone", 0), cr::taskConfigValue({}));
  EXPECT_FALSE(apply(cr::commitKey("gone"), cr::commitValue(1)));
  EXPECT_TRUE(state.snapshot().taskConfigs.empty());
}

TEST_F(ConfigStateTest, RestartRequests) {
  auto event = apply(cr::restartKey("c"), cr::restartValue({"c", true, true}));
  ASSERT_TRUE(event);
  EXPECT_EQ(event->kind, ConfigEvent::Kind::RESTART_REQUESTED);
  EXPECT_TRUE(event->restart.includeTasks);
  EXPECT_TRUE(event->restart.onlyFailed);
  auto defaults = apply(cr::restartKey("c"), R"({"include-tasks":"yes"})");
  ASSERT_TRUE(defaults);
  EXPECT_FALSE(defaults->restart.includeTasks);
  EXPECT_FALSE(defaults->restart.onlyFailed);
}

TEST_F(ConfigStateTest, ClusterWideLoggerLevels) {
  EXPECT_EQ(cr::loggerKey("org.apache.kafka.connect"), "logger-cluster-org.apache.kafka.connect");
  EXPECT_EQ(cr::loggerValue("DEBUG"), R"({"level":"DEBUG"})");
  auto event = apply(cr::loggerKey("org.example"), cr::loggerValue("TRACE"));
  ASSERT_TRUE(event);
  EXPECT_EQ(event->kind, ConfigEvent::Kind::LOGGER_LEVEL);
  EXPECT_EQ(event->connector, "org.example");
  EXPECT_EQ(event->level, "TRACE");
  EXPECT_FALSE(apply(cr::loggerKey("org.example"), std::nullopt));
  EXPECT_FALSE(apply(cr::loggerKey("org.example"), R"({"level":3})"));
  EXPECT_FALSE(apply(cr::loggerKey("org.example"), R"("DEBUG")"));
}

TEST_F(ConfigStateTest, MalformedRecordsAreSkipped) {
  connector("c");
  ClusterConfigState before = state.snapshot();
  EXPECT_FALSE(apply(cr::connectorKey("c"), "not json {"));
  EXPECT_FALSE(apply(cr::connectorKey("c"), "[1,2]"));
  EXPECT_FALSE(apply(cr::connectorKey("c"), R"({"properties":{"a":1}})"));
  EXPECT_FALSE(apply(cr::connectorKey("c"), R"({"props":{}})"));
  EXPECT_FALSE(apply(cr::targetStateKey("c"), R"({"state":"RUNNING"})"));
  EXPECT_FALSE(apply(cr::targetStateKey("c"), R"({"state.v2":7})"));
  EXPECT_FALSE(apply("task-c", cr::taskConfigValue({})));
  EXPECT_FALSE(apply("task-c-x", cr::taskConfigValue({})));
  EXPECT_FALSE(apply(cr::taskKey("c", 0), std::nullopt));
  EXPECT_FALSE(apply(cr::taskKey("c", 0), R"({"properties":"x"})"));
  EXPECT_FALSE(apply(cr::commitKey("c"), R"({"tasks":"2"})"));
  EXPECT_FALSE(apply(cr::commitKey("c"), R"({"tasks":99999999999})"));
  EXPECT_FALSE(apply(cr::commitKey("c"), std::nullopt));
  EXPECT_FALSE(apply(cr::restartKey("c"), "3"));
  EXPECT_FALSE(apply(cr::restartKey("c"), std::nullopt));
  EXPECT_FALSE(apply("something-else", "{}"));
  EXPECT_FALSE(
      apply("session-key", R"({"key":"a","algorithm":"HmacSHA256","creation-timestamp":1})"));
  EXPECT_FALSE(apply("", ""));
  ClusterConfigState after = state.snapshot();
  EXPECT_EQ(after.connectorConfigs, before.connectorConfigs);
  EXPECT_EQ(after.targetStates, before.targetStates);
  EXPECT_TRUE(after.taskConfigs.empty());
}

// Found while writing fuzz_connect_records (whose inputs are too short to nest this deep): the log
// line of an invalid target state serialized the parsed JSON again, recursively, and a record
// nested a million deep (1 MB, Kafka's default record size limit) overflowed the stack.
TEST_F(ConfigStateTest, ADeeplyNestedTargetStateIsSkipped) {
  connector("c");
  const size_t depth = 1'000'000;
  std::string value = R"({"state":)" + std::string(depth, '[') + std::string(depth, ']') + "}";
  spdlog::level::level_enum level = spdlog::get_level();
  spdlog::set_level(spdlog::level::off);  // the record is logged, all of it
  EXPECT_FALSE(apply(cr::targetStateKey("c"), value));
  spdlog::set_level(level);
  EXPECT_EQ(state.snapshot().targetStates.at("c"), TargetState::STARTED);
}

TEST(StatusRecords, KeysAndValuesAsKafkaWritesThem) {
  EXPECT_EQ(sr::connectorKey("c"), "status-connector-c");
  EXPECT_EQ(sr::taskKey("my-c", 3), "status-task-my-c-3");
  EXPECT_EQ(sr::topicKey("orders", "my-c"), "status-topic-orders:connector-my-c");
  EXPECT_EQ(sr::statusValue({"RUNNING", "", "10.0.0.1:8083", 4}),
            R"({"state":"RUNNING","trace":null,"worker_id":"10.0.0.1:8083","generation":4})");
  EXPECT_EQ(sr::statusValue({"FAILED", "boom\n\tat x", "w", 1}),
            R"({"state":"FAILED","trace":"boom\n\tat x","worker_id":"w","generation":1})");
  EXPECT_EQ(
      sr::topicValue({"orders", "c", 1, 1700000000000}),
      R"({"topic":{"name":"orders","connector":"c","task":1,"discoverTimestamp":1700000000000}})");
}

TEST(StatusRecords, ParsesWhatItWrites) {
  StatusRecord status{"FAILED", "trace", "w:8083", 7};
  EXPECT_EQ(sr::parseStatus(sr::statusValue(status)), status);
  TopicStatus topic{"t", "c", 2, 123};
  EXPECT_EQ(sr::parseTopic(sr::topicValue(topic)), topic);
  auto task = sr::parseKey("status-task-my-conn-12");
  ASSERT_TRUE(task);
  EXPECT_EQ(task->kind, StatusKey::Kind::TASK);
  EXPECT_EQ(task->connector, "my-conn");
  EXPECT_EQ(task->task, 12);
  auto topicKey = sr::parseKey("status-topic-a.b-c:connector-x-y");
  ASSERT_TRUE(topicKey);
  EXPECT_EQ(topicKey->kind, StatusKey::Kind::TOPIC);
  EXPECT_EQ(topicKey->topic, "a.b-c");
  EXPECT_EQ(topicKey->connector, "x-y");
  auto connector = sr::parseKey("status-connector-x");
  ASSERT_TRUE(connector);
  EXPECT_EQ(connector->kind, StatusKey::Kind::CONNECTOR);
}

TEST(StatusRecords, MalformedRecordsAreRefused) {
  for (const char* key : {"status-connector-", "status-task-c", "status-task-c-x", "status-task-",
                          "status-topic-t", "status-topic-:connector-c",
                          "status-topic-t:connector-", "status-topic-t:conn-c", "other", ""}) {
    EXPECT_FALSE(sr::parseKey(key)) << key;
  }
  for (const char* value : {"", "{", "[]", "null", R"({"state":"RUNNING"})",
                            R"({"state":"SLEEPING","worker_id":"w","generation":1})",
                            R"({"state":1,"worker_id":"w","generation":1})",
                            R"({"state":"RUNNING","worker_id":"w","generation":"1"})"}) {
    EXPECT_FALSE(sr::parseStatus(value)) << value;
  }
  for (const char* value : {"{}", R"({"topic":{"name":"t"}})", R"({"topic":"t"})", "x"}) {
    EXPECT_FALSE(sr::parseTopic(value)) << value;
  }
}

TEST(OffsetRecords, KeyedAsConnectKeysOffsets) {
  ValueMap partition{{Value(std::string("filename")), Value(std::string("/tmp/a"))}};
  ValueMap offset{{Value(std::string("position")), Value(int64_t{42})}};
  EXPECT_EQ(offset_records::key("file-source", partition),
            R"(["file-source",{"filename":"/tmp/a"}])");
  EXPECT_EQ(offset_records::value(offset), R"({"position":42})");
  EXPECT_EQ(offset_records::canonical(R"([ "c" , {"filename" : "/tmp/a"} ])"),
            offset_records::key("c", partition));
  EXPECT_FALSE(offset_records::canonical("not json"));
  auto back = offset_records::partitionOf(offset_records::key("c", partition), "c");
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, partition);
  EXPECT_FALSE(offset_records::partitionOf(offset_records::key("c", partition), "d"));
  EXPECT_FALSE(offset_records::partitionOf(R"(["c"])", "c"));
  EXPECT_FALSE(offset_records::partitionOf("{", "c"));
  EXPECT_FALSE(offset_records::offsetOf("[1]"));
}

// Arbitrary bytes under every key prefix never throw and never crash: a topic any client can write
// to must not take a worker down.
TEST(StoreRecords, ArbitraryRecordsAreSkippedWithoutThrowing) {
  std::mt19937 random(44);
  const std::vector<std::string> keys = {"connector-c",
                                         "target-state-c",
                                         "task-c-0",
                                         "task-c-x",
                                         "commit-c",
                                         "restart-connector-c",
                                         "logger-cluster-x",
                                         "status-connector-c",
                                         "status-task-c-1",
                                         "status-topic-t:connector-c",
                                         "",
                                         "\xff"};
  const std::vector<std::string> pieces = {"{",
                                           "}",
                                           "[",
                                           "]",
                                           "\"properties\"",
                                           "\"tasks\"",
                                           "\"state\"",
                                           "\"state.v2\"",
                                           "\"level\"",
                                           ":",
                                           ",",
                                           "1",
                                           "-1",
                                           "1e999",
                                           "99999999999999999999",
                                           "null",
                                           "true",
                                           "\"STOPPED\"",
                                           "\"a\"",
                                           "\"\\u0000\"",
                                           "\xff",
                                           "\"topic\"",
                                           "{\"name\":\"t\"}",
                                           " "};
  // Thousands of refusals are logged: not into the test's output.
  spdlog::level::level_enum level = spdlog::get_level();
  spdlog::set_level(spdlog::level::off);
  ConfigState state;
  for (int i = 0; i < 5000; ++i) {
    std::string value;
    for (int n = random() % 12; n > 0; --n) value += pieces[random() % pieces.size()];
    const std::string& key = keys[random() % keys.size()];
    std::optional<std::string> record;
    if (random() % 8 != 0) record = value;
    EXPECT_NO_THROW(state.apply(key, record, i)) << key << " " << value;
    EXPECT_NO_THROW(status_records::parseKey(key));
    EXPECT_NO_THROW(status_records::parseStatus(value)) << value;
    EXPECT_NO_THROW(status_records::parseTopic(value)) << value;
    EXPECT_NO_THROW(offset_records::canonical(value)) << value;
    EXPECT_NO_THROW(offset_records::offsetOf(value)) << value;
    EXPECT_NO_THROW(offset_records::partitionOf(value, "c")) << value;
  }
  EXPECT_NO_THROW(state.snapshot());
  spdlog::set_level(level);
}

}  // namespace
}  // namespace oxbow::connect::runtime::distributed
