// The standalone runtime's parts that need no broker: worker and connector configs, converters
// chosen per connector, the offsets file, and a source task that commits no offset for records
// no broker acknowledged.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "connect/runtime/offset_store.h"
#include "connect/runtime/standalone.h"
#include "connect/runtime/worker_config.h"
#include "oxbow/connect/errors.h"
#include "oxbow/connect/json_converter.h"

namespace oxbow::connect::runtime {
namespace {

class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "oxbow-runtime-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

Properties workerProps(const std::string& offsetFile) {
  return {{"key.converter", "org.apache.kafka.connect.storage.StringConverter"},
          {"value.converter", "org.apache.kafka.connect.json.JsonConverter"},
          {"value.converter.schemas.enable", "false"},
          {"offset.storage.file.filename", offsetFile}};
}

std::string errorOf(const std::function<void()>& action) {
  try {
    action();
  } catch (const ConnectException& e) {
    return e.what();
  }
  return "";
}

TEST(WorkerConfigTest, KafkaDefaultsAndClientOverrides) {
  Properties props = workerProps("/tmp/x.offsets");
  props["producer.linger.ms"] = "5";
  props["consumer.fetch.wait.max.ms"] = "50";
  WorkerConfig config = WorkerConfig::parse(props);
  EXPECT_EQ(config.bootstrapServers, "localhost:9092");
  EXPECT_EQ(config.offsetFlushIntervalMs, 60000);
  EXPECT_EQ(config.offsetFile, "/tmp/x.offsets");
  EXPECT_EQ(config.producerOverrides, (Properties{{"linger.ms", "5"}}));
  EXPECT_EQ(config.consumerOverrides, (Properties{{"fetch.wait.max.ms", "50"}}));
}

TEST(WorkerConfigTest, ConnectorClientOverridesFollowThePolicy) {
  Properties connectorProps{{"name", "c"},
                            {"connector.class", "FileStreamSink"},
                            {"topics", "t"},
                            {"producer.override.linger.ms", "9"},
                            {"consumer.override.group.id", "mine"},
                            {"admin.override.sasl.mechanism", "PLAIN"}};
  ConnectorConfig connector = ConnectorConfig::parse(connectorProps, ConnectorKind::SINK);
  EXPECT_EQ(connector.producerOverrides, (Properties{{"linger.ms", "9"}}));
  EXPECT_EQ(connector.consumerOverrides, (Properties{{"group.id", "mine"}}));
  EXPECT_EQ(connector.adminOverrides, (Properties{{"sasl.mechanism", "PLAIN"}}));

  Properties props = workerProps("/tmp/x.offsets");
  EXPECT_TRUE(clientOverrideErrors(WorkerConfig::parse(props), connector).empty());  // All
  props["connector.client.config.override.policy"] = "Principal";
  EXPECT_EQ(clientOverrideErrors(WorkerConfig::parse(props), connector),
            (std::vector<std::string>{
                "The 'Principal' policy does not allow 'producer.override.linger.ms' to be "
                "overridden in the connector configuration.",
                "The 'Principal' policy does not allow 'consumer.override.group.id' to be "
                "overridden in the connector configuration."}));
  props["connector.client.config.override.policy"] = "None";
  EXPECT_EQ(clientOverrideErrors(WorkerConfig::parse(props), connector).size(), 3u);
  props["connector.client.config.override.policy"] = "Some";
  EXPECT_NE(errorOf([&] { WorkerConfig::parse(props); }).find("String must be one of"),
            std::string::npos);
  EXPECT_EQ(withConnectorOverrides({{"linger.ms", "5"}, {"acks", "1"}}, {{"linger.ms", "9"}}),
            (Properties{{"acks", "1"}, {"linger.ms", "9"}}));
}

TEST(WorkerConfigTest, RequiredAndBadValuesNamed) {
  for (const char* name : {"key.converter", "value.converter", "offset.storage.file.filename"}) {
    Properties props = workerProps("/tmp/x.offsets");
    props.erase(name);
    EXPECT_EQ(
        errorOf([&] { WorkerConfig::parse(props); }),
        "Missing required configuration \"" + std::string(name) + "\" which has no default value.");
  }
  Properties props = workerProps("/tmp/x.offsets");
  props["offset.flush.interval.ms"] = "soon";
  EXPECT_NE(errorOf([&] { WorkerConfig::parse(props); }).find("offset.flush.interval.ms"),
            std::string::npos);
}

TEST(ConnectorConfigTest, SinkTopicsOrRegexButNotBoth) {
  Properties props{{"name", "s"}, {"connector.class", "FileStreamSink"}};
  EXPECT_EQ(errorOf([&] { ConnectorConfig::parse(props, ConnectorKind::SINK); }),
            "Must configure one of topics or topics.regex");
  props["topics"] = "a, b";
  ConnectorConfig config = ConnectorConfig::parse(props, ConnectorKind::SINK);
  EXPECT_EQ(config.topics, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(config.tasksMax, 1);
  props["topics.regex"] = "a.*";
  EXPECT_NE(errorOf([&] { ConnectorConfig::parse(props, ConnectorKind::SINK); }), "");
  EXPECT_NE(
      errorOf([] {
        ConnectorConfig::parse({{"connector.class", "FileStreamSource"}}, ConnectorKind::SOURCE);
      }).find("\"name\""),
      std::string::npos);
}

TEST(ConnectorConfigTest, ConverterOverridesTheWorkersWithItsOwnConfigs) {
  WorkerConfig worker = WorkerConfig::parse(workerProps("/tmp/x.offsets"));
  ConnectorConfig plain = ConnectorConfig::parse(
      {{"name", "c"}, {"connector.class", "FileStreamSource"}}, ConnectorKind::SOURCE);
  // The worker's JsonConverter without schemas: a bare string.
  EXPECT_EQ(connectorConverter(worker, plain, false)->fromConnectData("t", nullptr, Value("x")),
            "\"x\"");
  ConnectorConfig own = ConnectorConfig::parse({{"name", "c"},
                                                {"connector.class", "FileStreamSource"},
                                                {"value.converter", "JsonConverter"}},
                                               ConnectorKind::SOURCE);
  // Its own JsonConverter, schemas enabled by default: the worker's schemas.enable is not used.
  EXPECT_EQ(connectorConverter(worker, own, false)->fromConnectData("t", nullptr, Value("x")),
            "{\"schema\":null,\"payload\":\"x\"}");
}

TEST(FileOffsetStoreTest, OffsetsSurviveReopeningPerConnector) {
  TempDir dir;
  std::string path = dir.file("connect.offsets");
  ValueMap partition{{Value("filename"), Value("/data/in.txt")}};
  {
    FileOffsetStore store(path);
    EXPECT_FALSE(store.offset("c", partition));
    store.commit("c", {{partition, ValueMap{{Value("position"), Value(int64_t{42})}}}});
    store.commit("c", {{partition, ValueMap{{Value("position"), Value(int64_t{57})}}}});
    store.commit("other", {{partition, ValueMap{{Value("position"), Value(int64_t{1})}}}});
  }
  FileOffsetStore reopened(path);
  EXPECT_EQ(reopened.size(), 2u);
  std::optional<ValueMap> offset = reopened.offset("c", partition);
  ASSERT_TRUE(offset);
  EXPECT_EQ(Value(*offset), Value(ValueMap{{Value("position"), Value(int64_t{57})}}));
  EXPECT_FALSE(reopened.offset("c", ValueMap{{Value("filename"), Value("/other")}}));
  // Readable JSON, keyed as Connect keys offsets.
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"c\""), std::string::npos);
  EXPECT_NE(text.find("\"position\": 57"), std::string::npos);
}

TEST(FileOffsetStoreTest, CorruptFileRefused) {
  TempDir dir;
  std::string path = dir.file("connect.offsets");
  std::ofstream(path) << "{not json";
  EXPECT_NE(errorOf([&] { FileOffsetStore store(path); }).find(path), std::string::npos);
}

// A source whose task returns one record per poll, offset {"n": polls so far}, and counts its
// polls, so a test can wait until records went through the runtime.
std::atomic<int> countingPolls{0};

class CountingTask : public SourceTask {
 public:
  std::string version() const override { return "1"; }
  void start(const Props&) override {}
  std::vector<SourceRecord> poll() override {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));  // a source waiting for data
    int64_t n = ++countingPolls;
    return {SourceRecord({{Value("p"), Value("x")}}, {{Value("n"), Value(n)}}, "t",
                         Schema::STRING_SCHEMA, Value("r" + std::to_string(n)))};
  }
  void stop() override {}
};

