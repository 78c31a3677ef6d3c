#pragma once
// Windows of time, as Kafka Streams' (org.apache.kafka.streams.kstream): a window covers
// [start, end) in milliseconds since the epoch, and a windowed key is a key with its window.
//
// Windowed keys on topics are written in Kafka Streams' byte formats, so that Java consumers read
// them with Kafka's WindowedSerdes:
//  - time windows (TimeWindowedSerializer): the key's bytes, then the window's start as 8 bytes
//    big-endian. The end is not written: a reader knows the window size (end = start + size).
//  - session windows (SessionWindowedSerializer): the key's bytes, then the window's end, then its
//    start, each 8 bytes big-endian.
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "oxbow/streams/serde.h"

namespace oxbow::streams {

struct Window {
  int64_t start = 0;
  int64_t end = 0;
  bool operator==(const Window&) const = default;
};

template <class K>
struct Windowed {
  K key;
  Window window;
  bool operator==(const Windowed&) const = default;
};

// Fixed-size windows aligned to the epoch: tumbling (advance = size, the default) or hopping
// (advanceBy). A record belongs to every window whose [start, start + size) holds its timestamp.
// Records later than a window's end plus the grace period (by stream time) are dropped.
class TimeWindows {
 public:
  // Both throw std::invalid_argument for a size not above zero or a negative grace.
  static TimeWindows ofSizeWithNoGrace(std::chrono::milliseconds size);
  static TimeWindows ofSizeAndGrace(std::chrono::milliseconds size,
                                    std::chrono::milliseconds grace);
  // Throws std::invalid_argument unless 0 < advance <= size.
  TimeWindows advanceBy(std::chrono::milliseconds advance) const;

  int64_t size() const { return size_ms_; }
  int64_t advance() const { return advance_ms_; }
  int64_t gracePeriodMs() const { return grace_ms_; }
  // The windows holding `timestamp`, by start (Kafka's windowsFor); none start before 0.
  std::vector<Window> windowsFor(int64_t timestamp) const;

 private:
  TimeWindows(int64_t size, int64_t advance, int64_t grace)
      : size_ms_(size), advance_ms_(advance), grace_ms_(grace) {}
  int64_t size_ms_, advance_ms_, grace_ms_;
};

// Sliding windows (KIP-450): windows of a fixed time difference, [start, start + difference] with
// both ends inclusive, one ending at each record and one starting just after each record (when it
// holds any), so that each distinct set of records within the difference of each other has its
// window. Records before the difference fall in [0, difference]. A window closes when stream time
// passes its end plus grace.
class SlidingWindows {
 public:
  // Throws std::invalid_argument for a negative difference or grace.
  static SlidingWindows ofTimeDifferenceWithNoGrace(std::chrono::milliseconds difference);
  static SlidingWindows ofTimeDifferenceAndGrace(std::chrono::milliseconds difference,
                                                 std::chrono::milliseconds grace);
  int64_t timeDifferenceMs() const { return difference_ms_; }
  int64_t gracePeriodMs() const { return grace_ms_; }

 private:
  SlidingWindows(int64_t difference, int64_t grace)
      : difference_ms_(difference), grace_ms_(grace) {}
  int64_t difference_ms_, grace_ms_;
};

// Sessions: a key's records closer in time than the inactivity gap form one session, [first
// record's time, last record's time] (both inclusive); a record between two sessions merges them.
// A record is dropped when its session would end before stream time minus gap minus grace.
class SessionWindows {
 public:
  // Both throw std::invalid_argument for a gap not above zero or a negative grace.
  static SessionWindows ofInactivityGapWithNoGrace(std::chrono::milliseconds gap);
  static SessionWindows ofInactivityGapAndGrace(std::chrono::milliseconds gap,
                                                std::chrono::milliseconds grace);
  int64_t inactivityGap() const { return gap_ms_; }
  int64_t gracePeriodMs() const { return grace_ms_; }

 private:
  SessionWindows(int64_t gap, int64_t grace) : gap_ms_(gap), grace_ms_(grace) {}
  int64_t gap_ms_, grace_ms_;
};

// When a windowed aggregation emits (KIP-825): every update (the default), or each window's
// final result once, when the window closes (no suppression buffer needed).
class EmitStrategy {
 public:
  static EmitStrategy onWindowUpdate() { return EmitStrategy(false); }
  static EmitStrategy onWindowClose() { return EmitStrategy(true); }
  bool onClose() const { return on_close_; }

