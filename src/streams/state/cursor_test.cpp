// Store scans as cursors: each bottom store (memory, RocksDB in both write modes) under a cache
// holding fewer entries than the store, its dirty entries replacing and deleting the store's,
// forward and reverse, against a std::map model; writes during a scan; interactive queries'
// batched cursor over several stores.
#include <gtest/gtest.h>

#include <unistd.h>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "common/allocation_counter.h"
#include "oxbow/streams/queryable.h"
#include "streams/state/cursor_test_util.h"
#include "streams/state/global_stores.h"
#include "streams/state/rocksdb_store.h"
#include "streams/state/stores.h"

namespace oxbow::streams::detail {
namespace {

using namespace scan_test;

Rows expected(const std::map<std::string, std::string>& model, const KeyRange& range) {
  Rows out;
  for (const auto& [k, v] : model)
    if (range.contains(k)) out.emplace_back(k, v);
  if (range.reverse) std::reverse(out.begin(), out.end());
  return out;
}

std::string key_of(int i) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "k%03d", i);
  return buf;
}

struct Bottom {
  std::string kind;
  std::filesystem::path dir;
  std::unique_ptr<KeyValueStore> open() const {
    if (kind == "memory") return make_in_memory_store("s");
    return RocksDbStore::open("s", dir.string(), std::make_shared<RocksDbMemory>(16 << 20),
                              kind == "rocksdb-buffered");
  }
};

class CursorTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    bottom_.kind = GetParam();
    bottom_.dir = std::filesystem::temp_directory_path() /
                  ("oxbow-cursor-test-" + std::to_string(::getpid()) + "-" + bottom_.kind);
    std::filesystem::remove_all(bottom_.dir);
  }
  void TearDown() override { std::filesystem::remove_all(bottom_.dir); }

  // 200 entries written down, then a cache far smaller than the store holding writes that
  // replace, delete and add entries.
  std::unique_ptr<CachingStore> filled(std::map<std::string, std::string>& model) {
    budget_.max_bytes = 1 << 20;
    auto cache = std::make_unique<CachingStore>(bottom_.open(), budget_);
    cache->set_flush_listener([this](const std::string&, const std::optional<std::string>&,
                                     const std::optional<std::string>&,
                                     const RecordContext&) { ++written_down_; });
    for (int i = 0; i < 200; ++i) {
      cache->put(key_of(i), "v" + std::to_string(i), kNoContext);
      model[key_of(i)] = "v" + std::to_string(i);
    }
    cache->flush();
    written_down_ = 0;
    budget_.max_bytes = 2048;
    for (int i : {10, 50, 150}) {
      cache->put(key_of(i), "new", kNoContext);
      model[key_of(i)] = "new";
    }
    for (int i : {0, 20, 100, 199}) {
      cache->put(key_of(i), std::nullopt, kNoContext);
      model.erase(key_of(i));
    }
    for (const char* k : {"a", "k0505", "z"}) {
      cache->put(k, "added", kNoContext);
      model[k] = "added";
    }
    return cache;
  }

  Bottom bottom_;
  CacheBudget budget_;
  int written_down_ = 0;
};

std::vector<KeyRange> ranges() {
  std::vector<KeyRange> out;
  for (bool reverse : {false, true}) {
    out.push_back(KeyRange::everything(reverse));
    out.push_back(KeyRange::between("k040", "k160", reverse));
    out.push_back(KeyRange::between("k040", "k150", reverse));
    out.back().to_exclusive = true;  // k150 left out
    out.push_back(KeyRange::between("k0", "k010", reverse));
    out.push_back(KeyRange::between("k160", "k040", reverse));  // from after to: nothing
    out.push_back(KeyRange::with_prefix("k05"));
    out.back().reverse = reverse;
  }
  return out;
}

TEST_P(CursorTest, CacheEntriesOverrideAndHideTheStoresInBothDirections) {
  std::map<std::string, std::string> model;
  auto cache = filled(model);
  for (const auto& range : ranges()) {
    std::string what = range.from + ".." + range.to.value_or("") + " prefix " + range.prefix +
                       (range.reverse ? " reverse" : "");
    EXPECT_EQ(drain(cache->scan(range)), expected(model, range)) << what;
    EXPECT_EQ(drain(cache->query_scan(range)), expected(model, range)) << what;
  }
  // The scans forwarded nothing: the dirty entries are still the cache's.
  EXPECT_EQ(written_down_, 0);
  cache->flush();
  EXPECT_EQ(written_down_, 10);
  for (const auto& range : ranges()) EXPECT_EQ(drain(cache->scan(range)), expected(model, range));
}