class CountingSource : public SourceConnector {
 public:
  std::string version() const override { return "1"; }
  void start(const Props& props) override { props_ = props; }
  TaskClass taskClass() const override { return TaskClass::of<CountingTask>("CountingTask"); }
  std::vector<Props> taskConfigs(int) override { return {props_}; }
  void stop() override {}
  ConfigDef config() const override { return ConfigDef(); }

 private:
  Props props_;
};

// Runs the counting source against a broker that is not there until it polled a few times,
// then stops the worker; the offsets file's entry for it afterwards.
std::optional<ValueMap> offsetAfterRun(const Properties& connectorExtra) {
  TempDir dir;
  Properties props = workerProps(dir.file("connect.offsets"));
  props["bootstrap.servers"] = "127.0.0.1:1";
  props["offset.flush.interval.ms"] = "0";
  props["task.shutdown.graceful.timeout.ms"] = "100";
  ConnectorPlugins plugins;
  plugins.add("test.CountingSource", [] { return std::make_unique<CountingSource>(); });
  countingPolls = 0;
  {
    StandaloneWorker worker(props, std::move(plugins));
    Properties connector{{"name", "count"}, {"connector.class", "test.CountingSource"}};
    connector.insert(connectorExtra.begin(), connectorExtra.end());
    worker.addConnector(connector);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (countingPolls < 5 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
    }
    EXPECT_GE(countingPolls, 5);
    EXPECT_EQ(worker.taskStatuses().at(0).state, "RUNNING");
    worker.stop();
    EXPECT_EQ(worker.taskStatuses().at(0).state, "STOPPED");
  }
  return FileOffsetStore(dir.file("connect.offsets")).offset("count", {{Value("p"), Value("x")}});
}