 private:
  explicit EmitStrategy(bool on_close) : on_close_(on_close) {}
  bool on_close_;
};

// The window of a stream-stream join (Kafka's JoinWindows): a record at time t joins the other
// stream's records with the same key and a time in [t - before, t + after]; before = after = the
// time difference unless set apart. Records later than that window plus the grace period (by the
// join's stream time) find nothing more, and left/outer results wait until then.
class JoinWindows {
 public:
  // Both throw std::invalid_argument for a negative difference or grace.
  static JoinWindows ofTimeDifferenceWithNoGrace(std::chrono::milliseconds difference);
  static JoinWindows ofTimeDifferenceAndGrace(std::chrono::milliseconds difference,
                                              std::chrono::milliseconds grace);
  // Throw std::invalid_argument when before + after would be negative.
  JoinWindows before(std::chrono::milliseconds before) const;
  JoinWindows after(std::chrono::milliseconds after) const;

  int64_t beforeMs() const { return before_ms_; }
  int64_t afterMs() const { return after_ms_; }
  int64_t size() const { return before_ms_ + after_ms_; }
  int64_t gracePeriodMs() const { return grace_ms_; }

 private:
  JoinWindows(int64_t before, int64_t after, int64_t grace)
      : before_ms_(before), after_ms_(after), grace_ms_(grace) {}
  int64_t before_ms_, after_ms_, grace_ms_;
};

namespace detail {
// A windowed serde's inner key bytes into `out`, through the inner serde's buffer form if it has
// one.
template <class K>
void inner_bytes_into(const Serde<K>& inner, std::string_view topic, const K& key,
                      std::string& out) {
  if (inner.serialize_into) {
    out.clear();
    inner.serialize_into(topic, key, out);
  } else {
    out = inner.serialize(topic, key);
  }
}
// The non-template cores of the windowed serdes; `key` is the inner serde's bytes.
std::string time_windowed_bytes(std::string key, int64_t start);
std::string session_windowed_bytes(std::string key, const Window& window);
// Key bytes and window; throw SerializationException for bytes too short to hold the window.
std::pair<std::string_view, Window> parse_time_windowed(std::string_view bytes,
                                                        int64_t window_size);
std::pair<std::string_view, Window> parse_session_windowed(std::string_view bytes);
}  // namespace detail

namespace serdes {

// Kafka's WindowedSerdes.timeWindowedSerdeFrom(inner, windowSize).
template <class K>
Serde<Windowed<K>> TimeWindowed(Serde<K> inner, int64_t window_size) {
  Serde<Windowed<K>> s;
  s.name = "TimeWindowed(" + inner.name + ")";
  s.serialize = [inner](std::string_view topic, const Windowed<K>& w) {
    return detail::time_windowed_bytes(inner.serialize(topic, w.key), w.window.start);
  };
  // A sink's: into the buffer it reuses from record to record.
  s.serialize_into = [inner](std::string_view topic, const Windowed<K>& w, std::string& out) {
    detail::inner_bytes_into(inner, topic, w.key, out);
    out = detail::time_windowed_bytes(std::move(out), w.window.start);
  };
  s.deserialize = [inner, window_size](std::string_view topic, std::string_view bytes) {
    auto [key, window] = detail::parse_time_windowed(bytes, window_size);
    return Windowed<K>{inner.deserialize(topic, key), window};
  };
  return s;
}

// Kafka's WindowedSerdes.sessionWindowedSerdeFrom(inner).
template <class K>
Serde<Windowed<K>> SessionWindowed(Serde<K> inner) {
  Serde<Windowed<K>> s;
  s.name = "SessionWindowed(" + inner.name + ")";
  s.serialize = [inner](std::string_view topic, const Windowed<K>& w) {
    return detail::session_windowed_bytes(inner.serialize(topic, w.key), w.window);
  };
  s.serialize_into = [inner](std::string_view topic, const Windowed<K>& w, std::string& out) {
    detail::inner_bytes_into(inner, topic, w.key, out);
    out = detail::session_windowed_bytes(std::move(out), w.window);
  };
  s.deserialize = [inner](std::string_view topic, std::string_view bytes) {
    auto [key, window] = detail::parse_session_windowed(bytes);
    return Windowed<K>{inner.deserialize(topic, key), window};
  };
  return s;
}

}  // namespace serdes
}  // namespace oxbow::streams
