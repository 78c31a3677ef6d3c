#include "streams/state/cursors.h"

#include <algorithm>

namespace oxbow::streams::detail {

namespace {

class VectorCursor : public KeyValueCursor {
 public:
  explicit VectorCursor(std::vector<BytesPair> rows) : rows_(std::move(rows)) {}
  bool valid() const override { return i_ < rows_.size(); }
  std::string_view key() const override { return rows_[i_].first; }
  std::string_view value() const override { return rows_[i_].second; }
  void next() override { ++i_; }

 private:
  std::vector<BytesPair> rows_;
  size_t i_ = 0;
};

class OverlayCursor : public KeyValueCursor {
 public:
  OverlayCursor(PendingWrites pending, std::unique_ptr<KeyValueCursor> below, ScanOrder order)
      : pending_(std::move(pending)), below_(std::move(below)), order_(std::move(order)) {
    settle();
  }
  bool valid() const override { return valid_; }
  std::string_view key() const override {
    return from_pending_ ? std::string_view(pending_[i_].first) : below_->key();
  }
  std::string_view value() const override {
    return from_pending_ ? std::string_view(*pending_[i_].second) : below_->value();
  }
  void next() override {
    if (from_pending_)
      ++i_;
    else
      below_->next();
    settle();
  }

 private:
  // Moves to the next entry to show: the pending write when it comes first or at the same key.
  void settle() {
    while (true) {
      bool pending = i_ < pending_.size();
      bool below = below_->valid();
      valid_ = pending || below;
      from_pending_ = pending && (!below || !order_.before(below_->key(), pending_[i_].first));
      if (!from_pending_) return;
      if (below && below_->key() == pending_[i_].first) below_->next();
      if (pending_[i_].second) return;
      ++i_;  // a pending delete: neither it nor the entry below is shown
    }
  }

  PendingWrites pending_;
  size_t i_ = 0;
  std::unique_ptr<KeyValueCursor> below_;
  ScanOrder order_;
  bool valid_ = false;
  bool from_pending_ = false;
};

class MapCursor : public KeyValueCursor {
 public:
  using Map = std::map<std::string, std::string>;
  MapCursor(const Map& map, const KeyRange& range) : map_(map), range_(range) {
    if (!range_.reverse)
      settle(map_.lower_bound(range_.from));
    else if (!range_.to)
      settle(map_.end());
    else
      settle(range_.to_exclusive ? map_.lower_bound(*range_.to) : map_.upper_bound(*range_.to));
  }
  bool valid() const override { return valid_; }
  std::string_view key() const override { return key_; }
  std::string_view value() const override { return value_; }
  void next() override { settle(range_.reverse ? map_.lower_bound(key_) : map_.upper_bound(key_)); }

 private:
  // Forward: the entry at `it` or after it; reverse: the one before `it` or earlier. Copied, so
  // that it stays valid whatever the map does next.
  void settle(Map::const_iterator it) {
    valid_ = false;
    while (range_.reverse ? it != map_.begin() : it != map_.end()) {
      if (range_.reverse) --it;
      ScanStep step = classify(range_, it->first);
      if (step == ScanStep::kStop) return;
      if (step == ScanStep::kTake) {
        key_ = it->first;
        value_ = it->second;
        valid_ = true;
        return;
      }
      if (!range_.reverse) ++it;
    }
  }

  const Map& map_;
  KeyRange range_;
  std::string key_, value_;
  bool valid_ = false;
};

class FilterCursor : public KeyValueCursor {
 public:
  FilterCursor(std::unique_ptr<KeyValueCursor> below, std::function<bool(std::string_view)> keep)
      : below_(std::move(below)), keep_(std::move(keep)) {
    settle();
  }
  bool valid() const override { return below_->valid(); }
  std::string_view key() const override { return below_->key(); }
  std::string_view value() const override { return below_->value(); }
  void next() override {
    below_->next();
    settle();
  }

 private:
  void settle() {
    while (below_->valid() && !keep_(below_->key())) below_->next();
  }

  std::unique_ptr<KeyValueCursor> below_;
  std::function<bool(std::string_view)> keep_;
};

class HeldCursor : public KeyValueCursor {
 public:
  HeldCursor(std::shared_ptr<const void> held, std::unique_ptr<KeyValueCursor> cursor)
      : held_(std::move(held)), cursor_(std::move(cursor)) {}
  bool valid() const override { return cursor_->valid(); }
  std::string_view key() const override { return cursor_->key(); }
  std::string_view value() const override { return cursor_->value(); }
  void next() override { cursor_->next(); }

