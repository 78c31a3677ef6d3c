// A plugin for plugin_loader_test that calls back into every context the worker offers: a
// connector asking for reconfiguration and raising an error, a sink task using its context
// (assignment, offset, timeout, pause, resume, requestCommit, configs) and its errant record
// reporter, a source task reading its configs. What it saw it writes as headers of what it hands
// back, so that the test reads it on the worker's side.
#include "oxbow/connect/errors.h"
#include "oxbow/connect/plugin_export.h"
#include "oxbow/connect/sink.h"
#include "oxbow/connect/source.h"

namespace {

using namespace oxbow::connect;

class ProbeSourceTask : public SourceTask {
 public:
  std::string version() const override { return "0"; }
  void start(const Props&) override {}
  // One record whose value is the task context's "probe" config.
  std::vector<SourceRecord> poll() override {
    Props configs = context()->configs();
    return {SourceRecord({}, {}, "probe", Schema::STRING_SCHEMA, Value(configs.at("probe")))};
  }
  void stop() override {}
};

class ProbeSourceConnector : public SourceConnector {
 public:
  std::string version() const override { return "0"; }
  // "reconfigure" asks for new task configs; "fail" raises an error through the context.
  void start(const Props& props) override {
    if (props.contains("reconfigure")) context()->requestTaskReconfiguration();
    if (props.contains("fail")) {
      context()->raiseError(std::make_exception_ptr(ConnectException("raised by the plugin")));
    }
  }
  TaskClass taskClass() const override { return TaskClass::of<ProbeSourceTask>("ProbeSourceTask"); }
  std::vector<Props> taskConfigs(int) override { return {{}}; }
  void stop() override {}
  ConfigDef config() const override { return {}; }
};

class ProbeSinkTask : public SinkTask {
 public:
  std::string version() const override { return "0"; }
  void start(const Props&) override {}
  // Records valued "bad" are reported as errant; each put rewinds every assigned partition to
  // offset 5, sets a timeout, pauses and resumes them and asks for a commit.
  void put(const std::vector<SinkRecord>& records) override {
    std::set<TopicPartition> assigned = context()->assignment();
    std::vector<TopicPartition> partitions(assigned.begin(), assigned.end());
    for (const TopicPartition& tp : partitions) context()->offset(tp, 5);
    context()->timeout(250);
    context()->pause(partitions);
    context()->resume(partitions);
    context()->requestCommit();
    for (const SinkRecord& record : records) {
      if (record.value() == Value("bad")) {
        ErrantRecordReporter* reporter = context()->errantRecordReporter();
        if (reporter == nullptr) throw ConnectException("no reporter");
        reporter->report(record, std::make_exception_ptr(DataException("bad record"))).get();
      }
    }
  }
  void stop() override {}
};

class ProbeSinkConnector : public SinkConnector {
 public:
  std::string version() const override { return "0"; }
  void start(const Props&) override {}
  TaskClass taskClass() const override { return TaskClass::of<ProbeSinkTask>("ProbeSinkTask"); }
  std::vector<Props> taskConfigs(int) override { return {{}}; }
  void stop() override {}
  ConfigDef config() const override { return {}; }
};

}  // namespace

OXBOW_CONNECT_PLUGIN(
    "probe", "0",
    oxbow::connect::plugin_export::connector<ProbeSourceConnector>("test.ProbeSourceConnector"),
    oxbow::connect::plugin_export::connector<ProbeSinkConnector>("test.ProbeSinkConnector"))
