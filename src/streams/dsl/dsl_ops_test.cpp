// DSL operations through the test driver, each expected to give what Kafka Streams 3.x gives for
// the same input through its TopologyTestDriver: re-keying and repartitioning, names (Named,
// Grouped, Consumed, Materialized), invalid timestamps and the built-in serdes. Tables and store
// options: dsl_tables_test.cpp.
#include <gtest/gtest.h>

#include <sstream>

#include "dsl_test_util.h"
#include "oxbow/streams/streams_builder.h"
#include "oxbow/streams/test_driver.h"
#include "streams/topology/graph_builder.h"

namespace oxbow::streams {
namespace {

using namespace dsl_testing;

// ---------------------------------------------------------------------------------------------
// KStream: selectKey, foreach, flatMap, repartition

TEST(OpsStateless, SelectKeyRekeysAndAFollowingGroupByKeyRepartitions) {
  StreamsBuilder builder;
  // order id -> user
  auto by_user = builder.stream<std::string, std::string>("orders").selectKey<std::string>(
      [](const std::string&, const std::string& user) { return user; });
  by_user.to("orders-by-user");
  by_user.groupByKey()
      .count(Materialized<std::string, int64_t>::as("orders-per-user"))
      .toStream()
      .to("order-counts");
  auto topology = builder.build();
  EXPECT_EQ(subtopology_count(topology), 2u);
  EXPECT_EQ(shape(topology, "KSTREAM-KEY-SELECT-0000000001"),
            "Processor KSTREAM-KEY-SELECT-0000000001 -> KSTREAM-SINK-0000000002"
            " -> orders-per-user-repartition-filter");
  EXPECT_EQ(shape(topology, "orders-per-user-repartition-source"),
            "Source orders-per-user-repartition-source [orders-per-user-repartition]"
            " -> KSTREAM-AGGREGATE-0000000003");

  TopologyTestDriver driver(topology, kNoCache);
  auto in = driver.createInputTopic<std::string, std::string>("orders");
  in.pipeInput("o1", std::string("alice"), 10);
  in.pipeInput("o2", std::string("bob"), 20);
  in.pipeInput("o3", std::string("alice"), 30);
  auto rekeyed =
      driver.createOutputTopic<std::string, std::string>("orders-by-user").readRecordsToList();
  ASSERT_EQ(rekeyed.size(), 3u);
  EXPECT_EQ(rekeyed[0].key, "alice");
  EXPECT_EQ(rekeyed[0].value, "alice");
  EXPECT_EQ(rekeyed[1].key, "bob");
  EXPECT_EQ(rekeyed[2].timestamp, 30);
  // The count reads the records back from the repartition topic, keyed by user.
  EXPECT_EQ(
      (changes(
          driver.createOutputTopic<std::string, std::string>("app-orders-per-user-repartition"))),
      (Changes<std::string, std::string>{{"alice", "alice"}, {"bob", "bob"}, {"alice", "alice"}}));
  EXPECT_EQ((changes(driver.createOutputTopic<std::string, int64_t>("order-counts"))),
            (Changes<std::string, int64_t>{{"alice", 1}, {"bob", 1}, {"alice", 2}}));
}

TEST(OpsStateless, GroupByKeyWithoutAKeyChangeDoesNotRepartition) {
  StreamsBuilder builder;
  builder.stream<std::string, std::string>("orders")
      .mapValues<std::string>([](const std::string& v) { return v + "!"; })
      .groupByKey()
      .count(Materialized<std::string, int64_t>::as("n"));
  auto topology = builder.build();
  EXPECT_EQ(subtopology_count(topology), 1u);
  EXPECT_TRUE(detail::graph_of(topology)->internal_topics().empty());
}

TEST(OpsStateless, ForeachSeesEveryRecordAndEndsTheBranch) {
  StreamsBuilder builder;
  std::vector<std::pair<std::string, int64_t>> seen;
  auto s = builder.stream<std::string, int64_t>("in");
  s.foreach([&](const std::string& k, int64_t v) { seen.emplace_back(k, v); });
  s.filter([](const std::string&, int64_t v) { return v > 0; })
      .foreach([&](const std::string& k, int64_t v) { seen.emplace_back("+" + k, v); },
               Named::as("positives"));
  auto topology = builder.build();
  EXPECT_EQ(shape(topology, "KSTREAM-FOREACH-0000000001"), "Processor KSTREAM-FOREACH-0000000001");
  EXPECT_EQ(shape(topology, "KSTREAM-FILTER-0000000002"),
            "Processor KSTREAM-FILTER-0000000002 -> positives");
  EXPECT_EQ(shape(topology, "positives"), "Processor positives");

  TopologyTestDriver driver(topology);
  auto in = driver.createInputTopic<std::string, int64_t>("in");
  in.pipeInput("a", 1);
  in.pipeInput("b", -1);
  in.pipeInput("a", 3);
  in.pipeInput("c", std::nullopt);  // a null value reaches a typed action as T{}
  EXPECT_EQ(seen, (std::vector<std::pair<std::string, int64_t>>{
                      {"a", 1}, {"+a", 1}, {"b", -1}, {"a", 3}, {"+a", 3}, {"c", 0}}));
  EXPECT_TRUE(driver.producedTopicNames().empty());
}

// flatMap and flatMapValues move the elements of a range the mapper returns by value, and copy
// those of a range it returns by reference (its own, which it may return again).
TEST(OpsStateless, FlatMapsCopyRangesTheMapperKeeps) {
  const std::vector<std::string> kept = {std::string(40, 'x'), std::string(40, 'y')};
  const std::vector<KeyValue<std::string, std::string>> kept_pairs = {
      {std::string(30, 'k'), std::string(40, 'v')}};
  StreamsBuilder builder;
  auto in = builder.stream<std::string, std::string>("in");
  in.flatMapValues([&](const std::string&) -> const std::vector<std::string>& {
      return kept;
    }).to("values");
  in.flatMap([&](const std::string&,
                 const std::string&) -> const std::vector<KeyValue<std::string, std::string>>& {
      return kept_pairs;
    }).to("pairs");
  TopologyTestDriver driver(builder.build());
  auto input = driver.createInputTopic<std::string, std::string>("in");
  input.pipeInput("a", std::string("1"));
  input.pipeInput("b", std::string("2"));
  std::vector<std::string> values;
  for (auto& r : driver.createOutputTopic<std::string, std::string>("values").readRecordsToList())
    values.push_back(*r.value);
  EXPECT_EQ(values, (std::vector<std::string>{kept[0], kept[1], kept[0], kept[1]}));
  auto pairs = driver.createOutputTopic<std::string, std::string>("pairs").readRecordsToList();
  ASSERT_EQ(pairs.size(), 2u);
  for (const auto& r : pairs) {
    EXPECT_EQ(*r.key, kept_pairs[0].key);
    EXPECT_EQ(*r.value, kept_pairs[0].value);
  }
}

TEST(OpsStateless, TypeArgumentsComeFromTheCallablesWhenLeftOut) {
  StreamsBuilder builder;
  auto lines = builder.stream<std::string, std::string>("lines");
  auto words = lines.flatMapValues([](const std::string& line) {
    std::vector<std::string> out;
    std::istringstream in(line);
    for (std::string w; in >> w;) out.push_back(w);
    return out;
  });
  static_assert(std::is_same_v<decltype(words), KStream<std::string, std::string>>);
  auto lengths = words.mapValues([](const std::string& w) { return int64_t(w.size()); });
  static_assert(std::is_same_v<decltype(lengths), KStream<std::string, int64_t>>);
  auto by_word =
      lengths.selectKey([](const std::string&, int64_t n) { return static_cast<int32_t>(n); });
  static_assert(std::is_same_v<decltype(by_word), KStream<int32_t, int64_t>>);
  auto swapped = lengths.map([](const std::string& k, int64_t n) {
    return KeyValue<int64_t, std::string>{n, k};
  });
  static_assert(std::is_same_v<decltype(swapped), KStream<int64_t, std::string>>);
  auto counts = words.groupBy([](const std::string&, const std::string& w) { return w; }).count();
  static_assert(std::is_same_v<decltype(counts), KTable<std::string, int64_t>>);
  auto doubled = counts.mapValues([](int64_t c) { return 2.0 * static_cast<double>(c); });
  static_assert(std::is_same_v<decltype(doubled), KTable<std::string, double>>);
  // Given, the type converts what the callable returns, as before.
  auto widened = words.mapValues<int64_t>([](const std::string& w) { return int32_t(w.size()); });
  static_assert(std::is_same_v<decltype(widened), KStream<std::string, int64_t>>);
  swapped.to("swapped");
  doubled.toStream().to("doubled");

  TopologyTestDriver driver(builder.build());
  driver.createInputTopic<std::string, std::string>("lines").pipeInput("k", "to be or");
  auto out = driver.createOutputTopic<int64_t, std::string>("swapped").readKeyValuesToList();
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].key, 2);
  EXPECT_EQ(out[0].value, "k");
  auto d = driver.createOutputTopic<std::string, double>("doubled").readKeyValuesToList();
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[2].key, "or");
  EXPECT_EQ(d[2].value, 2.0);
}

