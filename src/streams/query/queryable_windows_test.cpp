// Interactive queries of window and session stores without a broker: the byte-level scans
// against a model (keys that are prefixes of one another, negative times, pending cache writes),
// and the typed facades over stores a windowed topology filled in the test driver, split into
// two local "partitions". tests/integration/test_streams_iq.py runs them against a real broker.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "oxbow/streams/kafka_streams.h"
#include "oxbow/streams/streams_builder.h"
#include "oxbow/streams/test_driver.h"
#include "streams/query/queryable_core.h"
#include "streams/state/segments.h"
#include "streams/state/stores.h"
#include "streams/state/timestamped.h"
#include "streams/state/window_key.h"
#include "streams/state/window_queries.h"

namespace oxbow::streams {
namespace {

using std::chrono::milliseconds;
using V = std::vector<detail::BytesPair>;

int64_t big_endian_at(const std::string& bytes, size_t at) {
  uint64_t v = 0;
  for (size_t i = at; i < at + 8; ++i) v = (v << 8) | static_cast<unsigned char>(bytes[i]);
  return static_cast<int64_t>(v);
}

// What a fetch reads of one store: window_cursor over the store's query cursor.
V scan_store(detail::KeyValueStore& store, const detail::WindowScan& scan) {
  V out;
  auto range = detail::window_range(scan);
  if (!range) return out;
  for (auto c = detail::window_cursor(store.query_scan(*range), scan); c->valid(); c->next())
    out.emplace_back(c->key(), c->value());
  return out;
}

// Against a model, over a cache with pending writes and deletes over the store below, that store
// unsegmented (scans in key order) and segmented in 10 ms segments (scans segment by segment,
// each in key order), forward and backward.
TEST(QueryableWindows, ScansMatchAModelOverPendingWrites) {
  const RecordContext none;
  const std::vector<std::string> keys = {
      "", "a", std::string("a\0", 2), "a\x01", "a\xff", "ab", "abc", "b", "\xff"};
  for (bool sessions : {false, true})
    for (bool segmented : {false, true}) {
      SCOPED_TRACE(std::string(sessions ? "sessions" : "windows") +
                   (segmented ? ", segmented" : ""));
      const size_t suffix = sessions ? detail::kSessionKeySuffix : detail::kWindowKeySuffix;
      std::mt19937 rng(sessions ? 5 : 7);
      detail::CacheBudget budget;
      budget.max_bytes = 1 << 20;
      auto bottom = detail::make_in_memory_store("s");
      detail::SegmentLayout layout{1000000, 10, sessions};
      if (segmented) dynamic_cast<detail::SegmentedStore&>(*bottom).use_segments(layout);
      detail::CachingStore cache(std::move(bottom), budget);
      int flushed = 0;
      cache.set_flush_listener([&](const std::string&, const std::optional<std::string>&,
                                   const std::optional<std::string>&,
                                   const RecordContext&) { ++flushed; });
      std::map<std::string, std::string> model;
      for (int i = 0; i < 600; ++i) {
        const std::string& k = keys[rng() % keys.size()];
        int64_t a = static_cast<int64_t>(rng() % 60) - 10;  // some negative: sign handling
        int64_t b = a + static_cast<int64_t>(rng() % 20);
        std::string store_key = sessions ? detail::session_windowed_bytes(k, Window{a, b})
                                         : detail::window_store_key(k, a);
        std::optional<std::string> value;
        if (rng() % 6 != 0) value = std::to_string(i);
        cache.put(store_key, value, none);
        if (value)
          model[store_key] = *value;
        else
          model.erase(store_key);
        if (i == 300) cache.flush();  // half below, half pending
      }
      flushed = 0;
      // The model's entries in the store's scan order.
      detail::ScanOrder order;
      if (segmented) order.layout = layout;
      for (int q = 0; q < 500; ++q) {
        detail::WindowScan scan;
        if (rng() % 5) scan.key_from = keys[rng() % keys.size()];
        if (rng() % 5) scan.key_to = keys[rng() % keys.size()];
        if (q % 4 == 0) scan.key_to = scan.key_from;  // one key
        scan.from = static_cast<int64_t>(rng() % 90) - 15;
        scan.to = scan.from + static_cast<int64_t>(rng() % 50) - 8;
        scan.sessions = sessions;
        scan.backward = q % 3 == 0;
        V want;
        for (const auto& [k, v] : model) {
          std::string part = k.substr(0, k.size() - suffix);
          if ((scan.key_from && part < *scan.key_from) || (scan.key_to && part > *scan.key_to))
            continue;
          int64_t first = big_endian_at(k, part.size());
          bool in = sessions ? first >= scan.from && big_endian_at(k, part.size() + 8) <= scan.to
                             : first >= scan.from && first <= scan.to;
          if (in) want.emplace_back(k, v);
        }
        order.reverse = scan.backward;
        std::stable_sort(want.begin(), want.end(), [&](const auto& x, const auto& y) {
          return order.before(x.first, y.first);
        });
        ASSERT_EQ(scan_store(cache, scan), want)
            << "keys " << scan.key_from.value_or("(open)") << " .. "
            << scan.key_to.value_or("(open)") << ", times " << scan.from << " .. " << scan.to
            << (scan.backward ? " backward" : "");
      }
      for (const auto& [k, v] : model) {
        std::string part = k.substr(0, k.size() - suffix);
        int64_t first = big_endian_at(k, part.size());
        auto got =
            sessions ? detail::query_session(cache, part, big_endian_at(k, part.size() + 8), first)
                     : detail::query_window(cache, part, first);
        EXPECT_EQ(got, v);
      }
      EXPECT_EQ(detail::query_window(cache, "zz", 0), std::nullopt);
      EXPECT_EQ(flushed, 0);  // queries forward nothing
    }
}

// The stores a windowed topology fills, read through a StoreAccess over local stores.
class FakeAccess : public detail::StoreAccess {
 public:
  std::vector<detail::KeyValueStore*> stores;
  void visit(const std::function<bool(detail::KeyValueStore&)>& read) const override {
    for (auto* s : stores)
      if (!read(*s)) return;
  }
};

struct Piped {
  std::string key;
  int64_t timestamp;
};

// Out of order, within the grace period. Hopping windows of 10 ms every 5 ms: a has windows 0
// (records 0, 3), 5 (12, 13) and 10 (12, 13); b has 0 and 5; ab 15 and 20. Sessions with a gap of
// 5 ms: a [0, 3] and [12, 13], b [7, 7], ab [20, 20].
const std::vector<Piped> kInput = {{"a", 12}, {"a", 0}, {"b", 7}, {"a", 13}, {"a", 3}, {"ab", 20}};

class QueryableWindowFacades : public ::testing::Test {
 protected:
  void SetUp() override {
    StreamsBuilder builder;
    auto grouped = builder.stream<std::string, std::string>("in").groupByKey();
    grouped
        .windowedBy(TimeWindows::ofSizeAndGrace(milliseconds(10), milliseconds(1000))
                        .advanceBy(milliseconds(5)))
        .count(Materialized<std::string, int64_t>::as("windows"));
    grouped.windowedBy(SessionWindows::ofInactivityGapAndGrace(milliseconds(5), milliseconds(1000)))
        .count(Materialized<std::string, int64_t>::as("sessions"));
    grouped.count(Materialized<std::string, int64_t>::as("counts"));
    TopologyTestDriver driver(builder.build());
    auto in = driver.createInputTopic<std::string, std::string>("in");
    for (const auto& r : kInput) in.pipeInput(r.key, "x", r.timestamp);
    for (const char* name : {"windows", "sessions", "counts"})
      options_[name] = detail::Access::store_options(driver, name);
    // Key a in the first store, pending in its cache over stale values below; the others in the
    // second, flushed. The second also holds a window and a session of a with other values, to
    // show which store answers a query.
    budget_.max_bytes = 1 << 20;
    for (const char* name : {"windows", "sessions"}) {
      bool sessions = std::string(name) == "sessions";
      auto& [first, second] = stores_[name];
      first = std::make_unique<detail::CachingStore>(detail::make_in_memory_store(name), budget_);
      second = std::make_unique<detail::CachingStore>(detail::make_in_memory_store(name), budget_);
      auto rows = driver.storeAll(name);
      auto key_of = [&](const std::string& k) {
        return std::string(sessions ? detail::parse_session_windowed(k).first
                                    : std::string_view(k).substr(0, k.size() - 12));
      };
      for (const auto& [k, v] : rows)
        if (key_of(k) == "a") first->put(k, detail::with_timestamp(1, int64_bytes(77)), {});
      first->flush();
      for (const auto& [k, v] : rows) {
        std::string key = key_of(k);
        // Windows carry their latest record's time, sessions their end (as the DSL writes).
        int64_t time = sessions ? detail::parse_session_windowed(k).second.end : -1;
        if (!sessions) {
          int64_t start = detail::window_store_start(k);
          for (const auto& r : kInput)
            if (r.key == key && r.timestamp >= start && r.timestamp < start + 10)
              time = std::max(time, r.timestamp);
        }
        (key == "a" ? first : second)->put(k, detail::with_timestamp(time, v), {});
      }
      std::string shadow = sessions ? detail::session_windowed_bytes("a", Window{0, 3})
                                    : detail::window_store_key("a", 0);
      second->put(shadow, detail::with_timestamp(1, int64_bytes(99)), {});
      second->flush();
    }
  }

