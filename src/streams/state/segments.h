#pragma once
// Window and session stores kept in segments of window time, as Kafka's segmented stores keep
// them: a segment holds the windows whose time (a window's start, a session's end) falls in one
// interval of max(retention / 2, 60 s), and windows past retention go a whole segment at a time.
// The bottom stores (RocksDB, memory) keep each segment apart, so that dropping one costs what it
// deletes, not a scan of the store. Keys keep Kafka's layout inside each segment (window_key.h);
// the vector reads (range, all) answer in that byte order across segments, the cursors segment
// by segment (ScanOrder), as Kafka's segmented stores iterate.
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "streams/state/key_value_store.h"

namespace oxbow::streams::detail {

struct SegmentLayout {
  int64_t retention_ms = 0;
  int64_t interval_ms = 60000;
  bool sessions = false;  // keyed by a session's end (session stores), else by a window's start

  static SegmentLayout of(int64_t retention_ms, bool sessions);
  // The time of a store key (a window's start, a session's end); nullopt for keys too short to
  // carry one, which are kept apart from the segments and never expire.
  std::optional<int64_t> time_of(std::string_view key) const;
  std::optional<int64_t> segment_of(std::string_view key) const;
  int64_t segment_at(int64_t time) const;
  // The first segment still live once time `observed` has been seen; nullopt while none expired.
  std::optional<int64_t> first_live_at(int64_t observed) const;
};

// The order a store's scans come in: by key bytes, or for a segmented store segment by segment
// (oldest first; keys too short to carry a time before them all), each segment's keys by bytes,
// as Kafka's segmented stores iterate. Layers that lay pending writes over a scan merge in it.
struct ScanOrder {
  static constexpr int64_t kUnsegmented = std::numeric_limits<int64_t>::min();
  std::optional<SegmentLayout> layout;
  bool reverse = false;

  static ScanOrder of(const KeyValueStore& store, bool reverse);
  // kUnsegmented for a key without a time, or every key of an unsegmented store.
  int64_t segment(std::string_view key) const;
  // Whether `a` comes before `b` in the scan.
  bool before(std::string_view a, std::string_view b) const;
  // The segments `range`'s times may fall in, and past its `after`: [first, last].
  std::pair<int64_t, int64_t> segments_of(const KeyRange& range) const;
  // Whether a scan of `range` in this order takes `key`.
  bool wants(const KeyRange& range, std::string_view key) const;
};

// What a segmented store knows of its segments: the layout, the latest window time written to it
// and the first segment still live.
struct SegmentFloor {
  std::optional<SegmentLayout> layout;  // none: the store is not segmented
  int64_t first_live = std::numeric_limits<int64_t>::min();
  int64_t observed = -1;

  // Where `key` lives: nullopt for the unsegmented part, else its segment (before `first_live`
  // when expired).
  std::optional<int64_t> segment_of(std::string_view key) const {
    return layout ? layout->segment_of(key) : std::nullopt;
  }
  // A written key's time moves the store's observed time, and with it maybe the first live
  // segment: true if that moved.
  bool observe(std::string_view key);
  // The task's expiry: true if the first live segment moved.
  bool raise(int64_t segment);
};

// The stores that keep segments apart. Writes to a segment before the first live one are ignored
// (Kafka's segmented stores skip them too), and reads never see such a segment. Besides the task's
// stream time (expire()), a store moves its first live segment on with the latest window time it
// was given, so that restoring a long changelog never holds more than the live segments.
class SegmentedStore {
 public:
  virtual ~SegmentedStore() = default;
  // Called once, before any write: from now on keys are kept by segment.
  virtual void use_segments(const SegmentLayout& layout) = 0;
  // Drops every segment before `first_live`; true if that hid any entry.
  virtual bool drop_segments_before(int64_t first_live) = 0;
};

// The windows of a task's window and session stores that retention expired, dropped a segment at
// a time once the task's stream time has passed them (Task::flush, after the caches flushed).
class WindowExpiry {
 public:
  // `bottom` is the store under `top`'s layers; it keeps its keys by segment from now on.
  void add(KeyValueStore& bottom, KeyValueStore& top, int64_t retention_ms, bool sessions);
  void expire(int64_t stream_time);

 private:
  struct Store {
    SegmentedStore* bottom;
    KeyValueStore* top;
    SegmentLayout layout;
    int64_t first_live = -1;
  };
  std::vector<Store> stores_;
};

}  // namespace oxbow::streams::detail
