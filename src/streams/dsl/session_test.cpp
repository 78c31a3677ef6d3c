// Session windows against a reference model written for the test: randomized out-of-order input
// with merges, late records and null keys, record for record; final results through suppress.
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

struct In {
  std::optional<std::string> key;
  int64_t timestamp;
};

// key, start, end, count (nullopt: a deleted session), record time
using Out = std::tuple<std::string, int64_t, int64_t, std::optional<int64_t>, int64_t>;

std::vector<In> random_input(uint32_t seed, int n, int64_t back) {
  std::mt19937 rng(seed);
  std::vector<In> out;
  int64_t now = 0;
  for (int i = 0; i < n; ++i) {
    now += std::uniform_int_distribution<int64_t>(0, 25)(rng);
    In r{std::nullopt,
         std::max<int64_t>(0, now - std::uniform_int_distribution<int64_t>(0, back)(rng))};
    if (rng() % 15 != 0) r.key = "k" + std::to_string(rng() % 3);
    out.push_back(r);
  }
  return out;
}

// Kafka's session semantics, written out: stream time is the largest timestamp seen (null keys
// too). A record at t joins its key's sessions [s, e] with e >= t - gap and s <= t + gap; they
// merge with [t, t]. If the merged session ends before stream time - gap - grace, the record is
// dropped. Otherwise, unless the merged session is just [t, t], each joined session is deleted
// (in order of end, then start), then the merged one is written with the joined counts plus one.
// Each change is emitted at the session's end.
std::vector<Out> reference(const std::vector<In>& in, int64_t gap, int64_t grace,
                           int64_t* dropped) {
  std::map<std::string, std::map<std::pair<int64_t, int64_t>, int64_t>> sessions;  // (end, start)
  std::vector<Out> out;
  int64_t stream_time = -1;
  for (const auto& r : in) {
    stream_time = std::max(stream_time, r.timestamp);
    if (!r.key) {
      ++*dropped;
      continue;
    }
    int64_t t = r.timestamp;
    auto& mine = sessions[*r.key];
    std::vector<std::pair<int64_t, int64_t>> joined;
    int64_t start = t, end = t, count = 0;
    for (const auto& [se, c] : mine) {
      auto [e, s] = se;
      if (e < t - gap || s > t + gap) continue;
      joined.push_back(se);
      start = std::min(start, s);
      end = std::max(end, e);
      count += c;
    }
    if (end < stream_time - gap - grace) {
      ++*dropped;
      continue;
    }
    if (!(start == t && end == t)) {
      for (const auto& se : joined) {
        out.emplace_back(*r.key, se.second, se.first, std::nullopt, se.first);
        mine.erase(se);
      }
    }
    mine[{end, start}] = count + 1;
    out.emplace_back(*r.key, start, end, count + 1, end);
  }
  return out;
}

std::vector<Out> read_sessions(TopologyTestDriver& driver) {
  std::vector<Out> got;
  auto topic = driver.createOutputTopic<Windowed<std::string>, std::optional<int64_t>>(
      "out", serdes::SessionWindowed(serdes::String()), Serde<std::optional<int64_t>>());
  while (auto r = driver.read("out")) {
    auto key = serdes::SessionWindowed(serdes::String()).deserialize("out", *r->key);
    std::optional<int64_t> count;
    if (r->value) count = serdes::Int64().deserialize("out", *r->value);
    got.emplace_back(key.key, key.window.start, key.window.end, count, r->timestamp);
  }
  return got;
}

