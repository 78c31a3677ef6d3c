#pragma once
// The byte-level key-value store every store is underneath its typed views (the DSL's, and the
// KeyValueStore<K, V> a processor gets): RocksDB or memory at the bottom, then optional
// changelogging and caching layers (this folder). The public headers see only its name and the
// calls of oxbow/streams/detail/store_calls.h.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "oxbow/streams/detail/store_calls.h"
#include "oxbow/streams/record.h"

namespace oxbow::streams::detail {

// A scan's position (store_calls.h). key() and value() are valid until next() or the cursor's end;
// a cursor lives no longer than its store.
class KeyValueCursor {
 public:
  virtual ~KeyValueCursor() = default;
  virtual bool valid() const = 0;
  virtual std::string_view key() const = 0;
  virtual std::string_view value() const = 0;
  virtual void next() = 0;
};

// What stores without a cursor of their own scan through: the whole result read at once.
std::unique_ptr<KeyValueCursor> vector_cursor(std::vector<BytesPair> rows, const KeyRange& range);

struct SegmentLayout;

class KeyValueStore {
 public:
  virtual ~KeyValueStore() = default;
  virtual const std::string& name() const = 0;
  virtual std::optional<std::string> get(const std::string& key) = 0;
  // The same into `out`, whose capacity is reused (RocksDB's PinnableSlice idea): a reader that
  // keeps its buffer from record to record reads without allocating. False when there is none
  // (`out` is then unspecified).
  virtual bool get_into(const std::string& key, std::string& out) {
    auto value = get(key);
    if (value) out.assign(*value);
    return value.has_value();
  }
  // value nullopt deletes. `context`: the record that caused the write (caches forward it).
  virtual void put(const std::string& key, const std::optional<std::string>& value,
                   const RecordContext& context) = 0;
  // [from, to] in byte order, both inclusive as Kafka's range().
  virtual std::vector<BytesPair> range(const std::string& from, const std::string& to) = 0;
  virtual std::vector<BytesPair> prefix_scan(const std::string& prefix) = 0;
  virtual std::vector<BytesPair> all() = 0;
  virtual int64_t approximate_num_entries() = 0;
  // A cursor over `range` for the stream thread, which may write to the store while it scans.
  // Key-value stores read lazily (memory bounded by their layers' pending writes, never by the
  // store's size); the default reads the whole range first.
  virtual std::unique_ptr<KeyValueCursor> scan(const KeyRange& range);
  // Makes buffered writes visible below (caches forward their dirty entries).
  virtual void flush() = 0;
  // Interactive queries' reads, from another thread while the task's lock is held shared (the
  // stream thread holds it exclusively while it writes): they change nothing, not even a cache's
  // bookkeeping. A cache answers from its pending writes merged over the store below, without
  // flushing (a flush forwards downstream, which only the stream thread may do).
  virtual std::optional<std::string> query_get(const std::string& key) { return get(key); }
  // As scan(), for a query: it changes nothing, and lives only while the task's lock is held.
  virtual std::unique_ptr<KeyValueCursor> query_scan(const KeyRange& range) = 0;
  virtual int64_t query_num_entries() { return approximate_num_entries(); }
  // A window or session store's segments (segments.h), whose scans come segment by segment;
  // nullptr for a store scanned in key order. The layers above answer for the store below.
  virtual const SegmentLayout* segment_layout() const { return nullptr; }
  // Deletes `keys` from this task's copy only, not from the changelog: entries that retention
  // expired, which the changelog topic's own retention removes there.
  virtual void erase_local(const std::vector<std::string>& keys) {
    static const RecordContext kNone;
    for (const auto& key : keys) put(key, std::nullopt, kNone);
  }
};

}  // namespace oxbow::streams::detail
