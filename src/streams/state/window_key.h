#pragma once
// Keys of window stores, as Kafka's window stores and their changelogs write them: the key's
// bytes, then the window's start as 8 bytes big-endian, then a 4-byte big-endian sequence number
// (0 for aggregations, which keep one entry per key and window; joins number the records of one
// key and time so that duplicates are kept). Key-first, so one key's windows are contiguous;
// expiry (Task::expire_windows) scans for old starts.
#include <cstdint>
#include <string>
#include <string_view>

namespace oxbow::streams::detail {

inline constexpr size_t kWindowKeySuffix = 12;

// Into `out`, whose memory a caller writing many keys reuses.
inline void window_store_key_into(std::string_view key, int64_t start, uint32_t seqnum,
                                  std::string& out) {
  out.assign(key);
  for (int shift = 56; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((static_cast<uint64_t>(start) >> shift) & 0xff));
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((seqnum >> shift) & 0xff));
}

inline std::string window_store_key(std::string_view key, int64_t start, uint32_t seqnum = 0) {
  std::string out;
  window_store_key_into(key, start, seqnum, out);
  return out;
}

// The window start of a window-store key (at least kWindowKeySuffix bytes long).
inline int64_t window_store_start(std::string_view key) {
  uint64_t v = 0;
  for (size_t i = key.size() - kWindowKeySuffix; i < key.size() - 4; ++i)
    v = (v << 8) | static_cast<unsigned char>(key[i]);
  return static_cast<int64_t>(v);
}

// Session stores key sessions as Kafka's session stores do: the key's bytes, the session's end,
// then its start, 8 bytes big-endian each (the same bytes as the session-windowed serde's).
inline constexpr size_t kSessionKeySuffix = 16;

// The end of a session-store key (at least kSessionKeySuffix bytes long).
inline int64_t session_store_end(std::string_view key) {
  uint64_t v = 0;
  for (size_t i = key.size() - kSessionKeySuffix; i < key.size() - 8; ++i)
    v = (v << 8) | static_cast<unsigned char>(key[i]);
  return static_cast<int64_t>(v);
}

}  // namespace oxbow::streams::detail
