#pragma once
// The store layers a task stacks: a bottom store (memory; RocksDB in rocksdb_store.h), then
// changelogging (every write also sent to the changelog topic, to the task's partition), then
// caching (writes held per key until flush, so downstream sees a key's latest update per commit).
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "streams/state/cursors.h"
#include "streams/state/key_value_store.h"

namespace oxbow::streams::detail {

std::unique_ptr<KeyValueStore> make_in_memory_store(std::string name);

// Where a changelogging store sends each write (to its changelog topic, at the task's partition).
using ChangelogWriter = std::function<void(
    const std::string& key, const std::optional<std::string>& value, int64_t timestamp)>;

std::unique_ptr<KeyValueStore> make_logging_store(std::unique_ptr<KeyValueStore> inner,
                                                  ChangelogWriter writer);

// The bytes all caches of one stream thread's tasks may hold together: Kafka's
// statestore.cache.max.bytes is per instance, divided evenly among its threads. A cache that
// takes the total over the budget writes down its own oldest entries. `max_bytes` changes when
// threads are added or removed (from another thread, hence atomic); `used` belongs to the thread.
struct CacheBudget {
  std::atomic<int64_t> max_bytes{0};
  int64_t used = 0;
};

class CachingStore : public KeyValueStore {
 public:
  CachingStore(std::unique_ptr<KeyValueStore> inner, CacheBudget& budget)
      : inner_(std::move(inner)), budget_(budget) {}
  ~CachingStore() override;
  void set_flush_listener(FlushListener listener) { listener_ = std::move(listener); }
  // A key-value table's cache: a key written and deleted again between two flushes still
  // forwards its delete (with no old value). Joins read tables through their caches, so something
  // downstream may hold the value that was never forwarded (a foreign-key join's subscriber, a
  // table-table join's result), and only the delete tells it the row is gone. Kafka's cache
  // drops that delete, which can leave such a result behind for good; its uncached tables forward
  // it. Window and session stores keep Kafka's behaviour (their transient keys are merged
  // sessions, which nothing read).
  void forward_transient_deletes() { forward_transient_deletes_ = true; }

  const std::string& name() const override { return inner_->name(); }
  std::optional<std::string> get(const std::string& key) override;
  bool get_into(const std::string& key, std::string& out) override;
  void put(const std::string& key, const std::optional<std::string>& value,
           const RecordContext& context) override;
  std::vector<BytesPair> range(const std::string& from, const std::string& to) override;
  std::vector<BytesPair> prefix_scan(const std::string& prefix) override;
  std::vector<BytesPair> all() override;
  std::unique_ptr<KeyValueCursor> scan(const KeyRange& range) override;
  std::unique_ptr<KeyValueCursor> query_scan(const KeyRange& range) override;
  int64_t approximate_num_entries() override;
  void flush() override;
  void erase_local(const std::vector<std::string>& keys) override;
  std::optional<std::string> query_get(const std::string& key) override;
  int64_t query_num_entries() override;
  const SegmentLayout* segment_layout() const override { return inner_->segment_layout(); }

 private:
  struct Entry;
  using Map = std::unordered_map<std::string, Entry>;
  using Node = std::pair<const std::string, Entry>;
  // The dirty keys, oldest write first, threaded through the entries themselves: no allocation
  // or copy of the key per entry (map nodes keep their addresses).
  struct Order {
    Node* head = nullptr;
    Node* tail = nullptr;
    void push_back(Node* n);
    void remove(Node* n);
  };
  struct Entry {
    std::optional<std::string> value;
    int64_t timestamp = 0;
    std::string topic;
    int32_t partition = -1;
    int64_t offset = -1;
    Headers headers;
    // The value below when the entry became dirty, when known (saves a read at flush).
    std::optional<std::string> old;
    bool old_known = false;
    bool held_value = false;  // some write since the last flush had a value
    Node* prev = nullptr;
    Node* next = nullptr;
  };
  PendingWrites pending_in(const KeyRange& range, const ScanOrder& order) const;
  static int64_t size_of(const std::string& key, const Entry& e);
  std::pair<Node*, bool> emplace(const std::string& key);
  // Forwards and writes down the oldest dirty entries until the cache holds at most `bytes`.
  void evict_until(int64_t bytes);
  void write_down(Node* n);

  std::unique_ptr<KeyValueStore> inner_;
  bool forward_transient_deletes_ = false;
  CacheBudget& budget_;
  FlushListener listener_;
  Map dirty_;
  Order order_;
  bool flushing_ = false;
  // The last value read from below: an aggregation reads a key, then writes it.
  std::string last_read_key_;
  std::optional<std::string> last_read_value_;
  bool last_read_valid_ = false;
  // The entry the last get() found, until the next put() or until it is written down.
  Node* last_hit_ = nullptr;
};

}  // namespace oxbow::streams::detail
