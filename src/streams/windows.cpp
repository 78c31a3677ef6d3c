#include "oxbow/streams/windows.h"

#include <limits>
#include <stdexcept>

namespace oxbow::streams {

namespace {

int64_t positive(std::chrono::milliseconds size) {
  if (size.count() <= 0)
    throw std::invalid_argument("window size must be above zero, not " +
                                std::to_string(size.count()) + " ms");
  return size.count();
}

int64_t not_negative_grace(std::chrono::milliseconds grace) {
  if (grace.count() < 0)
    throw std::invalid_argument("grace period must not be negative, not " +
                                std::to_string(grace.count()) + " ms");
  return grace.count();
}

void append_big_endian(std::string& out, int64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>(static_cast<uint64_t>(v) >> shift & 0xff));
}

int64_t read_big_endian(std::string_view bytes) {
  uint64_t v = 0;
  for (char c : bytes.substr(0, 8)) v = v << 8 | static_cast<unsigned char>(c);
  return static_cast<int64_t>(v);
}

}  // namespace

TimeWindows TimeWindows::ofSizeWithNoGrace(std::chrono::milliseconds size) {
  int64_t ms = positive(size);
  return TimeWindows(ms, ms, 0);
}

SlidingWindows SlidingWindows::ofTimeDifferenceWithNoGrace(std::chrono::milliseconds difference) {
  return ofTimeDifferenceAndGrace(difference, std::chrono::milliseconds(0));
}

SlidingWindows SlidingWindows::ofTimeDifferenceAndGrace(std::chrono::milliseconds difference,
                                                        std::chrono::milliseconds grace) {
  if (difference.count() < 0)
    throw std::invalid_argument("sliding window time difference must not be negative, not " +
                                std::to_string(difference.count()) + " ms");
  return SlidingWindows(difference.count(), not_negative_grace(grace));
}

SessionWindows SessionWindows::ofInactivityGapWithNoGrace(std::chrono::milliseconds gap) {
  return ofInactivityGapAndGrace(gap, std::chrono::milliseconds(0));
}

SessionWindows SessionWindows::ofInactivityGapAndGrace(std::chrono::milliseconds gap,
                                                       std::chrono::milliseconds grace) {
  if (gap.count() <= 0)
    throw std::invalid_argument("session inactivity gap must be above zero, not " +
                                std::to_string(gap.count()) + " ms");
  return SessionWindows(gap.count(), not_negative_grace(grace));
}

JoinWindows JoinWindows::ofTimeDifferenceWithNoGrace(std::chrono::milliseconds difference) {
  return ofTimeDifferenceAndGrace(difference, std::chrono::milliseconds(0));
}

JoinWindows JoinWindows::ofTimeDifferenceAndGrace(std::chrono::milliseconds difference,
                                                  std::chrono::milliseconds grace) {
  if (difference.count() < 0)
    throw std::invalid_argument("join time difference must not be negative, not " +
                                std::to_string(difference.count()) + " ms");
  return JoinWindows(difference.count(), difference.count(), not_negative_grace(grace));
}

JoinWindows JoinWindows::before(std::chrono::milliseconds before) const {
  if (before.count() + after_ms_ < 0)
    throw std::invalid_argument("Window interval (ie, beforeMs+afterMs) must not be negative.");
  return JoinWindows(before.count(), after_ms_, grace_ms_);
}

JoinWindows JoinWindows::after(std::chrono::milliseconds after) const {
  if (before_ms_ + after.count() < 0)
    throw std::invalid_argument("Window interval (ie, beforeMs+afterMs) must not be negative.");
  return JoinWindows(before_ms_, after.count(), grace_ms_);
}

TimeWindows TimeWindows::ofSizeAndGrace(std::chrono::milliseconds size,
                                        std::chrono::milliseconds grace) {
  int64_t ms = positive(size);
  return TimeWindows(ms, ms, not_negative_grace(grace));
}

TimeWindows TimeWindows::advanceBy(std::chrono::milliseconds advance) const {
  if (advance.count() <= 0 || advance.count() > size_ms_)
    throw std::invalid_argument("window advance must be above zero and at most the window size (" +
                                std::to_string(size_ms_) + " ms), not " +
                                std::to_string(advance.count()) + " ms");
  return TimeWindows(size_ms_, advance.count(), grace_ms_);
}

std::vector<Window> TimeWindows::windowsFor(int64_t timestamp) const {
  std::vector<Window> out;
  int64_t start =
      std::max<int64_t>(0, timestamp - size_ms_ + advance_ms_) / advance_ms_ * advance_ms_;
  for (; start <= timestamp; start += advance_ms_) out.push_back({start, start + size_ms_});
  return out;
}

namespace detail {

std::string time_windowed_bytes(std::string key, int64_t start) {
  append_big_endian(key, start);
  return key;
}

std::string session_windowed_bytes(std::string key, const Window& window) {
  append_big_endian(key, window.end);
  append_big_endian(key, window.start);
  return key;
}

std::pair<std::string_view, Window> parse_time_windowed(std::string_view bytes,
                                                        int64_t window_size) {
  if (bytes.size() < 8)
    throw SerializationException("a time-windowed key of " + std::to_string(bytes.size()) +
                                 " bytes: shorter than its window start");
  int64_t start = read_big_endian(bytes.substr(bytes.size() - 8));
  // As Kafka's reader: an end past the largest timestamp is the largest timestamp.
  int64_t end = start > std::numeric_limits<int64_t>::max() - window_size
                    ? std::numeric_limits<int64_t>::max()
                    : start + window_size;
  return {bytes.substr(0, bytes.size() - 8), Window{start, end}};
}

std::pair<std::string_view, Window> parse_session_windowed(std::string_view bytes) {
  if (bytes.size() < 16)
    throw SerializationException("a session-windowed key of " + std::to_string(bytes.size()) +
                                 " bytes: shorter than its window");
  int64_t end = read_big_endian(bytes.substr(bytes.size() - 16));
  int64_t start = read_big_endian(bytes.substr(bytes.size() - 8));
  return {bytes.substr(0, bytes.size() - 16), Window{start, end}};
}

}  // namespace detail
}  // namespace oxbow::streams
