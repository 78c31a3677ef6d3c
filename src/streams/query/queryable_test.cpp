// Interactive queries: what can be checked without a broker (the state checks before start(),
// a cache's read-only view merging its pending writes); tests/integration/test_streams_iq.py
// runs the rest against a real broker.
#include <gtest/gtest.h>

#include "oxbow/streams/kafka_streams.h"
#include "oxbow/streams/streams_builder.h"
#include "streams/state/stores.h"

namespace oxbow::streams {
namespace {

Topology counting() {
  StreamsBuilder builder;
  builder.stream<std::string, std::string>("in").groupByKey().count(
      Materialized<std::string, int64_t>::as("counts"));
  return builder.build();
}

TEST(Queryable, StoreBeforeStartThrowsStreamsNotStarted) {
  KafkaStreams app(counting(), {{"application.id", "iq-unit"}, {"bootstrap.servers", "x:1"}});
  auto params = StoreQueryParameters<>::fromNameAndType(
      "counts", QueryableStoreTypes::keyValueStore<std::string, int64_t>());
  try {
    app.store(params);
    FAIL() << "no exception";
  } catch (const StreamsNotStartedException& e) {
    EXPECT_STREQ(e.what(),
                 "KafkaStreams has not been started, you can retry after calling start()");
  }
  // Before the name is looked at, as Kafka.
  auto unknown = StoreQueryParameters<>::fromNameAndType(
      "nope", QueryableStoreTypes::keyValueStore<std::string, int64_t>());
  EXPECT_THROW(app.store(unknown), StreamsNotStartedException);
  EXPECT_THROW(app.store(unknown), InvalidStateStoreException);
}

TEST(Queryable, ParametersAreImmutableCopies) {
  auto p = StoreQueryParameters<>::fromNameAndType(
      "counts", QueryableStoreTypes::timestampedKeyValueStore<std::string, int64_t>());
  auto q = p.withPartition(3).enableStaleStores();
  EXPECT_EQ(p.partition(), std::nullopt);
  EXPECT_FALSE(p.staleStoresEnabled());
  EXPECT_EQ(q.partition(), 3);
  EXPECT_TRUE(q.staleStoresEnabled());
  EXPECT_EQ(q.storeName(), "counts");
}

TEST(Queryable, CacheQueriesMergePendingWritesWithoutFlushing) {
  const RecordContext none;
  detail::CacheBudget budget;
  budget.max_bytes = 1 << 20;
  detail::CachingStore cache(detail::make_in_memory_store("s"), budget);
  int flushed = 0;
  cache.set_flush_listener([&](const std::string&, const std::optional<std::string>&,
                               const std::optional<std::string>&,
                               const RecordContext&) { ++flushed; });
  cache.put("b", "1", none);
  cache.put("d", "2", none);
  cache.flush();
  flushed = 0;
  cache.put("a", "3", none);           // pending, new
  cache.put("b", std::nullopt, none);  // pending delete
  cache.put("d", "4", none);           // pending update
  cache.put("e", "5", none);
  using V = std::vector<detail::BytesPair>;
  auto read = [&](const detail::KeyRange& range) {
    V out;
    for (auto c = cache.query_scan(range); c->valid(); c->next())
      out.emplace_back(c->key(), c->value());
    return out;
  };
  EXPECT_EQ(read(detail::KeyRange::everything()), (V{{"a", "3"}, {"d", "4"}, {"e", "5"}}));
  EXPECT_EQ(read(detail::KeyRange::between("b", "d")), (V{{"d", "4"}}));
  EXPECT_EQ(read(detail::KeyRange::between("e", "a")), V{});
  EXPECT_EQ(read(detail::KeyRange::with_prefix("d")), (V{{"d", "4"}}));
  EXPECT_EQ(cache.query_get("b"), std::nullopt);
  EXPECT_EQ(cache.query_get("d"), "4");
  EXPECT_EQ(flushed, 0);  // nothing forwarded from a query
  cache.flush();
  EXPECT_EQ(read(detail::KeyRange::everything()), (V{{"a", "3"}, {"d", "4"}, {"e", "5"}}));
}

}  // namespace
}  // namespace oxbow::streams
