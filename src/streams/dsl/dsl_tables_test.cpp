// KTables and store options through the test driver, each expected to give what Kafka Streams
// 3.x gives for the same input through its TopologyTestDriver: filters with and without old
// values, re-grouped aggregations with their subtractors, Materialized's logging, caching and
// store types.
#include <gtest/gtest.h>

#include <sstream>

#include "dsl_test_util.h"
#include "oxbow/streams/streams_builder.h"
#include "oxbow/streams/test_driver.h"

namespace oxbow::streams {
namespace {

using namespace dsl_testing;

// ---------------------------------------------------------------------------------------------
// KTable: filter, filterNot and re-grouped aggregations

Topology prices_filtered(bool named_source, bool not_,
                         Materialized<std::string, int64_t> filtered) {
  StreamsBuilder builder;
  auto table = named_source ? builder.table<std::string, int64_t>(
                                  "prices", Materialized<std::string, int64_t>::as("prices-store"))
                            : builder.table<std::string, int64_t>("prices");
  auto expensive = [](const std::string&, int64_t p) { return p >= 10; };
  auto kept = not_ ? table.filterNot(expensive, Named::as("cheap"), filtered)
                   : table.filter(expensive, Named::as("expensive"), filtered);
  kept.toStream().to("out");
  return builder.build();
}

void pipe_prices(TopologyTestDriver& driver) {
  auto in = driver.createInputTopic<std::string, int64_t>("prices");
  in.pipeInput("a", 5);
  in.pipeInput("b", 20);
  in.pipeInput("a", 15);
  in.pipeInput("b", 3);
  in.pipeInput("b", std::nullopt);
}

TEST(OpsTables, FilterNotKeepsWhatThePredicateRejects) {
  // The source is materialized, so the filter gets old values and forwards a tombstone only for a
  // row that passed before.
  TopologyTestDriver driver(prices_filtered(true, true, Materialized<std::string, int64_t>()),
                            kNoCache);
  pipe_prices(driver);
  EXPECT_EQ((changes(driver.createOutputTopic<std::string, int64_t>("out"))),
            (Changes<std::string, int64_t>{
                {"a", 5}, {"a", std::nullopt}, {"b", 3}, {"b", std::nullopt}}));
}

TEST(OpsTables, FilterOfATableKafkaDoesNotMaterializeForwardsATombstoneForEachRejection) {
  // Kafka's KTableFilter without old values (the source has no store of its own) cannot tell a
  // row that never passed from one that leaves: it forwards a tombstone for both.
  TopologyTestDriver driver(prices_filtered(false, false, Materialized<std::string, int64_t>()),
                            kCache);
  pipe_prices(driver);
  EXPECT_EQ(
      (changes(driver.createOutputTopic<std::string, int64_t>("out"))),
      (Changes<std::string, int64_t>{
          {"a", std::nullopt}, {"b", 20}, {"a", 15}, {"b", std::nullopt}, {"b", std::nullopt}}));
}

TEST(OpsTables, FilterOfAMaterializedTableForwardsOnlyRealChanges) {
  TopologyTestDriver driver(prices_filtered(true, false, Materialized<std::string, int64_t>()),
                            kCache);
  pipe_prices(driver);
  EXPECT_EQ((changes(driver.createOutputTopic<std::string, int64_t>("out"))),
            (Changes<std::string, int64_t>{{"b", 20}, {"a", 15}, {"b", std::nullopt}}));
}

TEST(OpsTables, MaterializedFilterForwardsTombstonesAsItsCacheDecides) {
  // Without old values, a materialized filter writes a delete for every rejection; its caching
  // layer (zero budget or not) forwards none for a key it never held, a store without one does.
  for (const auto& config : {kNoCache, kCache}) {
    TopologyTestDriver cached(
        prices_filtered(false, false, Materialized<std::string, int64_t>::as("expensive-store")),
        config);
    pipe_prices(cached);
    EXPECT_EQ((changes(cached.createOutputTopic<std::string, int64_t>("out"))),
              (Changes<std::string, int64_t>{{"b", 20}, {"a", 15}, {"b", std::nullopt}}));
    EXPECT_EQ((cached.getKeyValueStore<std::string, int64_t>("expensive-store").get("a")), 15);
    EXPECT_EQ((cached.getKeyValueStore<std::string, int64_t>("expensive-store").get("b")),
              std::nullopt);
  }
  TopologyTestDriver uncached(
      prices_filtered(
          false, false,
          Materialized<std::string, int64_t>::as("expensive-store").withCachingDisabled()),
      kCache);
  pipe_prices(uncached);
  EXPECT_EQ(
      (changes(uncached.createOutputTopic<std::string, int64_t>("out"))),
      (Changes<std::string, int64_t>{
          {"a", std::nullopt}, {"b", 20}, {"a", 15}, {"b", std::nullopt}, {"b", std::nullopt}}));
}

TEST(OpsTables, GroupedTableReduceAddsAndSubtractsAsRowsMoveAndGo) {
  StreamsBuilder builder;
  builder.table<std::string, std::string>("accounts")
      .groupBy<std::string, int64_t>(region_amount)
      .reduce([](int64_t agg, int64_t v) { return agg + v; },
              [](int64_t agg, int64_t v) { return agg - v; },
              Materialized<std::string, int64_t>::as("region-totals"))
      .toStream()
      .to("totals");
  TopologyTestDriver driver(builder.build(), kNoCache);
  pipe_accounts(driver);
  auto out = driver.createOutputTopic<std::string, int64_t>("totals").readRecordsToList();
  Changes<std::string, int64_t> got;
  for (auto& r : out) got.emplace_back(*r.key, r.value);
  // Kafka 3.5+ (KIP-904): a row that stays in its group is subtracted and added in one step.
  EXPECT_EQ(got,
            (Changes<std::string, int64_t>{
                {"eu", 5}, {"eu", 12}, {"eu", 7}, {"us", 5}, {"eu", 10}, {"eu", 0}, {"us", 0}}));
  ASSERT_EQ(out.size(), 7u);
  EXPECT_EQ(out[2].timestamp, 3);
  EXPECT_EQ(out[3].timestamp, 3);
  auto store = driver.getKeyValueStore<std::string, int64_t>("region-totals");
  EXPECT_EQ(store.get("eu"), 0);
  EXPECT_EQ(store.get("us"), 0);
}

TEST(OpsTables, GroupedTableAggregateStartsFromTheInitializerAndSubtracts) {
  StreamsBuilder builder;
  builder.table<std::string, std::string>("accounts")
      .groupBy<std::string, int64_t>(region_amount)
      .aggregate<int64_t>([] { return int64_t{1000}; },
                          [](const std::string&, int64_t v, int64_t agg) { return agg + v; },
                          [](const std::string&, int64_t v, int64_t agg) { return agg - v; },
                          Materialized<std::string, int64_t>::as("region-aggregates"))
      .toStream()
      .to("aggregates");
  TopologyTestDriver driver(builder.build(), kNoCache);
  pipe_accounts(driver);
  EXPECT_EQ((changes(driver.createOutputTopic<std::string, int64_t>("aggregates"))),
            (Changes<std::string, int64_t>{{"eu", 1005},
                                           {"eu", 1012},
                                           {"eu", 1007},
                                           {"us", 1005},
                                           {"eu", 1010},
                                           {"eu", 1000},
                                           {"us", 1000}}));
}

TEST(OpsTables, FilterBeforeAGroupingGetsOldValuesAndMovesRowsOut) {
  // groupBy asks its parents for old values, so the filter (on a source Kafka would not otherwise
  // materialize) takes a row out of its group when the row stops passing.
  StreamsBuilder builder;
  builder.table<std::string, std::string>("accounts")
      .filter([](const std::string&, const std::string& v) { return v.rfind("eu:", 0) == 0; })
      .groupBy<std::string, int64_t>(region_amount)
      .count(Materialized<std::string, int64_t>::as("eu-accounts"))
      .toStream()
      .to("eu-counts");
  TopologyTestDriver driver(builder.build(), kNoCache);
  pipe_accounts(driver);
  EXPECT_EQ((changes(driver.createOutputTopic<std::string, int64_t>("eu-counts"))),
            (Changes<std::string, int64_t>{{"eu", 1}, {"eu", 2}, {"eu", 1}, {"eu", 1}, {"eu", 0}}));
}

// ---------------------------------------------------------------------------------------------
// Materialized: logging, caching, store types

TEST(OpsMaterialized, LoggingDisabledWritesNoChangelogAndEnabledCarriesItsConfigs) {
  StreamsBuilder builder;
  auto grouped = builder.stream<std::string, std::string>("in").groupByKey();
  grouped.count(Materialized<std::string, int64_t>::as("quiet").withLoggingDisabled());
  const std::map<std::string, std::string> configs{{"retention.ms", "3600000"},
                                                   {"min.insync.replicas", "2"}};
  grouped.count(Materialized<std::string, int64_t>::as("logged").withLoggingEnabled(configs));
  grouped.count(Materialized<std::string, int64_t>::as("default"));
  TopologyTestDriver driver(builder.build(), kNoCache);
  auto in = driver.createInputTopic<std::string, std::string>("in");
  in.pipeInput("k", std::string("v"));
  in.pipeInput("k", std::string("v"));
  EXPECT_FALSE(produced(driver, "app-quiet-changelog"));
  EXPECT_EQ((driver.getKeyValueStore<std::string, int64_t>("quiet").get("k")), 2);
  EXPECT_FALSE(detail::Access::store_options(driver, "quiet").logging);
  EXPECT_EQ(detail::Access::store_options(driver, "logged").changelog_configs, configs);
  EXPECT_TRUE(detail::Access::store_options(driver, "default").changelog_configs.empty());
  EXPECT_EQ((changes(driver.createOutputTopic<std::string, int64_t>("app-logged-changelog"))),
            (Changes<std::string, int64_t>{{"k", 1}, {"k", 2}}));
  EXPECT_TRUE(produced(driver, "app-default-changelog"));
}

TEST(OpsMaterialized, CachingDisabledForwardsEveryUpdateACachedStoreTheLatestPerCommit) {
  auto topology = [] {
    StreamsBuilder builder;
    // One input record makes several updates of one key within one commit.
    auto numbers = builder.stream<std::string, std::string>("in").flatMapValues<int64_t>(
        [](const std::string& v) {
          std::vector<int64_t> out;
          std::stringstream in(v);
          for (int64_t n; in >> n;) out.push_back(n);
          return out;
        });
    auto sum = [](int64_t a, int64_t b) { return a + b; };
    numbers.groupByKey()
        .reduce(sum, Materialized<std::string, int64_t>::as("cached"))
        .toStream()
        .to("cached-out");
    numbers.groupByKey()
        .reduce(sum, Materialized<std::string, int64_t>::as("uncached").withCachingDisabled())
        .toStream()
        .to("uncached-out");
    return builder.build();
  };
  for (const auto& config : {kCache, kNoCache}) {
    bool cache_on = config.at("statestore.cache.max.bytes") != "0";
    TopologyTestDriver driver(topology(), config);
    auto in = driver.createInputTopic<std::string, std::string>("in");
    in.pipeInput("k", std::string("1 2 3"));
    in.pipeInput("k", std::string("4"));
    auto cached = driver.createOutputTopic<std::string, int64_t>("cached-out").readValuesToList();
    auto uncached =
        driver.createOutputTopic<std::string, int64_t>("uncached-out").readValuesToList();
    EXPECT_EQ(uncached, (std::vector<int64_t>{1, 3, 6, 10}));
    EXPECT_EQ(cached, (cache_on ? std::vector<int64_t>{6, 10} : std::vector<int64_t>{1, 3, 6, 10}));
    // The changelog is written where the cache writes down: the latest per commit too.
    auto cached_log = driver.createOutputTopic<std::string, int64_t>("app-cached-changelog");
    auto uncached_log = driver.createOutputTopic<std::string, int64_t>("app-uncached-changelog");
    EXPECT_EQ(cached_log.getQueueSize(), cache_on ? 2u : 4u);
    EXPECT_EQ(uncached_log.getQueueSize(), 4u);
  }
}

TEST(OpsMaterialized, ACachingStoreForwardsNoDeleteOfAnAbsentKey) {
  auto topology = [](bool named, bool caching) {
    StreamsBuilder builder;
    auto m = Materialized<std::string, std::string>::as("users-store");
    if (!caching) m = m.withCachingDisabled();
    auto table = named ? builder.table<std::string, std::string>("users", m)
                       : builder.table<std::string, std::string>("users");
    table.toStream().to("out");
    return builder.build();
  };
  struct Case {
    bool named, caching;
    Changes<std::string, std::string> expected;
  };
  // Kafka's caching layer is there even with a zero budget; a table Kafka does not materialize
  // has no store at all and forwards every update as it comes.
  std::vector<Case> cases = {
      {true, true, {{"a", "1"}, {"a", std::nullopt}}},
      {true, false, {{"x", std::nullopt}, {"a", "1"}, {"a", std::nullopt}}},
      {false, true, {{"x", std::nullopt}, {"a", "1"}, {"a", std::nullopt}}},
  };
  for (const auto& c : cases) {
    for (const auto& config : {kNoCache, kCache}) {
      TopologyTestDriver driver(topology(c.named, c.caching), config);
      auto in = driver.createInputTopic<std::string, std::string>("users");
      in.pipeInput("x", std::nullopt);
      in.pipeInput("a", std::string("1"));
      in.pipeInput("a", std::nullopt);
      EXPECT_EQ((changes(driver.createOutputTopic<std::string, std::string>("out"))), c.expected)
          << "named " << c.named << " caching " << c.caching << " cache "
          << config.at("statestore.cache.max.bytes");
    }
  }
}

}  // namespace
}  // namespace oxbow::streams

