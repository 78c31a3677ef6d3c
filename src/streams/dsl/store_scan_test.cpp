// KeyValueIterator through the test driver: a processor scanning its cached store while it writes
// to it, and the driver's own view of a store.
#include <gtest/gtest.h>

#include "oxbow/streams/processor.h"
#include "oxbow/streams/streams_builder.h"
#include "oxbow/streams/test_driver.h"

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

}  // namespace
}  // namespace oxbow::streams
