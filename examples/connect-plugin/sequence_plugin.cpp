// An example Connect plugin: a source counting 0, 1, 2... into a topic, a sink writing each
// record it is given as a line of a file, and a converter writing values as their text. It uses
// only oxbow-connect's public headers; the one statement at the bottom exports them through the C
// ABI the worker loads plugins by.
#include <oxbow/connect/converter.h>
#include <oxbow/connect/errors.h>
#include <oxbow/connect/plugin_export.h>
#include <oxbow/connect/sink.h>
#include <oxbow/connect/source.h>
#include <oxbow/connect/struct.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace oxbow::connect;

constexpr const char* kVersion = "1.0.0";

// Configs: topic (required), count (how many, -1 forever), interval.ms between batches,
// fail.at (throw when about to produce that number: how a failing task looks to the worker).
ConfigDef sourceConfig() {
  using Type = ConfigDef::Type;
  using Importance = ConfigDef::Importance;
  ConfigDef def;
  def.define("topic", Type::STRING, DefaultValue(), NonEmptyString::create(), Importance::HIGH,
             "The topic the numbers go to.")
      .define("count", Type::LONG, int64_t{-1}, Importance::MEDIUM,
              "How many numbers to produce; -1 for no end.")
      .define("interval.ms", Type::LONG, int64_t{10}, Range::atLeast(0), Importance::LOW,
              "The wait between two polls.")
      .define("fail.at", Type::LONG, int64_t{-1}, Importance::LOW,
              "Fail the task instead of producing this number; -1 never fails.");
  return def;
}

SchemaPtr valueSchema() {
  static const SchemaPtr schema = SchemaBuilder::struct_()
                                      .name("com.example.Sequence")
                                      .field("seq", Schema::INT64_SCHEMA)
                                      .field("text", Schema::STRING_SCHEMA)
                                      .build();
  return schema;
}

class SequenceSourceTask : public SourceTask {
 public:
  std::string version() const override { return kVersion; }
  void start(const Props& props) override {
    AbstractConfig config(sourceConfig(), props);
    topic_ = config.getString("topic");
    count_ = config.getLong("count");
    intervalMs_ = config.getLong("interval.ms");
    failAt_ = config.getLong("fail.at");
    // Where the last run stopped: the offset after the last number written.
    if (auto offset = context()->offsetStorageReader().offset(partition())) {
      for (const auto& [key, value] : *offset) {
        if (key == Value("next")) next_ = value.asInt64();
      }
    }
  }
  std::vector<SourceRecord> poll() override {
    std::this_thread::sleep_for(std::chrono::milliseconds(intervalMs_));
    std::vector<SourceRecord> records;
    for (int i = 0; i < 10 && !stopping_ && (count_ < 0 || next_ < count_); ++i) {
      if (next_ == failAt_) {
        if (!records.empty()) break;  // those before it are written first
        throw ConnectException("sequence source failed at " + std::to_string(next_) +
                               " as fail.at asks");
      }
      auto value = std::make_shared<Struct>(valueSchema());
      value->put("seq", next_).put("text", "number " + std::to_string(next_));
      records.emplace_back(partition(), ValueMap{{Value("next"), Value(next_ + 1)}}, topic_,
                           std::nullopt, Schema::INT64_SCHEMA, Value(next_), valueSchema(),
                           Value(value));
      ++next_;
    }
    return records;
  }
  void stop() override { stopping_ = true; }

 private:
  static ValueMap partition() { return {{Value("sequence"), Value("main")}}; }
  std::string topic_;
  int64_t count_ = -1;
  int64_t intervalMs_ = 10;
  int64_t failAt_ = -1;
  int64_t next_ = 0;
  std::atomic<bool> stopping_{false};
};

class SequenceSourceConnector : public SourceConnector {
 public:
  std::string version() const override { return kVersion; }
  void start(const Props& props) override { props_ = props; }
  TaskClass taskClass() const override {
    return TaskClass::of<SequenceSourceTask>("com.example.SequenceSourceTask");
  }
  // One sequence: one task whatever tasks.max says.
  std::vector<Props> taskConfigs(int /*maxTasks*/) override { return {props_}; }
  void stop() override {}
  ConfigDef config() const override { return sourceConfig(); }

 private:
  Props props_;
};

ConfigDef sinkConfig() {
  ConfigDef def;
  def.define("file", ConfigDef::Type::STRING, DefaultValue(), NonEmptyString::create(),
             ConfigDef::Importance::HIGH, "The file each record is appended to as a line.");
  return def;
}

// Each record as "topic-partition@offset key value" with Connect's text of the key and value.
class LineSinkTask : public SinkTask {
 public:
  std::string version() const override { return kVersion; }
  void start(const Props& props) override {
    out_.open(AbstractConfig(sinkConfig(), props).getString("file"), std::ios::app);
    if (!out_) throw ConnectException("cannot open the sink's file");
  }
  void put(const std::vector<SinkRecord>& records) override {
    for (const SinkRecord& r : records) {
      out_ << r.topic() << '-' << *r.kafkaPartition() << '@' << r.kafkaOffset() << ' '
           << r.key().toString() << ' ' << r.value().toString() << '\n';
    }
  }
  void flush(const SinkOffsets& /*currentOffsets*/) override { out_.flush(); }
  void stop() override { out_.close(); }

 private:
  std::ofstream out_;
};

class LineSinkConnector : public SinkConnector {
 public:
  std::string version() const override { return kVersion; }
  void start(const Props& props) override { props_ = props; }
  TaskClass taskClass() const override {
    return TaskClass::of<LineSinkTask>("com.example.LineSinkTask");
  }
  std::vector<Props> taskConfigs(int /*maxTasks*/) override { return {props_}; }
  void stop() override {}
  ConfigDef config() const override { return sinkConfig(); }

 private:
  Props props_;
};

// Values as Connect's text of them ("Struct{seq=0,text=number 0}"); bytes read back as a string.
class TextConverter : public Converter {
 public:
  void configure(const ConfigMap& /*configs*/, bool /*isKey*/) override {}

 protected:
  bool write(std::string_view /*topic*/, const SchemaPtr& /*schema*/, const Value& value,
             std::string& out) override {
    if (value.isNull()) return false;
    out = value.toString();
    return true;
  }
  SchemaAndValue read(std::string_view /*topic*/, std::optional<std::string_view> value) override {
    if (!value) return {};
    return {Schema::OPTIONAL_STRING_SCHEMA, Value(std::string(*value))};
  }
};

}  // namespace

OXBOW_CONNECT_PLUGIN(
    "sequence-plugin", kVersion,
    oxbow::connect::plugin_export::connector<SequenceSourceConnector>(
        "com.example.SequenceSourceConnector"),
    oxbow::connect::plugin_export::connector<LineSinkConnector>("com.example.LineSinkConnector"),
    oxbow::connect::plugin_export::converter<TextConverter>("com.example.TextConverter"))
