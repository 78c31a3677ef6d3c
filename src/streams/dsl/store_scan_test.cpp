// KeyValueIterator through the test driver: a processor scanning its cached store while it writes
// to it, and the driver's own views of a key-value, a window and a session store.
#include <gtest/gtest.h>

#include "oxbow/streams/processor.h"
#include "oxbow/streams/streams_builder.h"
#include "oxbow/streams/test_driver.h"
#include "oxbow/streams/windowed_kstream.h"

namespace oxbow::streams {
namespace {

using Strings = std::vector<std::string>;

// Keeps each key's latest value and forwards, for each record, the keys its store holds in
// [a, m] in reverse, after deleting the key "gone" if the store holds it.
class Lister : public api::Processor<std::string, std::string, std::string, std::string> {
 public:
  void init(Context& context) override {
    context_ = &context;
    store_ = context.getStateStore<std::string, std::string>("kv");
  }
  void process(const api::Record<std::string, std::string>& r) override {
    store_->put(r.key(), r.value());
    std::string keys;
    auto it = store_->reverseRange("a", "m");
    while (it.hasNext()) {
      EXPECT_EQ(it.peekNextKey(), it.peekNextKey());
      auto kv = it.next();
      if (kv.key == "gone") store_->remove(kv.key);  // a write in the middle of the scan
      keys += kv.key + "=" + kv.value + ";";
    }
    it.close();
    EXPECT_FALSE(it.hasNext());
    EXPECT_THROW(it.next(), std::out_of_range);
    context_->forward(r.withValue(keys));
  }

