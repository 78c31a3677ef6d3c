#pragma once
// Interactive queries of window and session stores at the byte level. Those stores are key-value
// stores underneath (keys laid out as in window_key.h), so these read through the stores'
// query_* methods: a cache answers with its pending writes merged over the store below, without
// flushing, and nothing is changed. Results come in store order (by the store keys' bytes: a
// key's windows or sessions together, oldest first).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "streams/state/bytes_store.h"

namespace oxbow::streams::detail {

// The window of `key` (serialized) that starts at `start`, aggregations' only entry (sequence
// number 0) for it.
std::optional<std::string> query_window(KeyValueStore& store, const std::string& key,
                                        int64_t start);

// The windows starting in [from, to] (both inclusive) of the keys in [key_from, key_to] by bytes
// (both inclusive; null: unbounded). Empty when from > to or key_from's bytes sort after key_to's.
std::vector<BytesPair> query_windows(KeyValueStore& store, const std::string* key_from,
                                     const std::string* key_to, int64_t from, int64_t to);

// The session of `key` that is exactly [start, end].
std::optional<std::string> query_session(KeyValueStore& store, const std::string& key,
                                         int64_t start, int64_t end);

// The sessions that end at or after `earliest_end` and start at or before `latest_start` (those
// that overlap [earliest_end, latest_start]) of the keys in [key_from, key_to], as above.
std::vector<BytesPair> query_sessions(KeyValueStore& store, const std::string* key_from,
                                      const std::string* key_to, int64_t earliest_end,
                                      int64_t latest_start);

}  // namespace oxbow::streams::detail
