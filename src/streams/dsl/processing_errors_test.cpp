// The processing-exception handler (Kafka's KIP-1033) through the test driver: what a processor or
// punctuator throws fails the task, or drops that record at that node and is counted.
#include <gtest/gtest.h>

#include <chrono>

#include "oxbow/streams/processor.h"
#include "oxbow/streams/streams_builder.h"
#include "oxbow/streams/test_driver.h"

namespace oxbow::streams {
namespace {

using std::chrono::milliseconds;
using Strings = std::vector<std::string>;

const char* const kContinue =
    "org.apache.kafka.streams.errors.LogAndContinueProcessingExceptionHandler";

// in -> mapValues (throws on "bad") -> out.
Topology upper_unless_bad() {
  StreamsBuilder builder;
  builder.stream<std::string, std::string>("in")
      .mapValues<std::string>([](const std::string& v) {
        if (v == "bad") throw std::runtime_error("cannot map " + v);
        std::string out = v;
        for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        return out;
      })
      .to("out");
  return builder.build();
}

Strings values(TopologyTestDriver& driver, const std::string& topic) {
  return driver.createOutputTopic<std::string, std::string>(topic).readValuesToList();
}

Strings pipe_three(TopologyTestDriver& driver) {
  auto in = driver.createInputTopic<std::string, std::string>("in");
  in.pipeInput("k1", std::string("a"), 10);
  in.pipeInput("k2", std::string("bad"), 11);
  in.pipeInput("k3", std::string("c"), 12);
  return values(driver, "out");
}

TEST(ProcessingExceptionHandler, LogAndContinueDropsTheRecordAndCountsIt) {
  TopologyTestDriver driver(upper_unless_bad(), {{"processing.exception.handler", kContinue}});
  EXPECT_EQ(pipe_three(driver), (Strings{"A", "C"}));
  EXPECT_EQ(driver.droppedRecords(), 1);
}

TEST(ProcessingExceptionHandler, LogAndFailIsTheDefaultAndNamesTheNode) {
  for (auto config : {std::map<std::string, std::string>{},
                      {{"processing.exception.handler", "LogAndFailProcessingExceptionHandler"}}}) {
    TopologyTestDriver driver(upper_unless_bad(), config);
    auto in = driver.createInputTopic<std::string, std::string>("in");
    in.pipeInput("k1", std::string("a"), 10);
    try {
      in.pipeInput("k2", std::string("bad"), 11);
      FAIL() << "the exception was swallowed";
    } catch (const StreamsException& e) {
      std::string what = e.what();
      EXPECT_NE(what.find("KSTREAM-MAPVALUES-0000000001"), std::string::npos) << what;
      EXPECT_EQ(what.rfind("cannot map bad", 0), 0u) << what;  // the original's text first
      try {
        std::rethrow_if_nested(e);
        FAIL() << "the original exception is not kept";
      } catch (const std::runtime_error& original) {
        EXPECT_STREQ(original.what(), "cannot map bad");
      }
    }
    EXPECT_EQ(driver.droppedRecords(), 0);
  }
}

TEST(ProcessingExceptionHandler, UnknownHandlerIsRefused) {
  EXPECT_THROW(TopologyTestDriver(upper_unless_bad(), {{"processing.exception.handler", "Nope"}}),
               std::invalid_argument);
}

struct Seen {
  std::string topic, node, task, key, value, header;
  int32_t partition = -2;
  int64_t offset = -2, timestamp = -2;
  std::string error;
  bool had_record = false;
};

ProcessingExceptionHandler recording(Seen& seen, ProcessingExceptionHandlerResponse answer) {
  return [&seen, answer](const ErrorHandlerContext& context, const Record* record,
                         const std::exception& error) {
    seen.topic = context.topic();
    seen.partition = context.partition();
    seen.offset = context.offset();
    seen.node = context.processorNodeId();
    seen.task = context.taskId();
    seen.timestamp = context.timestamp();
    if (!context.headers().empty()) seen.header = context.headers()[0].value.value_or("");
    seen.had_record = record != nullptr;
    if (record) {
      seen.key = datum_cast<std::string>(record->key);
      seen.value = datum_cast<std::string>(record->value);
    }
    seen.error = error.what();
    return answer;
  };
}

TEST(ProcessingExceptionHandler, CustomHandlerSeesWhereAndWhat) {
  TopologyTestDriver driver(upper_unless_bad());
  Seen seen;
  driver.setProcessingExceptionHandler(
      recording(seen, ProcessingExceptionHandlerResponse::CONTINUE));
  auto in = driver.createInputTopic<std::string, std::string>("in");
  in.pipeInput("k1", std::string("a"), 10);
  driver.pipe("in", std::string("k2"), std::string("bad"), 11, Headers{{"h", std::string("hv")}});
  in.pipeInput("k3", std::string("c"), 12);
  EXPECT_EQ(values(driver, "out"), (Strings{"A", "C"}));
  EXPECT_EQ(seen.topic, "in");
  EXPECT_EQ(seen.partition, 0);
  EXPECT_EQ(seen.offset, 1);
  EXPECT_EQ(seen.timestamp, 11);
  EXPECT_EQ(seen.node, "KSTREAM-MAPVALUES-0000000001");
  EXPECT_EQ(seen.task, "0_0");
  EXPECT_EQ(seen.header, "hv");
  ASSERT_TRUE(seen.had_record);
  EXPECT_EQ(seen.key, "k2");
  EXPECT_EQ(seen.value, "bad");
  EXPECT_EQ(seen.error, "cannot map bad");
  EXPECT_EQ(driver.droppedRecords(), 1);
}

TEST(ProcessingExceptionHandler, CustomFailAndAThrowingHandlerFail) {
  Seen seen;
  TopologyTestDriver failing(upper_unless_bad());
  failing.setProcessingExceptionHandler(recording(seen, ProcessingExceptionHandlerResponse::FAIL));
  EXPECT_THROW(pipe_three(failing), StreamsException);
  EXPECT_EQ(seen.value, "bad");

  TopologyTestDriver throwing(upper_unless_bad());
  throwing.setProcessingExceptionHandler(
      [](const ErrorHandlerContext&, const Record*,
         const std::exception&) -> ProcessingExceptionHandlerResponse {
        throw std::logic_error("handler bug");
      });
  EXPECT_THROW(pipe_three(throwing), StreamsException);
}

// The record is dropped at the node that threw: its siblings still get it.
TEST(ProcessingExceptionHandler, SiblingBranchesStillGetTheRecord) {
  StreamsBuilder builder;
  auto in = builder.stream<std::string, std::string>("in");
  in.mapValues<std::string>([](const std::string& v) -> std::string {
      throw std::runtime_error("always " + v);
    }).to("broken");
  in.to("copy");
  TopologyTestDriver driver(builder.build(), {{"processing.exception.handler", kContinue}});
  driver.createInputTopic<std::string, std::string>("in").pipeInput("k", std::string("v"), 1);
  EXPECT_EQ(values(driver, "copy"), (Strings{"v"}));
  EXPECT_EQ(driver.queueSize("broken"), 0u);
  EXPECT_EQ(driver.droppedRecords(), 1);
}

// A table's update (a change, not a record) reaches the handler as its key and new value.
TEST(ProcessingExceptionHandler, TableNodesTooWithTheNewValue) {
  StreamsBuilder builder;
  builder.table<std::string, std::string>("t")
      .mapValues<std::string>([](const std::string& v) {
        if (v == "bad") throw std::runtime_error("no");
        return v + "!";
      })
      .toStream()
      .to("out");
  TopologyTestDriver driver(builder.build(), {{"statestore.cache.max.bytes", "0"}});
  Seen seen;
  driver.setProcessingExceptionHandler(
      recording(seen, ProcessingExceptionHandlerResponse::CONTINUE));
  auto t = driver.createInputTopic<std::string, std::string>("t");
  t.pipeInput("k1", std::string("a"), 1);
  t.pipeInput("k2", std::string("bad"), 2);
  t.pipeInput("k3", std::string("c"), 3);
  EXPECT_EQ(values(driver, "out"), (Strings{"a!", "c!"}));
  EXPECT_EQ(seen.key, "k2");
  EXPECT_EQ(seen.value, "bad");
  EXPECT_EQ(seen.offset, 1);
}

// Throws from its wall-clock punctuator, forwards each record it processes.
class BadTicker : public api::Processor<std::string, std::string, std::string, std::string> {
 public:
  void init(Context& context) override {
    context_ = &context;
    context.schedule(milliseconds(10), PunctuationType::WALL_CLOCK_TIME, [](int64_t time) {
      throw std::runtime_error("tick " + std::to_string(time));
    });
  }
  void process(const api::Record<std::string, std::string>& record) override {
    context_->forward(record);
  }

