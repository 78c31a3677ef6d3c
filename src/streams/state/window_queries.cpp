#include "streams/state/window_queries.h"

#include <algorithm>
#include <string_view>

#include "oxbow/streams/windows.h"
#include "streams/state/window_key.h"

namespace oxbow::streams::detail {

namespace {

std::string big_endian(int64_t v) {
  std::string out(8, '\0');
  for (int i = 7; i >= 0; --i, v = static_cast<int64_t>(static_cast<uint64_t>(v) >> 8))
    out[i] = static_cast<char>(v & 0xff);
  return out;
}

int64_t read_big_endian(std::string_view bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i) v = (v << 8) | static_cast<unsigned char>(bytes[i]);
  return static_cast<int64_t>(v);
}

// The entries whose key part (the store key less its `suffix` bytes) lies in [key_from, key_to]
// and whose suffix `accept` takes, in store order. `lo` and `hi` bound the suffix's bytes and only
// narrow the scans.
template <class Accept>
std::vector<BytesPair> scan(KeyValueStore& store, const std::string* key_from,
                            const std::string* key_to, size_t suffix, const std::string& lo,
                            const std::string& hi, const Accept& accept) {
  std::vector<BytesPair> out;
  if (key_from && key_to && *key_from > *key_to) return out;
  auto keep = [&](std::vector<BytesPair> rows) {
    for (auto& row : rows) {
      std::string_view k = row.first;
      // Keys are of any length: a longer or shorter key's entries can fall inside the bounds.
      if (k.size() < suffix) continue;
      std::string_view part = k.substr(0, k.size() - suffix);
      if ((key_from && part < *key_from) || (key_to && part > *key_to)) continue;
      if (accept(k.substr(k.size() - suffix))) out.push_back(std::move(row));
    }
  };
  if (key_from && key_to && *key_from == *key_to) {
    keep(store.query_range(*key_from + lo, *key_to + hi));
    return out;
  }
  if (!key_to) {
    keep(store.query_all());
    return out;
  }
  keep(store.query_range(key_from ? *key_from : std::string(),
                         *key_to + std::string(suffix, '\xff')));
  // A key that is a proper prefix of key_to sorts before it, but its entries (key, then suffix)
  // can sort after key_to's: the scan above misses those, so each such key is read on its own.
  size_t first_pass = out.size();
  for (size_t n = 0; n < key_to->size(); ++n) {
    std::string prefix = key_to->substr(0, n);
    if (key_from && prefix < *key_from) continue;
    keep(store.query_range(prefix + lo, prefix + hi));
  }
  if (out.size() > first_pass) {
    std::sort(out.begin(), out.end(),
              [](const BytesPair& a, const BytesPair& b) { return a.first < b.first; });
    out.erase(
        std::unique(out.begin(), out.end(),
                    [](const BytesPair& a, const BytesPair& b) { return a.first == b.first; }),
        out.end());
  }
  return out;
}

}  // namespace

std::optional<std::string> query_window(KeyValueStore& store, const std::string& key,
                                        int64_t start) {
  return store.query_get(window_store_key(key, start));
}

std::vector<BytesPair> query_windows(KeyValueStore& store, const std::string* key_from,
                                     const std::string* key_to, int64_t from, int64_t to) {
  if (from > to) return {};
  // Starts are stored as unsigned bytes, so negative ones sort after the others: bounds of
  // mixed signs cannot narrow the scan.
  bool same_sign = (from < 0) == (to < 0);
  std::string lo = same_sign ? big_endian(from) + std::string(4, '\0') : std::string(12, '\0');
  std::string hi = same_sign ? big_endian(to) + std::string(4, '\xff') : std::string(12, '\xff');
  return scan(store, key_from, key_to, kWindowKeySuffix, lo, hi, [&](std::string_view suffix) {
    int64_t start = read_big_endian(suffix);
    return start >= from && start <= to;
  });
}

std::optional<std::string> query_session(KeyValueStore& store, const std::string& key,
                                         int64_t start, int64_t end) {
  return store.query_get(session_windowed_bytes(key, Window{start, end}));
}

std::vector<BytesPair> query_sessions(KeyValueStore& store, const std::string* key_from,
                                      const std::string* key_to, int64_t earliest_end,
                                      int64_t latest_start) {
  // Keys hold the end, then the start; ends have no upper bound (a session can be long).
  std::string lo =
      earliest_end >= 0 ? big_endian(earliest_end) + std::string(8, '\0') : std::string(16, '\0');
  std::string hi =
      earliest_end >= 0 ? big_endian(INT64_MAX) + std::string(8, '\xff') : std::string(16, '\xff');
  return scan(store, key_from, key_to, kSessionKeySuffix, lo, hi, [&](std::string_view suffix) {
    return read_big_endian(suffix) >= earliest_end &&
           read_big_endian(suffix.substr(8)) <= latest_start;
  });
}

}  // namespace oxbow::streams::detail
