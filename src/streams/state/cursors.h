#pragma once
// The cursors the store layers scan with (bytes_store.h's KeyValueCursor): over an in-memory
// map, and pending writes (a cache's, a buffered RocksDB batch's) laid over the cursor below.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "streams/state/bytes_store.h"
#include "streams/state/segments.h"

namespace oxbow::streams::detail {

// What a scan does with the next key in its direction.
enum class ScanStep { kTake, kSkip, kStop };

inline ScanStep classify(const KeyRange& range, std::string_view key) {
  if (!range.reverse) {
    if (range.after_to(key)) return ScanStep::kStop;
    if (range.has_prefix(key)) return ScanStep::kTake;
    // Keys with the prefix are together, right after the prefix itself.
    return key < range.prefix ? ScanStep::kSkip : ScanStep::kStop;
  }
  if (key < range.from) return ScanStep::kStop;
  if (range.after_to(key)) return ScanStep::kSkip;
  if (range.has_prefix(key)) return ScanStep::kTake;
  return key > range.prefix ? ScanStep::kSkip : ScanStep::kStop;
}

// Writes not yet in the store below, in the scan's order: a value, or nullopt for a delete.
using PendingWrites = std::vector<std::pair<std::string, std::optional<std::string>>>;

// Sorts `pending` (the writes within the range) into the scan's order.
void sort_pending(PendingWrites& pending, const ScanOrder& order);

// `pending` over `below`, both in `order`: a pending key replaces the entry below, a pending
// delete hides it.
std::unique_ptr<KeyValueCursor> overlay_cursor(PendingWrites pending,
                                               std::unique_ptr<KeyValueCursor> below,
                                               const ScanOrder& order);

// The entries of `below` that `keep` takes (by key).
std::unique_ptr<KeyValueCursor> filter_cursor(std::unique_ptr<KeyValueCursor> below,
                                              std::function<bool(std::string_view key)> keep);

// `cursor`, keeping `held` (what it reads, such as a segment's map) alive as long as it lives.
std::unique_ptr<KeyValueCursor> held_cursor(std::shared_ptr<const void> held,
                                            std::unique_ptr<KeyValueCursor> cursor);

// A cursor over a live map that the stream thread may change while it scans. It holds no map
// iterator: each step looks the next key up from the last one it returned, so an insert or an
// erase (even of the entry under the cursor) never invalidates it; it sees the map as it is at
// each step (a key written ahead of the cursor is read, one written behind it is not). Kafka's
// in-memory store iterates a copy of the key set instead, which grows with the store.
std::unique_ptr<KeyValueCursor> map_cursor(const std::map<std::string, std::string>& map,
                                           const KeyRange& range);

// Scans read a batch at a time (a lock held for each batch, nothing between them): where the scan
// of a store whose scans come in `order` goes on after `last`, the last key it returned (none:
// from the start).
KeyRange resumed_after(const KeyRange& range, const std::optional<std::string>& last,
                       const ScanOrder& order);
// Up to `max` entries of `cursor` appended to `out`; true when the cursor has more.
bool read_batch(KeyValueCursor& cursor, size_t max, std::vector<BytesPair>& out);

// A global store's scan: batches of `inner` read under `mutex` held shared, so the global thread
// writes between them.
std::unique_ptr<KeyValueCursor> locked_batch_cursor(KeyValueStore& inner, std::shared_mutex& mutex,
                                                    const KeyRange& range);

}  // namespace oxbow::streams::detail
