// The Processor API: typed processors in the DSL and in a hand-built topology, their stores,
// record metadata and headers, forwarding to named children, and punctuation in both time modes
// (the driver's wall clock standing in for the system's).
#include <gtest/gtest.h>

#include "oxbow/streams/processor.h"
#include "oxbow/streams/streams_builder.h"
#include "oxbow/streams/test_driver.h"

namespace oxbow::streams {
namespace {

using std::chrono::milliseconds;

// Forwards each key's first record only; the keys seen live in the store "seen". Tags each
// forwarded record with a header naming where it came from.
class FirstPerKey : public api::Processor<std::string, std::string, std::string, std::string> {
 public:
  void init(Context& context) override {
    context_ = &context;
    seen_ = context.getStateStore<std::string, int64_t>("seen");
  }
  void process(const api::Record<std::string, std::string>& r) override {
    if (seen_->get(r.key())) return;
    seen_->put(r.key(), r.timestamp());
    auto meta = context_->recordMetadata();
    auto out = r.withValue(r.value() + "@" + meta->topic + "/" + std::to_string(meta->partition) +
                           "/" + std::to_string(meta->offset));
    out.headers().push_back({"from", std::string("first-per-key")});
    context_->forward(out);
  }

 private:
  Context* context_ = nullptr;
  std::shared_ptr<KeyValueStore<std::string, int64_t>> seen_;
};

TEST(ProcessorApi, ADslProcessorUsesItsStoreMetadataAndHeaders) {
  StreamsBuilder builder;
  builder.addStateStore(
      Stores::keyValueStoreBuilder<std::string, int64_t>(Stores::inMemoryKeyValueStore("seen")));
  builder.stream<std::string, std::string>("in")
      .process([] { return std::make_unique<FirstPerKey>(); }, {"seen"})
      .to("out");
  TopologyTestDriver driver(builder.build(), {{"application.id", "p"}});
  auto in = driver.createInputTopic<std::string, std::string>("in");
  in.pipeInput("a", std::string("1"), 10);
  in.pipeInput("b", std::string("2"), 11);
  in.pipeInput("a", std::string("3"), 12);
  auto out = driver.createOutputTopic<std::string, std::string>("out").readRecordsToList();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(*out[0].value, "1@in/0/0");
  EXPECT_EQ(*out[1].value, "2@in/0/1");
  EXPECT_EQ(out[1].headers, (Headers{{"from", std::string("first-per-key")}}));
  auto seen = driver.getKeyValueStore<std::string, int64_t>("seen");
  EXPECT_EQ(seen.get("a"), 10);
}

TEST(ProcessorApi, AProcessorMustNameTheStoresItUses) {
  StreamsBuilder builder;
  builder.addStateStore(
      Stores::keyValueStoreBuilder<std::string, int64_t>(Stores::inMemoryKeyValueStore("seen")));
  builder.stream<std::string, std::string>("in")
      .process([] { return std::make_unique<FirstPerKey>(); })  // no store named
      .to("out");
  auto expect_failure = [](auto f, const char* what) {
    try {
      f();
      ADD_FAILURE() << what << " did not throw";
    } catch (const std::exception&) {
    }
  };
  expect_failure(
      [&] {
        TopologyTestDriver driver(builder.build(), {{"application.id", "p"}});
        driver.createInputTopic<std::string, std::string>("in").pipeInput("a", "1");
      },
      "a store the processor did not name");
  StreamsBuilder unknown;
  auto stream = unknown.stream<std::string, std::string>("in");
  auto supplier = [] { return std::make_unique<FirstPerKey>(); };
  expect_failure([&] { stream.process(supplier, {"nowhere"}); }, "an unknown store");
}

// Emits, at each punctuation, the time it ran at; cancels itself after `runs` punctuations.
class Ticker : public api::Processor<std::string, std::string, std::string, int64_t> {
 public:
  Ticker(PunctuationType type, int runs) : type_(type), runs_(runs) {}
  void init(Context& context) override {
    cancellable_ = context.schedule(milliseconds(10), type_, [this, &context](int64_t time) {
      context.forward(api::Record<std::string, int64_t>("tick", time, time));
      if (--runs_ == 0) cancellable_.cancel();
    });
  }
  void process(const api::Record<std::string, std::string>&) override {}