// With no broker to acknowledge them, the records sent are never committed: a restarted task
// would send them again (at least once), never skip them.
TEST(StandaloneWorkerTest, NoOffsetCommittedWithoutAcknowledgement) {
  EXPECT_FALSE(offsetAfterRun({}));
}

// A record a transform drops is done with at once: its offset is committed, the last one polled
// when the task stopped.
TEST(StandaloneWorkerTest, RecordsDroppedByTransformsAreCommitted) {
  std::optional<ValueMap> offset =
      offsetAfterRun({{"transforms", "drop"},
                      {"transforms.drop.type", "org.apache.kafka.connect.transforms.Filter"}});
  ASSERT_TRUE(offset);
  ASSERT_EQ(offset->size(), 1u);
  EXPECT_EQ((*offset)[0].second, Value(int64_t{countingPolls}));
}

TEST(StandaloneWorkerTest, InvalidConnectorConfigListsErrors) {
  TempDir dir;
  StandaloneWorker worker(workerProps(dir.file("connect.offsets")),
                          ConnectorPlugins::withBuiltIns());
  std::string error = errorOf([&] {
    worker.addConnector({{"name", "src"}, {"connector.class", "FileStreamSource"}});
  });
  EXPECT_NE(error.find("Connector configuration for src is invalid and contains 1 error(s)"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("topic"), std::string::npos);
}

}  // namespace
}  // namespace oxbow::connect::runtime

