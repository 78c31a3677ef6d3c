// Stream-stream windowed joins against a reference model written for the test: randomized
// out-of-order input on both sides (duplicate keys, null keys and values), record for record.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <tuple>

#include "oxbow/streams/streams_builder.h"
#include "oxbow/streams/test_driver.h"

namespace oxbow::streams {
namespace {

using detail::StreamJoinKind;
using std::chrono::milliseconds;

struct In {
  bool right;
  std::optional<std::string> key, value;
  int64_t timestamp;
};

using Out = std::tuple<std::optional<std::string>, std::string, int64_t>;

std::string joined(const std::optional<std::string>& l, const std::optional<std::string>& r) {
  return l.value_or("null") + "+" + r.value_or("null");
}

// The semantics (Kafka 3.1 on, spurious-result fix, emission not throttled), written out:
// stream time T is the latest time of any record. Side S sees the other side's records at
// [t - before_S, t + after_S] (left: before, after; right: after, before), no older than the
// other side's latest stored time minus retention (before + after + grace) plus one. A record is
// stored on its side after it was joined. Unmatched records of an emitting side (left of a left
// join, both of an outer join) wait in time order (then right before left, then key) until
// time + after_S + grace < T, checked when a record not behind T arrives; one whose window already
// ended before T is emitted at once. A match removes the partner's waiting entries of that time.
struct Reference {
  Reference(StreamJoinKind k, int64_t b, int64_t a, int64_t g)
      : kind(k), before(b), after(a), grace(g) {}
  StreamJoinKind kind;
  int64_t before, after, grace;
  std::vector<Out> out;

  struct Stored {
    std::string key;
    int64_t time;
    std::string value;
  };
  std::vector<Stored> sides[2];
  int64_t observed[2] = {-1, -1};
  int64_t stream_time = -1;
  std::map<std::tuple<int64_t, int, std::string>, std::vector<std::string>> waiting;

  bool emits(bool right) const {
    return kind == StreamJoinKind::kOuter || (kind == StreamJoinKind::kLeft && !right);
  }
  std::string join(bool right, const std::optional<std::string>& mine,
                   const std::optional<std::string>& other) const {
    return right ? joined(other, mine) : joined(mine, other);
  }

