// KTable.suppress() against a reference model written for the test: final window results
// (untilWindowCloses) and rate limiting (untilTimeLimit), on randomized out-of-order input, and
// the buffer limits.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <tuple>

#include "oxbow/streams/errors.h"
#include "oxbow/streams/streams_builder.h"
#include "oxbow/streams/test_driver.h"

namespace oxbow::streams {
namespace {

using std::chrono::milliseconds;

struct Input {
  std::string key;
  int64_t timestamp;
};

std::vector<Input> random_input(uint32_t seed, int n, int64_t jitter_back) {
  std::mt19937 rng(seed);
  std::vector<Input> out;
  int64_t now = 0;
  for (int i = 0; i < n; ++i) {
    now += std::uniform_int_distribution<int64_t>(0, 15)(rng);
    int64_t ts =
        std::max<int64_t>(0, now + std::uniform_int_distribution<int64_t>(-jitter_back, 5)(rng));
    out.push_back({"k" + std::to_string(rng() % 4), ts});
  }
  return out;
}

// One emitted record: the input record that caused it (its index), key, window start (-1 when not
// windowed), value, timestamp.
using Out = std::tuple<size_t, std::string, int64_t, int64_t, int64_t>;

// What the suppression sees: an update (key, window, new value, timestamp) in arrival order.
struct Update {
  size_t input;  // the index of the record that caused it
  std::string key;
  int64_t start, end;
  int64_t value, timestamp;
};

// Kafka's windowed count, written out: stream time is the largest timestamp seen; a record counts
// in its tumbling window unless the window ended at or before stream time minus grace; the
// update's time is the latest of the window's records.
std::vector<Update> windowed_count_updates(const std::vector<Input>& in, int64_t size,
                                           int64_t grace) {
  std::map<std::pair<std::string, int64_t>, std::pair<int64_t, int64_t>> windows;
  std::vector<Update> out;
  int64_t stream_time = -1;
  for (size_t i = 0; i < in.size(); ++i) {
    const Input& r = in[i];
    stream_time = std::max(stream_time, r.timestamp);
    int64_t start = r.timestamp - r.timestamp % size;
    if (start + size <= stream_time - grace) continue;
    auto& [count, ts] = windows[{r.key, start}];
    ++count;
    ts = std::max(ts, r.timestamp);
    out.push_back({i, r.key, start, start + size, count, ts});
  }
  return out;
}

// The suppression buffer, written out: the latest update per key waits from its first update's
// buffer time (the window end, or the update's time) until the suppression's own stream time (the
// largest update time seen) is `wait` past it; due entries leave oldest buffer time first, ties in
// arrival order.
std::vector<Out> suppress_reference(const std::vector<Update>& updates, bool by_window_end,
                                    int64_t wait, bool windowed) {
  struct Held {
    Update latest;
    int64_t buffer_time, seq;
  };
  std::map<std::pair<std::string, int64_t>, Held> held;
  std::vector<Out> out;
  int64_t observed = -1, seq = 0;
  for (const auto& u : updates) {
    observed = std::max(observed, u.timestamp);
    auto id = std::make_pair(u.key, u.start);
    auto it = held.find(id);
    if (it == held.end())
      held[id] = {u, by_window_end ? u.end : u.timestamp, seq++};
    else
      it->second.latest = u;
    while (true) {
      auto due = held.end();
      for (auto h = held.begin(); h != held.end(); ++h)
        if (h->second.buffer_time <= observed - wait &&
            (due == held.end() || std::tie(h->second.buffer_time, h->second.seq) <
                                      std::tie(due->second.buffer_time, due->second.seq)))
          due = h;
      if (due == held.end()) break;
      const Update& l = due->second.latest;
      out.emplace_back(u.input, l.key, windowed ? l.start : -1, l.value, l.timestamp);
      held.erase(due);
    }
  }
  return out;
}

std::vector<Out> run_windowed(const std::vector<Input>& in, int64_t size, int64_t grace,
                              const Suppressed<Windowed<std::string>>& suppressed) {
  StreamsBuilder builder;
  builder.stream<std::string, std::string>("in")
      .groupByKey()
      .windowedBy(TimeWindows::ofSizeAndGrace(milliseconds(size), milliseconds(grace)))
      .count()
      .suppress(suppressed)
      .toStream()
      .to("out");
  TopologyTestDriver driver(builder.build(),
                            {{"application.id", "s"}, {"statestore.cache.max.bytes", "0"}});
  auto topic = driver.createInputTopic<std::string, std::string>("in");
  auto out = driver.createOutputTopic<Windowed<std::string>, int64_t>(
      "out", serdes::TimeWindowed(serdes::String(), size), serdes::Int64());
  std::vector<Out> got;
  for (size_t i = 0; i < in.size(); ++i) {
    topic.pipeInput(in[i].key, std::string("v"), in[i].timestamp);
    for (auto& r : out.readRecordsToList())
      got.emplace_back(i, r.key->key, r.key->window.start, *r.value, r.timestamp);
  }
  return got;
}

TEST(Suppress, FinalWindowResultsMatchTheReference) {
  for (int64_t grace : {0, 20, 75}) {
    for (uint32_t seed : {1u, 2u, 3u, 4u}) {
      auto input = random_input(seed, 2000, grace + 30);
      auto expected =
          suppress_reference(windowed_count_updates(input, 100, grace), true, grace, true);
      auto got = run_windowed(
          input, 100, grace,
          Suppressed<Windowed<std::string>>::untilWindowCloses(BufferConfig::unbounded()));
      ASSERT_FALSE(expected.empty());
      ASSERT_EQ(got, expected) << "grace " << grace << " seed " << seed;
      // One result per window, never an intermediate one.
      std::set<std::pair<std::string, int64_t>> windows;
      for (const auto& o : got)
        EXPECT_TRUE(windows.insert({std::get<1>(o), std::get<2>(o)}).second);
    }
  }
}

TEST(Suppress, TimeLimitEmitsEachKeysLatestUpdateOncePerInterval) {
  for (int64_t limit : {0, 10, 200}) {
    for (uint32_t seed : {5u, 6u, 7u}) {
      auto input = random_input(seed, 1500, 40);
      // The table: a count per key, every record counted (no windows).
      std::vector<Update> updates;
      std::map<std::string, int64_t> counts, times;
      for (size_t i = 0; i < input.size(); ++i) {
        int64_t& t = times[input[i].key];
        t = std::max(t, input[i].timestamp);
        updates.push_back({i, input[i].key, -1, -1, ++counts[input[i].key], t});
      }
      auto expected = suppress_reference(updates, false, limit, false);
      StreamsBuilder builder;
      builder.stream<std::string, std::string>("in")
          .groupByKey()
          .count()
          .suppress(Suppressed<std::string>::untilTimeLimit(milliseconds(limit),
                                                            BufferConfig::unbounded()))
          .toStream()
          .to("out");
      TopologyTestDriver driver(builder.build(),
                                {{"application.id", "s"}, {"statestore.cache.max.bytes", "0"}});
      auto topic = driver.createInputTopic<std::string, std::string>("in");
      auto out = driver.createOutputTopic<std::string, int64_t>("out");
      std::vector<Out> got;
      for (size_t i = 0; i < input.size(); ++i) {
        topic.pipeInput(input[i].key, std::string("v"), input[i].timestamp);
        for (auto& r : out.readRecordsToList())
          got.emplace_back(i, *r.key, -1, *r.value, r.timestamp);
      }
      ASSERT_EQ(got, expected) << "limit " << limit << " seed " << seed;
      if (limit == 0) {
        EXPECT_EQ(got.size(), updates.size());
      } else if (limit == 200) {
        EXPECT_LT(got.size(), updates.size() / 5);
      }
    }
  }
}

TopologyTestDriver limited_driver(StreamsBuilder& builder, const BufferConfig& buffer) {
  builder.stream<std::string, std::string>("in")
      .groupByKey()
      .count()
      .suppress(Suppressed<std::string>::untilTimeLimit(milliseconds(1000), buffer).withName("sup"))
      .toStream()
      .to("out");
  return TopologyTestDriver(builder.build(),
                            {{"application.id", "s"}, {"statestore.cache.max.bytes", "0"}});
}

TEST(Suppress, AFullBufferEmitsItsOldestEarlyWhenAskedTo) {
  StreamsBuilder builder;
  auto driver = limited_driver(builder, BufferConfig::maxRecords(2).emitEarlyWhenFull());
  auto in = driver.createInputTopic<std::string, std::string>("in");
  in.pipeInput("a", std::string("v"), 1);
  in.pipeInput("b", std::string("v"), 2);
  in.pipeInput("a", std::string("v"), 3);  // still two keys
  auto out = driver.createOutputTopic<std::string, int64_t>("out");
  ASSERT_TRUE(out.isEmpty());
  in.pipeInput("c", std::string("v"), 4);  // three: the oldest, a (count 2), leaves early
  auto records = out.readKeyValuesToList();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].key, "a");
  EXPECT_EQ(records[0].value, 2);
  // The store mirrors the buffer; its changelog is named after the suppression.
  EXPECT_EQ(driver.storeAll("sup-store").size(), 2u);
  auto changelog = driver.createOutputTopic<std::string, std::string>("s-sup-store-changelog");
  EXPECT_FALSE(changelog.isEmpty());
}