namespace oxbow::connect::runtime {
namespace {

// A source task that throws what no task should (not a std::exception) at its first poll.
class ThrowingTask : public SourceTask {
 public:
  std::string version() const override { return "1"; }
  void start(const Props&) override {}
  std::vector<SourceRecord> poll() override { throw 42; }
  void stop() override {}
};

class ThrowingSource : public CountingSource {
 public:
  TaskClass taskClass() const override { return TaskClass::of<ThrowingTask>("ThrowingTask"); }
};

std::string waitForTaskState(const StandaloneWorker& worker, const std::string& name,
                             const std::string& state) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::string last;
  while (std::chrono::steady_clock::now() < deadline) {
    ConnectorStatus status = worker.connectorStatus(name);
    last = status.tasks.empty() ? "none" : status.tasks[0].state;
    if (last == state) break;
    std::this_thread::yield();
  }
  return last;
}

TEST(StandaloneWorkerTest, ConnectorsChangeAsTheRestApiAsks) {
  TempDir dir;
  Properties props = workerProps(dir.file("connect.offsets"));
  props["bootstrap.servers"] = "127.0.0.1:1";
  props["task.shutdown.graceful.timeout.ms"] = "100";
  ConnectorPlugins plugins;
  plugins.add("test.CountingSource", [] { return std::make_unique<CountingSource>(); });
  plugins.add("test.ThrowingSource", [] { return std::make_unique<ThrowingSource>(); });
  StandaloneWorker worker(props, std::move(plugins));
  Properties config{{"connector.class", "test.CountingSource"}};
  EXPECT_TRUE(worker.putConnector("count", config, true));
  EXPECT_THROW(worker.putConnector("count", config, true), AlreadyExistsException);
  EXPECT_EQ(worker.connectorStatus("count").state, "RUNNING");
  EXPECT_EQ(waitForTaskState(worker, "count", "RUNNING"), "RUNNING");

  worker.setTargetState("count", TargetState::PAUSED);
  EXPECT_EQ(worker.connectorStatus("count").state, "PAUSED");
  EXPECT_EQ(worker.connectorStatus("count").tasks.at(0).state, "PAUSED");
  worker.setTargetState("count", TargetState::STARTED);
  EXPECT_EQ(waitForTaskState(worker, "count", "RUNNING"), "RUNNING");
  worker.setTargetState("count", TargetState::STOPPED);
  EXPECT_EQ(worker.connectorStatus("count").state, "STOPPED");
  EXPECT_TRUE(worker.connectorStatus("count").tasks.empty());
  worker.setTargetState("count", TargetState::STARTED);
  EXPECT_EQ(waitForTaskState(worker, "count", "RUNNING"), "RUNNING");
  EXPECT_THROW(worker.restartTask("count", 3), NotFoundException);
  EXPECT_FALSE(worker.putConnector("count", config, false));
  EXPECT_EQ(worker.connectorInfo("count").config.at("name"), "count");

  // A task throwing anything is FAILED with a trace; restarting it fails it again.
  EXPECT_TRUE(worker.putConnector("bad", {{"connector.class", "test.ThrowingSource"}}, false));
  EXPECT_EQ(waitForTaskState(worker, "bad", "FAILED"), "FAILED");
  EXPECT_NE(worker.connectorStatus("bad").tasks.at(0).failure, "");
  worker.restartConnector("bad", true, true);
  EXPECT_EQ(waitForTaskState(worker, "bad", "FAILED"), "FAILED");
  EXPECT_EQ(worker.connectorStatus("count").tasks.at(0).state, "RUNNING");

  EXPECT_THROW(worker.putConnector("x", {{"connector.class", "Nope"}}, true), BadRequestException);
  worker.deleteConnector("count");
  EXPECT_EQ(worker.connectorNames(), std::vector<std::string>{"bad"});
  EXPECT_THROW(worker.connectorStatus("count"), NotFoundException);
  EXPECT_THROW(worker.deleteConnector("count"), NotFoundException);
}

class ThrowingCommitTask : public CountingTask {
 public:
  void commitRecord(const SourceRecord&, const std::optional<RecordMetadata>&) override {
    throw ConnectException("no room for this record's receipt");
  }
};

class ThrowingCommitSource : public CountingSource {
 public:
  TaskClass taskClass() const override {
    return TaskClass::of<ThrowingCommitTask>("ThrowingCommitTask");
  }
};

// commitRecord runs in librdkafka's delivery callback, which no exception may cross: a task that
// throws there is FAILED with the message, and the worker goes on. librdkafka's in-process mock
// cluster acknowledges the records.
TEST(StandaloneWorkerTest, ATaskThrowingInCommitRecordFails) {
  TempDir dir;
  Properties props = workerProps(dir.file("connect.offsets"));
  props["producer.test.mock.num.brokers"] = "1";
  ConnectorPlugins plugins;
  plugins.add("test.ThrowingCommitSource", [] { return std::make_unique<ThrowingCommitSource>(); });
  StandaloneWorker worker(props, std::move(plugins));
  worker.addConnector({{"name", "throws"}, {"connector.class", "test.ThrowingCommitSource"}});
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (worker.taskStatuses().at(0).state != "FAILED" &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  TaskStatus status = worker.taskStatuses().at(0);
  EXPECT_EQ(status.state, "FAILED");
  EXPECT_NE(status.failure.find("The task failed in commitRecord: no room for this record's "
                                "receipt"),
            std::string::npos)
      << status.failure;
  worker.stop();
}

}  // namespace
}  // namespace oxbow::connect::runtime