TEST(OpsStateless, FlatMapEmitsEachPairWithTheInputsTimeAndHeaders) {
  StreamsBuilder builder;
  // "user" -> "tag,tag": one record per tag, keyed by tag, valued by user.
  auto tagged = builder.stream<std::string, std::string>("posts").flatMap<std::string, std::string>(
      [](const std::string& user, const std::string& tags) {
        std::vector<KeyValue<std::string, std::string>> out;
        std::stringstream in(tags);
        for (std::string tag; std::getline(in, tag, ',');) out.push_back({tag, user});
        return out;
      });
  tagged.to("by-tag");
  tagged.groupByKey().count(Materialized<std::string, int64_t>::as("per-tag"));
  auto topology = builder.build();
  // flatMap may change keys: the count needs the records repartitioned by tag.
  EXPECT_EQ(subtopology_count(topology), 2u);

  TopologyTestDriver driver(topology, kNoCache);
  Headers headers{{"trace", std::string("t1")}};
  driver.pipe("posts", std::string("ann"), std::string("c++,kafka"), 100, headers);
  driver.pipe("posts", std::string("bob"), std::string(""), 200);  // no tags: nothing
  driver.pipe("posts", std::string("bob"), std::string("kafka"), 300);
  auto out = driver.createOutputTopic<std::string, std::string>("by-tag").readRecordsToList();
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].key, "c++");
  EXPECT_EQ(out[0].value, "ann");
  EXPECT_EQ(out[0].timestamp, 100);
  EXPECT_EQ(out[0].headers, headers);
  EXPECT_EQ(out[1].key, "kafka");
  EXPECT_EQ(out[1].timestamp, 100);
  EXPECT_EQ(out[2].key, "kafka");
  EXPECT_EQ(out[2].value, "bob");
  EXPECT_EQ(out[2].timestamp, 300);
  auto store = driver.getKeyValueStore<std::string, int64_t>("per-tag");
  EXPECT_EQ(store.get("kafka"), 2);
  EXPECT_EQ(store.get("c++"), 1);
}