TEST(Suppress, AFullStrictBufferStopsTheApplication) {
  StreamsBuilder builder;
  auto driver = limited_driver(builder, BufferConfig::maxRecords(1).shutDownWhenFull());
  // A deliberate stop, not a record's failure: a processing-exception handler is not asked.
  bool asked = false;
  driver.setProcessingExceptionHandler(
      [&](const ErrorHandlerContext&, const Record*, const std::exception&) {
        asked = true;
        return ProcessingExceptionHandlerResponse::CONTINUE;
      });
  auto in = driver.createInputTopic<std::string, std::string>("in");
  in.pipeInput("a", std::string("v"), 1);
  try {
    in.pipeInput("b", std::string("v"), 2);
    FAIL() << "a full strict buffer took another key";
  } catch (const StreamsException& e) {
    EXPECT_NE(std::string(e.what()).find("buffer exceeded its max capacity. Currently [2/1] "
                                         "records"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(asked);
}

TEST(Suppress, UntilWindowClosesNeedsAWindowedTableAndNamesItsNodes) {
  StreamsBuilder builder;
  auto table = builder.stream<std::string, std::string>("in").groupByKey().count();
  EXPECT_THROW(
      table.suppress(Suppressed<std::string>::untilWindowCloses(BufferConfig::unbounded())),
      TopologyException);
  StreamsBuilder windowed;
  windowed.stream<std::string, std::string>("in")
      .groupByKey()
      .windowedBy(TimeWindows::ofSizeWithNoGrace(milliseconds(10)))
      .count()
      .suppress(Suppressed<Windowed<std::string>>::untilWindowCloses(BufferConfig::unbounded()))
      .toStream()
      .to("out");
  std::string described = windowed.build().describe().toString();
  EXPECT_NE(described.find("Processor: KTABLE-SUPPRESS-0000000003 (stores: "
                           "[KTABLE-SUPPRESS-STATE-STORE-0000000004])"),
            std::string::npos)
      << described;
}

}  // namespace
}  // namespace oxbow::streams
