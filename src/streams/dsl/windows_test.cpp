// Time windows as Kafka's TimeWindows computes them, windowed keys in the bytes Kafka's
// WindowedSerdes write (worked out here from their definitions: key bytes, then big-endian longs),
// and windowed aggregations against a small reference model of Kafka's semantics.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include "oxbow/streams/streams_builder.h"
#include "oxbow/streams/test_driver.h"
#include "oxbow/streams/windows.h"

namespace oxbow::streams {
namespace {

using std::chrono::milliseconds;

TEST(Windows, TumblingWindowsHoldEachTimestampOnce) {
  auto w = TimeWindows::ofSizeWithNoGrace(milliseconds(5000));
  EXPECT_EQ(w.advance(), 5000);
  EXPECT_EQ(w.gracePeriodMs(), 0);
  EXPECT_EQ(w.windowsFor(0), (std::vector<Window>{{0, 5000}}));
  EXPECT_EQ(w.windowsFor(4999), (std::vector<Window>{{0, 5000}}));
  EXPECT_EQ(w.windowsFor(5000), (std::vector<Window>{{5000, 10000}}));
  EXPECT_EQ(w.windowsFor(12345), (std::vector<Window>{{10000, 15000}}));
}

TEST(Windows, HoppingWindowsOverlapAndNoneStartsBeforeZero) {
  auto w =
      TimeWindows::ofSizeAndGrace(milliseconds(10), milliseconds(3)).advanceBy(milliseconds(4));
  EXPECT_EQ(w.gracePeriodMs(), 3);
  EXPECT_EQ(w.windowsFor(21), (std::vector<Window>{{12, 22}, {16, 26}, {20, 30}}));
  EXPECT_EQ(w.windowsFor(24), (std::vector<Window>{{16, 26}, {20, 30}, {24, 34}}));
  EXPECT_EQ(w.windowsFor(5), (std::vector<Window>{{0, 10}, {4, 14}}));
  // Every window holding the timestamp, and only those: against a brute-force reference.
  for (int64_t ts = 0; ts < 200; ++ts) {
    std::vector<Window> expected;
    for (int64_t start = 0; start <= ts; start += 4)
      if (ts < start + 10) expected.push_back({start, start + 10});
    EXPECT_EQ(w.windowsFor(ts), expected) << ts;
  }
}

TEST(Windows, InvalidSizesAdvancesAndGraceAreRefused) {
  EXPECT_THROW(TimeWindows::ofSizeWithNoGrace(milliseconds(0)), std::invalid_argument);
  EXPECT_THROW(TimeWindows::ofSizeAndGrace(milliseconds(10), milliseconds(-1)),
               std::invalid_argument);
  auto w = TimeWindows::ofSizeWithNoGrace(milliseconds(10));
  EXPECT_THROW(w.advanceBy(milliseconds(0)), std::invalid_argument);
  EXPECT_THROW(w.advanceBy(milliseconds(11)), std::invalid_argument);
  EXPECT_NO_THROW(w.advanceBy(milliseconds(10)));
}

TEST(Windows, TimeWindowedKeysInKafkasBytes) {
  auto serde = serdes::TimeWindowed(serdes::String(), 5000);
  Windowed<std::string> key{"ab", {0x0102030405060708, 0x0102030405060708 + 5000}};
  std::string bytes = serde.serialize("t", key);
  EXPECT_EQ(bytes, std::string("ab\x01\x02\x03\x04\x05\x06\x07\x08", 10));
  EXPECT_EQ(serde.deserialize("t", bytes), key);
  // The end is the start plus the size, capped at the largest timestamp as Kafka's reader does.
  auto top = serde.deserialize("t", std::string("k\x7f\xff\xff\xff\xff\xff\xff\x00", 9));
  EXPECT_EQ(top.window.end, std::numeric_limits<int64_t>::max());
  EXPECT_THROW(serde.deserialize("t", "1234567"), SerializationException);
}

TEST(Windows, SessionWindowedKeysInKafkasBytes) {
  auto serde = serdes::SessionWindowed(serdes::Int32());
  Windowed<int32_t> key{7, {1000, 2500}};
  std::string bytes = serde.serialize("t", key);
  std::string expected("\0\0\0\x07", 4);
  expected += std::string("\0\0\0\0\0\0\x09\xc4", 8);  // end 2500
  expected += std::string("\0\0\0\0\0\0\x03\xe8", 8);  // start 1000
  EXPECT_EQ(bytes, expected);
  EXPECT_EQ(serde.deserialize("t", bytes), key);
  EXPECT_THROW(serde.deserialize("t", std::string(15, '\0')), SerializationException);
}

}  // namespace
}  // namespace oxbow::streams

