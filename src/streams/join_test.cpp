// Joins against a reference model written for the test: randomized interleavings of stream
// records and table updates (deletes, null keys and values included), record for record.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <tuple>

#include "oxbow/streams/errors.h"
#include "oxbow/streams/streams_builder.h"
#include "oxbow/streams/test_driver.h"

namespace oxbow::streams {
namespace {

struct Event {
  bool table;  // a table update, else a stream record
  std::optional<std::string> key;
  std::optional<std::string> value;  // nullopt: a tombstone / a null value
  int64_t timestamp;
};

std::vector<Event> random_events(uint32_t seed, int n) {
  std::mt19937 rng(seed);
  std::vector<Event> out;
  for (int i = 0; i < n; ++i) {
    Event e;
    e.table = rng() % 3 == 0;
    if (rng() % 20 != 0) e.key = "k" + std::to_string(rng() % 6);
    if (rng() % (e.table ? 5 : 15) != 0) e.value = "v" + std::to_string(i);
    e.timestamp = 1000 + i * 3 - static_cast<int64_t>(rng() % 50);  // out of order
    out.push_back(e);
  }
  return out;
}

using Joined3 = std::tuple<std::optional<std::string>, std::string, int64_t>;

// Kafka's KStream-KTable join, written out: the table is the latest non-null value per key (a
// null value deletes; a null key is not a table row); a stream record with a null value never
// joins; it is joined with the table as of that moment, an inner join only when the table has the
// key, a left join always (with null for a missing row or a null key, KIP-962). The result keeps
// the stream record's key and timestamp.
std::vector<Joined3> reference(const std::vector<Event>& events, bool left) {
  std::map<std::string, std::string> table;
  std::vector<Joined3> out;
  for (const auto& e : events) {
    if (e.table) {
      if (!e.key) continue;
      if (e.value)
        table[*e.key] = *e.value;
      else
        table.erase(*e.key);
      continue;
    }
    if (!e.value) continue;
    std::optional<std::string> other;
    if (e.key && table.count(*e.key)) other = table[*e.key];
    if (!other && !left) continue;
    out.emplace_back(e.key, *e.value + "+" + other.value_or("null"), e.timestamp);
  }
  return out;
}

std::vector<Joined3> run(const std::vector<Event>& events, bool left, bool cached) {
  StreamsBuilder builder;
  auto table = builder.table<std::string, std::string>("table");
  auto stream = builder.stream<std::string, std::string>("stream");
  auto joiner = [](const std::string& v, const std::optional<std::string>& t) {
    return v + "+" + t.value_or("null");
  };
  (left ? stream.leftJoin<std::string>(table, joiner) : stream.join<std::string>(table, joiner))
      .to("out");
  TopologyTestDriver driver(
      builder.build(),
      {{"application.id", "j"}, {"statestore.cache.max.bytes", cached ? "1048576" : "0"}});
  for (const auto& e : events)
    driver.pipe(e.table ? "table" : "stream", e.key, e.value, e.timestamp);
  std::vector<Joined3> got;
  for (auto& r : driver.createOutputTopic<std::string, std::string>("out").readRecordsToList())
    got.emplace_back(r.key, *r.value, r.timestamp);
  return got;
}

TEST(StreamTableJoin, InnerAndLeftJoinsMatchTheReference) {
  for (bool left : {false, true}) {
    for (bool cached : {false, true}) {
      for (uint32_t seed : {1u, 2u, 3u, 4u}) {
        auto events = random_events(seed, 800);
        auto expected = reference(events, left);
        ASSERT_GT(expected.size(), 50u);
        EXPECT_EQ(run(events, left, cached), expected)
            << (left ? "left" : "inner") << " seed " << seed << (cached ? " cached" : "");
      }
    }
  }
}

TEST(StreamTableJoin, JoinersWithTheKeyAndDerivedTablesWork) {
  StreamsBuilder builder;
  auto table = builder.table<std::string, std::string>("table").filter(
      [](const std::string&, const std::string& v) { return v != "hidden"; });
  builder
      .stream<std::string, int64_t>(
          "stream", Consumed<std::string, int64_t>::with(serdes::String(), serdes::Int64()))
      .join<std::string>(table,
                         [](const std::string& k, int64_t n, const std::string& t) {
                           return k + ":" + std::to_string(n) + ":" + t;
                         })
      .to("out");
  TopologyTestDriver driver(builder.build(), {{"application.id", "j"}});
  auto t = driver.createInputTopic<std::string, std::string>("table");
  auto s =
      driver.createInputTopic<std::string, int64_t>("stream", serdes::String(), serdes::Int64());
  t.pipeInput("a", std::string("x"));
  t.pipeInput("b", std::string("hidden"));
  s.pipeInput("a", int64_t{1});
  s.pipeInput("b", int64_t{2});  // filtered out of the table: no match
  auto out = driver.createOutputTopic<std::string, std::string>("out").readValuesToList();
  EXPECT_EQ(out, (std::vector<std::string>{"a:1:x"}));
}

TEST(StreamTableJoin, AReKeyedStreamIsRepartitionedAndCoPartitionedWithTheTable) {
  StreamsBuilder builder;
  auto table = builder.table<std::string, std::string>("profiles");
  builder.stream<std::string, std::string>("clicks")
      .selectKey<std::string>([](const std::string&, const std::string& v) { return v; })
      .leftJoin<std::string>(
          table,
          [](const std::string& click, const std::string& profile) {
            return click + "/" + profile;
          },
          Joined<std::string, std::string, std::string>::as("enrich"))
      .to("out");
  auto topology = builder.build();
  std::string described = topology.describe().toString();
  EXPECT_NE(described.find("Sink: enrich-repartition-sink (topic: enrich-repartition)"),
            std::string::npos)
      << described;
  EXPECT_NE(described.find("Processor: enrich (stores: [profiles-STATE-STORE-0000000000])"),
            std::string::npos)
      << described;
  TopologyTestDriver driver(topology, {{"application.id", "j"}});
  driver.createInputTopic<std::string, std::string>("profiles").pipeInput("u1", std::string("p1"));
  driver.createInputTopic<std::string, std::string>("clicks").pipeInput("x", std::string("u1"));
  auto out = driver.createOutputTopic<std::string, std::string>("out").readKeyValuesToList();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].key, "u1");
  EXPECT_EQ(out[0].value, "u1/p1");
}

}  // namespace
}  // namespace oxbow::streams