TEST(OpsStateless, RepartitionWithoutOptionsGoesThroughAGeneratedTopic) {
  StreamsBuilder builder;
  builder.stream<std::string, std::string>("in").repartition().to("out");
  auto topology = builder.build();
  // Kafka draws the sink's name, then the null-key filter's, then the source's.
  EXPECT_EQ(shape(topology, "KSTREAM-SOURCE-0000000000"),
            "Source KSTREAM-SOURCE-0000000000 [in] -> KSTREAM-FILTER-0000000003");
  EXPECT_EQ(shape(topology, "KSTREAM-FILTER-0000000003"),
            "Processor KSTREAM-FILTER-0000000003 -> KSTREAM-SINK-0000000002");
  EXPECT_EQ(shape(topology, "KSTREAM-SINK-0000000002"),
            "Sink KSTREAM-SINK-0000000002 [KSTREAM-REPARTITION-0000000001-repartition]");
  EXPECT_EQ(shape(topology, "KSTREAM-SOURCE-0000000004"),
            "Source KSTREAM-SOURCE-0000000004 [KSTREAM-REPARTITION-0000000001-repartition]"
            " -> KSTREAM-SINK-0000000005");
  EXPECT_EQ(find_node(topology, "KSTREAM-SOURCE-0000000004").subtopology, 1);
  const auto& topics = detail::graph_of(topology)->internal_topics();
  ASSERT_EQ(topics.size(), 1u);
  EXPECT_EQ(topics[0].partitions, 0);  // as many as the input topic has

  TopologyTestDriver driver(topology, kNoCache);
  driver.pipe("in", std::string("a"), std::string("1"), 5);
  driver.pipe("in", std::nullopt, std::string("2"), 6);  // a null key has no partition: dropped
  driver.pipe("in", std::string("b"), std::nullopt, 7);
  EXPECT_TRUE(produced(driver, "app-KSTREAM-REPARTITION-0000000001-repartition"));
  auto out = driver.createOutputTopic<std::string, std::string>("out").readRecordsToList();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].key, "a");
  EXPECT_EQ(out[0].value, "1");
  EXPECT_EQ(out[0].timestamp, 5);
  EXPECT_EQ(out[1].key, "b");
  EXPECT_FALSE(out[1].value.has_value());
}

