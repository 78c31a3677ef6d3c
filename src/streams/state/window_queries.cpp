#include "streams/state/window_queries.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include "oxbow/streams/windows.h"
#include "streams/state/cursors.h"
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

// The bytes after a key in its store keys (a window's start and sequence number, a session's end
// and start) that a scan may take, smallest and largest: narrower than every byte only where the
// times' signs allow (they are stored as unsigned bytes, so negative times sort after the
// others).
std::pair<std::string, std::string> suffix_bounds(const WindowScan& scan) {
  if (!scan.sessions) {
    if ((scan.from < 0) != (scan.to < 0)) return {std::string(12, '\0'), std::string(12, '\xff')};
    return {big_endian(scan.from) + std::string(4, '\0'),
            big_endian(scan.to) + std::string(4, '\xff')};
  }
  // Keys hold the end, then the start; ends have no upper bound (a session can be long).
  if (scan.from < 0) return {std::string(16, '\0'), std::string(16, '\xff')};
  return {big_endian(scan.from) + std::string(8, '\0'),
          big_endian(INT64_MAX) + std::string(8, '\xff')};
}

bool takes_times(const WindowScan& scan, std::string_view suffix) {
  int64_t first = read_big_endian(suffix);
  if (!scan.sessions) return first >= scan.from && first <= scan.to;
  return first >= scan.from && read_big_endian(suffix.substr(8)) <= scan.to;
}

}  // namespace

std::optional<std::string> query_window(KeyValueStore& store, const std::string& key,
                                        int64_t start) {
  return store.query_get(window_store_key(key, start));
}

std::optional<std::string> query_session(KeyValueStore& store, const std::string& key,
                                         int64_t start, int64_t end) {
  return store.query_get(session_windowed_bytes(key, Window{start, end}));
}

std::optional<KeyRange> window_range(const WindowScan& scan) {
  const auto &key_from = scan.key_from, &key_to = scan.key_to;
  if (key_from && key_to && *key_from > *key_to) return std::nullopt;
  if (!scan.sessions && scan.from > scan.to) return std::nullopt;
  auto [lo, hi] = suffix_bounds(scan);
  KeyRange range;
  range.reverse = scan.backward;
  // Segments are by window start or session end: the ends have no upper bound.
  range.time_from = scan.from;
  if (!scan.sessions) range.time_to = scan.to;
  if (key_from && key_to && *key_from == *key_to) {
    range.from = *key_from + lo;
    range.to = *key_to + hi;
    return range;
  }
  range.from = key_from ? *key_from : std::string();
  if (!key_to) return range;
  // Keys are of any length: a key that is a proper prefix of key_to sorts before it, but its
  // entries (key, then suffix) can sort after key_to's. The range reaches the last of those.
  std::string upper = *key_to + hi;
  for (size_t n = 0; n < key_to->size(); ++n) {
    std::string prefix = key_to->substr(0, n);
    if (key_from && prefix < *key_from) continue;
    upper = std::max(upper, prefix + hi);
  }
  range.to = std::move(upper);
  return range;
}

std::unique_ptr<KeyValueCursor> window_cursor(std::unique_ptr<KeyValueCursor> below,
                                              const WindowScan& scan) {
  size_t suffix = scan.sessions ? kSessionKeySuffix : kWindowKeySuffix;
  return filter_cursor(std::move(below), [scan, suffix](std::string_view k) {
    if (k.size() < suffix) return false;
    std::string_view part = k.substr(0, k.size() - suffix);
    if ((scan.key_from && part < *scan.key_from) || (scan.key_to && part > *scan.key_to))
      return false;
    return takes_times(scan, k.substr(k.size() - suffix));
  });
}

}  // namespace oxbow::streams::detail
