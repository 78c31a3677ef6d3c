// Connect's error handling without a broker: retries with backoff on a fake clock, tolerance,
// what reporters are given and write, and the errors.* configs.
#include "connect/runtime/error_handler.h"

#include <gtest/gtest.h>

#include <functional>

#include "connect/runtime/connector_config_def.h"
#include "connect/runtime/errant_reporter.h"
#include "connect/runtime/error_reporters.h"
#include "oxbow/connect/converters.h"
#include "oxbow/connect/errors.h"

namespace oxbow::connect::runtime {
namespace {

struct FakeTime {
  int64_t now = 1'000;
  std::vector<int64_t> sleeps;
  RetryWithTolerance::Clock clock() {
    return [this] { return now; };
  }
  RetryWithTolerance::Sleep sleep() {
    return [this](int64_t ms) {
      sleeps.push_back(ms);
      now += ms;
    };
  }
};

class Recorder : public ErrorReporter {
 public:
  explicit Recorder(std::vector<std::string>& seen) : seen_(seen) {}
  std::future<void> report(const ErrorContext& context) override {
    seen_.push_back(std::string(errorStageName(context.stage)) + " " + context.executingClass +
                    " " + exceptionMessage(context.error));
    std::promise<void> done;
    done.set_value();
    return done.get_future();
  }

 private:
  std::vector<std::string>& seen_;
};

ErrorsConfig config(bool all, int64_t retryTimeoutMs = 0, int64_t maxDelayMs = 60'000) {
  ErrorsConfig errors;
  errors.toleranceAll = all;
  errors.retryTimeoutMs = retryTimeoutMs;
  errors.retryMaxDelayMs = maxDelayMs;
  return errors;
}

std::function<int()> failing(int& calls) {
  return [&calls]() -> int {
    ++calls;
    throw DataException("bad bytes");
  };
}

std::function<int()> retriable(int& calls) {
  return [&calls]() -> int {
    ++calls;
    throw RetriableException("down");
  };
}

// Throws RetriableException until the given attempt, which answers 42.
std::function<int()> succeedsAt(int attempt, int& calls) {
  return [attempt, &calls]() -> int {
    if (++calls < attempt) throw RetriableException("not yet");
    return 42;
  };
}

std::string traceOf(const std::function<void()>& action) {
  try {
    action();
  } catch (const std::exception&) {
    return exceptionTrace(std::current_exception(), false);
  }
  return "";
}

TEST(RetryWithToleranceTest, NoneFailsAfterReportingWithTheCause) {
  std::vector<std::string> seen;
  RetryWithTolerance handler(config(false));
  handler.addReporter(std::make_unique<Recorder>(seen));
  ErrorContext context;
  int calls = 0;
  std::string trace = traceOf([&] {
    handler.execute<int>(context, ErrorStage::VALUE_CONVERTER, "JsonConverter", failing(calls));
  });
  EXPECT_EQ(trace,
            "Tolerance exceeded in error handler\n"
            "Caused by: org.apache.kafka.connect.errors.DataException: bad bytes");
  EXPECT_EQ(calls, 1);  // not retriable: tried once
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0], "VALUE_CONVERTER JsonConverter bad bytes");
  EXPECT_FALSE(handler.withinToleranceLimits());
}

TEST(RetryWithToleranceTest, AllSkipsTheRecordAndItsLaterStages) {
  RetryWithTolerance handler(config(true));
  ErrorContext context;
  int calls = 0;
  EXPECT_EQ(handler.execute<int>(context, ErrorStage::KEY_CONVERTER, "K", failing(calls)),
            std::nullopt);
  EXPECT_TRUE(context.failed());
  int later = 0;
  EXPECT_EQ(handler.execute<int>(context, ErrorStage::TRANSFORMATION, "T", [&] { return ++later; }),
            std::nullopt);
  EXPECT_EQ(later, 0);
  ErrorContext next;
  EXPECT_EQ(handler.execute<int>(next, ErrorStage::TRANSFORMATION, "T", [] { return 7; }), 7);
  ErrorCounts counts = handler.counts();
  EXPECT_EQ(counts.recordFailures, 1);
  EXPECT_EQ(counts.recordErrors, 1);
  EXPECT_EQ(counts.recordsSkipped, 1);
  EXPECT_TRUE(handler.withinToleranceLimits());
}