Serde<std::string> bracketed() {
  Serde<std::string> s;
  s.name = "Bracketed";
  s.serialize = [](std::string_view, const std::string& v) { return "<" + v + ">"; };
  s.deserialize = [](std::string_view, std::string_view b) {
    if (b.size() < 2 || b.front() != '<' || b.back() != '>')
      throw SerializationException("not bracketed");
    return std::string(b.substr(1, b.size() - 2));
  };
  return s;
}

TEST(OpsStateless, RepartitionedNamesTheTopicAndCarriesItsPartitionsAndSerdes) {
  StreamsBuilder builder;
  builder.stream<std::string, std::string>("in")
      .selectKey<std::string>([](const std::string&, const std::string& v) { return v; })
      .repartition(Repartitioned<std::string, std::string>::with(serdes::String(), bracketed())
                       .withName("by-value")
                       .withNumberOfPartitions(4))
      .groupByKey()  // already partitioned by this key: no second topic
      .count(Materialized<std::string, int64_t>::as("per-value"))
      .toStream()
      .to("counts");
  auto topology = builder.build();
  EXPECT_EQ(subtopology_count(topology), 2u);
  EXPECT_EQ(shape(topology, "by-value-repartition-filter"),
            "Processor by-value-repartition-filter -> by-value-repartition-sink");
  EXPECT_EQ(shape(topology, "by-value-repartition-sink"),
            "Sink by-value-repartition-sink [by-value-repartition]");
  EXPECT_EQ(shape(topology, "by-value-repartition-source"),
            "Source by-value-repartition-source [by-value-repartition]"
            " -> KSTREAM-AGGREGATE-0000000005");
  const auto& topics = detail::graph_of(topology)->internal_topics();
  ASSERT_EQ(topics.size(), 1u);
  EXPECT_EQ(topics[0].name, "by-value-repartition");
  EXPECT_EQ(topics[0].partitions, 4);

  TopologyTestDriver driver(topology, kNoCache);
  auto in = driver.createInputTopic<std::string, std::string>("in");
  in.pipeInput("1", std::string("x"));
  in.pipeInput("2", std::string("y"));
  in.pipeInput("3", std::string("x"));
  // Written with Repartitioned's value serde, read back with it.
  EXPECT_EQ((driver.createOutputTopic<std::string, std::string>("app-by-value-repartition")
                 .readValuesToList()),
            (Strings{"<x>", "<y>", "<x>"}));
  EXPECT_EQ((changes(driver.createOutputTopic<std::string, int64_t>("counts"))),
            (Changes<std::string, int64_t>{{"x", 1}, {"y", 1}, {"x", 2}}));
}