  void run(const In& r) {
    int64_t t = r.timestamp;
    stream_time = std::max(stream_time, t);
    int64_t my_before = r.right ? after : before, my_after = r.right ? before : after;
    if (emits(r.right) && !r.key && r.value) {
      out.emplace_back(std::nullopt, join(r.right, r.value, std::nullopt), t);
      return;
    }
    if (!r.key || !r.value) return;
    if (kind != StreamJoinKind::kInner && t == stream_time) {
      for (auto it = waiting.begin(); it != waiting.end();) {
        auto [time, side, key] = it->first;
        if (time + my_after + grace >= stream_time) break;
        for (const auto& v : it->second)
          out.emplace_back(key, side == 1 ? joined(v, std::nullopt) : joined(std::nullopt, v),
                           time);
        it = waiting.erase(it);
      }
    }
    int other = r.right ? 0 : 1;
    int64_t from = std::max<int64_t>(0, t - my_before), to = std::max<int64_t>(0, t + my_after);
    from = std::max(from, observed[other] - (before + after + grace) + 1);
    std::vector<const Stored*> matches;
    for (const auto& s : sides[other])
      if (s.key == *r.key && s.time >= from && s.time <= to) matches.push_back(&s);
    std::stable_sort(matches.begin(), matches.end(),
                     [](const Stored* a, const Stored* b) { return a->time < b->time; });
    for (const Stored* m : matches) {
      waiting.erase({m->time, other == 0 ? 1 : 0, m->key});
      out.emplace_back(r.key, join(r.right, r.value, m->value), std::max(t, m->time));
    }
    if (matches.empty() && emits(r.right)) {
      if (to < stream_time)
        out.emplace_back(r.key, join(r.right, r.value, std::nullopt), t);
      else
        waiting[{t, r.right ? 0 : 1, *r.key}].push_back(*r.value);
    }
    sides[r.right ? 1 : 0].push_back({*r.key, t, *r.value});
    observed[r.right ? 1 : 0] = std::max(observed[r.right ? 1 : 0], t);
  }
};

std::vector<In> random_inputs(uint32_t seed, int n) {
  std::mt19937 rng(seed);
  std::vector<In> out;
  int64_t now = 100;
  for (int i = 0; i < n; ++i) {
    now += std::uniform_int_distribution<int64_t>(0, 10)(rng);
    In r{rng() % 2 == 0, std::nullopt, std::nullopt,
         std::max<int64_t>(0, now + std::uniform_int_distribution<int64_t>(-60, 10)(rng))};
    if (rng() % 20 != 0) r.key = "k" + std::to_string(rng() % 4);
    if (rng() % 20 != 0) r.value = (r.right ? "r" : "l") + std::to_string(i);
    out.push_back(r);
  }
  return out;
}

std::vector<Out> run_join(const std::vector<In>& inputs, StreamJoinKind kind,
                          const JoinWindows& windows) {
  StreamsBuilder builder;
  auto left = builder.stream<std::string, std::string>("left");
  auto right = builder.stream<std::string, std::string>("right");
  auto joiner = [](const std::optional<std::string>& l, const std::optional<std::string>& r) {
    return joined(l, r);
  };
  (kind == StreamJoinKind::kInner  ? left.join<std::string>(right, joiner, windows)
   : kind == StreamJoinKind::kLeft ? left.leftJoin<std::string>(right, joiner, windows)
                                   : left.outerJoin<std::string>(right, joiner, windows))
      .to("out");
  TopologyTestDriver driver(builder.build(), {{"application.id", "sj"}});
  for (const auto& r : inputs) driver.pipe(r.right ? "right" : "left", r.key, r.value, r.timestamp);
  std::vector<Out> got;
  for (auto& r : driver.createOutputTopic<std::string, std::string>("out").readRecordsToList())
    got.emplace_back(r.key, *r.value, r.timestamp);
  return got;
}

TEST(StreamStreamJoin, InnerLeftAndOuterJoinsMatchTheReference) {
  struct Case {
    int64_t before, after, grace;
  };
  for (auto kind : {StreamJoinKind::kInner, StreamJoinKind::kLeft, StreamJoinKind::kOuter}) {
    for (Case c : {Case{30, 30, 10}, Case{50, 10, 0}, Case{0, 25, 40}, Case{0, 0, 20}}) {
      auto windows =
          JoinWindows::ofTimeDifferenceAndGrace(milliseconds(c.before), milliseconds(c.grace))
              .after(milliseconds(c.after));
      for (uint32_t seed : {1u, 2u, 3u}) {
        auto inputs = random_inputs(seed, 700);
        Reference ref(kind, c.before, c.after, c.grace);
        for (const auto& r : inputs) ref.run(r);
        // Equal times only, for a zero-size inner join: few matches, but some.
        ASSERT_GT(ref.out.size(), c.before + c.after == 0 ? 2u : 50u);
        auto got = run_join(inputs, kind, windows);
        ASSERT_EQ(got.size(), ref.out.size())
            << "kind " << static_cast<int>(kind) << " window " << c.before << "/" << c.after
            << " grace " << c.grace << " seed " << seed;
        for (size_t i = 0; i < got.size(); ++i)
          ASSERT_EQ(got[i], ref.out[i])
              << "record " << i << " kind " << static_cast<int>(kind) << " window " << c.before
              << "/" << c.after << " seed " << seed;
      }
    }
  }
}

TEST(StreamStreamJoin, NamesStoresAndChangelogsAsKafka) {
  StreamsBuilder builder;
  auto left = builder.stream<std::string, std::string>("left");
  auto right = builder.stream<std::string, std::string>("right");
  left.leftJoin<std::string>(
          right, [](const std::string& l, const std::string& r) { return l + r; },
          JoinWindows::ofTimeDifferenceWithNoGrace(milliseconds(100)))
      .to("out");
  std::string described = builder.build().describe().toString();
  for (const char* expected :
       {"Processor: KSTREAM-WINDOWED-0000000002 (stores: [KSTREAM-JOINTHIS-0000000004-store])",
        "Processor: KSTREAM-OUTEROTHER-0000000005 (stores: [KSTREAM-JOINTHIS-0000000004-store, "
        "KSTREAM-OUTERSHARED-0000000004-store])",
        "Processor: KSTREAM-MERGE-0000000006 (stores: [])"})
    EXPECT_NE(described.find(expected), std::string::npos) << expected << "\n" << described;
}

TEST(StreamStreamJoin, WindowsRefuseANegativeInterval) {
  EXPECT_THROW(JoinWindows::ofTimeDifferenceWithNoGrace(milliseconds(-1)), std::invalid_argument);
  auto w = JoinWindows::ofTimeDifferenceWithNoGrace(milliseconds(10));
  EXPECT_THROW(w.before(milliseconds(-11)), std::invalid_argument);
  EXPECT_EQ(w.before(milliseconds(-5)).size(), 5);
}

}  // namespace
}  // namespace oxbow::streams
