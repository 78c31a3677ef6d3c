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
