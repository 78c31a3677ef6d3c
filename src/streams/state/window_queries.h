#pragma once
// Window and session stores' scans at the byte level (store_calls.h's WindowScan). Those stores
// are key-value stores underneath (keys laid out as in window_key.h), read through their
// cursors: segment by segment, each segment in key-byte order (ScanOrder), as Kafka's segmented
// stores; a cache's pending writes merged over the store below without flushing. A fetch of one
// key comes oldest first.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "streams/state/bytes_store.h"

namespace oxbow::streams::detail {

// The window of `key` (serialized) that starts at `start`, aggregations' only entry (sequence
// number 0) for it.
std::optional<std::string> query_window(KeyValueStore& store, const std::string& key,
                                        int64_t start);

// The session of `key` that is exactly [start, end].
std::optional<std::string> query_session(KeyValueStore& store, const std::string& key,
                                         int64_t start, int64_t end);

// The store keys (bytes and times) that hold every entry `scan` may take; nullopt when none can.
std::optional<KeyRange> window_range(const WindowScan& scan);

// The entries of `below`, a cursor over window_range(scan), that `scan` takes.
std::unique_ptr<KeyValueCursor> window_cursor(std::unique_ptr<KeyValueCursor> below,
                                              const WindowScan& scan);

}  // namespace oxbow::streams::detail
