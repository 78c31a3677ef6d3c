// Window and session stores' scans: segment by segment (each segment's keys by bytes), through
// each bottom store (memory, RocksDB in both write modes) kept in segments, under a cache smaller
// than the store whose dirty entries replace, delete and add windows; forward and backward,
// against a model sorted in that order; resumed scans; writes and expiry during a scan; and a scan
// of many windows whose allocations do not grow with them.
#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "common/allocation_counter.h"
#include "oxbow/streams/queryable.h"
#include "streams/state/cursor_test_util.h"
#include "streams/state/cursors.h"
#include "streams/state/rocksdb_store.h"
#include "streams/state/stores.h"
#include "streams/state/window_key.h"
#include "streams/state/window_queries.h"

namespace oxbow::streams::detail {
namespace {

using namespace scan_test;

// Windows start every 10 ms; a segment holds 100 ms of starts.
const SegmentLayout kLayout{1'000'000, 100, false};

ScanOrder order(bool reverse) {
  return ScanOrder{kLayout, reverse};
}

// What a scan of `scan` must return: the model's windows it takes, in segment order.
Rows expected(const Model& model, const WindowScan& scan) {
  Rows out;
  for (const auto& [k, v] : model) {
    std::string_view part(k.data(), k.size() - kWindowKeySuffix);
    int64_t start = window_store_start(k);
    if ((scan.key_from && part < *scan.key_from) || (scan.key_to && part > *scan.key_to)) continue;
    if (start >= scan.from && start <= scan.to) out.emplace_back(k, v);
  }
  ScanOrder o = order(scan.backward);
  std::sort(out.begin(), out.end(),
            [&](const BytesPair& a, const BytesPair& b) { return o.before(a.first, b.first); });
  return out;
}

std::unique_ptr<KeyValueCursor> fetch(KeyValueStore& store, const WindowScan& scan, bool query) {
  auto range = window_range(scan);
  if (!range) return vector_cursor({}, KeyRange::everything());
  return window_cursor(query ? store.query_scan(*range) : store.scan(*range), scan);
}

WindowScan scan_of(std::optional<std::string> from_key, std::optional<std::string> to_key,
                   int64_t from, int64_t to, bool backward) {
  return WindowScan{.key_from = std::move(from_key),
                    .key_to = std::move(to_key),
                    .from = from,
                    .to = to,
                    .backward = backward};
}

std::vector<WindowScan> scans() {
  std::vector<WindowScan> out;
  for (bool backward : {false, true}) {
    out.push_back(scan_of(std::nullopt, std::nullopt, INT64_MIN, INT64_MAX, backward));
    out.push_back(scan_of("k03", "k03", INT64_MIN, INT64_MAX, backward));  // one key
    out.push_back(scan_of("k03", "k03", 150, 420, backward));
    out.push_back(scan_of("k02", "k05", 95, 705, backward));
    out.push_back(scan_of("k05", "k02", 0, 1000, backward));  // keys the wrong way: nothing
    out.push_back(scan_of(std::nullopt, std::nullopt, 300, 300, backward));
  }
  return out;
}

class WindowCursorTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    kind_ = GetParam();
    dir_ = std::filesystem::temp_directory_path() /
           ("oxbow-window-cursor-test-" + std::to_string(::getpid()) + "-" + kind_);
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<KeyValueStore> bottom() {
    std::unique_ptr<KeyValueStore> store;
    if (kind_ == "memory")
      store = make_in_memory_store("w");
    else
      store = RocksDbStore::open("w", (dir_ / std::to_string(opened_++)).string(),
                                 std::make_shared<RocksDbMemory>(16 << 20),
                                 kind_ == "rocksdb-buffered");
    dynamic_cast<SegmentedStore&>(*store).use_segments(kLayout);
    bottom_ = store.get();
    return store;
  }

  // Ten keys' windows every 10 ms over a second (ten segments) written down, then a cache far
  // smaller than the store holding writes that replace, delete and add windows.
  std::unique_ptr<CachingStore> filled(Model& model) {
    budget_.max_bytes = 1 << 20;
    auto cache = std::make_unique<CachingStore>(bottom(), budget_);
    cache->set_flush_listener([this](const std::string&, const std::optional<std::string>&,
                                     const std::optional<std::string>&,
                                     const RecordContext&) { ++written_down_; });
    for (int k = 0; k < 10; ++k)
      for (int64_t start = 0; start < 1000; start += 10) put(*cache, model, k, start, "v");
    cache->flush();
    written_down_ = 0;
    budget_.max_bytes = 2048;
    for (int64_t start : {0, 150, 420, 990}) put(*cache, model, 3, start, "new");
    for (int64_t start : {10, 300, 700}) put(*cache, model, 3, start, std::nullopt);
    put(*cache, model, 4, 305, "added");   // between two windows of a segment
    put(*cache, model, 2, 2000, "added");  // a segment of its own, after the others
    return cache;
  }