TEST(RetryWithToleranceTest, RetriableFailuresBackOffExponentiallyThenSucceed) {
  FakeTime time;
  RetryWithTolerance handler(config(false, 10'000), time.clock(), time.sleep());
  ErrorContext context;
  int calls = 0;
  EXPECT_EQ(handler.execute<int>(context, ErrorStage::VALUE_CONVERTER, "V", succeedsAt(4, calls)),
            42);
  EXPECT_EQ(time.sleeps, (std::vector<int64_t>{300, 600, 1200}));
  EXPECT_EQ(handler.counts().retries, 3);
  EXPECT_EQ(handler.counts().recordFailures, 3);
  EXPECT_EQ(handler.counts().recordErrors, 0);
  EXPECT_TRUE(handler.withinToleranceLimits());
}

TEST(RetryWithToleranceTest, RetriesEndAtTheTimeoutAndTheLastWaitIsCut) {
  FakeTime time;
  RetryWithTolerance handler(config(false, 1'000), time.clock(), time.sleep());
  ErrorContext context;
  int calls = 0;
  std::string trace = traceOf([&] {
    handler.execute<int>(context, ErrorStage::TRANSFORMATION, "T", [&]() -> int {
      ++calls;
      throw RetriableException("still down");
    });
  });
  EXPECT_EQ(time.sleeps, (std::vector<int64_t>{300, 600, 100}));
  EXPECT_EQ(calls, 4);
  EXPECT_EQ(trace,
            "Tolerance exceeded in error handler\n"
            "Caused by: org.apache.kafka.connect.errors.RetriableException: still down");
}

TEST(RetryWithToleranceTest, NoRetriesByDefault) {
  FakeTime time;
  RetryWithTolerance handler(config(true), time.clock(), time.sleep());
  ErrorContext context;
  int calls = 0;
  EXPECT_EQ(handler.execute<int>(context, ErrorStage::VALUE_CONVERTER, "V", retriable(calls)),
            std::nullopt);
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(time.sleeps.empty());
  EXPECT_EQ(handler.counts().recordsSkipped, 1);
}

TEST(RetryWithToleranceTest, WaitsPastTheMaximumDelayAreRandomBelowIt) {
  FakeTime time;
  RetryWithTolerance handler(config(true, 100'000, 500), time.clock(), time.sleep());
  ErrorContext context;
  int calls = 0;
  handler.execute<int>(context, ErrorStage::VALUE_CONVERTER, "V", succeedsAt(6, calls));
  ASSERT_EQ(time.sleeps.size(), 5u);
  EXPECT_EQ(time.sleeps[0], 300);
  for (size_t i = 1; i < time.sleeps.size(); ++i) {
    EXPECT_GE(time.sleeps[i], 0);
    EXPECT_LT(time.sleeps[i], 500);
  }
}

TEST(RetryWithToleranceTest, OnlyConvertersAndTransformsTolerateAnyFailure) {
  RetryWithTolerance handler(config(true));
  ErrorContext context;
  int calls = 0;
  std::string trace = traceOf(
      [&] { handler.execute<int>(context, ErrorStage::TASK_PUT, "SinkTask", failing(calls)); });
  EXPECT_EQ(trace,
            "Unhandled exception in error handler\n"
            "Caused by: org.apache.kafka.connect.errors.DataException: bad bytes");
}

TEST(RetryWithToleranceTest, ExecuteFailedReportsThenFailsUnlessTolerated) {
  std::vector<std::string> seen;
  RetryWithTolerance all(config(true));
  all.addReporter(std::make_unique<Recorder>(seen));
  ErrorContext context;
  std::future<void> done =
      all.executeFailed(context, ErrorStage::TASK_PUT, "org.apache.kafka.connect.sink.SinkTask",
                        std::make_exception_ptr(ConnectException("row rejected")));
  done.get();
  EXPECT_EQ(
      seen,
      (std::vector<std::string>{"TASK_PUT org.apache.kafka.connect.sink.SinkTask row rejected"}));
  RetryWithTolerance none(config(false));
  ErrorContext other;
  EXPECT_EQ(traceOf([&] {
              none.executeFailed(other, ErrorStage::TASK_PUT, "SinkTask",
                                 std::make_exception_ptr(ConnectException("row rejected")));
            }),
            "Tolerance exceeded in error handler\n"
            "Caused by: org.apache.kafka.connect.errors.ConnectException: row rejected");
}

TEST(RetryWithToleranceTest, StopEndsABackoffAndTheRetries) {
  RetryWithTolerance handler(config(true, -1));
  handler.triggerStop();
  ErrorContext context;
  int calls = 0;
  EXPECT_EQ(handler.execute<int>(context, ErrorStage::VALUE_CONVERTER, "V", retriable(calls)),
            std::nullopt);
  EXPECT_EQ(calls, 1);
}

RawRecord consumed() {
  RawRecord record;
  record.topic = "orders";
  record.partition = 2;
  record.offset = 17;
  record.timestamp = 1700000000000;
  record.timestampType = TimestampType::CREATE_TIME;
  return record;
}

ErrorContext failedContext() {
  ErrorContext context;
  context.consumed = consumed;
  context.stage = ErrorStage::VALUE_CONVERTER;
  context.executingClass = "org.apache.kafka.connect.json.JsonConverter";
  context.error = std::make_exception_ptr(DataException("Unexpected character"));
  return context;
}

TEST(LogReporterTest, KafkasLineWithTheRecordOnlyWhenAsked) {
  ErrorsConfig errors;
  EXPECT_EQ(LogReporter("sink-0", errors).message(failedContext()),
            "Error encountered in task sink-0. Executing stage 'VALUE_CONVERTER' with class "
            "'org.apache.kafka.connect.json.JsonConverter'.");
  errors.logIncludeMessages = true;
  EXPECT_EQ(LogReporter("sink-0", errors).message(failedContext()),
            "Error encountered in task sink-0. Executing stage 'VALUE_CONVERTER' with class "
            "'org.apache.kafka.connect.json.JsonConverter', where consumed record is "
            "{topic='orders', partition=2, offset=17, timestamp=1700000000000, "
            "timestampType=CreateTime}.");
}

TEST(DeadLetterQueueReporterTest, ContextHeadersAsKafkaNamesThem) {
  WorkerConfig worker;
  worker.bootstrapServers = "127.0.0.1:1";  // never reached: nothing is sent
  ErrorsConfig errors;
  errors.dlqTopic = "dlq";
  DeadLetterQueueReporter reporter(worker, "sink", 3, errors);
  auto headers = reporter.contextHeaders(failedContext(), consumed());
  std::vector<std::pair<std::string, std::string>> expected = {
      {"__connect.errors.topic", "orders"},
      {"__connect.errors.partition", "2"},
      {"__connect.errors.offset", "17"},
      {"__connect.errors.connector.name", "sink"},
      {"__connect.errors.task.id", "3"},
      {"__connect.errors.stage", "VALUE_CONVERTER"},
      {"__connect.errors.class.name", "org.apache.kafka.connect.json.JsonConverter"},
      {"__connect.errors.exception.class.name", "org.apache.kafka.connect.errors.DataException"},
      {"__connect.errors.exception.message", "Unexpected character"},
      {"__connect.errors.exception.stacktrace",
       "org.apache.kafka.connect.errors.DataException: Unexpected character"}};
  EXPECT_EQ(headers, expected);
}

// Keeps what the dead letter queue would be sent.
class RawRecorder : public ErrorReporter {
 public:
  std::future<void> report(const ErrorContext& context) override {
    records.push_back(context.consumed());
    stages.push_back(std::string(errorStageName(context.stage)) + " " + context.executingClass);
    std::promise<void> done;
    done.set_value();
    return done.get_future();
  }
  std::vector<RawRecord> records;
  std::vector<std::string> stages;
};

std::unique_ptr<Converter> stringConverter() {
  auto converter = std::make_unique<StringConverter>();
  converter->configure({}, false);
  return converter;
}

TEST(ErrantRecordReporterTest, ARecordNotReadInThisBatchIsConvertedBack) {
  RetryWithTolerance handler(config(true));
  auto recorder = std::make_unique<RawRecorder>();
  RawRecorder& seen = *recorder;
  handler.addReporter(std::move(recorder));
  WorkerErrantRecordReporter reporter(handler, stringConverter(), stringConverter());
  Headers headers;
  headers.add("h", Schema::STRING_SCHEMA, Value(std::string("v")));
  SinkRecord record("orders", 1, Schema::STRING_SCHEMA, Value(std::string("k")),
                    Schema::STRING_SCHEMA, Value(std::string("row")), 9, 123,
                    TimestampType::CREATE_TIME, headers);
  reporter.report(record, std::make_exception_ptr(ConnectException("rejected"))).get();
  reporter.throwIfNotTolerated();  // tolerated: nothing thrown
  ASSERT_EQ(seen.records.size(), 1u);
  const RawRecord& raw = seen.records[0];
  EXPECT_EQ(std::make_tuple(raw.topic, raw.partition, raw.offset), std::make_tuple("orders", 1, 9));
  EXPECT_EQ(raw.key, "k");
  EXPECT_EQ(raw.value, "row");
  ASSERT_EQ(raw.headers.size(), 1u);
  EXPECT_EQ(raw.headers[0].second, "v");
  EXPECT_EQ(seen.stages[0], "TASK_PUT org.apache.kafka.connect.sink.SinkTask");
}

TEST(ErrantRecordReporterTest, WithToleranceNoneTheReportFailsTheTask) {
  RetryWithTolerance handler(config(false));
  WorkerErrantRecordReporter reporter(handler, stringConverter(), stringConverter());
  SinkRecord record("orders", 0, nullptr, Value(), Schema::STRING_SCHEMA, Value(std::string("x")),
                    4);
  auto error = std::make_exception_ptr(ConnectException("rejected"));
  std::string expected =
      "Tolerance exceeded in error handler\n"
      "Caused by: org.apache.kafka.connect.errors.ConnectException: rejected";
  EXPECT_EQ(traceOf([&] { reporter.report(record, error); }), expected);
  // A task that swallowed it fails after put() all the same.
  EXPECT_EQ(traceOf([&] { reporter.throwIfNotTolerated(); }), expected);
}

TEST(ErrorsConfigTest, KafkasDefaultsNamesAndChecks) {
  ErrorsConfig defaults = parseErrorsConfig({}, ConnectorKind::SINK);
  EXPECT_EQ(defaults.retryTimeoutMs, 0);
  EXPECT_EQ(defaults.retryMaxDelayMs, 60'000);
  EXPECT_FALSE(defaults.toleranceAll);
  EXPECT_EQ(defaults.dlqReplicationFactor, 3);
  ErrorsConfig set = parseErrorsConfig({{"errors.tolerance", "all"},
                                        {"errors.retry.timeout", "-1"},
                                        {"errors.deadletterqueue.topic.name", " dlq "},
                                        {"errors.deadletterqueue.context.headers.enable", "true"}},
                                       ConnectorKind::SINK);
  EXPECT_TRUE(set.toleranceAll);
  EXPECT_EQ(set.retryTimeoutMs, -1);
  EXPECT_EQ(set.dlqTopic, "dlq");
  EXPECT_TRUE(set.dlqContextHeaders);
  try {
    parseErrorsConfig({{"errors.tolerance", "some"}}, ConnectorKind::SOURCE);
    FAIL() << "accepted";
  } catch (const ConfigException& e) {
    EXPECT_STREQ(e.what(),
                 "Invalid value some for configuration errors.tolerance: String must be one of: "
                 "none, all");
  }
}

TEST(ErrorsConfigTest, TheDeadLetterQueueIsNotOneOfTheSinksTopics) {
  Properties props{{"name", "s"},
                   {"connector.class", "FileStreamSink"},
                   {"topics", "a, dlq"},
                   {"errors.deadletterqueue.topic.name", "dlq"}};
  try {
    ConnectorConfig::parse(props, ConnectorKind::SINK);
    FAIL() << "accepted";
  } catch (const ConnectException& e) {
    EXPECT_STREQ(e.what(),
                 "The DLQ topic 'dlq' may not be included in the list of topics ('topics=[a, "
                 "dlq]') consumed by the connector");
  }
  props.erase("topics");
  props["topics.regex"] = "d.*";
  std::vector<ConfigValue> values;
  sinkConfigErrors(props, values);
  ASSERT_EQ(values.size(), 1u);
  EXPECT_EQ(values[0].name, "topics.regex");
}

TEST(ErrorsConfigTest, TheValidateEndpointListsTheErrorHandlingGroup) {
  ConfigDef sink = connectorConfigDef(ConnectorKind::SINK);
  EXPECT_EQ(sink.groups().back(), "Error Handling");
  ASSERT_NE(sink.find("errors.deadletterqueue.topic.replication.factor"), nullptr);
  EXPECT_EQ(sink.find("errors.deadletterqueue.topic.replication.factor")->orderInGroup, 7);
  ConfigDef source = connectorConfigDef(ConnectorKind::SOURCE);
  EXPECT_NE(source.find("errors.tolerance"), nullptr);
  EXPECT_EQ(source.find("errors.deadletterqueue.topic.name"), nullptr);
}

}  // namespace
}  // namespace oxbow::connect::runtime
