// A plugin that crashes, for the crash guard's tests (plugin_crash_test and
// tests/integration/test_connect_plugins.py): its source task writes "crash.at" records (numbers
// from 0, to "topic") and then crashes in poll() in the way "crash" names: "segv" (a null pointer
// written through), "abort", "fpe" (an integer division by zero), "ill" (an invalid instruction)
// or "overflow" (unbounded recursion). With "crash.in" = "connector.start" its connector crashes
// as it starts instead.
#include <cstdlib>
#include <string>

#include "oxbow/connect/errors.h"
#include "oxbow/connect/plugin_export.h"
#include "oxbow/connect/source.h"

namespace {

using namespace oxbow::connect;

// volatile, so that the compiler neither proves the crash away nor assumes it cannot return.
volatile int* volatile gNowhere = nullptr;
volatile int gZero = 0;
volatile int gOne = 1;

int recurse(int depth) {
  if (gZero == 42) return depth;  // never: a way out the compiler cannot rule out
  volatile char frame[512];
  frame[0] = static_cast<char>(depth);
  return recurse(depth + 1) + frame[0];
}

void crash(const std::string& how) {
  if (how == "segv") *gNowhere = 1;
  if (how == "abort") std::abort();
  if (how == "fpe") gZero = gOne / gZero;
  if (how == "ill") __builtin_trap();
  if (how == "overflow") gZero = recurse(0);
  throw ConnectException("unknown crash " + how);
}

std::string setting(const Props& props, const std::string& key, const std::string& otherwise) {
  auto found = props.find(key);
  return found == props.end() ? otherwise : found->second;
}

class CrashingSourceTask : public SourceTask {
 public:
  std::string version() const override { return "0"; }
  void start(const Props& props) override {
    topic_ = setting(props, "topic", "crash");
    how_ = setting(props, "crash", "segv");
    crashAt_ = std::stoll(setting(props, "crash.at", "0"));
  }
  std::vector<SourceRecord> poll() override {
    if (next_ >= crashAt_) crash(how_);
    std::vector<SourceRecord> records;
    records.emplace_back(ValueMap{{Value("crash"), Value("main")}},
                         ValueMap{{Value("next"), Value(next_ + 1)}}, topic_, Schema::INT64_SCHEMA,
                         Value(next_));
    ++next_;
    return records;
  }
  void stop() override {}

 private:
  std::string topic_;
  std::string how_;
  int64_t crashAt_ = 0;
  int64_t next_ = 0;
};

class CrashingSourceConnector : public SourceConnector {
 public:
  std::string version() const override { return "0"; }
  void start(const Props& props) override {
    if (setting(props, "crash.in", "poll") == "connector.start")
      crash(setting(props, "crash", "segv"));
    props_ = props;
  }
  TaskClass taskClass() const override {
    return TaskClass::of<CrashingSourceTask>("test.CrashingSourceTask");
  }
  std::vector<Props> taskConfigs(int) override { return {props_}; }
  void stop() override {}
  ConfigDef config() const override { return {}; }

 private:
  Props props_;
};

}  // namespace

OXBOW_CONNECT_PLUGIN("crashing", "0",
                     oxbow::connect::plugin_export::connector<CrashingSourceConnector>(
                         "test.CrashingSourceConnector"))