TEST_P(CursorTest, WritesDuringAScanNeitherBreakItNorRepeatKeys) {
  std::map<std::string, std::string> model;
  auto cache = filled(model);
  for (bool reverse : {false, true}) {
    std::map<std::string, std::string> before = model;
    std::set<std::string> seen;
    KeyRange range = KeyRange::everything(reverse);
    for (auto cursor = cache->scan(range); cursor->valid(); cursor->next()) {
      std::string key(cursor->key());
      EXPECT_TRUE(seen.insert(key).second) << key;
      if (!before.count(key)) continue;  // written during this scan
      // The entry under the cursor deleted, and others written ahead of and behind the cursor
      // (evicting, at this cache size, down into the store the cursor reads).
      cache->put(key, std::nullopt, kNoContext);
      cache->put("y" + key, "x", kNoContext);
      cache->put("0" + key, "x", kNoContext);
    }
    EXPECT_GT(written_down_, 0);
    expect_all_seen_then_reload(*cache, before, seen, model);
  }
}

// A scan holds one entry at a time: reading 5000 entries, each longer than std::string's own
// buffer, allocates a bounded number of times, where a vector of them would allocate thousands.
TEST_P(CursorTest, AScansAllocationsDoNotGrowWithTheStore) {
  budget_.max_bytes = 1 << 20;
  auto bottom = bottom_.open();
  auto* rocksdb = dynamic_cast<RocksDbStore*>(bottom.get());
  CachingStore cache(std::move(bottom), budget_);
  const std::string value(40, 'v');
  for (int i = 0; i < 5000; ++i) cache.put("k" + std::to_string(i), value, kNoContext);
  cache.flush();
  if (rocksdb) rocksdb->commit(std::nullopt);  // exactly-once's pending writes committed
  for (int i = 0; i < 10; ++i) cache.put("k" + std::to_string(i * 7), "dirty", kNoContext);
  for (bool reverse : {false, true}) {
    int64_t entries = 0;
    oxbow::testing::start_counting_allocations();
    {
      auto cursor = cache.scan(KeyRange::everything(reverse));
      for (; cursor->valid(); cursor->next()) ++entries;
    }
    int64_t allocations = oxbow::testing::stop_counting_allocations();
    EXPECT_EQ(entries, 5000);
    EXPECT_LT(allocations, 200) << (reverse ? "reverse" : "forward");
  }
}

INSTANTIATE_TEST_SUITE_P(Bottoms, CursorTest,
                         ::testing::Values("memory", "rocksdb-direct", "rocksdb-buffered"));

// Interactive queries' cursor over several local stores.

TEST(QueryScan, ReadsStoreAfterStoreInBatches) {
  auto one = make_in_memory_store("s");
  auto empty = make_in_memory_store("s");
  auto two = make_in_memory_store("s");
  Rows first, second;
  for (int i = 0; i < 600; ++i) {
    one->put(key_of(i), "1", kNoContext);
    first.emplace_back(key_of(i), "1");
  }
  for (int i = 0; i < 5; ++i) {
    two->put(key_of(i), "2", kNoContext);
    second.emplace_back(key_of(i), "2");
  }
  auto access = std::make_shared<FakeAccess>();
  access->name = "s";
  access->stores = {one.get(), empty.get(), two.get()};
  auto read = [&](const KeyRange& range) { return drain(query_scan(access, range)); };
  Rows all = first;
  all.insert(all.end(), second.begin(), second.end());
  EXPECT_EQ(read(KeyRange::everything()), all);
  Rows backward(first.rbegin(), first.rend());
  backward.insert(backward.end(), second.rbegin(), second.rend());
  EXPECT_EQ(read(KeyRange::everything(true)), backward);
  EXPECT_EQ(read(KeyRange::between("k003", "k003")), (Rows{{"k003", "1"}, {"k003", "2"}}));

  // A write ahead of the scan between two batches is read; a store that changed under the scan
  // (a rebalance) ends it with InvalidStateStoreException.
  auto c = query_scan(access, KeyRange::everything());
  one->put(key_of(599), "later", kNoContext);
  for (int i = 0; i < 599; ++i) cursor_next(*c);
  EXPECT_EQ(cursor_value(*c), "later");
  auto moved = query_scan(access, KeyRange::everything());
  auto replacement = make_in_memory_store("s");
  access->stores[0] = replacement.get();
  for (int i = 0; i < 255; ++i) cursor_next(*moved);
  EXPECT_THROW(cursor_next(*moved), InvalidStateStoreException);
}

// A global store is read a batch at a time under its lock: the global thread writes between them.
TEST(GlobalStoreScan, ReadsInBatchesBothWays) {
  GlobalStores globals;
  KeyValueStore& store = globals.store("g");
  std::map<std::string, std::string> model;
  for (int i = 0; i < 600; ++i) {
    store.put(key_of(i), "v", kNoContext);
    model[key_of(i)] = "v";
  }
  for (const auto& range : ranges()) {
    EXPECT_EQ(drain(store.scan(range)), expected(model, range));
    EXPECT_EQ(drain(store.query_scan(range)), expected(model, range));
  }
  auto cursor = store.scan(KeyRange::everything());
  store.put(key_of(599), "later", kNoContext);  // past the first batch
  for (int i = 0; i < 599; ++i) cursor->next();
  EXPECT_EQ(cursor->value(), "later");
}

}  // namespace
}  // namespace oxbow::streams::detail
