#pragma once
// A segmented store's scan (segments.h): its segments one after another in the scan's order,
// each segment's cursor opened only once the one before it is done. A scan holds one segment's
// cursor at a time, whatever the number of segments or windows, and finds the segments as they
// are when it reaches them: one made during the scan ahead of it is read, one dropped is passed.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>

#include "streams/state/segments.h"

namespace oxbow::streams::detail {

struct SegmentSource {
  // The live segment nearest `bound` in the scan's direction (forward: the first at or after it;
  // reverse: the last at or before it), ScanOrder::kUnsegmented standing for the keys without a
  // time, which come first; nullopt when there is none.
  std::function<std::optional<int64_t>(int64_t bound)> seek;
  // A cursor over the keys of `segment` within `range` (by bytes; its time bounds are ignored).
  std::function<std::unique_ptr<KeyValueCursor>(int64_t segment, const KeyRange& range)> open;
};

// SegmentSource::seek over a store's `segments` (a std::map by segment id; those before
// `first_live` are expired), the keys without a time standing first.
template <class Map>
std::optional<int64_t> seek_segment(const Map& segments, int64_t first_live, int64_t bound,
                                    bool reverse) {
  if (!reverse) {
    if (bound == ScanOrder::kUnsegmented) return bound;
    auto it = segments.lower_bound(std::max(bound, first_live));
    return it == segments.end() ? std::nullopt : std::optional<int64_t>(it->first);
  }
  auto it = segments.upper_bound(bound);
  if (it != segments.begin() && std::prev(it)->first >= first_live) return std::prev(it)->first;
  return ScanOrder::kUnsegmented;
}

std::unique_ptr<KeyValueCursor> segment_cursor(SegmentSource source, const ScanOrder& order,
                                               const KeyRange& range);

}  // namespace oxbow::streams::detail