// ---------------------------------------------------------------------------------------------
// Names

TEST(OpsNaming, NamedOperationsNameTheirNodesAndDrawNoNumber) {
  StreamsBuilder builder;
  auto s = builder.stream<std::string, std::string>(
      "in", Consumed<std::string, std::string>::as("read-in"));
  s.filter([](const std::string&, const std::string& v) { return !v.empty(); },
           Named::as("non-empty"))
      .mapValues<std::string>([](const std::string& v) { return v + v; }, Named::as("twice"))
      .selectKey<std::string>([](const std::string&, const std::string& v) { return v; },
                              Named::as("by-value"))
      .flatMapValues<std::string>(
          [](const std::string& v) {
            return Strings{v, v};
          },
          Named::as("both"))
      .peek([](const std::string&, const std::string&) {}, Named::as("look"))
      .to("out", Produced<std::string, std::string>::as("write-out"));
  s.foreach([](const std::string&, const std::string&) {}, Named::as("each"));
  // Named nodes take no number: the first generated name is still 0.
  s.filterNot([](const std::string&, const std::string&) { return false; }).to("copy");
  auto topology = builder.build();
  EXPECT_EQ(shape(topology, "read-in"),
            "Source read-in [in] -> KSTREAM-FILTER-0000000000 -> each -> non-empty");
  EXPECT_EQ(shape(topology, "non-empty"), "Processor non-empty -> twice");
  EXPECT_EQ(shape(topology, "twice"), "Processor twice -> by-value");
  EXPECT_EQ(shape(topology, "by-value"), "Processor by-value -> both");
  EXPECT_EQ(shape(topology, "both"), "Processor both -> look");
  EXPECT_EQ(shape(topology, "look"), "Processor look -> write-out");
  EXPECT_EQ(shape(topology, "write-out"), "Sink write-out [out]");
  EXPECT_EQ(shape(topology, "KSTREAM-FILTER-0000000000"),
            "Processor KSTREAM-FILTER-0000000000 -> KSTREAM-SINK-0000000001");

  TopologyTestDriver driver(topology);
  driver.createInputTopic<std::string, std::string>("in").pipeInput("k", std::string("ab"));
  EXPECT_EQ((changes(driver.createOutputTopic<std::string, std::string>("out"))),
            (Changes<std::string, std::string>{{"abab", "abab"}, {"abab", "abab"}}));
}

TEST(OpsNaming, ANameUsedTwiceIsRefused) {
  StreamsBuilder builder;
  auto s = builder.stream<std::string, std::string>("in");
  s.peek([](const std::string&, const std::string&) {}, Named::as("same"));
  EXPECT_THROW(s.peek([](const std::string&, const std::string&) {}, Named::as("same")),
               TopologyException);
}