 private:
  Context* context_ = nullptr;
  std::shared_ptr<KeyValueStore<std::string, std::string>> store_;
};

TEST(StoreScans, AProcessorScansItsCachedStoreWhileWritingToIt) {
  StreamsBuilder builder;
  builder.addStateStore(
      Stores::keyValueStoreBuilder<std::string, std::string>(Stores::inMemoryKeyValueStore("kv"))
          .withCachingEnabled());
  builder.stream<std::string, std::string>("in")
      .process([] { return std::make_unique<Lister>(); }, {"kv"})
      .to("out");
  TopologyTestDriver driver(builder.build());
  auto in = driver.createInputTopic<std::string, std::string>("in");
  in.pipeInput("b", std::string("1"), 1);
  in.pipeInput("gone", std::string("2"), 2);
  in.pipeInput("z", std::string("3"), 3);  // outside the range
  in.pipeInput("c", std::string("4"), 4);
  auto out = driver.createOutputTopic<std::string, std::string>("out");
  EXPECT_EQ(out.readValuesToList(), (Strings{"b=1;", "gone=2;b=1;", "b=1;", "c=4;b=1;"}));
}

TEST(StoreScans, TheDriversStoreViewScansLikeAStore) {
  StreamsBuilder builder;
  builder.table<std::string, std::string>("t", Materialized<std::string, std::string>::as("rows"));
  TopologyTestDriver driver(builder.build());
  auto t = driver.createInputTopic<std::string, std::string>("t");
  for (const char* k : {"a1", "b1", "b2", "b3", "c1"}) t.pipeInput(k, std::string("v") + k, 1);
  t.pipeInput("b2", std::nullopt, 2);
  auto rows = driver.getKeyValueStore<std::string, std::string>("rows");
  auto keys = [](KeyValueIterator<std::string, std::string> it) {
    Strings out;
    for (const auto& kv : it) out.push_back(kv.key + "=" + kv.value);
    return out;
  };
  EXPECT_EQ(keys(rows.all()), (Strings{"a1=va1", "b1=vb1", "b3=vb3", "c1=vc1"}));
  EXPECT_EQ(keys(rows.reverseAll()), (Strings{"c1=vc1", "b3=vb3", "b1=vb1", "a1=va1"}));
  EXPECT_EQ(keys(rows.range("b0", "b9")), (Strings{"b1=vb1", "b3=vb3"}));
  EXPECT_EQ(keys(rows.reverseRange("a1", "b1")), (Strings{"b1=vb1", "a1=va1"}));
  EXPECT_EQ(keys(rows.prefixScan(std::string("b"), serdes::String())),
            (Strings{"b1=vb1", "b3=vb3"}));
  EXPECT_TRUE(keys(rows.range("c", "a")).empty());
  auto all = rows.all();
  std::vector<KeyValue<std::string, std::string>> copied(all.begin(), all.end());
  EXPECT_EQ(copied.size(), 4u);
}

using std::chrono::milliseconds;
using std::chrono::seconds;

// Windows as "key@start=value" text.
template <class V>
Strings text(KeyValueIterator<Windowed<std::string>, V> it) {
  Strings out;
  for (const auto& kv : it)
    out.push_back(kv.key.key + "@" + std::to_string(kv.key.window.start) + "=" +
                  std::to_string(kv.value));
  return out;
}

Strings text(WindowStoreIterator<int64_t> it) {
  Strings out;
  for (const auto& kv : it) out.push_back(std::to_string(kv.key) + "=" + std::to_string(kv.value));
  return out;
}

// Tumbling windows of 10 s kept two minutes: segments of 60 s, three of them live over 170 s.
TEST(StoreScans, TheDriversWindowStoreViewReadsSegmentBySegment) {
  StreamsBuilder builder;
  builder.stream<std::string, std::string>("in")
      .groupByKey()
      .windowedBy(TimeWindows::ofSizeWithNoGrace(seconds(10)))
      .count(Materialized<std::string, int64_t>::as("w").withRetention(seconds(120)));
  TopologyTestDriver driver(builder.build());
  auto in = driver.createInputTopic<std::string, std::string>("in");
  // In time order: no grace.
  const std::vector<std::pair<const char*, int64_t>> records = {
      {"a", 1000},  {"b", 5000},   {"b", 7000},   {"a", 61000},  {"a", 62000},
      {"b", 65000}, {"ab", 66000}, {"b", 125000}, {"a", 130000}, {"b", 170000}};
  for (const auto& [k, t] : records) in.pipeInput(k, std::string("x"), t);
  auto w = driver.getWindowStore<std::string, int64_t>("w");
  // Each segment's windows by key, then start: "b"'s first window before "a"'s second.
  EXPECT_EQ(text(w.all()), (Strings{"a@0=1", "b@0=2", "a@60000=2", "ab@60000=1", "b@60000=1",
                                    "a@130000=1", "b@120000=1", "b@170000=1"}));
  EXPECT_EQ(text(w.backwardAll()), (Strings{"b@170000=1", "b@120000=1", "a@130000=1", "b@60000=1",
                                            "ab@60000=1", "a@60000=2", "b@0=2", "a@0=1"}));
  EXPECT_EQ(text(w.fetch("b", 0, 130000)), (Strings{"0=2", "60000=1", "120000=1"}));
  EXPECT_EQ(text(w.backwardFetch("b", 60000, 200000)),
            (Strings{"170000=1", "120000=1", "60000=1"}));
  EXPECT_EQ(text(w.fetch("a", "ab", 60000, 130000)),
            (Strings{"a@60000=2", "ab@60000=1", "a@130000=1"}));
  EXPECT_EQ(text(w.backwardFetch("a", "ab", 60000, 130000)),
            (Strings{"a@130000=1", "ab@60000=1", "a@60000=2"}));
  EXPECT_EQ(text(w.fetchAll(120000, 130000)), (Strings{"a@130000=1", "b@120000=1"}));
  EXPECT_EQ(text(w.backwardFetchAll(0, 0)), (Strings{"b@0=2", "a@0=1"}));
  EXPECT_EQ(w.fetch("a", 60000), 2);
  EXPECT_EQ(w.fetch("a", 70000), std::nullopt);
  EXPECT_TRUE(text(w.fetch("b", "a", 0, 200000)).empty());
}

TEST(StoreScans, TheDriversSessionStoreViewFindsSessions) {
  StreamsBuilder builder;
  builder.stream<std::string, std::string>("in")
      .groupByKey()
      .windowedBy(SessionWindows::ofInactivityGapWithNoGrace(seconds(5)))
      .count(Materialized<std::string, int64_t>::as("s"));
  TopologyTestDriver driver(builder.build());
  auto in = driver.createInputTopic<std::string, std::string>("in");
  in.pipeInput("a", std::string("x"), 1000);
  in.pipeInput("a", std::string("x"), 3000);
  in.pipeInput("b", std::string("x"), 4000);
  in.pipeInput("a", std::string("x"), 20000);
  auto s = driver.getSessionStore<std::string, int64_t>("s");
  EXPECT_EQ(text(s.fetch("a")), (Strings{"a@1000=2", "a@20000=1"}));
  EXPECT_EQ(text(s.backwardFetch("a")), (Strings{"a@20000=1", "a@1000=2"}));
  EXPECT_EQ(text(s.findSessions("a", 3000, 19999)), (Strings{"a@1000=2"}));
  // One segment (segments span at least 60 s): by key, then end.
  EXPECT_EQ(text(s.backwardFindSessions("a", "b", 0, 100000)),
            (Strings{"b@4000=1", "a@20000=1", "a@1000=2"}));
  EXPECT_EQ(text(s.fetch("a", "b")), (Strings{"a@1000=2", "a@20000=1", "b@4000=1"}));
  EXPECT_EQ(s.fetchSession("a", 1000, 3000), 2);
  EXPECT_EQ(s.fetchSession("a", 1000, 2999), std::nullopt);
}

}  // namespace
}  // namespace oxbow::streams