 private:
  std::shared_ptr<const void> held_;  // first in, last out: the cursor goes before it
  std::unique_ptr<KeyValueCursor> cursor_;
};

constexpr size_t kLockedBatch = 256;

class LockedBatchCursor : public KeyValueCursor {
 public:
  LockedBatchCursor(KeyValueStore& inner, std::shared_mutex& mutex, const KeyRange& range)
      : inner_(inner), mutex_(mutex), range_(range) {
    fill();
  }
  bool valid() const override { return i_ < batch_.size(); }
  std::string_view key() const override { return batch_[i_].first; }
  std::string_view value() const override { return batch_[i_].second; }
  void next() override {
    if (++i_ == batch_.size() && more_) fill();
  }

 private:
  void fill() {
    std::optional<std::string> last;
    if (!batch_.empty()) last = batch_.back().first;
    batch_.clear();
    i_ = 0;
    std::shared_lock lock(mutex_);
    auto cursor = inner_.scan(resumed_after(range_, last, ScanOrder::of(inner_, range_.reverse)));
    more_ = read_batch(*cursor, kLockedBatch, batch_);
  }

  KeyValueStore& inner_;
  std::shared_mutex& mutex_;
  KeyRange range_;
  std::vector<BytesPair> batch_;
  size_t i_ = 0;
  bool more_ = false;
};

}  // namespace

KeyRange resumed_after(const KeyRange& range, const std::optional<std::string>& last,
                       const ScanOrder& order) {
  KeyRange r = range;
  if (!last) return r;
  if (order.layout) {
    r.after = last;  // segment by segment: the segmented cursor resumes in its order
  } else if (range.reverse) {
    r.to = *last;
    r.to_exclusive = true;
  } else {
    r.from = *last + '\0';  // the smallest key after it
  }
  return r;
}

bool read_batch(KeyValueCursor& cursor, size_t max, std::vector<BytesPair>& out) {
  for (size_t n = 0; cursor.valid() && n < max; cursor.next(), ++n)
    out.emplace_back(cursor.key(), cursor.value());
  return cursor.valid();
}

std::unique_ptr<KeyValueCursor> locked_batch_cursor(KeyValueStore& inner, std::shared_mutex& mutex,
                                                    const KeyRange& range) {
  return std::make_unique<LockedBatchCursor>(inner, mutex, range);
}

std::unique_ptr<KeyValueCursor> vector_cursor(std::vector<BytesPair> rows, const KeyRange& range) {
  std::erase_if(rows, [&](const BytesPair& row) { return !range.contains(row.first); });
  if (range.reverse) std::reverse(rows.begin(), rows.end());
  return std::make_unique<VectorCursor>(std::move(rows));
}

std::unique_ptr<KeyValueCursor> KeyValueStore::scan(const KeyRange& range) {
  if (range.to && range.from > *range.to) return vector_cursor({}, range);
  if (!range.prefix.empty()) return vector_cursor(prefix_scan(range.prefix), range);
  return vector_cursor(range.to ? this->range(range.from, *range.to) : all(), range);
}

void sort_pending(PendingWrites& pending, const ScanOrder& order) {
  std::sort(pending.begin(), pending.end(),
            [&order](const auto& a, const auto& b) { return order.before(a.first, b.first); });
}

std::unique_ptr<KeyValueCursor> overlay_cursor(PendingWrites pending,
                                               std::unique_ptr<KeyValueCursor> below,
                                               const ScanOrder& order) {
  if (pending.empty()) return below;
  return std::make_unique<OverlayCursor>(std::move(pending), std::move(below), order);
}

std::unique_ptr<KeyValueCursor> filter_cursor(std::unique_ptr<KeyValueCursor> below,
                                              std::function<bool(std::string_view key)> keep) {
  return std::make_unique<FilterCursor>(std::move(below), std::move(keep));
}

std::unique_ptr<KeyValueCursor> held_cursor(std::shared_ptr<const void> held,
                                            std::unique_ptr<KeyValueCursor> cursor) {
  return std::make_unique<HeldCursor>(std::move(held), std::move(cursor));
}

std::unique_ptr<KeyValueCursor> map_cursor(const std::map<std::string, std::string>& map,
                                           const KeyRange& range) {
  return std::make_unique<MapCursor>(map, range);
}

void CursorDeleter::operator()(KeyValueCursor* cursor) const {
  delete cursor;
}
bool cursor_valid(const KeyValueCursor& cursor) {
  return cursor.valid();
}
std::string_view cursor_key(const KeyValueCursor& cursor) {
  return cursor.key();
}
std::string_view cursor_value(const KeyValueCursor& cursor) {
  return cursor.value();
}
void cursor_next(KeyValueCursor& cursor) {
  cursor.next();
}

}  // namespace oxbow::streams::detail