 private:
  Context* context_ = nullptr;
};

Topology bad_ticker() {
  StreamsBuilder builder;
  builder.stream<std::string, std::string>("in")
      .process([] { return std::make_unique<BadTicker>(); })
      .to("out");
  return builder.build();
}

TEST(ProcessingExceptionHandler, PunctuatorsWithoutARecord) {
  TopologyTestDriver driver(bad_ticker(), {}, 1000);
  Seen seen;
  driver.setProcessingExceptionHandler(
      recording(seen, ProcessingExceptionHandlerResponse::CONTINUE));
  driver.advanceWallClockTime(milliseconds(15));
  EXPECT_FALSE(seen.had_record);
  EXPECT_EQ(seen.topic, "");
  EXPECT_EQ(seen.partition, -1);
  EXPECT_EQ(seen.offset, -1);
  EXPECT_EQ(seen.timestamp, 1015);
  EXPECT_EQ(seen.node, "KSTREAM-PROCESSOR-0000000001");
  EXPECT_EQ(seen.error, "tick 1015");
  driver.createInputTopic<std::string, std::string>("in").pipeInput("k", std::string("v"), 1);
  EXPECT_EQ(values(driver, "out"), (Strings{"v"}));

  TopologyTestDriver failing(bad_ticker(), {}, 1000);
  EXPECT_THROW(failing.advanceWallClockTime(milliseconds(15)), StreamsException);
}

}  // namespace
}  // namespace oxbow::streams