TEST(SessionWindows, CountsMatchTheReferenceOnOutOfOrderInput) {
  struct Case {
    int64_t gap, grace, back;
  };
  for (Case c : {Case{30, 0, 40}, Case{50, 40, 120}, Case{10, 100, 60}}) {
    for (uint32_t seed : {1u, 2u, 3u}) {
      auto input = random_input(seed, 1200, c.back);
      int64_t ref_dropped = 0;
      auto expected = reference(input, c.gap, c.grace, &ref_dropped);
      StreamsBuilder builder;
      builder.stream<std::string, std::string>("in")
          .groupByKey()
          .windowedBy(
              SessionWindows::ofInactivityGapAndGrace(milliseconds(c.gap), milliseconds(c.grace)))
          .count()
          .toStream()
          .to("out");
      TopologyTestDriver driver(builder.build(),
                                {{"application.id", "s"}, {"statestore.cache.max.bytes", "0"}});
      for (const auto& r : input) driver.pipe("in", r.key, std::string("v"), r.timestamp);
      auto got = read_sessions(driver);
      ASSERT_EQ(got.size(), expected.size()) << "gap " << c.gap << " seed " << seed;
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_EQ(got[i], expected[i]) << "record " << i << " gap " << c.gap << " seed " << seed;
      EXPECT_EQ(driver.droppedRecords(), ref_dropped);
      size_t deletes = 0;
      for (const auto& o : expected) deletes += !std::get<3>(o).has_value();
      EXPECT_GT(deletes, 10u);  // sessions did merge
    }
  }
}

// suppress(untilWindowCloses) over the session table, written out: each update (a session's new
// count, or its deletion) waits under its session from the first update buffered for it, until
// the suppression's stream time (the latest update time it saw) minus gap minus grace reaches the
// session's end; due sessions leave by end, then arrival; deletions are not emitted. As in Kafka,
// a session emitted so can still be merged into a later one by a record that is not itself late.
std::vector<Out> final_results(const std::vector<Out>& changes, int64_t wait) {
  struct Held {
    Out latest;
    int64_t seq;
  };
  std::map<std::tuple<std::string, int64_t, int64_t>, Held> held;
  std::vector<Out> out;
  int64_t observed = -1, seq = 0;
  for (const auto& c : changes) {
    observed = std::max(observed, std::get<4>(c));
    auto id = std::make_tuple(std::get<0>(c), std::get<1>(c), std::get<2>(c));
    auto it = held.find(id);
    if (it == held.end())
      held[id] = {c, seq++};
    else
      it->second.latest = c;
    while (true) {
      auto due = held.end();
      for (auto h = held.begin(); h != held.end(); ++h) {
        int64_t end = std::get<2>(h->first);
        if (end > observed - wait) continue;
        if (due == held.end() || std::make_pair(end, h->second.seq) <
                                     std::make_pair(std::get<2>(due->first), due->second.seq))
          due = h;
      }
      if (due == held.end()) break;
      if (std::get<3>(due->second.latest)) out.push_back(due->second.latest);
      held.erase(due);
    }
  }
  return out;
}

TEST(SessionWindows, FinalResultsMatchTheReference) {
  for (uint32_t seed : {9u, 10u, 11u}) {
    auto input = random_input(seed, 1500, 60);
    int64_t gap = 40, grace = 30;
    input.push_back({std::string("flush"), 1'000'000});  // closes every session
    int64_t dropped = 0;
    auto expected = final_results(reference(input, gap, grace, &dropped), gap + grace);
    StreamsBuilder builder;
    builder.stream<std::string, std::string>("in")
        .groupByKey()
        .windowedBy(SessionWindows::ofInactivityGapAndGrace(milliseconds(gap), milliseconds(grace)))
        .count()
        .suppress(Suppressed<Windowed<std::string>>::untilWindowCloses(BufferConfig::unbounded()))
        .toStream()
        .to("out");
    TopologyTestDriver driver(builder.build(),
                              {{"application.id", "s"}, {"statestore.cache.max.bytes", "0"}});
    for (const auto& r : input) driver.pipe("in", r.key, std::string("v"), r.timestamp);
    auto got = read_sessions(driver);
    EXPECT_GT(expected.size(), 100u);
    ASSERT_EQ(got, expected) << "seed " << seed;
  }
}

TEST(SessionWindows, ARetentionBelowGapPlusGraceIsRefused) {
  StreamsBuilder builder;
  auto sessions = builder.stream<std::string, std::string>("in").groupByKey().windowedBy(
      SessionWindows::ofInactivityGapAndGrace(milliseconds(100), milliseconds(50)));
  EXPECT_THROW(
      sessions.count(Materialized<std::string, int64_t>::as("s").withRetention(milliseconds(149))),
      std::invalid_argument);
  EXPECT_THROW(SessionWindows::ofInactivityGapWithNoGrace(milliseconds(0)), std::invalid_argument);
}

}  // namespace
}  // namespace oxbow::streams