  static std::string int64_bytes(int64_t v) { return serdes::Int64().serialize("", v); }

  template <class Store>
  Store facade(const std::string& name) {
    auto access = std::make_shared<FakeAccess>();
    access->name = name;
    for (auto& s : {stores_[name].first.get(), stores_[name].second.get()})
      access->stores.push_back(s);
    using Value = typename Store::value_type;
    const std::type_info* value_type = &typeid(Value);
    if constexpr (detail::IsValueAndTimestamp<Value>::value)
      value_type = &typeid(decltype(std::declval<Value>().value));
    detail::describe_store(*access, options_.at(name), Store::kKind, Store::kTimestamped,
                           typeid(typename Store::key_type), *value_type);
    return Store(access);
  }

  detail::CacheBudget budget_;
  std::map<std::string, detail::StoreOptions> options_;
  std::map<std::string,
           std::pair<std::unique_ptr<detail::CachingStore>, std::unique_ptr<detail::CachingStore>>>
      stores_;
};

template <class K, class T>
std::vector<std::tuple<K, int64_t, int64_t, T>> flat(KeyValueIterator<Windowed<K>, T> in) {
  std::vector<std::tuple<K, int64_t, int64_t, T>> out;
  for (const auto& kv : in)
    out.emplace_back(kv.key.key, kv.key.window.start, kv.key.window.end, kv.value);
  return out;
}

TEST_F(QueryableWindowFacades, WindowStoreQueries) {
  auto w = facade<ReadOnlyWindowStore<std::string, int64_t>>("windows");
  EXPECT_EQ(w.storeName(), "windows");
  // One window: its start exactly; the first store that has it answers.
  EXPECT_EQ(w.fetch("a", 0), 2);
  EXPECT_EQ(w.fetch("a", 10), 2);
  EXPECT_EQ(w.fetch("a", 1), std::nullopt);
  EXPECT_EQ(w.fetch("b", 5), 1);
  EXPECT_EQ(w.fetch("zz", 0), std::nullopt);
  EXPECT_EQ(w.fetch("a", std::chrono::system_clock::time_point(milliseconds(5))), 2);

  using Starts = std::vector<std::pair<int64_t, int64_t>>;
  auto starts = [](WindowStoreIterator<int64_t> in) {
    Starts out;
    for (const auto& kv : in) out.emplace_back(kv.key, kv.value);
    return out;
  };
  // Both bounds included, oldest first, from one store only.
  EXPECT_EQ(starts(w.fetch("a", 0, 10)), (Starts{{0, 2}, {5, 2}, {10, 2}}));
  EXPECT_EQ(starts(w.fetch("a", 1, 9)), (Starts{{5, 2}}));
  EXPECT_EQ(starts(w.fetch("a", 10, 0)), Starts{});
  EXPECT_EQ(starts(w.backwardFetch("a", 0, 10)), (Starts{{10, 2}, {5, 2}, {0, 2}}));
  EXPECT_EQ(starts(w.fetch("b", -100, 100)), (Starts{{0, 1}, {5, 1}}));
  EXPECT_EQ(starts(w.fetch("ab", 20, 20)), (Starts{{20, 1}}));
  EXPECT_EQ(starts(w.fetch("zz", 0, 100)), Starts{});
  using std::chrono::system_clock;
  EXPECT_EQ(starts(w.fetch("a", system_clock::time_point(milliseconds(5)),
                           system_clock::time_point(milliseconds(10)))),
            (Starts{{5, 2}, {10, 2}}));

  // Key ranges: every store's part, one after the other, by key bytes then start.
  using Rows = std::vector<std::tuple<std::string, int64_t, int64_t, int64_t>>;
  EXPECT_EQ(
      flat(w.fetch("a", "b", 0, 5)),
      (Rows{{"a", 0, 10, 2}, {"a", 5, 15, 2}, {"a", 0, 10, 99}, {"b", 0, 10, 1}, {"b", 5, 15, 1}}));
  EXPECT_EQ(
      flat(w.backwardFetch("a", "b", 0, 5)),
      (Rows{{"a", 5, 15, 2}, {"a", 0, 10, 2}, {"b", 5, 15, 1}, {"b", 0, 10, 1}, {"a", 0, 10, 99}}));
  EXPECT_EQ(flat(w.fetch("ab", "b", 15, 100)), (Rows{{"ab", 15, 25, 1}, {"ab", 20, 30, 1}}));
  EXPECT_EQ(flat(w.fetch("b", "a", 0, 100)), Rows{});
  EXPECT_EQ(flat(w.fetchAll(10, 15)), (Rows{{"a", 10, 20, 2}, {"ab", 15, 25, 1}}));
  EXPECT_EQ(flat(w.backwardFetchAll(10, 15)), (Rows{{"a", 10, 20, 2}, {"ab", 15, 25, 1}}));
  Rows all = flat(w.all());
  EXPECT_EQ(all, (Rows{{"a", 0, 10, 2},
                       {"a", 5, 15, 2},
                       {"a", 10, 20, 2},
                       {"a", 0, 10, 99},
                       {"ab", 15, 25, 1},
                       {"ab", 20, 30, 1},
                       {"b", 0, 10, 1},
                       {"b", 5, 15, 1}}));
  Rows back = flat(w.backwardAll());
  EXPECT_EQ(back, (Rows{{"a", 10, 20, 2},
                        {"a", 5, 15, 2},
                        {"a", 0, 10, 2},
                        {"b", 5, 15, 1},
                        {"b", 0, 10, 1},
                        {"ab", 20, 30, 1},
                        {"ab", 15, 25, 1},
                        {"a", 0, 10, 99}}));

  // The timestamped view: each window's latest record time.
  auto t = facade<ReadOnlyWindowStore<std::string, ValueAndTimestamp<int64_t>>>("windows");
  EXPECT_EQ(t.fetch("a", 0), (ValueAndTimestamp<int64_t>{2, 3}));
  EXPECT_EQ(t.fetch("a", 5), (ValueAndTimestamp<int64_t>{2, 13}));
  auto it = t.fetch("b", 0, 5);
  std::vector<KeyValue<int64_t, ValueAndTimestamp<int64_t>>> ranged(it.begin(), it.end());
  ASSERT_EQ(ranged.size(), 2u);
  EXPECT_EQ(ranged[1].value, (ValueAndTimestamp<int64_t>{1, 7}));
}

TEST_F(QueryableWindowFacades, SessionStoreQueries) {
  auto s = facade<ReadOnlySessionStore<std::string, int64_t>>("sessions");
  using Rows = std::vector<std::tuple<std::string, int64_t, int64_t, int64_t>>;
  // Sessions that overlap [earliest end, latest start], both included.
  EXPECT_EQ(flat(s.findSessions("a", 3, 12)), (Rows{{"a", 0, 3, 2}, {"a", 12, 13, 2}}));
  EXPECT_EQ(flat(s.findSessions("a", 4, 12)), (Rows{{"a", 12, 13, 2}}));
  EXPECT_EQ(flat(s.findSessions("a", 3, 11)), (Rows{{"a", 0, 3, 2}}));
  EXPECT_EQ(flat(s.findSessions("a", 4, 11)), Rows{});
  EXPECT_EQ(flat(s.findSessions("a", 13, 0)), Rows{});
  EXPECT_EQ(flat(s.backwardFindSessions("a", 0, 100)), (Rows{{"a", 12, 13, 2}, {"a", 0, 3, 2}}));
  EXPECT_EQ(flat(s.findSessions("b", 7, 7)), (Rows{{"b", 7, 7, 1}}));
  EXPECT_EQ(flat(s.findSessions("zz", 0, 100)), Rows{});
  // The exact session only.
  EXPECT_EQ(s.fetchSession("a", 0, 3), 2);
  EXPECT_EQ(s.fetchSession("a", 12, 13), 2);
  EXPECT_EQ(s.fetchSession("a", 0, 2), std::nullopt);
  EXPECT_EQ(s.fetchSession("a", 1, 3), std::nullopt);
  EXPECT_EQ(s.fetchSession("b", 7, 7), 1);
  EXPECT_EQ(s.fetchSession("zz", 7, 7), std::nullopt);
  // All of a key's sessions (from the first store that has any); key ranges concatenated.
  EXPECT_EQ(flat(s.fetch("a")), (Rows{{"a", 0, 3, 2}, {"a", 12, 13, 2}}));
  EXPECT_EQ(flat(s.backwardFetch("a")), (Rows{{"a", 12, 13, 2}, {"a", 0, 3, 2}}));
  EXPECT_EQ(flat(s.fetch("zz")), Rows{});
  EXPECT_EQ(flat(s.fetch("a", "ab")),
            (Rows{{"a", 0, 3, 2}, {"a", 12, 13, 2}, {"a", 0, 3, 99}, {"ab", 20, 20, 1}}));
  EXPECT_EQ(flat(s.backwardFetch("a", "ab")),
            (Rows{{"a", 12, 13, 2}, {"a", 0, 3, 2}, {"ab", 20, 20, 1}, {"a", 0, 3, 99}}));
  EXPECT_EQ(flat(s.findSessions("ab", "b", 0, 10)), (Rows{{"b", 7, 7, 1}}));
  EXPECT_EQ(flat(s.backwardFindSessions("a", "b", 10, 100)),
            (Rows{{"a", 12, 13, 2}, {"ab", 20, 20, 1}}));
}

TEST_F(QueryableWindowFacades, StoreTypesMustMatch) {
  auto message = [&](auto make) {
    try {
      make();
    } catch (const InvalidStateStoreException& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  EXPECT_EQ(message([&] { facade<ReadOnlyKeyValueStore<std::string, int64_t>>("windows"); }),
            "Cannot get state store windows because the queryable store type [keyValueStore] does "
            "not accept the actual store type [TimestampedWindowStore].");
  EXPECT_EQ(message([&] { facade<ReadOnlyWindowStore<std::string, int64_t>>("counts"); }),
            "Cannot get state store counts because the queryable store type [windowStore] does "
            "not accept the actual store type [TimestampedKeyValueStore].");
  EXPECT_EQ(message([&] { facade<ReadOnlyWindowStore<std::string, int64_t>>("sessions"); }),
            "Cannot get state store sessions because the queryable store type [windowStore] does "
            "not accept the actual store type [SessionStore].");
  EXPECT_EQ(
      message([&] { facade<ReadOnlySessionStore<std::string, int64_t>>("windows"); }),
      "Cannot get state store windows because the queryable store type [sessionStore] does not "
      "accept the actual store type [TimestampedWindowStore].");
  EXPECT_EQ(message([&] {
              facade<ReadOnlyWindowStore<std::string, ValueAndTimestamp<int64_t>>>("sessions");
            }),
            "Cannot get state store sessions because the queryable store type "
            "[timestampedWindowStore] does not accept the actual store type [SessionStore].");
  EXPECT_EQ(message([&] { facade<ReadOnlyWindowStore<std::string, std::string>>("windows"); }),
            "Cannot get state store windows because the queryable store type [windowStore] does "
            "not accept the actual store type [TimestampedWindowStore] (its value serde Long is "
            "of another type than the one asked for).");
  // A window store's key serde does not tell its type: a key of another type is refused when a
  // query writes it.
  auto wrong_key = facade<ReadOnlyWindowStore<int64_t, int64_t>>("windows");
  EXPECT_EQ(message([&] { wrong_key.fetch(5, 0); }),
            "Cannot get state store windows because the queryable store type [windowStore] does "
            "not accept the actual store type [TimestampedWindowStore] (its key serde writes "
            "another type).");
  auto wrong_session_key = facade<ReadOnlySessionStore<int64_t, int64_t>>("sessions");
  EXPECT_THROW(wrong_session_key.fetch(1), InvalidStateStoreException);
}

}  // namespace
}  // namespace oxbow::streams