  static std::string key(int k) { return "k0" + std::to_string(k); }
  static void put(KeyValueStore& store, Model& model, int k, int64_t start,
                  const std::optional<std::string>& value) {
    std::string store_key = window_store_key(key(k), start);
    store.put(store_key, value, kNoContext);
    if (value)
      model[store_key] = *value;
    else
      model.erase(store_key);
  }

  std::string kind_;
  std::filesystem::path dir_;
  CacheBudget budget_;
  int written_down_ = 0;
  KeyValueStore* bottom_ = nullptr;  // the last bottom(), under its cache
  int opened_ = 0;
};

TEST_P(WindowCursorTest, SegmentBySegmentWithTheCacheOverItBothWays) {
  Model model;
  auto cache = filled(model);
  for (const auto& scan : scans()) {
    std::string what = scan.key_from.value_or("*") + ".." + scan.key_to.value_or("*") + " " +
                       std::to_string(scan.from) + ".." + std::to_string(scan.to) +
                       (scan.backward ? " backward" : "");
    EXPECT_EQ(drain(fetch(*cache, scan, false)), expected(model, scan)) << what;
    EXPECT_EQ(drain(fetch(*cache, scan, true)), expected(model, scan)) << what;
  }
  // The whole store comes in segment order, not key order: k09's first window before k00's
  // second segment.
  Rows all = drain(fetch(*cache, scans()[0], false));
  ASSERT_EQ(all.size(), model.size());
  EXPECT_FALSE(std::is_sorted(all.begin(), all.end()));
  EXPECT_EQ(written_down_, 0);  // the scans forwarded nothing
  cache->flush();
  for (const auto& scan : scans())
    EXPECT_EQ(drain(fetch(*cache, scan, false)), expected(model, scan));
}

// Queries read a batch at a time and go on after the last key they returned: from any entry,
// the resumed scan is the rest of the whole one.
TEST_P(WindowCursorTest, AResumedScanGoesOnInSegmentOrder) {
  Model model;
  auto cache = filled(model);
  for (const auto& scan : scans()) {
    KeyRange range = *window_range(scan);
    Rows whole = drain(window_cursor(cache->query_scan(range), scan));
    for (size_t i = 0; i < whole.size(); i += 37) {
      KeyRange resumed = resumed_after(range, whole[i].first, order(scan.backward));
      Rows rest(whole.begin() + static_cast<std::ptrdiff_t>(i) + 1, whole.end());
      EXPECT_EQ(drain(window_cursor(cache->query_scan(resumed), scan)), rest) << i;
    }
  }
}

TEST_P(WindowCursorTest, WritesDuringAScanNeitherBreakItNorRepeatKeys) {
  Model model;
  auto cache = filled(model);
  for (bool backward : {false, true}) {
    Model before = model;
    std::set<std::string> seen;
    WindowScan scan = scan_of(std::nullopt, std::nullopt, INT64_MIN, INT64_MAX, backward);
    int n = 0;
    for (auto cursor = fetch(*cache, scan, false); cursor->valid(); cursor->next(), ++n) {
      std::string k(cursor->key());
      EXPECT_TRUE(seen.insert(k).second) << k;
      if (!before.count(k)) continue;  // written during this scan
      // The window under the cursor deleted; others written in its segment, in one far ahead
      // and one far behind (evicting, at this cache size, down into the store being read).
      cache->put(k, std::nullopt, kNoContext);
      int64_t start = window_store_start(k);
      cache->put(window_store_key("k10", start + 1), "x", kNoContext);
      cache->put(window_store_key("k10", 5000 + n), "x", kNoContext);
      cache->put(window_store_key("k10", -5000 - n), "x", kNoContext);
    }
    EXPECT_GT(written_down_, 0);
    expect_all_seen_then_reload(*cache, before, seen, model);
  }
}

// Expiry drops segments while a scan is in one: it reads on to that segment's end and passes the
// dropped ones after it.
TEST_P(WindowCursorTest, ExpiryDuringAScanPassesTheDroppedSegments) {
  Model model;
  auto cache = filled(model);
  cache->flush();
  if (auto* rocksdb = dynamic_cast<RocksDbStore*>(bottom_)) rocksdb->commit(std::nullopt);
  auto cursor =
      fetch(*cache, scan_of(std::nullopt, std::nullopt, INT64_MIN, INT64_MAX, false), false);
  ASSERT_TRUE(cursor->valid());
  EXPECT_TRUE(dynamic_cast<SegmentedStore&>(*bottom_).drop_segments_before(3));
  Rows want;
  for (const auto& row : expected(model, scan_of(std::nullopt, std::nullopt, 0, 99, false)))
    want.push_back(row);
  for (const auto& row : expected(model, scan_of(std::nullopt, std::nullopt, 300, 5000, false)))
    want.push_back(row);
  EXPECT_EQ(drain(std::move(cursor)), want);
}

// Interactive queries read 256 entries at a time, each batch resuming in the segments' order;
// key ranges come store after store, a fetch of one key from the first store that has it.
TEST_P(WindowCursorTest, QueriesReadSegmentedStoresInBatches) {
  Model first_model, second_model;
  auto first = filled(first_model);
  auto second = filled(second_model);
  put(*second, second_model, 11, 40, "only here");
  auto access = std::make_shared<FakeAccess>();
  access->name = "w";
  access->stores = {first.get(), second.get()};
  for (const auto& scan : scans()) {
    Rows want = expected(first_model, scan);
    if (!(scan.key_from && scan.key_from == scan.key_to) || want.empty())
      for (auto& row : expected(second_model, scan)) want.push_back(row);
    bool one_key = scan.key_from && scan.key_from == scan.key_to;
    EXPECT_EQ(drain(query_window_scan(access, scan, one_key)), want)
        << scan.key_from.value_or("*") << (scan.backward ? " backward" : "");
  }
  WindowScan only = scan_of(key(11), key(11), INT64_MIN, INT64_MAX, false);
  EXPECT_EQ(drain(query_window_scan(access, only, true)),
            (Rows{{window_store_key(key(11), 40), "only here"}}));
  // A window written past the first batch, ahead of the scan, is read.
  auto cursor = query_window_scan(access, scans()[0], false);
  put(*first, first_model, 9, 950, "later");
  Rows rest = drain(std::move(cursor));
  EXPECT_NE(std::find(rest.begin(), rest.end(), BytesPair{window_store_key(key(9), 950), "later"}),
            rest.end());
}

// A scan holds one segment's cursor and one entry at a time: 5000 windows over ten segments,
// each value longer than std::string's own buffer, read with a bounded number of allocations,
// where a vector of them would make thousands.
TEST_P(WindowCursorTest, AScansAllocationsDoNotGrowWithTheWindows) {
  budget_.max_bytes = 1 << 20;
  auto store = bottom();
  auto* rocksdb = dynamic_cast<RocksDbStore*>(store.get());
  CachingStore cache(std::move(store), budget_);
  const std::string value(40, 'v');
  for (int k = 0; k < 50; ++k)
    for (int64_t start = 0; start < 1000; start += 10)
      cache.put(window_store_key("key" + std::to_string(k), start), value, kNoContext);
  cache.flush();
  if (rocksdb) rocksdb->commit(std::nullopt);  // exactly-once's pending writes committed
  for (int i = 0; i < 10; ++i) cache.put(window_store_key("key7", i * 100), "dirty", kNoContext);
  for (bool backward : {false, true})
    for (bool query : {false, true}) {
      int64_t entries = 0;
      WindowScan scan = scan_of(std::nullopt, std::nullopt, INT64_MIN, INT64_MAX, backward);
      oxbow::testing::start_counting_allocations();
      {
        auto cursor = fetch(cache, scan, query);
        for (; cursor->valid(); cursor->next()) ++entries;
      }
      int64_t allocations = oxbow::testing::stop_counting_allocations();
      EXPECT_EQ(entries, 5000);
      EXPECT_LT(allocations, 300) << (backward ? "backward" : "forward") << (query ? " query" : "");
    }
}

INSTANTIATE_TEST_SUITE_P(Bottoms, WindowCursorTest,
                         ::testing::Values("memory", "rocksdb-direct", "rocksdb-buffered"));

}  // namespace
}  // namespace oxbow::streams::detail