namespace oxbow::streams {
namespace {

using namespace dsl_testing;

// Kafka's DSL stores are timestamped: an aggregate's result carries the latest timestamp of the
// records it took in (KStreamAggregate, KStreamReduce, KTableAggregate), not the last record's.
TEST(OpsTimestamps, StreamAggregatesCarryTheLatestTimestampTheyTookIn) {
  StreamsBuilder builder;
  auto grouped = builder.stream<std::string, int64_t>("in").groupByKey();
  grouped.count(Materialized<std::string, int64_t>::as("counts-store")).toStream().to("counts");
  grouped.reduce([](int64_t a, int64_t b) { return a + b; }).toStream().to("sums");
  TopologyTestDriver driver(builder.build(), kNoCache);
  auto in = driver.createInputTopic<std::string, int64_t>("in");
  in.pipeInput("k", 1, 100);
  in.pipeInput("k", 2, 40);  // out of order: the aggregate stays at 100
  in.pipeInput("j", 3, 50);
  in.pipeInput("k", 4, 130);
  for (const char* topic : {"counts", "sums"}) {
    std::vector<std::pair<std::string, int64_t>> got;
    for (auto& r : driver.createOutputTopic<std::string, int64_t>(topic).readRecordsToList())
      got.emplace_back(*r.key, r.timestamp);
    EXPECT_EQ(got, (std::vector<std::pair<std::string, int64_t>>{
                       {"k", 100}, {"k", 100}, {"j", 50}, {"k", 130}}))
        << topic;
  }
  // The store's values read without their timestamps.
  auto store = driver.getKeyValueStore<std::string, int64_t>("counts-store");
  EXPECT_EQ(store.get("k"), 3);
}

TEST(OpsTimestamps, ATableAggregateTakesTheLaterOfTheRecordsAndItsOwnTime) {
  StreamsBuilder builder;
  builder.table<std::string, std::string>("accounts")
      .groupBy<std::string, int64_t>(region_amount)
      .reduce([](int64_t a, int64_t b) { return a + b; },
              [](int64_t a, int64_t b) { return a - b; })
      .toStream()
      .to("totals");
  TopologyTestDriver driver(builder.build(), kNoCache);
  auto in = driver.createInputTopic<std::string, std::string>("accounts");
  in.pipeInput("a", std::string("eu:5"), 100);
  in.pipeInput("b", std::string("eu:7"), 60);   // eu: 12 at max(60, 100)
  in.pipeInput("a", std::string("us:5"), 80);   // out of eu (eu's time stays 100), into new us: 80
  in.pipeInput("c", std::string("us:1"), 200);  // us: 6 at 200
  std::vector<std::tuple<std::string, int64_t, int64_t>> got;
  for (auto& r : driver.createOutputTopic<std::string, int64_t>("totals").readRecordsToList())
    got.emplace_back(*r.key, r.value.value_or(-1), r.timestamp);
  EXPECT_EQ(got,
            (std::vector<std::tuple<std::string, int64_t, int64_t>>{
                {"eu", 5, 100}, {"eu", 12, 100}, {"eu", 7, 100}, {"us", 5, 80}, {"us", 6, 200}}));
}

}  // namespace
}  // namespace oxbow::streams
