// The DSL through the test driver: each operation's records, Kafka's node names and describe().
#include <gtest/gtest.h>

#include <cctype>
#include <regex>

#include "oxbow/streams/json_serde.h"
#include "oxbow/streams/streams_builder.h"
#include "oxbow/streams/test_driver.h"

namespace oxbow::streams {
namespace {

using Strings = std::vector<std::string>;

Strings words_of(const std::string& line) {
  Strings out;
  std::string word;
  for (char c : line + " ") {
    unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '_') {
      word += static_cast<char>(std::tolower(u));
    } else if (!word.empty()) {
      out.push_back(word);
      word.clear();
    }
  }
  return out;
}

Topology word_count(bool named_store) {
  StreamsBuilder builder;
  auto lines = builder.stream<std::string, std::string>("streams-plaintext-input");
  auto grouped =
      lines.flatMapValues<std::string>([](const std::string& v) { return words_of(v); })
          .groupBy<std::string>([](const std::string&, const std::string& w) { return w; });
  auto counts = named_store ? grouped.count(Materialized<std::string, int64_t>::as("counts-store"))
                            : grouped.count();
  counts.toStream().to("streams-wordcount-output");
  return builder.build();
}

// The expected descriptions below are what Kafka 3.x (checked against 3.8's
// InternalTopologyBuilder) prints for the same DSL calls. Its layout: "Topologies:\n " and then
// each sub-topology after two more spaces, so the first is indented by three and the others by two.
// Sub-topologies are numbered in topology order (of each one's first node; Kafka 2.5 on), nodes
// listed by the size of the graph below them (paths counted), largest first, then by name.
TEST(Describe, WordCountAsKafkaPrintsIt) {
  const char* expected =
      "Topologies:\n"
      "   Sub-topology: 0\n"
      "    Source: KSTREAM-SOURCE-0000000000 (topics: [streams-plaintext-input])\n"
      "      --> KSTREAM-FLATMAPVALUES-0000000001\n"
      "    Processor: KSTREAM-FLATMAPVALUES-0000000001 (stores: [])\n"
      "      --> KSTREAM-KEY-SELECT-0000000002\n"
      "      <-- KSTREAM-SOURCE-0000000000\n"
      "    Processor: KSTREAM-KEY-SELECT-0000000002 (stores: [])\n"
      "      --> counts-store-repartition-filter\n"
      "      <-- KSTREAM-FLATMAPVALUES-0000000001\n"
      "    Processor: counts-store-repartition-filter (stores: [])\n"
      "      --> counts-store-repartition-sink\n"
      "      <-- KSTREAM-KEY-SELECT-0000000002\n"
      "    Sink: counts-store-repartition-sink (topic: counts-store-repartition)\n"
      "      <-- counts-store-repartition-filter\n"
      "\n"
      "  Sub-topology: 1\n"
      "    Source: counts-store-repartition-source (topics: [counts-store-repartition])\n"
      "      --> KSTREAM-AGGREGATE-0000000003\n"
      "    Processor: KSTREAM-AGGREGATE-0000000003 (stores: [counts-store])\n"
      "      --> KTABLE-TOSTREAM-0000000007\n"
      "      <-- counts-store-repartition-source\n"
      "    Processor: KTABLE-TOSTREAM-0000000007 (stores: [])\n"
      "      --> KSTREAM-SINK-0000000008\n"
      "      <-- KSTREAM-AGGREGATE-0000000003\n"
      "    Sink: KSTREAM-SINK-0000000008 (topic: streams-wordcount-output)\n"
      "      <-- KTABLE-TOSTREAM-0000000007\n"
      "\n";
  EXPECT_EQ(word_count(true).describe().toString(), expected);
}

TEST(Describe, GeneratedStoreNamesTheRepartitionTopic) {
  // Kafka draws the repartition's names sink, filter, source (5, 6, 7) after the store (3) and the
  // aggregation (4), and keeps the generated ones as the store's name is generated too.
  const char* expected =
      "Topologies:\n"
      "   Sub-topology: 0\n"
      "    Source: KSTREAM-SOURCE-0000000000 (topics: [streams-plaintext-input])\n"
      "      --> KSTREAM-FLATMAPVALUES-0000000001\n"
      "    Processor: KSTREAM-FLATMAPVALUES-0000000001 (stores: [])\n"
      "      --> KSTREAM-KEY-SELECT-0000000002\n"
      "      <-- KSTREAM-SOURCE-0000000000\n"
      "    Processor: KSTREAM-KEY-SELECT-0000000002 (stores: [])\n"
      "      --> KSTREAM-FILTER-0000000006\n"
      "      <-- KSTREAM-FLATMAPVALUES-0000000001\n"
      "    Processor: KSTREAM-FILTER-0000000006 (stores: [])\n"
      "      --> KSTREAM-SINK-0000000005\n"
      "      <-- KSTREAM-KEY-SELECT-0000000002\n"
      "    Sink: KSTREAM-SINK-0000000005 (topic: KSTREAM-AGGREGATE-STATE-STORE-0000000003-"
      "repartition)\n"
      "      <-- KSTREAM-FILTER-0000000006\n"
      "\n"
      "  Sub-topology: 1\n"
      "    Source: KSTREAM-SOURCE-0000000007 (topics: [KSTREAM-AGGREGATE-STATE-STORE-0000000003-"
      "repartition])\n"
      "      --> KSTREAM-AGGREGATE-0000000004\n"
      "    Processor: KSTREAM-AGGREGATE-0000000004 (stores: "
      "[KSTREAM-AGGREGATE-STATE-STORE-0000000003])\n"
      "      --> KTABLE-TOSTREAM-0000000008\n"
      "      <-- KSTREAM-SOURCE-0000000007\n"
      "    Processor: KTABLE-TOSTREAM-0000000008 (stores: [])\n"
      "      --> KSTREAM-SINK-0000000009\n"
      "      <-- KSTREAM-AGGREGATE-0000000004\n"
      "    Sink: KSTREAM-SINK-0000000009 (topic: streams-wordcount-output)\n"
      "      <-- KTABLE-TOSTREAM-0000000008\n"
      "\n";
  EXPECT_EQ(word_count(false).describe().toString(), expected);
}

TEST(Describe, SubtopologiesNumberedInTopologyOrderNotByName) {
  // Kafka (since 2.5, KAFKA-9020) numbers node groups walking its nodes in the order they were
  // added: orders' source, then audit-source, then the repartition's source. Before 2.5 it went by
  // sorted source names, which would make agg-by-customer-repartition-source 1 and audit-source 2.
  StreamsBuilder builder;
  auto orders = builder.stream<std::string, std::string>("orders");  // KSTREAM-SOURCE-0000000000
  auto audit = builder.stream<std::string, std::string>(
      "audit", Consumed<std::string, std::string>::as("audit-source"));
  orders
      .selectKey<std::string>([](const std::string&, const std::string& v) { return v; })  // 1
      .groupByKey(Grouped<std::string, std::string>::as("agg-by-customer"))
      .count(Materialized<std::string, int64_t>::as("per-customer"))  // 2; repartition: 3, 4, 5
      .toStream()                                                     // 6
      .to("counts");                                                  // 7
  audit
      .filter([](const std::string&, const std::string& v) { return !v.empty(); })  // 8
      .to("audit-copy");                                                            // 9
  const char* expected =
      "Topologies:\n"
      "   Sub-topology: 0\n"
      "    Source: KSTREAM-SOURCE-0000000000 (topics: [orders])\n"
      "      --> KSTREAM-KEY-SELECT-0000000001\n"
      "    Processor: KSTREAM-KEY-SELECT-0000000001 (stores: [])\n"
      "      --> agg-by-customer-repartition-filter\n"
      "      <-- KSTREAM-SOURCE-0000000000\n"
      "    Processor: agg-by-customer-repartition-filter (stores: [])\n"
      "      --> agg-by-customer-repartition-sink\n"
      "      <-- KSTREAM-KEY-SELECT-0000000001\n"
      "    Sink: agg-by-customer-repartition-sink (topic: agg-by-customer-repartition)\n"
      "      <-- agg-by-customer-repartition-filter\n"
      "\n"
      "  Sub-topology: 1\n"
      "    Source: audit-source (topics: [audit])\n"
      "      --> KSTREAM-FILTER-0000000008\n"
      "    Processor: KSTREAM-FILTER-0000000008 (stores: [])\n"
      "      --> KSTREAM-SINK-0000000009\n"
      "      <-- audit-source\n"
      "    Sink: KSTREAM-SINK-0000000009 (topic: audit-copy)\n"
      "      <-- KSTREAM-FILTER-0000000008\n"
      "\n"
      "  Sub-topology: 2\n"
      "    Source: agg-by-customer-repartition-source (topics: [agg-by-customer-repartition])\n"
      "      --> KSTREAM-AGGREGATE-0000000002\n"
      "    Processor: KSTREAM-AGGREGATE-0000000002 (stores: [per-customer])\n"
      "      --> KTABLE-TOSTREAM-0000000006\n"
      "      <-- agg-by-customer-repartition-source\n"
      "    Processor: KTABLE-TOSTREAM-0000000006 (stores: [])\n"
      "      --> KSTREAM-SINK-0000000007\n"
      "      <-- KSTREAM-AGGREGATE-0000000002\n"
      "    Sink: KSTREAM-SINK-0000000007 (topic: counts)\n"
      "      <-- KTABLE-TOSTREAM-0000000006\n"
      "\n";
  auto description = builder.build().describe();
  EXPECT_EQ(description.toString(), expected);
  ASSERT_EQ(description.subtopologies().size(), 3u);
  EXPECT_EQ(description.subtopologies()[1].nodes.front().name, "audit-source");
}

TEST(Describe, SplitListsNodesByTheSizeBelowThem) {
  // Sizes (paths down from a node, itself included): the source 12, b- 11, b-0 4, then 3 each for
  // KSTREAM-MAPVALUES-0000000006, b-2 and b-neg (by name: upper case first), 2 for the filter and
  // the merge, 1 for the sinks. Each branch burns an index (1, 2, 3), as Kafka's split does.
  // A node's --> and <-- sets use the same order, but with the sizes of the moment each member
  // was added: Kafka links nodes visiting them in HashMap order (by name hash), and here it adds
  // b-neg to the merge's predecessors after the merge counted in b-neg's size (3) but b-2 while
  // its size was still 1, so "<-- b-neg, b-2" although they end up equal and b-2 sorts first.
  StreamsBuilder builder;
  auto branches =
      builder.stream<std::string, int64_t>("in")
          .split(Named::as("b-"))
          .branch([](const std::string&, int64_t v) { return v < 0; }, Branched::as("neg"))
          .branch([](const std::string&, int64_t v) { return v > 100; })
          .defaultBranch();
  branches.at("b-neg").merge(branches.at("b-2")).to("extremes");  // merge 4, sink 5
  branches.at("b-0")
      .mapValues<int64_t>([](int64_t v) { return v * 2; })          // 6
      .filter([](const std::string&, int64_t v) { return v > 0; })  // 7
      .to("middle");                                                // 8
  const char* expected =
      "Topologies:\n"
      "   Sub-topology: 0\n"
      "    Source: KSTREAM-SOURCE-0000000000 (topics: [in])\n"
      "      --> b-\n"
      "    Processor: b- (stores: [])\n"
      "      --> b-0, b-2, b-neg\n"
      "      <-- KSTREAM-SOURCE-0000000000\n"
      "    Processor: b-0 (stores: [])\n"
      "      --> KSTREAM-MAPVALUES-0000000006\n"
      "      <-- b-\n"
      "    Processor: KSTREAM-MAPVALUES-0000000006 (stores: [])\n"
      "      --> KSTREAM-FILTER-0000000007\n"
      "      <-- b-0\n"
      "    Processor: b-2 (stores: [])\n"
      "      --> KSTREAM-MERGE-0000000004\n"
      "      <-- b-\n"
      "    Processor: b-neg (stores: [])\n"
      "      --> KSTREAM-MERGE-0000000004\n"
      "      <-- b-\n"
      "    Processor: KSTREAM-FILTER-0000000007 (stores: [])\n"
      "      --> KSTREAM-SINK-0000000008\n"
      "      <-- KSTREAM-MAPVALUES-0000000006\n"
      "    Processor: KSTREAM-MERGE-0000000004 (stores: [])\n"
      "      --> KSTREAM-SINK-0000000005\n"
      "      <-- b-neg, b-2\n"
      "    Sink: KSTREAM-SINK-0000000005 (topic: extremes)\n"
      "      <-- KSTREAM-MERGE-0000000004\n"
      "    Sink: KSTREAM-SINK-0000000008 (topic: middle)\n"
      "      <-- KSTREAM-FILTER-0000000007\n"
      "\n";
  EXPECT_EQ(builder.build().describe().toString(), expected);
}

TEST(Describe, TopicSetsAndExtractorSinks) {
  // A source's topics print as Kafka's HashSet of them iterates (here not the given order). A sink
  // with a TopicNameExtractor prints the extractor's toString(), which in Java is a class name and
  // identity hash; we print the C++ type every extractor is held as instead.
  StreamsBuilder builder;
  builder.stream<std::string, std::string>({"orders-us", "orders-eu", "orders-apac"})
      .to([](const std::string& k, const std::string&, const RecordContext&) { return k; });
  EXPECT_EQ(builder.build().describe().toString(),
            "Topologies:\n"
            "   Sub-topology: 0\n"
            "    Source: KSTREAM-SOURCE-0000000000 (topics: [orders-us, orders-apac, orders-eu])\n"
            "      --> KSTREAM-SINK-0000000001\n"
            "    Sink: KSTREAM-SINK-0000000001 (extractor class: "
            "oxbow::streams::detail::TopicNameExtractor)\n"
            "      <-- KSTREAM-SOURCE-0000000000\n"
            "\n");
  EXPECT_EQ(StreamsBuilder().build().describe().toString(), "Topologies:\n ");
}

TEST(Describe, TableRegroupNamesItsRepartitionAfterTheAggregation) {
  // KGroupedTable draws the sink's and source's names (4, 5) before the aggregation's (6); the
  // topic takes the store's name, but the nodes don't (only a Named given to count would name
  // them).
  StreamsBuilder builder;
  builder
      .table<std::string, std::string>("user-regions")  // store 0, source 1, table source 2
      .groupBy<std::string, std::string>([](const std::string& user, const std::string& region) {
        return KeyValue<std::string, std::string>{region, user};
      })                                                            // 3
      .count(Materialized<std::string, int64_t>::as("per-region"))  // 4, 5, 6
      .toStream()                                                   // 7
      .to("region-counts");                                         // 8
  const char* expected =
      "Topologies:\n"
      "   Sub-topology: 0\n"
      "    Source: KSTREAM-SOURCE-0000000001 (topics: [user-regions])\n"
      "      --> KTABLE-SOURCE-0000000002\n"
      "    Processor: KTABLE-SOURCE-0000000002 (stores: [user-regions-STATE-STORE-0000000000])\n"
      "      --> KTABLE-SELECT-0000000003\n"
      "      <-- KSTREAM-SOURCE-0000000001\n"
      "    Processor: KTABLE-SELECT-0000000003 (stores: [])\n"
      "      --> KSTREAM-SINK-0000000004\n"
      "      <-- KTABLE-SOURCE-0000000002\n"
      "    Sink: KSTREAM-SINK-0000000004 (topic: per-region-repartition)\n"
      "      <-- KTABLE-SELECT-0000000003\n"
      "\n"
      "  Sub-topology: 1\n"
      "    Source: KSTREAM-SOURCE-0000000005 (topics: [per-region-repartition])\n"
      "      --> KTABLE-AGGREGATE-0000000006\n"
      "    Processor: KTABLE-AGGREGATE-0000000006 (stores: [per-region])\n"
      "      --> KTABLE-TOSTREAM-0000000007\n"
      "      <-- KSTREAM-SOURCE-0000000005\n"
      "    Processor: KTABLE-TOSTREAM-0000000007 (stores: [])\n"
      "      --> KSTREAM-SINK-0000000008\n"
      "      <-- KTABLE-AGGREGATE-0000000006\n"
      "    Sink: KSTREAM-SINK-0000000008 (topic: region-counts)\n"
      "      <-- KTABLE-TOSTREAM-0000000007\n"
      "\n";
  EXPECT_EQ(builder.build().describe().toString(), expected);
}

std::map<std::string, int64_t> reference_counts(const Strings& lines) {
  std::map<std::string, int64_t> out;
  for (const auto& l : lines)
    for (const auto& w : words_of(l)) ++out[w];
  return out;
}

TEST(WordCount, EveryCountChangeThenTheTotals) {
  for (const char* cache : {"0", "10485760"}) {
    TopologyTestDriver driver(word_count(true),
                              {{"application.id", "wc"}, {"statestore.cache.max.bytes", cache}});
    auto in = driver.createInputTopic<std::string, std::string>("streams-plaintext-input");
    auto out = driver.createOutputTopic<std::string, int64_t>("streams-wordcount-output");
    Strings lines = {"Hello Kafka Streams", "All streams lead to Kafka", "Join Kafka Summit", "",
                     "  --  hello, HELLO!  "};
    for (const auto& l : lines) in.pipeInput(l);
    std::map<std::string, int64_t> seen;
    std::map<std::string, int64_t> updates;
    for (const auto& kv : out.readKeyValuesToList()) {
      // As Kafka's driver, ours commits after every record it processes (each line and each
      // word read back from the repartition topic), so even with a cache every update shows.
      EXPECT_EQ(kv.value, seen[kv.key] + 1) << kv.key << " jumped";
      seen[kv.key] = kv.value;
      ++updates[kv.key];
    }
    EXPECT_EQ(seen, reference_counts(lines));
    EXPECT_EQ(updates["kafka"], 3);
    EXPECT_EQ(updates["hello"], 3);
    auto store = driver.getKeyValueStore<std::string, int64_t>("counts-store");
    EXPECT_EQ(store.get("hello"), 3);
    EXPECT_EQ(store.get("absent"), std::nullopt);
    auto produced = driver.producedTopicNames();
    EXPECT_NE(std::find(produced.begin(), produced.end(), "wc-counts-store-repartition"),
              produced.end());
    EXPECT_NE(std::find(produced.begin(), produced.end(), "wc-counts-store-changelog"),
              produced.end());
  }
}

TEST(Stateless, FilterMapBranchMergePeek) {
  StreamsBuilder builder;
  auto s = builder.stream<std::string, int64_t>("in");
  int64_t peeked = 0;
  auto kept = s.filter([](const std::string&, int64_t v) {
                 return v % 2 == 0;
               }).peek([&](const std::string&, int64_t) { ++peeked; });
  kept.mapValues<std::string>([](int64_t v) { return std::to_string(v * 10); })
      .to("even-x10", Produced<std::string, std::string>::with(serdes::String(), serdes::String()));
  s.filterNot([](const std::string&, int64_t v) { return v % 2 == 0; })
      .map<int64_t, std::string>([](const std::string& k, int64_t v) {
        return KeyValue<int64_t, std::string>{v, k};
      })
      .to("odd-swapped");
  auto branches =
      s.split(Named::as("b-"))
          .branch([](const std::string&, int64_t v) { return v < 0; }, Branched::as("neg"))
          .branch([](const std::string&, int64_t v) { return v > 100; })
          .defaultBranch();
  ASSERT_EQ(branches.size(), 3u);
  branches.at("b-neg").merge(branches.at("b-2")).to("extremes");
  branches.at("b-0")
      .flatMap<std::string, int64_t>([](const std::string& k, int64_t v) {
        return std::vector<KeyValue<std::string, int64_t>>{{k + "a", v}, {k + "b", v + 1}};
      })
      .to("middle");
  TopologyTestDriver driver(builder.build());
  auto in = driver.createInputTopic<std::string, int64_t>("in");
  for (int64_t v : {4, 7, -2, 150, 50}) in.pipeInput("k" + std::to_string(v), v, 1000 + v);
  auto even = driver.createOutputTopic<std::string, std::string>("even-x10");
  auto r = even.readRecord();
  EXPECT_EQ(*r.key, "k4");
  EXPECT_EQ(*r.value, "40");
  EXPECT_EQ(r.timestamp, 1004);
  EXPECT_EQ(even.readValuesToList(), (Strings{"-20", "1500", "500"}));
  EXPECT_EQ(peeked, 4);
  auto odd = driver.createOutputTopic<int64_t, std::string>("odd-swapped").readKeyValuesToList();
  ASSERT_EQ(odd.size(), 1u);
  EXPECT_EQ(odd[0].key, 7);
  EXPECT_EQ(odd[0].value, "k7");
  auto extremes = driver.createOutputTopic<std::string, int64_t>("extremes").readValuesToList();
  EXPECT_EQ(extremes, (std::vector<int64_t>{-2, 150}));
  auto middle = driver.createOutputTopic<std::string, int64_t>("middle").readKeyValuesToMap();
  EXPECT_EQ(middle,
            (std::map<std::string, int64_t>{
                {"k4a", 4}, {"k4b", 5}, {"k7a", 7}, {"k7b", 8}, {"k50a", 50}, {"k50b", 51}}));
}

TEST(Stateless, TopicChosenPerRecord) {
  StreamsBuilder builder;
  builder.stream<std::string, std::string>("in").to(
      [](const std::string& k, const std::string&, const RecordContext&) { return "out-" + k; });
  TopologyTestDriver driver(builder.build());
  auto in = driver.createInputTopic<std::string, std::string>("in");
  in.pipeInput("a", std::string("1"));
  in.pipeInput("b", std::string("2"));
  in.pipeInput("a", std::string("3"));
  EXPECT_EQ((driver.createOutputTopic<std::string, std::string>("out-a").readValuesToList()),
            (Strings{"1", "3"}));
  EXPECT_EQ((driver.createOutputTopic<std::string, std::string>("out-b").readValuesToList()),
            (Strings{"2"}));
}

TEST(Stateful, ReduceAndAggregateSkipNulls) {
  StreamsBuilder builder;
  auto s = builder.stream<std::string, int64_t>("in");
  s.groupByKey()
      .reduce([](int64_t a, int64_t b) { return std::max(a, b); },
              Materialized<std::string, int64_t>::as("max").withCachingDisabled())
      .toStream()
      .to("max-out");
  s.groupByKey()
      .aggregate<std::string>([] { return std::string("^"); },
                              [](const std::string&, int64_t v, const std::string& agg) {
                                return agg + std::to_string(v);
                              },
                              Materialized<std::string, std::string>::as("concat"))
      .toStream()
      .to("concat-out");
  TopologyTestDriver driver(builder.build(), {{"statestore.cache.max.bytes", "0"}});
  auto in = driver.createInputTopic<std::string, int64_t>("in");
  in.pipeInput("a", 3);
  in.pipeInput("a", 1);
  in.pipeInput("b", 2);
  in.pipeInput("a", std::nullopt);  // dropped by both aggregations
  in.pipeInput("a", 5);
  EXPECT_EQ((driver.createOutputTopic<std::string, int64_t>("max-out").readValuesToList()),
            (std::vector<int64_t>{3, 3, 2, 5}));
  EXPECT_EQ((driver.createOutputTopic<std::string, std::string>("concat-out").readKeyValuesToMap()),
            (std::map<std::string, std::string>{{"a", "^315"}, {"b", "^2"}}));
  EXPECT_EQ(driver.droppedRecords(), 2);
}

TEST(Tables, RegroupingMovesCountsWithTheKey) {
  // user -> region; count users per region. A user moving region leaves the old count.
  StreamsBuilder builder;
  builder.table<std::string, std::string>("user-regions")
      .groupBy<std::string, std::string>([](const std::string& user, const std::string& region) {
        return KeyValue<std::string, std::string>{region, user};
      })
      .count(Materialized<std::string, int64_t>::as("per-region"))
      .toStream()
      .to("region-counts");
  TopologyTestDriver driver(builder.build(), {{"statestore.cache.max.bytes", "0"}});
  auto in = driver.createInputTopic<std::string, std::string>("user-regions");
  in.pipeInput("alice", std::string("eu"));
  in.pipeInput("bob", std::string("eu"));
  in.pipeInput("alice", std::string("us"));  // moves: eu 2 -> 1, us 0 -> 1
  in.pipeInput("bob", std::nullopt);         // deleted: eu 1 -> 0
  auto out = driver.createOutputTopic<std::string, int64_t>("region-counts");
  std::vector<std::pair<std::string, int64_t>> got;
  for (auto& kv : out.readKeyValuesToList()) got.emplace_back(kv.key, kv.value);
  EXPECT_EQ(got, (std::vector<std::pair<std::string, int64_t>>{
                     {"eu", 1}, {"eu", 2}, {"eu", 1}, {"us", 1}, {"eu", 0}}));
  auto store = driver.getKeyValueStore<std::string, int64_t>("per-region");
  EXPECT_EQ(store.get("eu"), 0);
  EXPECT_EQ(store.get("us"), 1);
}

TEST(Tables, FilterMapValuesAndTombstones) {
  StreamsBuilder builder;
  builder.table<std::string, int64_t>("prices")
      .filter([](const std::string&, int64_t p) { return p >= 10; })
      .mapValues<std::string>([](int64_t p) { return "$" + std::to_string(p); })
      .toStream()
      .to("expensive",
          Produced<std::string, std::string>::with(serdes::String(), serdes::String()));
  TopologyTestDriver driver(builder.build(), {{"statestore.cache.max.bytes", "0"}});
  auto in = driver.createInputTopic<std::string, int64_t>("prices");
  // The filter's table is not materialized, so (as in Kafka) it has no old values to consult and
  // forwards a tombstone for every record it rejects, also for a key that never passed.
  in.pipeInput("a", 5);             // filtered out: tombstone
  in.pipeInput("b", 20);            // $20
  in.pipeInput("b", 3);             // leaves the filter: tombstone
  in.pipeInput("c", 12);            // $12
  in.pipeInput("c", std::nullopt);  // deleted: tombstone
  auto out = driver.createOutputTopic<std::string, std::string>("expensive").readRecordsToList();
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[0].key, "a");
  EXPECT_FALSE(out[0].value.has_value());
  EXPECT_EQ(out[1].value, "$20");
  EXPECT_EQ(out[2].key, "b");
  EXPECT_FALSE(out[2].value.has_value());
  EXPECT_EQ(out[3].value, "$12");
  EXPECT_FALSE(out[4].value.has_value());
}

