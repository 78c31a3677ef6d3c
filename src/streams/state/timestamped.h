#pragma once
// Kafka's timestamped key-value stores, which its DSL's aggregations and tables use (Kafka 2.3
// on), keep each value with the timestamp of the update that wrote it. In such a store: 8 bytes
// of big-endian timestamp, then the value's bytes. In its changelog: the value's bytes alone,
// with that timestamp as the record's, so the changelog reads as a plain one (as Kafka's does).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace oxbow::streams::detail {

struct ValueAndTimestamp {
  std::string value;
  int64_t timestamp = 0;
};

// Into `out`, whose memory a caller writing many values reuses.
inline void with_timestamp_into(int64_t timestamp, std::string_view value, std::string& out) {
  out.resize(8);
  for (int i = 7; i >= 0; --i, timestamp >>= 8) out[i] = static_cast<char>(timestamp & 0xff);
  out.append(value);
}

inline std::string with_timestamp(int64_t timestamp, std::string_view value) {
  std::string out;
  with_timestamp_into(timestamp, value, out);
  return out;
}

// nullopt for nullopt; bytes shorter than a timestamp (never written by with_timestamp) throw.
std::optional<ValueAndTimestamp> split_timestamp(const std::optional<std::string>& stored);

// The same without copying the value, for a reader that only deserializes it: a view into
// `stored`, which must outlive it.
struct ValueAndTimestampView {
  std::string_view value;
  int64_t timestamp = 0;
};
ValueAndTimestampView split_timestamp_view(std::string_view stored);

}  // namespace oxbow::streams::detail
