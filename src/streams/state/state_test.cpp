// The stores against a std::map model, RocksDB's buffered (exactly-once) mode across "crashes",
// and the task directory's lock and checkpoint file.
#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include "streams/state/rocksdb_store.h"
#include "streams/state/state_directory.h"
#include "streams/state/stores.h"
#include "streams/state/timestamped.h"

namespace oxbow::streams::detail {
namespace {

const RecordContext kNoContext;

class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("oxbow-state-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string path(const std::string& sub = "") const { return (path_ / sub).string(); }

 private:
  static inline int counter_ = 0;
  std::filesystem::path path_;
};

std::shared_ptr<RocksDbMemory> memory() {
  return std::make_shared<RocksDbMemory>(16 << 20);
}

std::vector<BytesPair> model_range(const std::map<std::string, std::string>& m,
                                   const std::string& from, const std::string& to) {
  std::vector<BytesPair> out;
  for (auto it = m.lower_bound(from); it != m.end() && it->first <= to && from <= to; ++it)
    out.push_back(*it);
  return out;
}

// Random puts, deletes and reads, each answer compared with the model's.
void check_against_model(KeyValueStore& store, uint32_t seed) {
  std::mt19937 rng(seed);
  std::map<std::string, std::string> model;
  auto key = [&] { return std::string("k") + std::to_string(rng() % 300); };
  std::string into;  // get_into's buffer, reused from read to read as a processor reuses it
  for (int i = 0; i < 5000; ++i) {
    int op = static_cast<int>(rng() % 10);
    std::string k = key();
    if (op < 5) {
      std::string v = "v" + std::to_string(rng());
      store.put(k, v, kNoContext);
      model[k] = v;
    } else if (op < 7) {
      store.put(k, std::nullopt, kNoContext);
      model.erase(k);
    } else if (op < 8) {
      auto it = model.find(k);
      auto expected = it == model.end() ? std::nullopt : std::optional<std::string>(it->second);
      ASSERT_EQ(store.get(k), expected) << k;
      ASSERT_EQ(store.get_into(k, into), expected.has_value()) << k;
      if (expected) {
        ASSERT_EQ(into, *expected) << k;
      }
    } else if (op < 9) {
      std::string a = key(), b = key();
      ASSERT_EQ(store.range(a, b), model_range(model, a, b)) << a << ".." << b;
    } else {
      std::string prefix = k.substr(0, 1 + rng() % 3);
      std::vector<BytesPair> expected;
      for (auto& kv : model)
        if (kv.first.compare(0, prefix.size(), prefix) == 0) expected.push_back(kv);
      ASSERT_EQ(store.prefix_scan(prefix), expected) << prefix;
    }
  }
  ASSERT_EQ(store.all(), std::vector<BytesPair>(model.begin(), model.end()));
}

TEST(StateStores, InMemoryStoreMatchesTheModel) {
  auto store = make_in_memory_store("s");
  check_against_model(*store, 1);
}

// Through a cache small enough to write most keys down, over memory and over RocksDB in both
// write modes: reads answer from its entries, deletes included, or from below.
TEST(StateStores, CachingStoreMatchesTheModel) {
  TempDir dir;
  auto below = [&](int i) -> std::unique_ptr<KeyValueStore> {
    if (i == 0) return make_in_memory_store("s");
    return RocksDbStore::open("s", dir.path(i == 1 ? "direct" : "buffered"), memory(), i == 2);
  };
  for (int i = 0; i < 3; ++i) {
    CacheBudget budget;
    budget.max_bytes = 2000;
    CachingStore cache(below(i), budget);
    check_against_model(cache, 4 + i);
  }
}

TEST(StateStores, RocksDbStoreMatchesTheModelInBothWriteModes) {
  TempDir dir;
  auto direct = RocksDbStore::open("s", dir.path("direct"), memory(), false);
  check_against_model(*direct, 2);
  auto buffered = RocksDbStore::open("s", dir.path("buffered"), memory(), true);
  check_against_model(*buffered, 3);
}

TEST(StateStores, BufferedWritesReachDiskOnlyWithTheirCommit) {
  TempDir dir;
  auto mem = memory();
  {
    auto store = RocksDbStore::open("s", dir.path("db"), mem, true);
    EXPECT_FALSE(store->committed_offset());
    store->put("a", std::string("1"), kNoContext);
    store->commit(10);
    store->put("a", std::string("2"), kNoContext);
    store->put("b", std::string("3"), kNoContext);
    EXPECT_EQ(store->get("a"), "2");  // reads see the open batch
    // Dropped without a commit, as by a crash or an aborted transaction.
  }
  auto store = RocksDbStore::open("s", dir.path("db"), mem, true);
  EXPECT_EQ(store->committed_offset(), 10);
  EXPECT_EQ(store->get("a"), "1");
  EXPECT_EQ(store->get("b"), std::nullopt);
  store->put("b", std::string("4"), kNoContext);
  store->discard();
  EXPECT_EQ(store->get("b"), std::nullopt);
}

TEST(StateStores, DirectWritesAreDurableAndTheOffsetFollowsCommits) {
  TempDir dir;
  auto mem = memory();
  {
    auto store = RocksDbStore::open("s", dir.path("db"), mem, false);
    store->put("a", std::string("1"), kNoContext);
    store->commit(5);
    for (int i = 0; i < 2000; ++i)  // 2 MB: written down in batches before any commit
      store->put("b" + std::to_string(i), std::string(1000, 'x'), kNoContext);
  }
  auto store = RocksDbStore::open("s", dir.path("db"), mem, false);
  EXPECT_EQ(store->committed_offset(), 5);
  EXPECT_EQ(store->get("a"), "1");
  // At-least-once: data may be ahead of its offset; replaying from there repeats those updates.
  EXPECT_EQ(store->get("b0"), std::string(1000, 'x'));
}

TEST(StateStores, RestoreBatchesCarryTheirOffsetAndWipeForgetsEverything) {
  TempDir dir;
  auto store = RocksDbStore::open("s", dir.path("db"), memory(), true);
  for (int i = 0; i < 1000; ++i) store->restore("k" + std::to_string(i), std::string(100, 'x'));
  store->restore("k7", std::nullopt);
  store->finish_restore_batch(1001);
  EXPECT_EQ(store->committed_offset(), 1001);
  EXPECT_EQ(store->get("k7"), std::nullopt);
  EXPECT_EQ(store->get("k8"), std::string(100, 'x'));
  EXPECT_EQ(store->all().size(), 999u);
  store->wipe();
  EXPECT_FALSE(store->committed_offset());
  EXPECT_TRUE(store->all().empty());
}

TEST(StateStores, TaskDirectoryLockIsExclusiveUntilReleased) {
  TempDir dir;
  auto first = TaskDirectory::lock(dir.path("app/0_1"));
  ASSERT_TRUE(first);
  EXPECT_FALSE(TaskDirectory::lock(dir.path("app/0_1")));
  EXPECT_TRUE(TaskDirectory::lock(dir.path("app/0_2")));
  first.reset();
  EXPECT_TRUE(TaskDirectory::lock(dir.path("app/0_1")));
}

TEST(StateStores, CheckpointFileRoundTripsInKafkasFormat) {
  TempDir dir;
  auto task = TaskDirectory::lock(dir.path("app/1_0"));
  EXPECT_TRUE(task->read_checkpoint().empty());
  task->write_checkpoint({{{"app-counts-changelog", 0}, 42}, {{"words", 0}, 7}});
  std::ifstream in(dir.path("app/1_0/.checkpoint"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "0\n2\napp-counts-changelog 0 42\nwords 0 7\n");
  auto back = task->read_checkpoint();
  EXPECT_EQ(back.size(), 2u);
  EXPECT_EQ((back[{"app-counts-changelog", 0}]), 42);
}

// A commit rewrites .checkpoint only once its offsets moved far enough or name other partitions;
// what it skipped is written when the directory closes.
TEST(StateStores, CheckpointFileIsRewrittenAfterEnoughRecordsAndAtClose) {
  TempDir dir;
  const std::pair<std::string, int32_t> changelog{"app-counts-changelog", 0};
  auto file_offset = [&] { return read_checkpoint_file(dir.path("app/1_0"))[changelog]; };
  auto task = TaskDirectory::lock(dir.path("app/1_0"));
  task->checkpoint({{changelog, 5}});
  EXPECT_EQ(file_offset(), 5);  // the first commit's offsets are written at once
  task->checkpoint({{changelog, 5 + TaskDirectory::kCheckpointDelta - 1}});
  EXPECT_EQ(file_offset(), 5);
  task->checkpoint({{changelog, 5 + TaskDirectory::kCheckpointDelta}});
  EXPECT_EQ(file_offset(), 5 + TaskDirectory::kCheckpointDelta);
  task->checkpoint({{changelog, 10 + TaskDirectory::kCheckpointDelta}, {{"words", 0}, 1}});
  EXPECT_EQ(read_checkpoint_file(dir.path("app/1_0")).size(), 2u);  // another partition
  task->checkpoint({{changelog, 20 + TaskDirectory::kCheckpointDelta}, {{"words", 0}, 2}});
  EXPECT_EQ(file_offset(), 10 + TaskDirectory::kCheckpointDelta);
  task.reset();
  EXPECT_EQ(file_offset(), 20 + TaskDirectory::kCheckpointDelta);
}

}  // namespace
}  // namespace oxbow::streams::detail

namespace oxbow::streams::detail {
namespace {

// A key written and deleted between two flushes: a key-value table's cache forwards the delete
// (something may have read the value through the cache), a window or session store's does not,
// and a delete of a key that never had a value forwards nothing either way.
TEST(StateStores, ATransientKeyForwardsItsDeleteFromAKeyValueTablesCache) {
  for (bool key_value : {true, false}) {
    CacheBudget budget;
    budget.max_bytes = 1 << 20;
    CachingStore cache(make_in_memory_store("t"), budget);
    if (key_value) cache.forward_transient_deletes();
    std::vector<std::pair<std::string, bool>> forwarded;  // key, with a new value
    cache.set_flush_listener([&](const std::string& key, const std::optional<std::string>& value,
                                 const std::optional<std::string>& old, const RecordContext&) {
      EXPECT_FALSE(old.has_value());
      forwarded.emplace_back(key, value.has_value());
    });
    cache.put("transient", std::string("v"), kNoContext);
    EXPECT_EQ(cache.get("transient"), "v");
    cache.put("transient", std::nullopt, kNoContext);
    cache.put("absent", std::nullopt, kNoContext);
    cache.flush();
    if (key_value)
      EXPECT_EQ(forwarded, (std::vector<std::pair<std::string, bool>>{{"transient", false}}));
    else
      EXPECT_TRUE(forwarded.empty());
    // The flag lasts until the flush: a delete of the now absent key is not forwarded again.
    forwarded.clear();
    cache.put("transient", std::nullopt, kNoContext);
    cache.flush();
    EXPECT_TRUE(forwarded.empty());
  }
}

// statestore.cache.max.bytes is shared: the caches of one thread's tasks draw on one budget, so
// a store's writes are held back only while all of them together fit, and a store that takes
// the total over writes down (and forwards) its own oldest entries.
TEST(StateStores, CachesShareOneBudgetAndFollowItsResizing) {
  CacheBudget budget;
  budget.max_bytes = 1 << 20;
  std::vector<std::string> forwarded_a, forwarded_b;
  CachingStore a(make_in_memory_store("a"), budget), b(make_in_memory_store("b"), budget);
  a.set_flush_listener([&](const std::string& key, const std::optional<std::string>&,
                           const std::optional<std::string>&,
                           const RecordContext&) { forwarded_a.push_back(key); });
  b.set_flush_listener([&](const std::string& key, const std::optional<std::string>&,
                           const std::optional<std::string>&,
                           const RecordContext&) { forwarded_b.push_back(key); });
  std::string value(1000, 'v');
  for (int i = 0; i < 600; ++i) a.put("a" + std::to_string(i), value, kNoContext);
  EXPECT_TRUE(forwarded_a.empty());  // ~600 KB: within the budget alone
  for (int i = 0; i < 600; ++i) b.put("b" + std::to_string(i), value, kNoContext);
  // Together over 1 MB: b, whose writes crossed the line, forwarded its oldest keys first.
  ASSERT_FALSE(forwarded_b.empty());
  EXPECT_EQ(forwarded_b.front(), "b0");
  EXPECT_TRUE(forwarded_a.empty());
  EXPECT_LE(budget.used, budget.max_bytes);

  // A thread added to the instance halves each thread's share: the next write brings the total
  // down to the new budget.
  budget.max_bytes = 1 << 19;
  a.put("a-late", value, kNoContext);
  EXPECT_FALSE(forwarded_a.empty());
  EXPECT_LE(budget.used, budget.max_bytes);
  a.flush();
  b.flush();
  EXPECT_EQ(budget.used, 0);
  EXPECT_EQ(b.get("b599"), value);
}

}  // namespace
}  // namespace oxbow::streams::detail

namespace oxbow::streams::detail {
namespace {

TEST(StateStores, TimestampedValuesRoundTripAndRefuseShortBytes) {
  auto stored = with_timestamp(-2, "value");
  ASSERT_EQ(stored.size(), 13u);
  EXPECT_EQ(stored.substr(0, 8), std::string(8, '\xff').substr(0, 7) + '\xfe');
  auto split = split_timestamp(stored);
  ASSERT_TRUE(split);
  EXPECT_EQ(split->value, "value");
  EXPECT_EQ(split->timestamp, -2);
  EXPECT_EQ(split_timestamp(with_timestamp(1700000000123, ""))->timestamp, 1700000000123);
  EXPECT_FALSE(split_timestamp(std::nullopt));
  EXPECT_THROW(split_timestamp(std::string("short")), std::runtime_error);
}

}  // namespace
}  // namespace oxbow::streams::detail