TEST(Errors, DeserializationHandlers) {
  auto build = [] {
    StreamsBuilder builder;
    builder.stream<std::string, int64_t>("in").to("out");
    return builder.build();
  };
  {
    TopologyTestDriver driver(build(),
                              {{"default.deserialization.exception.handler",
                                "org.apache.kafka.streams.errors.LogAndContinueExceptionHandler"}});
    driver.pipe("in", std::string("k"), std::string("abc"), 1);  // not 8 bytes: poison
    driver.createInputTopic<std::string, int64_t>("in").pipeInput("k", 7);
    EXPECT_EQ((driver.createOutputTopic<std::string, int64_t>("out").readValuesToList()),
              (std::vector<int64_t>{7}));
    EXPECT_EQ(driver.skippedRecords(), 1);
  }
  {
    TopologyTestDriver driver(build());  // LogAndFail by default, as Kafka
    EXPECT_THROW(driver.pipe("in", std::string("k"), std::string("abc"), 1), StreamsException);
  }
}

TEST(Errors, TimestampExtractorAndInvalidTimestamps) {
  StreamsBuilder builder;
  builder
      .stream<std::string, int64_t>(
          "in", Consumed<std::string, int64_t>::with(serdes::String(), serdes::Int64())
                    .withTimestampExtractor([](const Record& r, const RecordContext&, int64_t) {
                      return datum_cast<int64_t>(r.value);  // the value is the event time
                    }))
      .to("out");
  TopologyTestDriver driver(builder.build());
  auto in = driver.createInputTopic<std::string, int64_t>("in");
  in.pipeInput("a", 500, 1);
  in.pipeInput("b", -3, 2);  // invalid: skipped
  auto out = driver.createOutputTopic<std::string, int64_t>("out").readRecordsToList();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].timestamp, 500);
  EXPECT_EQ(driver.skippedRecords(), 1);
}