TEST(OpsNaming, GroupedAsNamesTheRepartitionTopicOfAStreamGrouping) {
  StreamsBuilder builder;
  auto s = builder.stream<std::string, std::string>("in");
  s.selectKey<std::string>([](const std::string&, const std::string& v) { return v; })
      .groupByKey(Grouped<std::string, std::string>::as("by-value"))
      .count()
      .toStream()
      .to("value-counts");
  // groupBy: the Grouped name also names the key selector.
  s.groupBy<int64_t>(
       [](const std::string&, const std::string& v) { return static_cast<int64_t>(v.size()); },
       Grouped<int64_t, std::string>::as("by-length"))
      .count()
      .toStream()
      .to("length-counts");
  auto topology = builder.build();
  EXPECT_EQ(shape(topology, "by-value-repartition-sink"),
            "Sink by-value-repartition-sink [by-value-repartition]");
  EXPECT_EQ(shape(topology, "by-value-repartition-source"),
            "Source by-value-repartition-source [by-value-repartition]"
            " -> KSTREAM-AGGREGATE-0000000003");
  EXPECT_EQ(shape(topology, "KSTREAM-AGGREGATE-0000000003"),
            "Processor KSTREAM-AGGREGATE-0000000003 {KSTREAM-AGGREGATE-STATE-STORE-0000000002}"
            " -> KTABLE-TOSTREAM-0000000007");
  EXPECT_EQ(shape(topology, "by-length"), "Processor by-length -> by-length-repartition-filter");
  EXPECT_EQ(shape(topology, "by-length-repartition-sink"),
            "Sink by-length-repartition-sink [by-length-repartition]");

  TopologyTestDriver driver(topology, kNoCache);
  auto in = driver.createInputTopic<std::string, std::string>("in");
  in.pipeInput("1", std::string("ab"));
  in.pipeInput("2", std::string("ab"));
  in.pipeInput("3", std::string("xyz"));
  EXPECT_TRUE(produced(driver, "app-by-value-repartition"));
  EXPECT_TRUE(produced(driver, "app-by-length-repartition"));
  EXPECT_TRUE(produced(driver, "app-KSTREAM-AGGREGATE-STATE-STORE-0000000002-changelog"));
  EXPECT_EQ((changes(driver.createOutputTopic<std::string, int64_t>("value-counts"))),
            (Changes<std::string, int64_t>{{"ab", 1}, {"ab", 2}, {"xyz", 1}}));
  EXPECT_EQ((changes(driver.createOutputTopic<int64_t, int64_t>("length-counts"))),
            (Changes<int64_t, int64_t>{{2, 1}, {2, 2}, {3, 1}}));
}

TEST(OpsNaming, GroupedAndNamedOnATableGrouping) {
  StreamsBuilder builder;
  builder.table<std::string, std::string>("accounts")
      .groupBy<std::string, int64_t>(region_amount, Grouped<std::string, int64_t>::as("by-region"))
      .reduce([](int64_t a, int64_t b) { return a + b; },
              [](int64_t a, int64_t b) { return a - b; },
              Materialized<std::string, int64_t>::as("totals-store"), Named::as("sum"))
      .toStream()
      .to("totals");
  auto topology = builder.build();
  // Kafka: the Grouped name names the selector and the topic; the aggregation's Named its sink,
  // source and processor.
  EXPECT_EQ(shape(topology, "KTABLE-SOURCE-0000000002"),
            "Processor KTABLE-SOURCE-0000000002 {accounts-STATE-STORE-0000000000} -> by-region");
  EXPECT_EQ(shape(topology, "by-region"), "Processor by-region -> sum-sink");
  EXPECT_EQ(shape(topology, "sum-sink"), "Sink sum-sink [by-region-repartition]");
  EXPECT_EQ(shape(topology, "sum-source"), "Source sum-source [by-region-repartition] -> sum");
  EXPECT_EQ(shape(topology, "sum"), "Processor sum {totals-store} -> KTABLE-TOSTREAM-0000000003");

  TopologyTestDriver driver(topology, kNoCache);
  pipe_accounts(driver);
  EXPECT_TRUE(produced(driver, "app-by-region-repartition"));
  EXPECT_EQ((driver.getKeyValueStore<std::string, int64_t>("totals-store").get("eu")), 0);
}