// ---------------------------------------------------------------------------------------------
// Windowed aggregations against a reference model

namespace oxbow::streams {
namespace {

struct Input {
  std::optional<std::string> key;
  int64_t value;
  int64_t timestamp;
};

// (key, window start, window end, aggregate, timestamp), in the order emitted.
using Emitted = std::vector<std::tuple<std::string, int64_t, int64_t, int64_t, int64_t>>;

// Randomized input: a few keys, timestamps moving forward with jitter of up to three times the
// grace period either way (so that some records are late, some too late), duplicates, null keys.
std::vector<Input> random_input(uint32_t seed, int n, int64_t grace) {
  std::mt19937 rng(seed);
  std::vector<Input> out;
  int64_t now = 0;
  for (int i = 0; i < n; ++i) {
    now += std::uniform_int_distribution<int64_t>(0, 12)(rng);
    int64_t jitter = std::uniform_int_distribution<int64_t>(-3 * grace - 5, grace)(rng);
    int64_t ts = std::max<int64_t>(0, now + jitter);
    int k = std::uniform_int_distribution<int>(0, 5)(rng);
    std::optional<std::string> key;
    if (k > 0) key = "k" + std::to_string(k);  // one record in six has no key
    out.push_back({key, std::uniform_int_distribution<int64_t>(1, 9)(rng), ts});
    if (rng() % 10 == 0) out.push_back(out.back());  // a duplicate
  }
  return out;
}

// Kafka's semantics, written out independently of the library: stream time is the largest
// timestamp seen (null keys included); a record counts in every window [s, s + size) with s a
// multiple of the advance that holds it, unless that window ended at or before stream time minus
// the grace period; an aggregate's time is the latest of its records'.
struct Reference {
  int64_t size, advance, grace;
  Emitted emitted;
  int64_t dropped = 0;
  void run(const std::vector<Input>& input, bool sum) {
    std::map<std::pair<std::string, int64_t>, std::pair<int64_t, int64_t>> windows;
    int64_t stream_time = -1;
    for (const auto& r : input) {
      stream_time = std::max(stream_time, r.timestamp);
      if (!r.key) {
        ++dropped;
        continue;
      }
      for (int64_t s = 0; s <= r.timestamp; s += advance) {
        if (r.timestamp >= s + size) continue;
        if (s + size <= stream_time - grace) {
          ++dropped;
          continue;
        }
        auto [it, fresh] = windows.try_emplace({*r.key, s}, 0, r.timestamp);
        it->second.first += sum ? r.value : 1;
        it->second.second = std::max(it->second.second, r.timestamp);
        emitted.emplace_back(*r.key, s, s + size, it->second.first, it->second.second);
      }
    }
  }
};

Emitted run_library(const TimeWindows& windows, const std::vector<Input>& input, bool sum,
                    int64_t* dropped) {
  StreamsBuilder builder;
  auto grouped = builder.stream<std::string, int64_t>("in").groupByKey().windowedBy(windows);
  auto table = sum ? grouped.reduce([](int64_t a, int64_t b) { return a + b; }) : grouped.count();
  table.toStream().to("out");
  TopologyTestDriver driver(builder.build(),
                            {{"application.id", "w"}, {"statestore.cache.max.bytes", "0"}});
  auto in = driver.createInputTopic<std::string, int64_t>("in");
  for (const auto& r : input) {
    if (r.key)
      in.pipeInput(*r.key, r.value, r.timestamp);
    else
      driver.pipe("in", std::nullopt, serdes::Int64().serialize("in", r.value), r.timestamp);
  }
  auto out = driver.createOutputTopic<Windowed<std::string>, int64_t>(
      "out", serdes::TimeWindowed(serdes::String(), windows.size()), serdes::Int64());
  Emitted got;
  for (auto& r : out.readRecordsToList())
    got.emplace_back(r.key->key, r.key->window.start, r.key->window.end, *r.value, r.timestamp);
  *dropped = driver.droppedRecords();
  return got;
}

TEST(WindowedAggregations, TumblingAndHoppingMatchTheReferenceOnOutOfOrderInput) {
  struct Case {
    int64_t size, advance, grace;
  };
  for (Case c : {Case{100, 100, 30}, Case{100, 40, 20}, Case{50, 10, 0}}) {
    auto windows = TimeWindows::ofSizeAndGrace(milliseconds(c.size), milliseconds(c.grace))
                       .advanceBy(milliseconds(c.advance));
    for (uint32_t seed : {1u, 2u, 3u}) {
      auto input = random_input(seed, 1500, c.grace);
      for (bool sum : {false, true}) {
        Reference ref{c.size, c.advance, c.grace, {}, 0};
        ref.run(input, sum);
        int64_t dropped = 0;
        Emitted got = run_library(windows, input, sum, &dropped);
        ASSERT_EQ(got.size(), ref.emitted.size())
            << "size " << c.size << " advance " << c.advance << " seed " << seed;
        for (size_t i = 0; i < got.size(); ++i)
          ASSERT_EQ(got[i], ref.emitted[i]) << "record " << i << ", seed " << seed;
        EXPECT_EQ(dropped, ref.dropped);
        EXPECT_GT(ref.dropped, 0);  // the input did test lateness
      }
    }
  }
}

TEST(WindowedAggregations, TheWindowedKeySerdeCarriesThroughToStreamAndDescribe) {
  StreamsBuilder builder;
  builder.stream<std::string, std::string>("clicks")
      .groupByKey()
      .windowedBy(TimeWindows::ofSizeWithNoGrace(milliseconds(1000)))
      .count(Materialized<std::string, int64_t>::as("clicks-per-second"))
      .toStream()
      .map<std::string, int64_t>([](const Windowed<std::string>& w, int64_t n) {
        return KeyValue<std::string, int64_t>{w.key + "@" + std::to_string(w.window.start), n};
      })
      .to("out");
  auto topology = builder.build();
  TopologyTestDriver driver(topology, {{"application.id", "w"}});
  auto in = driver.createInputTopic<std::string, std::string>("clicks");
  in.pipeInput("u", std::string("a"), 1500);
  in.pipeInput("u", std::string("b"), 1999);
  in.pipeInput("u", std::string("c"), 2000);
  auto out = driver.createOutputTopic<std::string, int64_t>("out").readKeyValuesToList();
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].key, "u@1000");
  EXPECT_EQ(out[1].value, 2);
  EXPECT_EQ(out[2].key, "u@2000");
  auto produced = driver.producedTopicNames();
  EXPECT_NE(std::find(produced.begin(), produced.end(), "w-clicks-per-second-changelog"),
            produced.end());
}