 private:
  PunctuationType type_;
  int runs_;
  Cancellable cancellable_;
};

std::vector<int64_t> ticks(TopologyTestDriver& driver) {
  std::vector<int64_t> out;
  for (auto& v : driver.createOutputTopic<std::string, int64_t>("ticks").readValuesToList())
    out.push_back(v);
  return out;
}

TEST(ProcessorApi, StreamTimePunctuationRunsOnceAtEachIntervalItReaches) {
  StreamsBuilder builder;
  builder.stream<std::string, std::string>("in")
      .process([] { return std::make_unique<Ticker>(PunctuationType::STREAM_TIME, 100); })
      .to("ticks");
  TopologyTestDriver driver(builder.build(), {{"application.id", "p"}});
  auto in = driver.createInputTopic<std::string, std::string>("in");
  for (int64_t t : {0, 5, 12, 35, 36, 20, 41}) in.pipeInput("k", std::string("v"), t);
  // Aligned to 0: 0 runs at once; 12 passes 10; 35 passes 20 and 30 but runs once; an earlier
  // record (20) moves nothing; 41 passes 40.
  EXPECT_EQ(ticks(driver), (std::vector<int64_t>{0, 12, 35, 41}));
}

TEST(ProcessorApi, WallClockPunctuationFollowsTheDriversClockAndCanBeCancelled) {
  StreamsBuilder builder;
  builder.stream<std::string, std::string>("in")
      .process([] { return std::make_unique<Ticker>(PunctuationType::WALL_CLOCK_TIME, 3); })
      .to("ticks");
  TopologyTestDriver driver(builder.build(), {{"application.id", "p"}}, 1000);
  driver.advanceWallClockTime(milliseconds(5));
  EXPECT_TRUE(ticks(driver).empty());
  driver.advanceWallClockTime(milliseconds(6));   // 1011: past 1010
  driver.advanceWallClockTime(milliseconds(35));  // 1046: past 1020, 1030, 1040, once
  driver.advanceWallClockTime(milliseconds(4));   // 1050: the third, then cancelled
  driver.advanceWallClockTime(milliseconds(100));
  EXPECT_EQ(ticks(driver), (std::vector<int64_t>{1011, 1046, 1050}));
}

class Upper : public api::FixedKeyProcessor<std::string, std::string, std::string> {
 public:
  void init(Context& context) override { context_ = &context; }
  void process(const api::FixedKeyRecord<std::string, std::string>& r) override {
    std::string v = r.value();
    for (auto& c : v) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    context_->forward(r.withValue(v));
  }

 private:
  Context* context_ = nullptr;
};

TEST(ProcessorApi, ProcessValuesKeepsTheKeyAndTheKeysPartitioning) {
  StreamsBuilder builder;
  builder.stream<std::string, std::string>("in")
      .processValues([] { return std::make_unique<Upper>(); })
      .groupByKey()
      .count()
      .toStream()
      .to("out", Produced<std::string, int64_t>::with(serdes::String(), serdes::Int64()));
  auto topology = builder.build();
  // No repartition topic: processValues cannot change the key.
  EXPECT_EQ(topology.describe().toString().find("repartition"), std::string::npos);
  TopologyTestDriver driver(topology, {{"application.id", "p"}});
  driver.createInputTopic<std::string, std::string>("in").pipeInput("k", std::string("x"));
  auto out = driver.createOutputTopic<std::string, int64_t>("out").readKeyValuesToList();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].value, 1);
}

// Keeps a copy of every record it is given (records lend their key and value for the call only:
// a copy must own its own), and forwards a record it makes, which moves on.
class KeepsCopies : public api::FixedKeyProcessor<std::string, std::string, std::string> {
 public:
  explicit KeepsCopies(std::vector<api::FixedKeyRecord<std::string, std::string>>& kept)
      : kept_(kept) {}
  void init(Context& context) override { context_ = &context; }
  void process(const api::FixedKeyRecord<std::string, std::string>& r) override {
    kept_.push_back(r);
    auto copy = r;
    auto moved = std::move(copy);
    context_->forward(moved.withValue(std::string(r.value()) + "!"));
  }

 private:
  std::vector<api::FixedKeyRecord<std::string, std::string>>& kept_;
  Context* context_ = nullptr;
};

TEST(ProcessorApi, ACopyOfARecordOwnsItsKeyAndValue) {
  std::vector<api::FixedKeyRecord<std::string, std::string>> kept;
  StreamsBuilder builder;
  builder.stream<std::string, std::string>("in")
      .processValues([&] { return std::make_unique<KeepsCopies>(kept); })
      .to("out");
  TopologyTestDriver driver(builder.build(), {{"application.id", "p"}});
  auto in = driver.createInputTopic<std::string, std::string>("in");
  for (int i = 0; i < 3; ++i)
    in.pipeInput("a key longer than fifteen bytes " + std::to_string(i),
                 "a value longer than fifteen bytes " + std::to_string(i));
  ASSERT_EQ(kept.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(kept[i].key(), "a key longer than fifteen bytes " + std::to_string(i));
    EXPECT_EQ(kept[i].value(), "a value longer than fifteen bytes " + std::to_string(i));
  }
  auto out = driver.createOutputTopic<std::string, std::string>("out").readKeyValuesToList();
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[2].value, "a value longer than fifteen bytes 2!");
}

