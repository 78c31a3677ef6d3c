#include "streams/state/segment_cursor.h"

#include <limits>
#include <utility>

namespace oxbow::streams::detail {

namespace {

class SegmentCursor : public KeyValueCursor {
 public:
  SegmentCursor(SegmentSource source, const ScanOrder& order, const KeyRange& range)
      : source_(std::move(source)), order_(order), range_(range) {
    std::tie(first_, last_) = order_.segments_of(range_);
    if (first_ <= last_) move_to(order_.reverse ? last_ : first_);
  }
  bool valid() const override { return cursor_ && cursor_->valid(); }
  std::string_view key() const override { return cursor_->key(); }
  std::string_view value() const override { return cursor_->value(); }
  void next() override {
    cursor_->next();
    if (cursor_->valid()) return;
    cursor_.reset();
    bool at_end = order_.reverse ? current_ == std::numeric_limits<int64_t>::min()
                                 : current_ == std::numeric_limits<int64_t>::max();
    if (!at_end) move_to(order_.reverse ? current_ - 1 : current_ + 1);
  }

 private:
  // The first segment from `bound` on (in the scan's direction) with anything in range.
  void move_to(int64_t bound) {
    while (true) {
      auto segment = source_.seek(bound);
      if (!segment || *segment < first_ || *segment > last_) return;
      current_ = *segment;
      cursor_ = source_.open(current_, within(current_));
      if (cursor_->valid()) return;
      cursor_.reset();
      if (order_.reverse ? current_ == first_ : current_ == last_) return;
      bound = order_.reverse ? current_ - 1 : current_ + 1;
    }
  }

  // The range's bytes within `segment`: a resumed scan goes on strictly after `after` in its
  // own segment.
  KeyRange within(int64_t segment) const {
    KeyRange r = range_;
    r.after.reset();
    if (!range_.after || order_.segment(*range_.after) != segment) return r;
    const std::string& after = *range_.after;
    if (!order_.reverse) {
      std::string next = after + '\0';  // the smallest key after it
      if (next > r.from) r.from = std::move(next);
    } else if (!r.to || after <= *r.to) {
      r.to = after;
      r.to_exclusive = true;
    }
    return r;
  }

  SegmentSource source_;
  ScanOrder order_;
  KeyRange range_;
  int64_t first_ = 0, last_ = 0, current_ = 0;
  std::unique_ptr<KeyValueCursor> cursor_;
};

}  // namespace

std::unique_ptr<KeyValueCursor> segment_cursor(SegmentSource source, const ScanOrder& order,
                                               const KeyRange& range) {
  return std::make_unique<SegmentCursor>(std::move(source), order, range);
}

}  // namespace oxbow::streams::detail
