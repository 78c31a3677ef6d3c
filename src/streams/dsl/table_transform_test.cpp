// KTable::transformValues and KStream::toTable, as Kafka Streams 3.x gives them through its
// TopologyTestDriver, and a topology composed at run time from a plan (what the SQL engine does).
#include <gtest/gtest.h>

#include <sstream>

#include "dsl_test_util.h"
#include "oxbow/streams/processor.h"
#include "oxbow/streams/streams_builder.h"
#include "oxbow/streams/test_driver.h"

namespace oxbow::streams {
namespace {

using namespace dsl_testing;

// "value@partition/offset/timestamp": what a transformer sees of the update it transforms.
class Stamp : public api::ValueTransformerWithKey<std::string, std::string, std::string> {
 public:
  void init(api::TransformerContext& context) override { context_ = &context; }
  std::string transform(const std::string& key, const std::string& value) override {
    auto meta = context_->recordMetadata();
    return key + "=" + value + "@" + std::to_string(meta ? meta->partition : -1) + "/" +
           std::to_string(meta ? meta->offset : -1) + "/" + std::to_string(context_->timestamp());
  }

 private:
  api::TransformerContext* context_ = nullptr;
};

auto stamp() {
  return [] { return std::make_unique<Stamp>(); };
}

TEST(TableTransformValues, EachUpdateIsTransformedInItsContextAndADeleteStaysADelete) {
  StreamsBuilder builder;
  builder.table<std::string, std::string>("users").transformValues(stamp()).toStream().to(
      "stamped");
  TopologyTestDriver driver(builder.build(), kNoCache);
  auto in = driver.createInputTopic<std::string, std::string>("users");
  in.pipeInput("u1", std::string("gold"), 10);
  in.pipeInput("u2", std::string("silver"), 20);
  in.pipeInput("u1", std::optional<std::string>(), 30);
  EXPECT_EQ((changes(driver.createOutputTopic<std::string, std::string>("stamped"))),
            (Changes<std::string, std::string>{
                {"u1", "u1=gold@0/0/10"}, {"u2", "u2=silver@0/1/20"}, {"u1", std::nullopt}}));
}

TEST(TableTransformValues, AMaterializedResultIsStoredAndItsOldValuesComeFromTheStore) {
  StreamsBuilder builder;
  auto stamped = builder.table<std::string, std::string>("users").transformValues(
      stamp(), Named::as("stamp"), Materialized<std::string, std::string>::as("stamped-users"));
  // A re-grouping asks for old values: the count must move a row out of the group it leaves.
  stamped
      .groupBy([](const std::string& user, const std::string& value) {
        return KeyValue<std::string, std::string>{value.substr(value.find('=') + 1, 1), user};
      })
      .count()
      .toStream()
      .to("per-initial");
  TopologyTestDriver driver(builder.build(), kNoCache);
  auto in = driver.createInputTopic<std::string, std::string>("users");
  in.pipeInput("u1", std::string("gold"), 10);
  in.pipeInput("u1", std::string("silver"), 20);
  auto store = driver.getKeyValueStore<std::string, std::string>("stamped-users");
  EXPECT_EQ(store.get("u1"), std::optional<std::string>("u1=silver@0/1/20"));
  EXPECT_EQ((changes(driver.createOutputTopic<std::string, int64_t>("per-initial"))),
            (Changes<std::string, int64_t>{{"g", 1}, {"g", 0}, {"s", 1}}));
}

TEST(TableTransformValues, AJoinReadsAnUnstoredResultInTheContextOfTheRecordLookingItUp) {
  StreamsBuilder builder;
  auto users = builder.table<std::string, std::string>("users").transformValues(stamp());
  builder.stream<std::string, std::string>("clicks")
      .join<std::string>(users, [](const std::string& click,
                                   const std::string& user) { return click + " by " + user; })
      .to("joined");
  TopologyTestDriver driver(builder.build(), kNoCache);
  driver.createInputTopic<std::string, std::string>("users").pipeInput("u1", std::string("gold"),
                                                                       10);
  auto clicks = driver.createInputTopic<std::string, std::string>("clicks");
  clicks.pipeInput("u1", std::string("home"), 15);
  clicks.pipeInput("u1", std::string("cart"), 16);
  // As Kafka's getter: the click's offset and timestamp, not the user row's.
  EXPECT_EQ((changes(driver.createOutputTopic<std::string, std::string>("joined"))),
            (Changes<std::string, std::string>{{"u1", "home by u1=gold@0/0/15"},
                                               {"u1", "cart by u1=gold@0/1/16"}}));
}

TEST(StreamToTable, RecordsBecomeUpdatesAndANullValueDeletes) {
  StreamsBuilder builder;
  builder.stream<std::string, std::string>("levels")
      .toTable(Materialized<std::string, std::string>::as("levels-table"))
      .toStream()
      .to("levels-changes");
  auto topology = builder.build();
  EXPECT_EQ(shape(topology, "KSTREAM-TOTABLE-0000000001"),
            "Processor KSTREAM-TOTABLE-0000000001 {levels-table} -> KTABLE-TOSTREAM-0000000002");
  TopologyTestDriver driver(topology, kNoCache);
  auto in = driver.createInputTopic<std::string, std::string>("levels");
  in.pipeInput("u1", std::string("gold"), 1);
  in.pipeInput("u2", std::string("silver"), 2);
  in.pipeInput("u1", std::optional<std::string>(), 3);
  EXPECT_EQ(
      (changes(driver.createOutputTopic<std::string, std::string>("levels-changes"))),
      (Changes<std::string, std::string>{{"u1", "gold"}, {"u2", "silver"}, {"u1", std::nullopt}}));
  auto store = driver.getKeyValueStore<std::string, std::string>("levels-table");
  EXPECT_EQ(store.get("u1"), std::nullopt);
  EXPECT_EQ(store.get("u2"), std::optional<std::string>("silver"));
  // Its store is not the input topic: it has a changelog of its own.
  EXPECT_TRUE(produced(driver, "app-levels-table-changelog"));
}

TEST(StreamToTable, ARekeyedStreamIsRepartitionedFirst) {
  StreamsBuilder builder;
  builder.stream<std::string, std::string>("events")
      .selectKey<std::string>(
          [](const std::string&, const std::string& v) { return v.substr(0, v.find(':')); })
      .toTable()
      .toStream()
      .to("latest");
  auto topology = builder.build();
  EXPECT_EQ(subtopology_count(topology), 2u);
  TopologyTestDriver driver(topology, kNoCache);
  auto in = driver.createInputTopic<std::string, std::string>("events");
  in.pipeInput("e1", std::string("a:1"), 1);
  in.pipeInput("e2", std::string("b:1"), 2);
  in.pipeInput("e3", std::string("a:2"), 3);
  EXPECT_TRUE(produced(driver, "app-KSTREAM-TOTABLE-0000000002-repartition"));
  EXPECT_EQ((changes(driver.createOutputTopic<std::string, std::string>("latest"))),
            (Changes<std::string, std::string>{{"a", "a:1"}, {"b", "b:1"}, {"a", "a:2"}}));
}

// A plan known only at run time (a list of steps, as a query compiler makes), composed onto the
// DSL step by step: the topology is whatever the plan says, not a shape fixed in the code.
KStream<std::string, std::string> apply_step(const KStream<std::string, std::string>& stream,
                                             const std::string& step) {
  if (step.rfind("contains:", 0) == 0) {
    std::string needle = step.substr(9);
    return stream.filter([needle](const std::string&, const std::string& v) {
      return v.find(needle) != std::string::npos;
    });
  }
  if (step == "upper")
    return stream.mapValues([](const std::string& v) {
      std::string out = v;
      for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      return out;
    });
  if (step == "key-by-value")
    return stream.selectKey<std::string>(
        [](const std::string&, const std::string& v) { return v; });
  throw std::invalid_argument("unknown step " + step);
}

Topology compose(const std::string& plan) {
  StreamsBuilder builder;
  auto stream = builder.stream<std::string, std::string>("in");
  std::istringstream steps(plan);
  std::string step, sink = "out";
  while (steps >> step) {
    if (step == "count") {
      stream.groupByKey()
          .count()
          .toStream()
          .mapValues([](int64_t n) { return std::to_string(n); })
          .to(sink);
      return builder.build();
    }
    stream = apply_step(stream, step);
  }
  stream.to(sink);
  return builder.build();
}

TEST(RuntimeComposition, ATopologyIsBuiltFromAPlanGivenAsData) {
  for (auto [plan, expected] :
       std::vector<std::pair<std::string, Changes<std::string, std::string>>>{
           {"contains:a upper", {{"k1", "APPLE"}, {"k3", "BANANA"}}},
           {"key-by-value count",
            {{"apple", "1"}, {"cherry", "1"}, {"banana", "1"}, {"apple", "2"}}},
           {"contains:an key-by-value upper", {{"banana", "BANANA"}}},
       }) {
    SCOPED_TRACE(plan);
    TopologyTestDriver driver(compose(plan), kNoCache);
    auto in = driver.createInputTopic<std::string, std::string>("in");
    in.pipeInput("k1", std::string("apple"), 1);
    in.pipeInput("k2", std::string("cherry"), 2);
    in.pipeInput("k3", std::string("banana"), 3);
    in.pipeInput("k4", std::string("apple"), 4);
    auto got = changes(driver.createOutputTopic<std::string, std::string>("out"));
    if (plan == "contains:a upper") expected.push_back({"k4", "APPLE"});
    EXPECT_EQ(got, expected);
  }
}

}  // namespace
}  // namespace oxbow::streams