// Routes each record to the sink its value names.
class Router : public api::Processor<std::string, std::string, std::string, std::string> {
 public:
  void init(Context& context) override { context_ = &context; }
  void process(const api::Record<std::string, std::string>& r) override {
    context_->forward(r, r.value() == "b" ? "sink-b" : "sink-a");
  }

 private:
  Context* context_ = nullptr;
};

TEST(ProcessorApi, AHandBuiltTopologyRunsAndDescribesItself) {
  Topology topology;
  topology.addSource<std::string, std::string>("source", {"in"})
      .addProcessor("dedup", [] { return std::make_unique<FirstPerKey>(); }, {"source"})
      .addStateStore(Stores::keyValueStoreBuilder<std::string, int64_t>(
                         Stores::persistentKeyValueStore("seen")),
                     {"dedup"})
      .addProcessor("router", [] { return std::make_unique<Router>(); }, {"source"})
      .addSink("sink-a", "out-a", serdes::String(), serdes::String(), {"router", "dedup"})
      .addSink("sink-b", "out-b", serdes::String(), serdes::String(), {"router"});
  std::string described = topology.describe().toString();
  EXPECT_NE(described.find("Processor: dedup (stores: [seen])"), std::string::npos) << described;
  EXPECT_NE(described.find("Sink: sink-b (topic: out-b)"), std::string::npos) << described;
  TopologyTestDriver driver(topology, {{"application.id", "p"}});
  auto in = driver.createInputTopic<std::string, std::string>("in");
  in.pipeInput("k", std::string("a"));
  in.pipeInput("k", std::string("b"));
  auto a = driver.createOutputTopic<std::string, std::string>("out-a").readValuesToList();
  auto b = driver.createOutputTopic<std::string, std::string>("out-b").readValuesToList();
  EXPECT_EQ(a, (std::vector<std::string>{"a@in/0/0", "a"}));
  EXPECT_EQ(b, (std::vector<std::string>{"b"}));
}

}  // namespace
}  // namespace oxbow::streams

// ---------------------------------------------------------------------------------------------
// Global stores added by hand

namespace oxbow::streams {
namespace {

// Keeps, per key of the global topic, the longest value seen (a state update processor).
class Longest : public api::Processor<std::string, std::string, Void, Void> {
 public:
  void init(Context& context) override {
    store_ = context.getStateStore<std::string, std::string>("longest");
  }
  void process(const api::Record<std::string, std::string>& r) override {
    auto old = store_->get(r.key());
    if (!old || r.value().size() > old->size()) store_->put(r.key(), r.value());
  }

 private:
  std::shared_ptr<KeyValueStore<std::string, std::string>> store_;
};

// Reads the global store for each record of its stream.
class Lookup : public api::Processor<std::string, std::string, std::string, std::string> {
 public:
  void init(Context& context) override {
    context_ = &context;
    store_ = context.getStateStore<std::string, std::string>("longest");
  }
  void process(const api::Record<std::string, std::string>& r) override {
    context_->forward(r.withValue(store_->get(r.value()).value_or("none")));
  }