TEST(OpsNaming, GeneratedNamesOfATableGrouping) {
  StreamsBuilder builder;
  builder.table<std::string, std::string>("accounts")
      .groupBy<std::string, int64_t>(region_amount)
      .reduce([](int64_t a, int64_t b) { return a + b; },
              [](int64_t a, int64_t b) { return a - b; })
      .toStream()
      .to("totals");
  auto topology = builder.build();
  // Store, then sink, source and the reduce: KTABLE-REDUCE, though its store is an AGGREGATE's.
  EXPECT_EQ(shape(topology, "KTABLE-SELECT-0000000003"),
            "Processor KTABLE-SELECT-0000000003 -> KSTREAM-SINK-0000000005");
  EXPECT_EQ(shape(topology, "KSTREAM-SINK-0000000005"),
            "Sink KSTREAM-SINK-0000000005 [KTABLE-AGGREGATE-STATE-STORE-0000000004-repartition]");
  EXPECT_EQ(shape(topology, "KSTREAM-SOURCE-0000000006"),
            "Source KSTREAM-SOURCE-0000000006 [KTABLE-AGGREGATE-STATE-STORE-0000000004-repartition]"
            " -> KTABLE-REDUCE-0000000007");
  EXPECT_EQ(shape(topology, "KTABLE-REDUCE-0000000007"),
            "Processor KTABLE-REDUCE-0000000007 {KTABLE-AGGREGATE-STATE-STORE-0000000004}"
            " -> KTABLE-TOSTREAM-0000000008");
}

TEST(OpsNaming, ConsumedAsNamesTheSourceOfAStreamAndOfATable) {
  StreamsBuilder builder;
  builder
      .stream<std::string, std::string>("clicks",
                                        Consumed<std::string, std::string>::as("clicks-in"))
      .to("clicks-out");
  // Named, so that Kafka materializes it too and describes its store.
  builder
      .table<std::string, std::string>("users", Consumed<std::string, std::string>::as("users-in"),
                                       Materialized<std::string, std::string>::as("users-store"))
      .toStream()
      .to("users-out");
  auto topology = builder.build();
  EXPECT_EQ(shape(topology, "clicks-in"), "Source clicks-in [clicks] -> KSTREAM-SINK-0000000000");
  // A table: the Consumed name names the table source, and with "-source" the topic's source.
  EXPECT_EQ(shape(topology, "users-in-source"), "Source users-in-source [users] -> users-in");
  EXPECT_EQ(shape(topology, "users-in"),
            "Processor users-in {users-store} -> KTABLE-TOSTREAM-0000000001");

  TopologyTestDriver driver(topology);
  driver.createInputTopic<std::string, std::string>("users").pipeInput("u", std::string("ann"));
  EXPECT_EQ((changes(driver.createOutputTopic<std::string, std::string>("users-out"))),
            (Changes<std::string, std::string>{{"u", "ann"}}));
}

TEST(OpsNaming, MaterializedAsNamesStoresTheDriverCanRead) {
  StreamsBuilder builder;
  auto prices = builder.table<std::string, int64_t>(
      "prices", Materialized<std::string, int64_t>::as("prices-store"));
  auto cheap = prices.filter([](const std::string&, int64_t p) { return p < 10; }, Named::as(""),
                             Materialized<std::string, int64_t>::as("cheap-store"));
  auto labels =
      cheap.mapValues<std::string>([](int64_t p) { return "$" + std::to_string(p); }, Named::as(""),
                                   Materialized<std::string, std::string>::as("labels"));
  builder.stream<std::string, int64_t>("sales").groupByKey().count(
      Materialized<std::string, int64_t>::as("sales-count"));
  EXPECT_EQ(prices.queryableStoreName(), "prices-store");
  EXPECT_EQ(cheap.queryableStoreName(), "cheap-store");
  EXPECT_EQ(labels.queryableStoreName(), "labels");
  TopologyTestDriver driver(builder.build(), kNoCache);
  auto in = driver.createInputTopic<std::string, int64_t>("prices");
  in.pipeInput("a", 5);
  in.pipeInput("b", 50);
  driver.createInputTopic<std::string, int64_t>("sales").pipeInput("a", 1);
  EXPECT_EQ((driver.getKeyValueStore<std::string, int64_t>("prices-store").get("b")), 50);
  EXPECT_EQ((driver.getKeyValueStore<std::string, int64_t>("cheap-store").get("a")), 5);
  EXPECT_EQ((driver.getKeyValueStore<std::string, int64_t>("cheap-store").get("b")), std::nullopt);
  EXPECT_EQ((driver.getKeyValueStore<std::string, std::string>("labels").get("a")), "$5");
  EXPECT_EQ((driver.getKeyValueStore<std::string, int64_t>("sales-count").get("a")), 1);
  EXPECT_TRUE(produced(driver, "app-cheap-store-changelog"));
  EXPECT_TRUE(produced(driver, "app-sales-count-changelog"));
  EXPECT_THROW((driver.getKeyValueStore<std::string, int64_t>("no-such-store")),
               std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// Timestamps

TEST(OpsTimestamps, ANegativeTimestampIsSkippedAndCountedWithTheDefaultExtractor) {
  StreamsBuilder builder;
  builder.stream<std::string, std::string>("in").to("out");
  TopologyTestDriver driver(builder.build());
  auto in = driver.createInputTopic<std::string, std::string>("in");
  in.pipeInput("a", std::string("early"), -1);
  driver.pipe("in", std::string("b"), std::string("bad"), -42);
  in.pipeInput("c", std::string("ok"), 0);
  auto out = driver.createOutputTopic<std::string, std::string>("out").readRecordsToList();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].key, "c");
  EXPECT_EQ(out[0].timestamp, 0);
  EXPECT_EQ(driver.skippedRecords(), 2);
  EXPECT_EQ(driver.droppedRecords(), 0);
}

