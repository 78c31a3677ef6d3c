#pragma once
// What the typed store views (a processor's KeyValueStore<K, V>, interactive queries'
// ReadOnlyKeyValueStore<K, V>) ask of the byte-level store under them. That store's class stays
// inside the library (src/streams/state/bytes_store.h); these calls are compiled there, so an
// application sees neither its layers nor its virtual functions.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace oxbow::streams {
struct RecordContext;
}

namespace oxbow::streams::detail {

class KeyValueStore;
class StoreAccess;
using BytesPair = std::pair<std::string, std::string>;

// The keys a scan reads, by their bytes: from `from` (included) to `to` (included unless
// `to_exclusive`; none: to the last key), only those starting with `prefix`, smallest first or
// (`reverse`) largest first. A `from` after `to` reads nothing.
struct KeyRange {
  std::string from;
  std::optional<std::string> to;
  bool to_exclusive = false;
  std::string prefix;
  bool reverse = false;
  // Window and session stores scan segment by segment (segments.h), each segment's keys by bytes,
  // as Kafka's segmented stores do. For them only: the times (window starts, session ends) of
  // the keys wanted, which spares the segments outside (a reader still filters: keys of other
  // times may come), and where a resumed scan goes on, strictly after `after` in that order.
  // Other stores ignore these (their scans resume through from and to).
  int64_t time_from = INT64_MIN;
  int64_t time_to = INT64_MAX;
  std::optional<std::string> after;

  static KeyRange between(std::string from, std::string to, bool reverse = false) {
    KeyRange r;
    r.from = std::move(from);
    r.to = std::move(to);
    r.reverse = reverse;
    return r;
  }
  static KeyRange everything(bool reverse = false) {
    KeyRange r;
    r.reverse = reverse;
    return r;
  }
  static KeyRange with_prefix(const std::string& prefix) {
    KeyRange r;
    r.from = prefix;
    r.prefix = prefix;
    return r;
  }

  bool after_to(std::string_view key) const {
    return to && (to_exclusive ? key >= *to : key > *to);
  }
  bool has_prefix(std::string_view key) const { return key.substr(0, prefix.size()) == prefix; }
  bool contains(std::string_view key) const {
    return key >= from && !after_to(key) && has_prefix(key);
  }
};

// What a window or session store's fetch reads: the keys from key_from to key_to by their
// serialized bytes (both included; none: unbounded), and of those the windows that start in
// [from, to], or (`sessions`) the sessions that end at or after `from` and start at or before
// `to`, both included; smallest first, or largest first (`backward`).
struct WindowScan {
  std::optional<std::string> key_from, key_to;
  int64_t from = INT64_MIN;
  int64_t to = INT64_MAX;
  bool sessions = false;
  bool backward = false;
};

// A scan's position in a store (its class stays inside the library, bytes_store.h): the entry
// under it, until next().
class KeyValueCursor;
struct CursorDeleter {
  void operator()(KeyValueCursor* cursor) const;
};
using CursorPtr = std::unique_ptr<KeyValueCursor, CursorDeleter>;
bool cursor_valid(const KeyValueCursor& cursor);
std::string_view cursor_key(const KeyValueCursor& cursor);
std::string_view cursor_value(const KeyValueCursor& cursor);
void cursor_next(KeyValueCursor& cursor);

// From the stream thread, through the store's cache and changelog.
const std::string& store_name(const KeyValueStore& store);
std::optional<std::string> store_get(KeyValueStore& store, const std::string& key);
// value nullopt deletes.
void store_put(KeyValueStore& store, const std::string& key,
               const std::optional<std::string>& value, const RecordContext& context);
// A cursor through the store's layers; the stream thread may write to the store while it scans.
CursorPtr store_scan(KeyValueStore& store, const KeyRange& range);
int64_t store_num_entries(KeyValueStore& store);

// Interactive queries, from other threads: reads that change nothing (bytes_store.h).
std::optional<std::string> query_get(KeyValueStore& store, const std::string& key);
// Every local store of `access` one after another, each read a bounded batch at a time under
// its task's lock (query/query_scan.cpp says why and what a rebalance meanwhile does).
CursorPtr query_scan(std::shared_ptr<const StoreAccess> access, const KeyRange& range);
// The same for a window or session store's fetch: its cursor's keys are the store's (the key's
// bytes, then its window) and its values as stored. `first_only` (a fetch of one key): only the
// first local store with anything for it, as Kafka's composite stores answer.
CursorPtr query_window_scan(std::shared_ptr<const StoreAccess> access, const WindowScan& scan,
                            bool first_only);
// The window start of a window store's key (query_window_scan's keys).
int64_t window_start_of(std::string_view store_key);
int64_t query_num_entries(KeyValueStore& store);

}  // namespace oxbow::streams::detail