 private:
  Context* context_ = nullptr;
  std::shared_ptr<KeyValueStore<std::string, std::string>> store_;
};

// A table's updates are changes, not records: a stream's processor or sink put after a table node
// (instead of after its toStream()) is refused as the topology is built, both nodes named.
TEST(ProcessorApi, ANodeAfterATableMustTakeItsChanges) {
  StreamsBuilder builder;
  builder.table<std::string, std::string>("rows", Consumed<std::string, std::string>::as("rows"))
      .toStream(Named::as("rows-stream"));
  Topology topology = builder.build();
  try {
    topology.addProcessor("dedup", [] { return std::make_unique<FirstPerKey>(); }, {"rows"});
    FAIL() << "a stream processor after a table node was accepted";
  } catch (const TopologyException& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "rows forwards a table's changes but dedup takes stream records"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(topology.addSink("sink", "out", serdes::String(), serdes::String(), {"rows"}),
               TopologyException);
  // After toStream() they are what they take; what was refused left no node behind.
  topology.addProcessor("dedup", [] { return std::make_unique<FirstPerKey>(); }, {"rows-stream"})
      .addStateStore(Stores::keyValueStoreBuilder<std::string, int64_t>(
                         Stores::persistentKeyValueStore("seen")),
                     {"dedup"})
      .addSink("sink", "out", serdes::String(), serdes::String(), {"dedup"});
  TopologyTestDriver driver(topology, {{"application.id", "p"}});
  auto in = driver.createInputTopic<std::string, std::string>("rows");
  in.pipeInput("k", std::string("a"));
  in.pipeInput("k", std::string("b"));
  auto out = driver.createOutputTopic<std::string, std::string>("out").readValuesToList();
  EXPECT_EQ(out, (std::vector<std::string>{"a@rows/0/0"}));
}

TEST(ProcessorApi, AGlobalStoreIsFilledByItsProcessorAndReadByTasks) {
  Topology topology;
  topology
      .addGlobalStore(Stores::keyValueStoreBuilder<std::string, std::string>(
                          Stores::inMemoryKeyValueStore("longest"))
                          .withLoggingDisabled(),
                      "global-source", serdes::String(), serdes::String(), "words",
                      "global-processor", [] { return std::make_unique<Longest>(); })
      .addSource<std::string, std::string>("queries", {"queries"})
      .addProcessor("lookup", [] { return std::make_unique<Lookup>(); }, {"queries"})
      .addSink("answers", "answers", serdes::String(), serdes::String(), {"lookup"});
  TopologyTestDriver driver(topology, {{"application.id", "gs"}});
  auto words = driver.createInputTopic<std::string, std::string>("words");
  words.pipeInput("a", std::string("xy"));
  words.pipeInput("a", std::string("x"));  // shorter: kept out
  words.pipeInput("b", std::string("abc"));
  auto queries = driver.createInputTopic<std::string, std::string>("queries");
  queries.pipeInput("q1", std::string("a"));
  queries.pipeInput("q2", std::string("b"));
  queries.pipeInput("q3", std::string("c"));
  auto out = driver.createOutputTopic<std::string, std::string>("answers").readValuesToList();
  EXPECT_EQ(out, (std::vector<std::string>{"xy", "abc", "none"}));
  // Described as Kafka describes it: numbered among the sub-topologies by where it was added.
  EXPECT_EQ(topology.describe().toString(),
            "Topologies:\n"
            "   Sub-topology: 0 for global store (will not generate tasks)\n"
            "    Source: global-source (topics: [words])\n"
            "      --> global-processor\n"
            "    Processor: global-processor (stores: [longest])\n"
            "      --> none\n"
            "      <-- global-source\n"
            "  Sub-topology: 1\n"
            "    Source: queries (topics: [queries])\n"
            "      --> lookup\n"
            "    Processor: lookup (stores: [])\n"
            "      --> answers\n"
            "      <-- queries\n"
            "    Sink: answers (topic: answers)\n"
            "      <-- lookup\n\n");
  // A global store takes no changelog of its own.
  Topology logged;
  EXPECT_THROW(logged.addGlobalStore(Stores::keyValueStoreBuilder<std::string, std::string>(
                                         Stores::inMemoryKeyValueStore("s")),
                                     "src", serdes::String(), serdes::String(), "t", "p",
                                     [] { return std::make_unique<Longest>(); }),
               TopologyException);
}

TEST(ProcessorApi, AGlobalTableAddedBetweenTwoSubtopologiesTakesTheIdBetween) {
  StreamsBuilder builder;
  builder.stream<std::string, std::string>("first").to("first-out");
  auto users = builder.globalTable<std::string, std::string>("users");
  builder.stream<std::string, std::string>("clicks")
      .join<std::string>(
          users, [](const std::string& k, const std::string&) { return k; },
          [](const std::string& v, const std::string& u) { return v + u; })
      .to("out");
  auto described = builder.build().describe();
  ASSERT_EQ(described.globalStores().size(), 1u);
  EXPECT_EQ(described.globalStores()[0].id, 1);
  EXPECT_EQ(described.toString(),
            "Topologies:\n"
            "   Sub-topology: 0\n"
            "    Source: KSTREAM-SOURCE-0000000000 (topics: [first])\n"
            "      --> KSTREAM-SINK-0000000001\n"
            "    Sink: KSTREAM-SINK-0000000001 (topic: first-out)\n"
            "      <-- KSTREAM-SOURCE-0000000000\n\n"
            "  Sub-topology: 1 for global store (will not generate tasks)\n"
            "    Source: KSTREAM-SOURCE-0000000003 (topics: [users])\n"
            "      --> KTABLE-SOURCE-0000000004\n"
            "    Processor: KTABLE-SOURCE-0000000004 (stores: [users-STATE-STORE-0000000002])\n"
            "      --> none\n"
            "      <-- KSTREAM-SOURCE-0000000003\n"
            "  Sub-topology: 2\n"
            "    Source: KSTREAM-SOURCE-0000000005 (topics: [clicks])\n"
            "      --> KSTREAM-JOIN-0000000006\n"
            "    Processor: KSTREAM-JOIN-0000000006 (stores: [])\n"
            "      --> KSTREAM-SINK-0000000007\n"
            "      <-- KSTREAM-SOURCE-0000000005\n"
            "    Sink: KSTREAM-SINK-0000000007 (topic: out)\n"
            "      <-- KSTREAM-JOIN-0000000006\n\n");
}

}  // namespace
}  // namespace oxbow::streams
