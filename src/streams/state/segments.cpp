#include "streams/state/segments.h"

#include <algorithm>
#include <stdexcept>

#include "streams/state/window_key.h"

namespace oxbow::streams::detail {

SegmentLayout SegmentLayout::of(int64_t retention_ms, bool sessions) {
  return SegmentLayout{retention_ms, std::max<int64_t>(retention_ms / 2, 60000), sessions};
}

std::optional<int64_t> SegmentLayout::time_of(std::string_view key) const {
  if (key.size() < (sessions ? kSessionKeySuffix : kWindowKeySuffix)) return std::nullopt;
  return sessions ? session_store_end(key) : window_store_start(key);
}

std::optional<int64_t> SegmentLayout::segment_of(std::string_view key) const {
  auto time = time_of(key);
  if (!time) return std::nullopt;
  return segment_at(*time);
}

int64_t SegmentLayout::segment_at(int64_t time) const {
  // Floor division: a negative time (never written by the DSL) lies before segment 0.
  return time >= 0 ? time / interval_ms : -((-time - 1) / interval_ms) - 1;
}

std::optional<int64_t> SegmentLayout::first_live_at(int64_t observed) const {
  int64_t oldest_kept = observed - retention_ms;
  if (observed < 0 || oldest_kept < 0) return std::nullopt;
  return oldest_kept / interval_ms;
}

bool SegmentFloor::observe(std::string_view key) {
  auto time = layout ? layout->time_of(key) : std::nullopt;
  if (!time || *time <= observed) return false;
  observed = *time;
  auto live = layout->first_live_at(observed);
  return live && raise(*live);
}

bool SegmentFloor::raise(int64_t segment) {
  if (segment <= first_live) return false;
  first_live = segment;
  return true;
}

void WindowExpiry::add(KeyValueStore& bottom, KeyValueStore& top, int64_t retention_ms,
                       bool sessions) {
  auto* segmented = dynamic_cast<SegmentedStore*>(&bottom);
  if (!segmented)
    throw std::logic_error("window store " + bottom.name() + " is not kept in segments");
  SegmentLayout layout = SegmentLayout::of(retention_ms, sessions);
  segmented->use_segments(layout);
  stores_.push_back(Store{segmented, &top, layout});
}

void WindowExpiry::expire(int64_t stream_time) {
  for (auto& store : stores_) {
    std::optional<int64_t> first_live = store.layout.first_live_at(stream_time);
    if (!first_live || *first_live <= store.first_live) continue;
    store.first_live = *first_live;
    // The layers above may remember what they read of the dropped windows (a cache's last read):
    // an erase of no keys tells them that entries went below.
    if (store.bottom->drop_segments_before(*first_live)) store.top->erase_local({});
  }
}

}  // namespace oxbow::streams::detail

namespace oxbow::streams::detail {

ScanOrder ScanOrder::of(const KeyValueStore& store, bool reverse) {
  ScanOrder order;
  if (const SegmentLayout* layout = store.segment_layout()) order.layout = *layout;
  order.reverse = reverse;
  return order;
}

int64_t ScanOrder::segment(std::string_view key) const {
  auto segment = layout ? layout->segment_of(key) : std::nullopt;
  return segment ? *segment : kUnsegmented;
}

bool ScanOrder::before(std::string_view a, std::string_view b) const {
  if (layout) {
    int64_t sa = segment(a), sb = segment(b);
    if (sa != sb) return reverse ? sa > sb : sa < sb;
  }
  return reverse ? a > b : a < b;
}

std::pair<int64_t, int64_t> ScanOrder::segments_of(const KeyRange& range) const {
  if (!layout) return {kUnsegmented, kUnsegmented};
  // The extreme times mean no bound (segment_at would overflow on the smallest).
  int64_t first = range.time_from == std::numeric_limits<int64_t>::min()
                      ? kUnsegmented
                      : layout->segment_at(range.time_from);
  int64_t last = range.time_to == std::numeric_limits<int64_t>::max()
                     ? std::numeric_limits<int64_t>::max()
                     : layout->segment_at(range.time_to);
  if (range.after) {
    int64_t resumed = segment(*range.after);
    if (reverse)
      last = std::min(last, resumed);
    else
      first = std::max(first, resumed);
  }
  return {first, last};
}

bool ScanOrder::wants(const KeyRange& range, std::string_view key) const {
  if (!range.contains(key) || (range.after && !before(*range.after, key))) return false;
  if (!layout) return true;
  auto [first, last] = segments_of(range);
  int64_t s = segment(key);
  return s >= first && s <= last;
}

}  // namespace oxbow::streams::detail
