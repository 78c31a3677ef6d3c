// Windowed cogroups (KIP-150 with windowedBy) on randomized out-of-order input. A time-windowed
// cogroup is checked record for record against a reference written here; every window kind is
// also checked against what the cogroup must equal: one windowed aggregation of the inputs
// merged, whose aggregator does what each input's would (those aggregations have their own
// reference tests in windows_test, session_test and sliding_test).
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <random>
#include <tuple>

#include "oxbow/streams/streams_builder.h"
#include "oxbow/streams/test_driver.h"

namespace oxbow::streams {
namespace {

using std::chrono::milliseconds;

struct Input {
  bool clicks;  // else a purchase
  std::string user;
  int64_t amount;
  int64_t timestamp;
};

// Users u0..u3; timestamps move forward with jitter up to three times the grace period back, so
// that some records are late and some too late.
std::vector<Input> random_input(uint32_t seed, int n, int64_t grace) {
  std::mt19937 rng(seed);
  std::vector<Input> out;
  int64_t now = 0;
  for (int i = 0; i < n; ++i) {
    now += std::uniform_int_distribution<int64_t>(0, 15)(rng);
    int64_t jitter = std::uniform_int_distribution<int64_t>(-3 * grace - 5, grace)(rng);
    out.push_back({rng() % 2 == 0, "u" + std::to_string(rng() % 4),
                   std::uniform_int_distribution<int64_t>(1, 9)(rng),
                   std::max<int64_t>(0, now + jitter)});
  }
  return out;
}

// (user, window start, window end, score), as emitted.
using Emitted = std::vector<std::tuple<std::string, int64_t, int64_t, int64_t>>;

int64_t click_score(int64_t score) {
  return score + 1;
}
int64_t purchase_score(int64_t amount, int64_t score) {
  return score + 10 * amount;
}

// Kafka's time windows written out: stream time is the largest timestamp seen; a record updates
// every window [s, s + size), s a multiple of the advance, that holds it and has not closed
// (its end after stream time minus grace). Scores start at 1000.
Emitted reference(const std::vector<Input>& input, int64_t size, int64_t advance, int64_t grace,
                  int* too_late) {
  std::map<std::pair<std::string, int64_t>, int64_t> score;
  Emitted out;
  int64_t stream_time = -1;
  for (const auto& r : input) {
    stream_time = std::max(stream_time, r.timestamp);
    for (int64_t s = 0; s <= r.timestamp; s += advance) {
      if (r.timestamp >= s + size) continue;
      if (s + size <= stream_time - grace) {
        ++*too_late;
        continue;
      }
      auto [it, fresh] = score.try_emplace({r.user, s}, 1000);
      it->second = r.clicks ? click_score(it->second) : purchase_score(r.amount, it->second);
      out.emplace_back(r.user, s, s + size, it->second);
    }
  }
  return out;
}

enum class Kind { kTime, kSliding, kSession };

// Builds either the cogroup or the merged aggregation it must equal, pipes the input, and
// returns what reached "out" (the windows' ends as the windowed serde reads them).
Emitted run(Kind kind, bool cogroup, const std::vector<Input>& input, int64_t size, int64_t advance,
            int64_t grace) {
  StreamsBuilder builder;
  auto long_serde = serdes::Int64();
  auto clicks = builder.stream<std::string, int64_t>(
      "clicks", Consumed<std::string, int64_t>::with(serdes::String(), long_serde));
  auto purchases = builder.stream<std::string, int64_t>(
      "purchases", Consumed<std::string, int64_t>::with(serdes::String(), long_serde));
  auto grouped = Grouped<std::string, int64_t>::with(serdes::String(), long_serde);
  auto store = Materialized<std::string, int64_t>::as("scores").withValueSerde(long_serde);
  auto init = [] { return int64_t{1000}; };
  auto merge_sessions = [](const std::string&, int64_t a, int64_t b) { return a + b - 1000; };
  auto tw = TimeWindows::ofSizeAndGrace(milliseconds(size), milliseconds(grace))
                .advanceBy(milliseconds(advance));
  auto sliding = SlidingWindows::ofTimeDifferenceAndGrace(milliseconds(size), milliseconds(grace));
  auto sessions = SessionWindows::ofInactivityGapAndGrace(milliseconds(size), milliseconds(grace));
  std::optional<KTable<Windowed<std::string>, int64_t>> table;
  if (cogroup) {
    auto co =
        clicks.groupByKey(grouped)
            .cogroup<int64_t>([](const std::string&, int64_t, int64_t s) { return click_score(s); })
            .cogroup(purchases.groupByKey(grouped),
                     [](const std::string&, int64_t a, int64_t s) { return purchase_score(a, s); });
    if (kind == Kind::kTime) table = co.windowedBy(tw).aggregate(init, store);
    if (kind == Kind::kSliding) table = co.windowedBy(sliding).aggregate(init, store);
    if (kind == Kind::kSession)
      table = co.windowedBy(sessions).aggregate(init, merge_sessions, store);
  } else {
    // Clicks carry a negative amount to tell them apart in the merged stream.
    auto merged = clicks.mapValues<int64_t>([](int64_t) { return int64_t{-1}; }).merge(purchases);
    auto g = merged.groupByKey(grouped);
    auto adder = [](const std::string&, int64_t a, int64_t s) {
      return a < 0 ? click_score(s) : purchase_score(a, s);
    };
    if (kind == Kind::kTime) table = g.windowedBy(tw).aggregate<int64_t>(init, adder, store);
    if (kind == Kind::kSliding)
      table = g.windowedBy(sliding).aggregate<int64_t>(init, adder, store);
    if (kind == Kind::kSession)
      table = g.windowedBy(sessions).aggregate<int64_t>(init, adder, merge_sessions, store);
  }
  table->toStream().to("out");
  TopologyTestDriver driver(builder.build(),
                            {{"application.id", "co"}, {"statestore.cache.max.bytes", "0"}});
  auto c = driver.createInputTopic<std::string, int64_t>("clicks", serdes::String(), long_serde);
  auto p = driver.createInputTopic<std::string, int64_t>("purchases", serdes::String(), long_serde);
  for (const auto& r : input) (r.clicks ? c : p).pipeInput(r.user, r.amount, r.timestamp);
  auto key_serde = kind == Kind::kSession ? serdes::SessionWindowed(serdes::String())
                                          : serdes::TimeWindowed(serdes::String(), size);
  auto out = driver.createOutputTopic<Windowed<std::string>, int64_t>("out", key_serde, long_serde);
  Emitted got;
  for (auto& r : out.readRecordsToList())
    got.emplace_back(r.key->key, r.key->window.start, r.key->window.end, r.value ? *r.value : -1);
  return got;
}

TEST(WindowedCogroup, TimeWindowsMatchTheReferenceRecordForRecord) {
  struct Case {
    int64_t size, advance, grace;
  };
  for (Case w : {Case{100, 100, 30}, Case{100, 40, 20}}) {
    for (uint32_t seed : {5u, 6u}) {
      auto input = random_input(seed, 800, w.grace);
      int too_late = 0;
      Emitted expected = reference(input, w.size, w.advance, w.grace, &too_late);
      ASSERT_GT(too_late, 0) << "the input tested no lateness";
      EXPECT_EQ(run(Kind::kTime, true, input, w.size, w.advance, w.grace), expected)
          << "size " << w.size << " advance " << w.advance << " seed " << seed;
    }
  }
}

TEST(WindowedCogroup, EveryWindowKindEqualsTheMergedAggregation) {
  for (Kind kind : {Kind::kTime, Kind::kSliding, Kind::kSession}) {
    for (uint32_t seed : {7u, 8u, 9u}) {
      auto input = random_input(seed, 600, 20);
      Emitted merged = run(kind, false, input, 50, 50, 20);
      ASSERT_GT(merged.size(), 100u);
      EXPECT_EQ(run(kind, true, input, 50, 50, 20), merged)
          << "kind " << static_cast<int>(kind) << " seed " << seed;
    }
  }
}

TEST(WindowedCogroup, DescribeShowsOneStoreSharedByEachInputsAggregator) {
  StreamsBuilder builder;
  auto a = builder.stream<std::string, std::string>("a").groupByKey();
  auto b = builder.stream<std::string, std::string>("b").groupByKey();
  a.cogroup<int64_t>([](const std::string&, const std::string&, int64_t n) { return n + 1; })
      .cogroup(b, [](const std::string&, const std::string&, int64_t n) { return n + 2; })
      .windowedBy(TimeWindows::ofSizeWithNoGrace(milliseconds(10)))
      .aggregate([] { return int64_t{0}; },
                 Materialized<std::string, int64_t>::with(serdes::String(), serdes::Int64()));
  std::string described = builder.build().describe().toString();
  for (const char* node : {"COGROUPKSTREAM-AGGREGATE-0000000003 (stores: "
                           "[COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000002])",
                           "COGROUPKSTREAM-AGGREGATE-0000000004 (stores: "
                           "[COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000002])",
                           "COGROUPKSTREAM-MERGE-0000000005"})
    EXPECT_NE(described.find(node), std::string::npos) << described;
}

}  // namespace
}  // namespace oxbow::streams