// ---------------------------------------------------------------------------------------------
// Serdes

TEST(OpsSerdes, StringAndByteArrayRoundTripEveryByte) {
  StreamsBuilder builder;
  builder.stream<std::string, std::string>("text").to("text-out");
  builder.stream<Bytes, Bytes>("raw")
      .mapValues<Bytes>([](const Bytes& v) { return Bytes(v.rbegin(), v.rend()); })
      .to("raw-out");
  TopologyTestDriver driver(builder.build());
  const std::string text("h\xc3\xa9llo \xf0\x9f\x8c\x8a\0end", 15);
  driver.createInputTopic<std::string, std::string>("text").pipeInput("k", text);
  auto t = driver.read("text-out");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->key, "k");
  EXPECT_EQ(t->value, text);

  const Bytes bytes{0x00, 0xff, 0x80, 0x7f, 0x00};
  driver.createInputTopic<Bytes, Bytes>("raw").pipeInput(Bytes{0x01}, bytes);
  driver.pipe("raw", std::nullopt, std::string(), 1);  // empty is not null
  auto out = driver.createOutputTopic<Bytes, Bytes>("raw-out").readRecordsToList();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].key, (Bytes{0x01}));
  EXPECT_EQ(out[0].value, (Bytes{0x00, 0x7f, 0x80, 0xff, 0x00}));
  EXPECT_FALSE(out[1].key.has_value());
  ASSERT_TRUE(out[1].value.has_value());
  EXPECT_TRUE(out[1].value->empty());
}

TEST(OpsSerdes, VoidKeysAreAlwaysNull) {
  StreamsBuilder builder;
  builder.stream<Void, std::string>("in").to("out");
  builder.stream<std::string, std::string>("keyed")
      .selectKey<Void>([](const std::string&, const std::string&) { return Void{}; })
      .to("unkeyed", Produced<Void, std::string>::with(serdes::VoidSerde(), serdes::String()));
  TopologyTestDriver driver(builder.build(), {{"default.deserialization.exception.handler",
                                               "LogAndContinueExceptionHandler"}});
  driver.createInputTopic<Void, std::string>("in").pipeInput(std::string("v"));
  driver.pipe("in", std::string("x"), std::string("w"), 1);  // a key where none may be: skipped
  auto out = driver.createOutputTopic<Void, std::string>("out").readRecordsToList();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(out[0].key.has_value());
  EXPECT_EQ(out[0].value, "v");
  EXPECT_EQ(driver.skippedRecords(), 1);

  driver.createInputTopic<std::string, std::string>("keyed").pipeInput("k", std::string("u"));
  auto r = driver.read("unkeyed");
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->key.has_value());
  EXPECT_EQ(r->value, "u");
}

}  // namespace
}  // namespace oxbow::streams
