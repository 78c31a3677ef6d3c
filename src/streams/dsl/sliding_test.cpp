// Sliding windows (KIP-450) against a brute-force reference written for the test: the windows a
// key's records define and what each holds, after randomized out-of-order input.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <tuple>

#include "oxbow/streams/streams_builder.h"
#include "oxbow/streams/test_driver.h"

namespace oxbow::streams {
namespace {

using std::chrono::milliseconds;

// (key, window start) -> (count, latest record time)
using Final = std::map<std::pair<std::string, int64_t>, std::pair<int64_t, int64_t>>;

// The windows of a key's records, by definition: one ending at each record, [t - d, t], and one
// starting just after each record, [t + 1, t + 1 + d], when a later record falls in it; each
// holds the records within its bounds (both inclusive).
Final brute_force(const std::map<std::string, std::multiset<int64_t>>& records, int64_t d) {
  Final out;
  for (const auto& [key, times] : records) {
    std::set<int64_t> starts;
    for (int64_t t : times) {
      starts.insert(t - d);
      auto after = times.upper_bound(t);
      if (after != times.end() && *after <= t + 1 + d) starts.insert(t + 1);
    }
    for (int64_t s : starts) {
      int64_t count = 0, latest = 0;
      for (auto it = times.lower_bound(s); it != times.end() && *it <= s + d; ++it) {
        ++count;
        latest = std::max(latest, *it);
      }
      out[{key, s}] = {count, latest};
    }
  }
  return out;
}

Final run(const std::vector<std::pair<std::string, int64_t>>& input, int64_t d, int64_t grace,
          int64_t* dropped) {
  StreamsBuilder builder;
  builder.stream<std::string, std::string>("in")
      .groupByKey()
      .windowedBy(SlidingWindows::ofTimeDifferenceAndGrace(milliseconds(d), milliseconds(grace)))
      .count()
      .toStream()
      .to("out");
  TopologyTestDriver driver(builder.build(),
                            {{"application.id", "sl"}, {"statestore.cache.max.bytes", "0"}});
  auto in = driver.createInputTopic<std::string, std::string>("in");
  for (const auto& [k, t] : input) in.pipeInput(k, std::string("v"), t);
  Final got;
  auto out = driver.createOutputTopic<Windowed<std::string>, int64_t>(
      "out", serdes::TimeWindowed(serdes::String(), d), serdes::Int64());
  for (auto& r : out.readRecordsToList()) {
    EXPECT_EQ(r.key->window.end - r.key->window.start, d);
    got[{r.key->key, r.key->window.start}] = {*r.value, r.timestamp};
  }
  *dropped = driver.droppedRecords();
  return got;
}

TEST(SlidingWindows, TheLatestCountOfEveryWindowMatchesTheDefinition) {
  for (int64_t d : {5, 50, 200}) {
    for (uint32_t seed : {1u, 2u, 3u, 4u}) {
      std::mt19937 rng(seed);
      std::vector<std::pair<std::string, int64_t>> input;
      std::map<std::string, std::multiset<int64_t>> records;
      int64_t now = 10'000;
      for (int i = 0; i < 700; ++i) {
        now += std::uniform_int_distribution<int64_t>(0, 30)(rng);
        int64_t t = now - std::uniform_int_distribution<int64_t>(0, 3 * d)(rng);  // out of order
        std::string key = "k" + std::to_string(rng() % 3);
        input.emplace_back(key, t);
        records[key].insert(t);
      }
      int64_t dropped = 0;
      // Grace wide enough that nothing closes: every record counts.
      auto got = run(input, d, 1'000'000, &dropped);
      auto expected = brute_force(records, d);
      EXPECT_EQ(dropped, 0);
      ASSERT_EQ(got.size(), expected.size()) << "d " << d << " seed " << seed;
      EXPECT_EQ(got, expected) << "d " << d << " seed " << seed;
    }
  }
}

TEST(SlidingWindows, EarlyRecordsShareTheFirstWindowAndLateOnesAreDropped) {
  int64_t dropped = 0;
  // d = 10: 3 and 7 are before d, so both fall in [0, 10]; 7's right window [8, 18] holds 12.
  auto got = run({{"a", 3}, {"a", 12}, {"a", 7}}, 10, 100, &dropped);
  Final expected{{{"a", 0}, {2, 7}},    // [0, 10]: 3 and 7
                 {{"a", 4}, {2, 12}},   // [4, 14]: 7 and 12 (3's right window)
                 {{"a", 2}, {2, 12}},   // [2, 12]: 3, 7 and 12 would be 3 ... see below
                 {{"a", 8}, {1, 12}}};  // [8, 18]: 12 (7's right window)
  // [2, 12] is 12's left window: 3, 7 and 12.
  expected[{"a", 2}] = {3, 12};
  EXPECT_EQ(got, expected);
  EXPECT_EQ(dropped, 0);
  // Grace 0: at stream time 1000 a record at 900 is past every window it could touch.
  run({{"a", 1000}, {"a", 900}}, 10, 0, &dropped);
  EXPECT_EQ(dropped, 1);
}

// (key, window start, count, timestamp) in the order emitted.
using Emitted = std::vector<std::tuple<std::string, int64_t, int64_t, int64_t>>;

Emitted run_emitting(const std::vector<std::pair<std::string, int64_t>>& input, int64_t d,
                     int64_t grace, bool on_close) {
  StreamsBuilder builder;
  auto windowed = builder.stream<std::string, std::string>("in").groupByKey().windowedBy(
      SlidingWindows::ofTimeDifferenceAndGrace(milliseconds(d), milliseconds(grace)));
  if (on_close) windowed = windowed.emitStrategy(EmitStrategy::onWindowClose());
  windowed.count().toStream().to("out");
  TopologyTestDriver driver(builder.build(),
                            {{"application.id", "sl"}, {"statestore.cache.max.bytes", "0"}});
  auto in = driver.createInputTopic<std::string, std::string>("in");
  for (const auto& [k, t] : input) in.pipeInput(k, std::string("v"), t);
  auto out = driver.createOutputTopic<Windowed<std::string>, int64_t>(
      "out", serdes::TimeWindowed(serdes::String(), d), serdes::Int64());
  Emitted got;
  for (auto& r : out.readRecordsToList())
    got.emplace_back(r.key->key, r.key->window.start, *r.value, r.timestamp);
  return got;
}

// KIP-825 for sliding windows: each window once, when its end falls before stream time minus
// grace, with the last result the same input gives with every update emitted; in order of start.
TEST(SlidingWindows, EmitOnWindowCloseGivesEachClosedWindowOnceWithItsFinalCount) {
  for (int64_t d : {10, 60}) {
    for (uint32_t seed : {11u, 12u, 13u}) {
      std::mt19937 rng(seed);
      std::vector<std::pair<std::string, int64_t>> input;
      int64_t now = 1'000, max_time = 0;
      for (int i = 0; i < 600; ++i) {
        now += std::uniform_int_distribution<int64_t>(0, 20)(rng);
        int64_t t = now - std::uniform_int_distribution<int64_t>(0, 2 * d)(rng);
        input.emplace_back("k" + std::to_string(rng() % 3), t);
        max_time = std::max(max_time, t);
      }
      int64_t grace = d / 2;
      std::map<std::pair<std::string, int64_t>, std::pair<int64_t, int64_t>> last;
      for (const auto& [k, start, count, ts] : run_emitting(input, d, grace, false))
        last[{k, start}] = {count, ts};
      decltype(last) closed;
      for (const auto& [window, value] : last)
        if (window.second + d < max_time - grace) closed.insert({window, value});
      decltype(last) emitted;
      int64_t previous_start = -1;
      for (const auto& [k, start, count, ts] : run_emitting(input, d, grace, true)) {
        EXPECT_TRUE(emitted.insert({{k, start}, {count, ts}}).second) << "twice: " << k << start;
        EXPECT_GE(start, previous_start);
        previous_start = start;
      }
      ASSERT_GT(closed.size(), 100u);
      EXPECT_EQ(emitted, closed) << "d " << d << " seed " << seed;
    }
  }
}

}  // namespace
}  // namespace oxbow::streams
