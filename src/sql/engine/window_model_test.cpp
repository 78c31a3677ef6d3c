// Windowed aggregations checked against a small reference written here: random keys, times that
// run out of order, and records later than the grace period, through a SQL query in the
// TopologyTestDriver; each window's last result must be the reference's.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "oxbow/streams/test_driver.h"
#include "sql/engine/engine.h"

namespace oxbow::sql {
namespace {

struct Event {
  std::string key;
  int64_t time;
  int64_t amount;
};

// Kafka's window aggregation, record by record: stream time is the latest time seen; a window
// [start, start + size) takes a record unless its end lies at or before stream time less grace.
std::map<std::pair<std::string, int64_t>, std::pair<int64_t, int64_t>> reference(
    const std::vector<Event>& events, int64_t size, int64_t advance, int64_t grace) {
  std::map<std::pair<std::string, int64_t>, std::pair<int64_t, int64_t>> out;  // count, sum
  int64_t stream_time = -1;
  for (const auto& e : events) {
    stream_time = std::max(stream_time, e.time);
    for (int64_t start = e.time - e.time % advance; start > e.time - size; start -= advance) {
      if (start < 0) break;
      if (start + size <= stream_time - grace) continue;  // closed: the record is late
      auto& [count, sum] = out[{e.key, start}];
      ++count;
      sum += e.amount;
    }
  }
  return out;
}

std::map<std::pair<std::string, int64_t>, std::pair<int64_t, int64_t>> run(
    const std::string& window, const std::vector<Event>& events) {
  Engine engine;
  engine.execute(
      "CREATE STREAM payments (card STRING KEY, amount BIGINT) WITH (kafka_topic='payments', "
      "value_format='json');");
  engine.execute(
      "CREATE TABLE totals AS SELECT card, COUNT(*) AS n, SUM(amount) AS total FROM "
      "payments WINDOW " +
      window + " GROUP BY card;");
  const PersistentQuery* q = &engine.queries().front();
  auto config = q->streams_config;
  config["statestore.cache.max.bytes"] = "0";
  streams::TopologyTestDriver driver(q->topology, config);
  for (const auto& e : events)
    driver.pipe("payments", e.key, "{\"amount\":" + std::to_string(e.amount) + "}", e.time);
  std::map<std::pair<std::string, int64_t>, std::pair<int64_t, int64_t>> got;
  while (auto r = driver.read("TOTALS")) {
    const std::string& key = *r->key;
    int64_t start = 0;
    for (size_t i = key.size() - 8; i < key.size(); ++i)
      start = (start << 8) | static_cast<unsigned char>(key[i]);
    const std::string& v = *r->value;  // {"N":n,"TOTAL":t}
    int64_t n = std::stoll(v.substr(v.find(':') + 1));
    int64_t total = std::stoll(v.substr(v.rfind(':') + 1));
    got[{key.substr(0, key.size() - 8), start}] = {n, total};
  }
  return got;
}

std::vector<Event> random_events(uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Event> events;
  int64_t clock = 0;
  for (int i = 0; i < 400; ++i) {
    clock += std::uniform_int_distribution<int64_t>(0, 300)(rng);
    // Most records near the clock; some seconds behind it (late past a 1 s grace).
    int64_t behind = rng() % 10 == 0 ? std::uniform_int_distribution<int64_t>(0, 6000)(rng)
                                     : std::uniform_int_distribution<int64_t>(0, 400)(rng);
    events.push_back({"card" + std::to_string(rng() % 4), std::max<int64_t>(0, clock - behind),
                      std::uniform_int_distribution<int64_t>(1, 100)(rng)});
  }
  return events;
}

TEST(WindowModel, TumblingCountsAndSumsMatchTheReference) {
  for (uint32_t seed : {1u, 2u, 3u, 4u, 5u}) {
    auto events = random_events(seed);
    auto expected = reference(events, 2000, 2000, 1000);
    auto got = run("TUMBLING (SIZE 2 SECONDS, GRACE PERIOD 1 SECOND)", events);
    EXPECT_EQ(got, expected) << "seed " << seed;
    EXPECT_GT(expected.size(), 50u);
  }
}

TEST(WindowModel, HoppingCountsAndSumsMatchTheReference) {
  for (uint32_t seed : {6u, 7u, 8u}) {
    auto events = random_events(seed);
    auto expected = reference(events, 3000, 1000, 1000);
    auto got = run("HOPPING (SIZE 3 SECONDS, ADVANCE BY 1 SECOND, GRACE PERIOD 1 SECOND)", events);
    EXPECT_EQ(got, expected) << "seed " << seed;
  }
}

// The windows' totals summed per card by a second query over the first's windowed table, each
// window's update replacing its old total (the windowed source's records piped on in order).
std::map<std::string, std::pair<int64_t, int64_t>> run_totals_across_windows(
    const std::vector<Event>& events) {
  Engine engine;
  engine.execute(
      "CREATE STREAM payments (card STRING KEY, amount BIGINT) WITH (kafka_topic='payments', "
      "value_format='json');"
      "CREATE TABLE totals AS SELECT card, COUNT(*) AS n, SUM(amount) AS total FROM payments "
      "WINDOW TUMBLING (SIZE 2 SECONDS, GRACE PERIOD 1 SECOND) GROUP BY card;"
      "CREATE TABLE all_time AS SELECT card, SUM(n) AS n, SUM(total) AS total FROM totals "
      "GROUP BY card;");
  const PersistentQuery& windows = engine.queries().at(0);
  const PersistentQuery& across = engine.queries().at(1);
  streams::TopologyTestDriver first(windows.topology, windows.streams_config);
  streams::TopologyTestDriver second(across.topology, across.streams_config);
  std::map<std::string, std::pair<int64_t, int64_t>> got;
  for (const auto& e : events) {
    first.pipe("payments", e.key, "{\"amount\":" + std::to_string(e.amount) + "}", e.time);
    while (auto r = first.read("TOTALS")) second.pipe("TOTALS", r->key, r->value, r->timestamp);
    while (auto r = second.read("ALL_TIME")) {
      const std::string& v = *r->value;  // {"N":n,"TOTAL":t}
      got[*r->key] = {std::stoll(v.substr(v.find(':') + 1)),
                      std::stoll(v.substr(v.rfind(':') + 1))};
    }
  }
  return got;
}

TEST(WindowModel, TotalsAcrossAWindowedTableMatchTheReference) {
  for (uint32_t seed : {11u, 12u, 13u}) {
    auto events = random_events(seed);
    std::map<std::string, std::pair<int64_t, int64_t>> expected;
    for (const auto& [window, count_sum] : reference(events, 2000, 2000, 1000)) {
      expected[window.first].first += count_sum.first;
      expected[window.first].second += count_sum.second;
    }
    EXPECT_EQ(run_totals_across_windows(events), expected) << "seed " << seed;
    EXPECT_EQ(expected.size(), 4u);
  }
}

}  // namespace
}  // namespace oxbow::sql
