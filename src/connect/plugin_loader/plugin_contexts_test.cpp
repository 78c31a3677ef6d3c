// The worker's contexts as a plugin reaches them through the C callbacks (context_test_plugin):
// a connector's reconfiguration requests and raised errors, a source task's configs, a sink
// task's consumer controls and its errant record reporter, whose refusal fails the put.
#include <gtest/gtest.h>

#include "connect/plugin_loader/plugin_loader.h"
#include "connect/source_task_context_fake.h"
#include "oxbow/connect/errors.h"
#include "oxbow/connect/sink.h"

namespace oxbow::connect {
namespace {

class RecordingConnectorContext : public SourceConnectorContext {
 public:
  void requestTaskReconfiguration() override { ++reconfigurations; }
  void raiseError(std::exception_ptr error) override {
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      errors.emplace_back(e.what());
    }
  }
  OffsetStorageReader& offsetStorageReader() override { return offsets; }
  int reconfigurations = 0;
  std::vector<std::string> errors;
  OneOffsetReader offsets;
};

class ProbeSourceContext : public FakeSourceContext {
 public:
  Props configs() const override { return {{"probe", "from the worker"}}; }
};

class Reporter : public ErrantRecordReporter {
 public:
  std::future<void> report(const SinkRecord& record, std::exception_ptr error) override {
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      reported.emplace_back(record.value().toString(), e.what());
    }
    if (refuse) throw ConnectException("Tolerance exceeded in error handler");
    std::promise<void> done;
    done.set_value();
    return done.get_future();
  }
  std::vector<std::pair<std::string, std::string>> reported;
  bool refuse = false;
};

class RecordingSinkContext : public SinkTaskContext {
 public:
  Props configs() const override { return {}; }
  void offset(const std::map<TopicPartition, int64_t>& offsets) override {
    rewound.insert(offsets.begin(), offsets.end());
  }
  void offset(const TopicPartition& tp, int64_t offset) override { rewound[tp] = offset; }
  void timeout(int64_t timeoutMs) override { timeout_ = timeoutMs; }
  std::set<TopicPartition> assignment() const override { return {{"a", 0}, {"b", 2}}; }
  void pause(const std::vector<TopicPartition>& partitions) override { paused = partitions; }
  void resume(const std::vector<TopicPartition>& partitions) override { resumed = partitions; }
  void requestCommit() override { ++commits; }
  ErrantRecordReporter* errantRecordReporter() override { return reporter; }

  std::map<TopicPartition, int64_t> rewound;
  int64_t timeout_ = -1;
  std::vector<TopicPartition> paused, resumed;
  int commits = 0;
  ErrantRecordReporter* reporter = nullptr;
};

ConnectorPlugins probe() {
  ConnectorPlugins plugins;
  plugin_loader::loadPlugin(plugins, OXBOW_TEST_CONTEXT_PLUGIN);
  return plugins;
}

std::unique_ptr<SinkTask> sinkTask(const ConnectorPlugins& plugins, RecordingSinkContext& context) {
  std::unique_ptr<Task> task = plugins.newConnector("ProbeSink")->taskClass().create();
  std::unique_ptr<SinkTask> sink(dynamic_cast<SinkTask*>(task.release()));
  sink->initialize(context);
  sink->start({});
  return sink;
}

std::vector<SinkRecord> records() {
  return {SinkRecord("a", 0, nullptr, Value(), Schema::STRING_SCHEMA, "good", 1),
          SinkRecord("a", 0, nullptr, Value(), Schema::STRING_SCHEMA, "bad", 2)};
}

TEST(PluginContextsTest, AConnectorRequestsReconfigurationAndRaisesErrors) {
  ConnectorPlugins plugins = probe();
  std::unique_ptr<Connector> connector = plugins.newConnector("ProbeSource");
  RecordingConnectorContext context;
  connector->initialize(context);
  connector->start({{"reconfigure", ""}, {"fail", ""}});
  EXPECT_EQ(context.reconfigurations, 1);
  EXPECT_EQ(context.errors, std::vector<std::string>{"raised by the plugin"});
}

TEST(PluginContextsTest, ASourceTaskReadsItsConfigsFromTheWorker) {
  ConnectorPlugins plugins = probe();
  std::unique_ptr<Task> task = plugins.newConnector("ProbeSource")->taskClass().create();
  auto& source = dynamic_cast<SourceTask&>(*task);
  ProbeSourceContext context;
  source.initialize(context);
  source.start({});
  std::vector<SourceRecord> polled = source.poll();
  ASSERT_EQ(polled.size(), 1u);
  EXPECT_EQ(polled[0].value(), Value("from the worker"));
}

TEST(PluginContextsTest, ASinkTaskDrivesItsConsumerAndReportsErrantRecords) {
  ConnectorPlugins plugins = probe();
  RecordingSinkContext context;
  Reporter reporter;
  context.reporter = &reporter;
  std::unique_ptr<SinkTask> sink = sinkTask(plugins, context);
  sink->put(records());
  std::vector<TopicPartition> assigned{{"a", 0}, {"b", 2}};
  EXPECT_EQ(context.rewound, (std::map<TopicPartition, int64_t>{{{"a", 0}, 5}, {{"b", 2}, 5}}));
  EXPECT_EQ(context.timeout_, 250);
  EXPECT_EQ(context.paused, assigned);
  EXPECT_EQ(context.resumed, assigned);
  EXPECT_EQ(context.commits, 1);
  EXPECT_EQ(reporter.reported,
            (std::vector<std::pair<std::string, std::string>>{{"bad", "bad record"}}));

  // A reporter refusing (errors.tolerance=none) fails the put with its message.
  reporter.refuse = true;
  try {
    sink->put(records());
    FAIL() << "put should have thrown";
  } catch (const ConnectException& e) {
    EXPECT_STREQ(e.what(), "Tolerance exceeded in error handler");
  }
}

TEST(PluginContextsTest, WithoutAReporterThePluginIsToldSo) {
  ConnectorPlugins plugins = probe();
  RecordingSinkContext context;
  std::unique_ptr<SinkTask> sink = sinkTask(plugins, context);
  EXPECT_THROW(sink->put(records()), ConnectException);
}

}  // namespace
}  // namespace oxbow::connect