TEST(Errors, MissingSerdeNamesTheOperation) {
  struct Point {
    int x, y;
  };
  StreamsBuilder builder;
  auto s = builder.stream<std::string, std::string>("in").mapValues<Point>([](const std::string&) {
    return Point{1, 2};
  });
  try {
    s.to("out");
    FAIL() << "to() without a serde for Point";
  } catch (const TopologyException& e) {
    EXPECT_NE(std::string(e.what()).find("to(out) needs a serde for the value"), std::string::npos)
        << e.what();
  }
}

TEST(Serdes, KafkaByteLayouts) {
  EXPECT_EQ(serdes::Int32().serialize("t", 0x01020304), std::string("\x01\x02\x03\x04", 4));
  EXPECT_EQ(serdes::Int64().serialize("t", -2), std::string("\xff\xff\xff\xff\xff\xff\xff\xfe", 8));
  EXPECT_EQ(serdes::Double().serialize("t", 1.0), std::string("\x3f\xf0\0\0\0\0\0\0", 8));
  EXPECT_EQ(serdes::Int64().deserialize("t", std::string("\0\0\0\0\0\0\x01\x00", 8)), 256);
  EXPECT_THROW(serdes::Int32().deserialize("t", "abc"), SerializationException);
  EXPECT_DOUBLE_EQ(serdes::Double().deserialize("t", serdes::Double().serialize("t", -2.5)), -2.5);
}

TEST(Serdes, JsonValuesThroughATopologyAndPoisonTextSkipped) {
  using nlohmann::json;
  StreamsBuilder builder;
  builder.stream<std::string, json>("in")
      .mapValues<json>([](const json& v) {
        return json{{"user", v["name"]}, {"n", v["n"].get<int>() * 2}};
      })
      .to("out");
  TopologyTestDriver driver(builder.build(), {{"default.deserialization.exception.handler",
                                               "LogAndContinueExceptionHandler"}});
  driver.pipe("in", std::string("k"), std::string(R"({"name":"ada","n":21})"), 1);
  driver.pipe("in", std::string("k"), std::string("{not json"), 2);
  auto out = driver.createOutputTopic<std::string, std::string>("out").readValuesToList();
  EXPECT_EQ(out, (std::vector<std::string>{R"({"n":42,"user":"ada"})"}));
  EXPECT_EQ(driver.skippedRecords(), 1);
}

}  // namespace
}  // namespace oxbow::streams