TEST(WindowedAggregations, WindowsPastRetentionAreDroppedLocallyASegmentAtATime) {
  // Returns the store's entries at stream time 99 s and then at 200 s.
  auto run = [](std::optional<int64_t> retention_ms, size_t* changelog_records) {
    StreamsBuilder builder;
    auto materialized = Materialized<std::string, int64_t>::as("counts");
    if (retention_ms) materialized = materialized.withRetention(milliseconds(*retention_ms));
    builder.stream<std::string, std::string>("in")
        .groupByKey()
        .windowedBy(TimeWindows::ofSizeWithNoGrace(milliseconds(1000)))
        .count(materialized);
    TopologyTestDriver driver(builder.build(),
                              {{"application.id", "w"}, {"statestore.cache.max.bytes", "0"}});
    auto in = driver.createInputTopic<std::string, std::string>("in");
    for (int64_t t = 0; t < 100000; t += 1000) in.pipeInput("k", std::string("v"), t);
    size_t before = driver.storeAll("counts").size();
    // Stream time 200 s: with retention 1 s (size plus grace) every window starting before the
    // segment holding 199 s (segments of 60 s: [180 s, 240 s)) is expired.
    in.pipeInput("k", std::string("v"), 200000);
    *changelog_records = driver.createOutputTopic<std::string, std::string>("w-counts-changelog")
                             .readRecordsToList()
                             .size();
    return std::make_pair(before, driver.storeAll("counts").size());
  };
  size_t changelog = 0;
  // Retention 1 s: at 61 s the first segment, [0, 60 s), went.
  EXPECT_EQ(run(std::nullopt, &changelog), std::make_pair(size_t{40}, size_t{1}));
  EXPECT_EQ(changelog, 101u);  // expiry writes no tombstones
  // Retention 100 s: stream time minus retention is 100 s, in the segment [60 s, 120 s), so the
  // windows from 60 s on stay (as in Kafka, expiry is by whole segments).
  EXPECT_EQ(run(int64_t{100000}, &changelog), std::make_pair(size_t{100}, size_t{41}));
  EXPECT_EQ(run(int64_t{150000}, &changelog),
            std::make_pair(size_t{100}, size_t{101}));  // 50 s is still in the first segment
  StreamsBuilder builder;
  auto grouped = builder.stream<std::string, std::string>("in").groupByKey().windowedBy(
      TimeWindows::ofSizeAndGrace(milliseconds(1000), milliseconds(500)));
  try {
    grouped.count(
        Materialized<std::string, int64_t>::as("short").withRetention(milliseconds(1499)));
    FAIL() << "a retention shorter than size plus grace was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("size=[1000], grace=[500], retention=[1499]"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace oxbow::streams

// ---------------------------------------------------------------------------------------------
// Cogrouped aggregations against a reference

namespace oxbow::streams {
namespace {

TEST(Cogroup, SeveralGroupedStreamsUpdateOneAggregate) {
  for (uint32_t seed : {31u, 32u}) {
    std::mt19937 rng(seed);
    StreamsBuilder builder;
    // Clicks keyed by user count 1; purchases keyed by order with the user in the value, re-keyed
    // (so repartitioned), add ten times their amount.
    auto clicks = builder.stream<std::string, std::string>("clicks").groupByKey();
    auto purchases =
        builder
            .stream<std::string, int64_t>("purchases", Consumed<std::string, int64_t>::with(
                                                           serdes::String(), serdes::Int64()))
            .selectKey<std::string>(
                [](const std::string& order, int64_t) { return order.substr(0, order.find('/')); })
            .groupByKey(Grouped<std::string, int64_t>::with(serdes::String(), serdes::Int64()));
    clicks
        .cogroup<int64_t>(
            [](const std::string&, const std::string&, int64_t agg) { return agg + 1; })
        .cogroup(purchases,
                 [](const std::string&, int64_t amount, int64_t agg) { return agg + 10 * amount; })
        .aggregate([] { return int64_t{1000}; },
                   Materialized<std::string, int64_t>::as("score").withValueSerde(serdes::Int64()))
        .toStream()
        .to("out", Produced<std::string, int64_t>::with(serdes::String(), serdes::Int64()));
    auto topology = builder.build();
    TopologyTestDriver driver(topology,
                              {{"application.id", "c"}, {"statestore.cache.max.bytes", "0"}});
    auto c = driver.createInputTopic<std::string, std::string>("clicks");
    auto p = driver.createInputTopic<std::string, int64_t>("purchases", serdes::String(),
                                                           serdes::Int64());
    // The reference: each record updates its user's score (starting at 1000) and emits it.
    std::map<std::string, int64_t> score;
    std::vector<std::pair<std::string, int64_t>> expected;
    for (int i = 0; i < 500; ++i) {
      std::string user = "u" + std::to_string(rng() % 5);
      auto [it, fresh] = score.try_emplace(user, 1000);
      if (rng() % 2) {
        c.pipeInput(user, std::string("click"), i);
        it->second += 1;
      } else {
        int64_t amount = static_cast<int64_t>(rng() % 9);
        p.pipeInput(user + "/o" + std::to_string(i), amount, i);
        it->second += 10 * amount;
      }
      expected.emplace_back(user, it->second);
    }
    auto out =
        driver.createOutputTopic<std::string, int64_t>("out", serdes::String(), serdes::Int64());
    std::vector<std::pair<std::string, int64_t>> got;
    for (auto& kv : out.readKeyValuesToList()) got.emplace_back(kv.key, kv.value);
    EXPECT_EQ(got, expected) << "seed " << seed;
    std::string described = topology.describe().toString();
    EXPECT_NE(described.find("COGROUPKSTREAM-MERGE-"), std::string::npos) << described;
    EXPECT_NE(described.find("score-1-repartition"), std::string::npos) << described;
  }
}

}  // namespace
}  // namespace oxbow::streams

// ---------------------------------------------------------------------------------------------
// emitStrategy(onWindowClose) against a reference

namespace oxbow::streams {
namespace {

TEST(WindowedAggregations, EmitOnWindowCloseGivesEachWindowOnceWhenItCloses) {
  struct Case {
    int64_t size, advance, grace;
  };
  for (Case c : {Case{100, 100, 30}, Case{100, 40, 0}}) {
    for (uint32_t seed : {41u, 42u}) {
      auto input = random_input(seed, 1500, c.grace);
      // Kafka's semantics, written out: the windows count as for emitted updates; after each
      // record with a key, every window not emitted yet whose end is at or before stream time
      // minus grace is emitted once, by start then key, with its count and latest time.
      std::map<std::pair<std::string, int64_t>, std::pair<int64_t, int64_t>> windows;
      std::set<std::pair<std::string, int64_t>> emitted;
      Emitted expected;
      int64_t stream_time = -1;
      for (const auto& r : input) {
        stream_time = std::max(stream_time, r.timestamp);
        if (!r.key) continue;
        for (int64_t s = 0; s <= r.timestamp; s += c.advance) {
          if (r.timestamp >= s + c.size || s + c.size <= stream_time - c.grace) continue;
          auto& [count, latest] = windows[{*r.key, s}];
          ++count;
          latest = std::max(latest, r.timestamp);
        }
        std::vector<std::pair<int64_t, std::string>> due;
        for (const auto& [w, v] : windows)
          if (!emitted.count(w) && w.second + c.size <= stream_time - c.grace)
            due.emplace_back(w.second, w.first);
        std::sort(due.begin(), due.end());
        for (const auto& [s, k] : due) {
          emitted.insert({k, s});
          const auto& [count, latest] = windows[{k, s}];
          expected.emplace_back(k, s, s + c.size, count, latest);
        }
      }
      StreamsBuilder builder;
      builder.stream<std::string, int64_t>("in")
          .groupByKey()
          .windowedBy(TimeWindows::ofSizeAndGrace(milliseconds(c.size), milliseconds(c.grace))
                          .advanceBy(milliseconds(c.advance)))
          .emitStrategy(EmitStrategy::onWindowClose())
          .count()
          .toStream()
          .to("out");
      TopologyTestDriver driver(builder.build(), {{"application.id", "w"}});
      auto in = driver.createInputTopic<std::string, int64_t>("in");
      for (const auto& r : input) {
        if (r.key)
          in.pipeInput(*r.key, r.value, r.timestamp);
        else
          driver.pipe("in", std::nullopt, serdes::Int64().serialize("in", r.value), r.timestamp);
      }
      Emitted got;
      auto out = driver.createOutputTopic<Windowed<std::string>, int64_t>(
          "out", serdes::TimeWindowed(serdes::String(), c.size), serdes::Int64());
      for (auto& r : out.readRecordsToList())
        got.emplace_back(r.key->key, r.key->window.start, r.key->window.end, *r.value, r.timestamp);
      ASSERT_GT(expected.size(), 20u);
      ASSERT_EQ(got, expected) << "size " << c.size << " seed " << seed;
    }
  }
}

}  // namespace
}  // namespace oxbow::streams
