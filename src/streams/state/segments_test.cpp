// Window stores kept in segments: every store type against a model that expires whole segments,
// and RocksDB's segments across restarts, restoration and local state written before segments.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <random>

#include "streams/state/rocksdb_store.h"
#include "streams/state/segments.h"
#include "streams/state/stores.h"
#include "streams/state/window_key.h"

namespace oxbow::streams::detail {
namespace {

const RecordContext kNoContext;

class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("oxbow-segments-test-" + std::to_string(::getpid()) + "-" + std::to_string(n_++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string path(const std::string& sub) const { return (path_ / sub).string(); }

 private:
  static inline int n_ = 0;
  std::filesystem::path path_;
};

std::shared_ptr<RocksDbMemory> memory() {
  return std::make_shared<RocksDbMemory>(16 << 20);
}

// Retention 2 min: segments of 60 s.
const SegmentLayout kLayout = SegmentLayout::of(120000, false);

std::string window(const std::string& key, int64_t start) {
  return window_store_key(key, start);
}

// The segments' families of the RocksDB store at `path`, as the next open finds them.
size_t segment_families(const std::string& path) {
  auto store = RocksDbStore::open("s", path, memory(), false);
  return store->segment_families();
}

// A store without segments, with the same expiry: what a segmented store must answer.
class Model {
 public:
  void put(const std::string& key, const std::optional<std::string>& value) {
    auto time = kLayout.time_of(key);
    if (time && *time > observed_) {
      observed_ = *time;
      if (auto live = kLayout.first_live_at(observed_)) drop_before(*live);
    }
    if (time && kLayout.segment_at(*time) < first_live_) return;
    if (value)
      map_[key] = *value;
    else
      map_.erase(key);
  }
  void drop_before(int64_t segment) {
    first_live_ = std::max(first_live_, segment);
    for (auto it = map_.begin(); it != map_.end();) {
      auto s = kLayout.segment_of(it->first);
      it = s && *s < first_live_ ? map_.erase(it) : std::next(it);
    }
  }
  std::optional<std::string> get(const std::string& key) const {
    auto it = map_.find(key);
    return it == map_.end() ? std::nullopt : std::optional<std::string>(it->second);
  }
  std::vector<BytesPair> range(const std::string& from, const std::string& to) const {
    std::vector<BytesPair> out;
    for (auto it = map_.lower_bound(from); from <= to && it != map_.end() && it->first <= to; ++it)
      out.push_back(*it);
    return out;
  }
  std::vector<BytesPair> prefix(const std::string& p) const {
    std::vector<BytesPair> out;
    for (const auto& kv : map_)
      if (kv.first.compare(0, p.size(), p) == 0) out.push_back(kv);
    return out;
  }
  std::vector<BytesPair> all() const { return {map_.begin(), map_.end()}; }

 private:
  std::map<std::string, std::string> map_;
  int64_t observed_ = -1;
  int64_t first_live_ = INT64_MIN;
};

// What a cursor over `range` reads: the store's scan (the stream thread's) and its query's must
// agree; in segment order (keys too short to carry a time first), each segment by key bytes.
std::vector<BytesPair> scanned(KeyValueStore& store, const KeyRange& range) {
  std::vector<BytesPair> out, queried;
  for (auto c = store.scan(range); c->valid(); c->next()) out.emplace_back(c->key(), c->value());
  for (auto c = store.query_scan(range); c->valid(); c->next())
    queried.emplace_back(c->key(), c->value());
  EXPECT_EQ(out, queried);
  return out;
}

std::vector<BytesPair> in_scan_order(std::vector<BytesPair> rows, bool reverse) {
  ScanOrder order{kLayout, reverse};
  std::stable_sort(rows.begin(), rows.end(), [&](const BytesPair& a, const BytesPair& b) {
    return order.before(a.first, b.first);
  });
  return rows;
}

// Windows of a few keys (one a prefix of another) over about five minutes of time that mostly
// moves on, some late, and keys too short to carry a time; reads of every kind between.
void check_against_model(KeyValueStore& store, uint32_t seed) {
  dynamic_cast<SegmentedStore&>(store).use_segments(kLayout);
  std::mt19937 rng(seed);
  Model model;
  const std::vector<std::string> keys{"a", "ab", "b", "k1", "k2"};
  int64_t time = 0;
  auto key = [&] {
    if (rng() % 20 == 0) return std::string("t") + std::to_string(rng() % 5);  // timeless
    int64_t start = std::max<int64_t>(0, time - static_cast<int64_t>(rng() % 90000)) / 1000 * 1000;
    return window(keys[rng() % keys.size()], start);
  };
  for (int i = 0; i < 6000; ++i) {
    time += 50;
    int op = static_cast<int>(rng() % 20);
    std::string k = key();
    if (op < 10) {
      std::string v = "v" + std::to_string(rng());
      store.put(k, v, kNoContext);
      model.put(k, v);
    } else if (op < 12) {
      store.put(k, std::nullopt, kNoContext);
      model.put(k, std::nullopt);
    } else if (op < 15) {
      ASSERT_EQ(store.get(k), model.get(k)) << i;
    } else if (op < 17) {
      std::string a = key(), b = key();
      ASSERT_EQ(store.range(a, b), model.range(a, b)) << i;
      bool reverse = rng() % 2;
      ASSERT_EQ(scanned(store, KeyRange::between(a, b, reverse)),
                in_scan_order(model.range(a, b), reverse))
          << i;
    } else if (op < 19) {
      std::string p = keys[rng() % keys.size()];
      ASSERT_EQ(store.prefix_scan(p), model.prefix(p)) << i;
      KeyRange prefixed = KeyRange::with_prefix(p);
      prefixed.reverse = rng() % 2;
      ASSERT_EQ(scanned(store, prefixed), in_scan_order(model.prefix(p), prefixed.reverse)) << i;
    } else {
      // The task's expiry, a little ahead of what the store saw.
      int64_t live = kLayout.segment_at(std::max<int64_t>(0, time - 150000));
      dynamic_cast<SegmentedStore&>(store).drop_segments_before(live);
      model.drop_before(live);
    }
  }
  ASSERT_EQ(store.all(), model.all());
  for (bool reverse : {false, true})
    ASSERT_EQ(scanned(store, KeyRange::everything(reverse)), in_scan_order(model.all(), reverse));
}

TEST(Segments, EveryStoreTypeMatchesAModelThatExpiresWholeSegments) {
  auto in_memory = make_in_memory_store("s");
  check_against_model(*in_memory, 1);
  TempDir dir;
  auto direct = RocksDbStore::open("s", dir.path("direct"), memory(), false);
  check_against_model(*direct, 2);
  auto buffered = RocksDbStore::open("s", dir.path("buffered"), memory(), true);
  check_against_model(*buffered, 3);
}

TEST(Segments, LayoutFollowsKafkasSegmentIntervalAndKeys) {
  EXPECT_EQ(SegmentLayout::of(1000, false).interval_ms, 60000);
  EXPECT_EQ(SegmentLayout::of(300000, false).interval_ms, 150000);
  EXPECT_EQ(kLayout.segment_of(window("k", 59999)), 0);
  EXPECT_EQ(kLayout.segment_of(window("k", 60000)), 1);
  EXPECT_EQ(kLayout.segment_at(-1), -1);
  EXPECT_FALSE(kLayout.segment_of("short"));
  // Sessions by their end: key, end, start.
  auto sessions = SegmentLayout::of(1000, true);
  std::string end_130s = window_store_key("", 130000).substr(0, 8);
  EXPECT_EQ(sessions.segment_of("k" + end_130s + std::string(8, '\0')), 2);
  EXPECT_FALSE(kLayout.first_live_at(119999));
  EXPECT_EQ(kLayout.first_live_at(180000), 1);
}

// Dropped segments stay gone across a restart, live ones stay; in buffered (exactly-once) mode
// a drop hides the windows at once and removes their family with the next commit.
TEST(Segments, ExpiredSegmentsStayGoneAfterARestartAndLiveOnesStay) {
  for (bool buffered : {false, true}) {
    TempDir dir;
    auto mem = memory();
    {
      auto store = RocksDbStore::open("s", dir.path("db"), mem, buffered);
      store->use_segments(kLayout);
      for (int64_t start = 0; start < 240000; start += 10000)
        store->put(window("k", start), "v" + std::to_string(start), kNoContext);
      store->commit(24);
      // Pending in buffered mode when its segment is dropped: written, then dropped at commit.
      store->put(window("k", 100000), std::string("pending"), kNoContext);
      EXPECT_TRUE(store->drop_segments_before(2));
      EXPECT_FALSE(store->drop_segments_before(2));
      EXPECT_EQ(store->get(window("k", 110000)), std::nullopt);
      EXPECT_EQ(store->get(window("k", 120000)), "v120000");
      EXPECT_EQ(store->all().size(), 12u);
      store->put(window("k", 50000), std::string("expired"), kNoContext);  // skipped
      EXPECT_EQ(store->get(window("k", 50000)), std::nullopt);
      store->commit(25);
    }
    EXPECT_EQ(segment_families(dir.path("db")), 2u);
    auto store = RocksDbStore::open("s", dir.path("db"), mem, buffered);
    store->use_segments(kLayout);
    EXPECT_EQ(store->committed_offset(), 25);
    auto all = store->all();
    ASSERT_EQ(all.size(), 12u);
    EXPECT_EQ(all.front().first, window("k", 120000));
    EXPECT_EQ(all.back().second, "v230000");
  }
}

// Restoring a changelog that holds more than retention: a window is restored unless windows
// restored after it expired its segment, and no more than the live segments are ever kept.
TEST(Segments, RestorationKeepsOnlyWhatTheWindowsRestoredLaterLeaveLive) {
  TempDir dir;
  {
    auto store = RocksDbStore::open("s", dir.path("db"), memory(), false);
    store->use_segments(kLayout);
    for (int64_t start = 0; start < 600000; start += 1000)
      store->restore(window(start % 2000 ? "a" : "b", start), std::string("v"));
    store->restore(window("a", 1000), std::string("too late"));
    store->restore("timeless", std::string("kept"));
    store->finish_restore_batch(601);
    // Observed 599 s: oldest kept 479 s, in segment 7.
    auto all = store->all();
    EXPECT_EQ(all.size(), 600u - 420u + 1u);
    EXPECT_EQ(store->get(window("b", 420000)), "v");
    EXPECT_EQ(store->get(window("b", 418000)), std::nullopt);
    EXPECT_EQ(store->get("timeless"), "kept");
  }
  EXPECT_EQ(segment_families(dir.path("db")), 3u);
}

// A window store written before stores had segments (everything in "default") is still read: its
// windows move into their segments when it is first opened as one, expired ones are deleted, and
// the committed offset stays (nothing to restore).
TEST(Segments, WindowsWrittenBeforeSegmentsMoveIntoThemOnOpen) {
  TempDir dir;
  auto mem = memory();
  {
    auto store = RocksDbStore::open("s", dir.path("db"), mem, false);
    for (int64_t start = 0; start < 300000; start += 30000)
      store->put(window("k", start), "v" + std::to_string(start), kNoContext);
    store->put("timeless", std::string("t"), kNoContext);
    store->commit(7);
  }
  EXPECT_EQ(segment_families(dir.path("db")), 0u);
  for (int open = 0; open < 2; ++open) {
    auto store = RocksDbStore::open("s", dir.path("db"), mem, false);
    store->use_segments(kLayout);
    EXPECT_EQ(store->committed_offset(), 7);
    // Observed 270 s: oldest kept 150 s, in segment 2 (from 120 s).
    auto all = store->all();
    ASSERT_EQ(all.size(), 7u) << open;  // 120 s to 270 s, and the timeless key
    EXPECT_EQ(all.front().first, window("k", 120000));
    EXPECT_EQ(all.back().first, "timeless");
    EXPECT_EQ(store->get(window("k", 90000)), std::nullopt);
    EXPECT_EQ(store->get(window("k", 270000)), "v270000");
  }
  EXPECT_EQ(segment_families(dir.path("db")), 3u);
}

// The task's expiry over a cache: windows go below once stream time passes their segment, and
// what the cache last read of them is forgotten (its next write forwards no stale old value).
TEST(Segments, WindowExpiryDropsSegmentsUnderTheLayersAndTheCacheForgetsThem) {
  auto bottom = make_in_memory_store("w");
  KeyValueStore& below = *bottom;
  CacheBudget budget;
  budget.max_bytes = 1 << 20;
  CachingStore cache(std::move(bottom), budget);
  std::vector<std::optional<std::string>> olds;
  cache.set_flush_listener([&](const std::string&, const std::optional<std::string>&,
                               const std::optional<std::string>& old,
                               const RecordContext&) { olds.push_back(old); });
  WindowExpiry expiry;
  expiry.add(below, cache, 1000, false);  // retention 1 s: segments of 60 s
  cache.put(window("k", 0), std::string("1"), kNoContext);
  cache.put(window("k", 60000), std::string("2"), kNoContext);
  cache.flush();
  olds.clear();
  EXPECT_EQ(cache.get(window("k", 0)), "1");
  expiry.expire(60999);  // oldest kept 59.999 s: segment 0 stays
  EXPECT_EQ(below.all().size(), 2u);
  expiry.expire(61000);
  EXPECT_EQ(below.all().size(), 1u);
  EXPECT_EQ(below.get(window("k", 60000)), "2");
  cache.put(window("k", 0), std::string("again"), kNoContext);
  cache.flush();
  ASSERT_EQ(olds.size(), 1u);
  EXPECT_EQ(olds[0], std::nullopt);
  EXPECT_EQ(below.get(window("k", 0)), std::nullopt);  // a write to an expired segment is skipped
}

}  // namespace
}  // namespace oxbow::streams::detail
