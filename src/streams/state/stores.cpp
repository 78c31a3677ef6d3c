#include "streams/state/stores.h"

#include <algorithm>
#include <map>
#include <memory>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "streams/state/cursors.h"
#include "streams/state/segment_cursor.h"
#include "streams/state/segments.h"
#include "streams/state/timestamped.h"

namespace oxbow::streams::detail {

std::optional<ValueAndTimestamp> split_timestamp(const std::optional<std::string>& stored) {
  if (!stored) return std::nullopt;
  auto [value, timestamp] = split_timestamp_view(*stored);
  return ValueAndTimestamp{std::string(value), timestamp};
}

ValueAndTimestampView split_timestamp_view(std::string_view stored) {
  if (stored.size() < 8)
    throw std::runtime_error("a timestamped store holds " + std::to_string(stored.size()) +
                             " bytes, fewer than a timestamp");
  uint64_t ts = 0;
  for (int i = 0; i < 8; ++i) ts = ts << 8 | static_cast<unsigned char>(stored[i]);
  return {stored.substr(8), static_cast<int64_t>(ts)};
}

namespace {

// Segmented (window and session stores), each segment is a map of its own, so that expiry drops
// whole maps; the vector reads merge the segments into key order, cursors walk them in segment
// order (segment_cursor.h). A segment's map is shared with the cursor reading it, so that
// expiry during a scan drops it from the store without pulling it from under the cursor.
class InMemoryStore : public KeyValueStore, public SegmentedStore {
 public:
  using Map = std::map<std::string, std::string>;
  explicit InMemoryStore(std::string name) : name_(std::move(name)) {}
  const std::string& name() const override { return name_; }
  std::optional<std::string> get(const std::string& key) override {
    const Map* map = map_of(key, false);
    if (!map) return std::nullopt;
    auto it = map->find(key);
    if (it == map->end()) return std::nullopt;
    return it->second;
  }
  bool get_into(const std::string& key, std::string& out) override {
    const Map* map = map_of(key, false);
    if (!map) return false;
    auto it = map->find(key);
    if (it == map->end()) return false;
    out.assign(it->second);
    return true;
  }
  void put(const std::string& key, const std::optional<std::string>& value,
           const RecordContext&) override {
    if (floor_.observe(key)) drop_expired();
    Map* map = map_of(key, true);
    if (!map) return;  // an expired segment's
    if (value)
      (*map)[key] = *value;
    else
      map->erase(key);
  }
  std::vector<BytesPair> range(const std::string& from, const std::string& to) override {
    if (from > to) return {};
    return collect([&](const Map& map, std::vector<BytesPair>& out) {
      for (auto it = map.lower_bound(from); it != map.end() && it->first <= to; ++it)
        out.emplace_back(it->first, it->second);
    });
  }
  std::vector<BytesPair> prefix_scan(const std::string& prefix) override {
    return collect([&](const Map& map, std::vector<BytesPair>& out) {
      for (auto it = map.lower_bound(prefix);
           it != map.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it)
        out.emplace_back(it->first, it->second);
    });
  }
  std::vector<BytesPair> all() override {
    return collect([](const Map& map, std::vector<BytesPair>& out) {
      out.insert(out.end(), map.begin(), map.end());
    });
  }
  std::unique_ptr<KeyValueCursor> scan(const KeyRange& range) override {
    if (!floor_.layout) return map_cursor(map_, range);
    SegmentSource source;
    source.seek = [this, reverse = range.reverse](int64_t bound) {
      return seek_segment(segments_, floor_.first_live, bound, reverse);
    };
    source.open = [this](int64_t segment, const KeyRange& r) -> std::unique_ptr<KeyValueCursor> {
      if (segment == ScanOrder::kUnsegmented) return map_cursor(map_, r);
      std::shared_ptr<const Map> map = segments_.at(segment);
      const Map& held = *map;
      return held_cursor(std::move(map), map_cursor(held, r));
    };
    return segment_cursor(std::move(source), ScanOrder{floor_.layout, range.reverse}, range);
  }
  const SegmentLayout* segment_layout() const override {
    return floor_.layout ? &*floor_.layout : nullptr;
  }
  std::unique_ptr<KeyValueCursor> query_scan(const KeyRange& range) override { return scan(range); }
  int64_t approximate_num_entries() override {
    size_t n = map_.size();
    for (const auto& [id, map] : segments_) n += map->size();
    return static_cast<int64_t>(n);
  }
  void flush() override {}

  void use_segments(const SegmentLayout& layout) override {
    floor_.layout = layout;
    Map unsegmented;
    for (auto& [key, value] : map_) {
      auto segment = floor_.segment_of(key);
      (segment ? segment_map(*segment) : unsegmented).emplace(key, std::move(value));
    }
    map_ = std::move(unsegmented);
  }
  bool drop_segments_before(int64_t first_live) override {
    floor_.raise(first_live);
    return drop_expired();
  }

 private:
  // The map that holds `key`: nullptr for an expired segment, or a missing one unless `create`.
  Map* map_of(const std::string& key, bool create) {
    auto segment = floor_.segment_of(key);
    if (!segment) return &map_;
    if (*segment < floor_.first_live) return nullptr;
    auto it = segments_.find(*segment);
    if (it != segments_.end()) return it->second.get();
    return create ? &segment_map(*segment) : nullptr;
  }
  Map& segment_map(int64_t segment) {
    auto& map = segments_[segment];
    if (!map) map = std::make_shared<Map>();
    return *map;
  }
  bool drop_expired() {
    auto end = segments_.lower_bound(floor_.first_live);
    bool any = false;
    for (auto it = segments_.begin(); it != end; ++it) any = any || !it->second->empty();
    segments_.erase(segments_.begin(), end);
    return any;
  }
  // Each map's part, merged into key order (a key lives in one map only).
  template <class Scan>
  std::vector<BytesPair> collect(const Scan& scan) const {
    std::vector<BytesPair> out;
    scan(map_, out);
    for (const auto& [id, map] : segments_) {
      auto middle = static_cast<std::ptrdiff_t>(out.size());
      scan(*map, out);
      std::inplace_merge(out.begin(), out.begin() + middle, out.end(),
                         [](const BytesPair& a, const BytesPair& b) { return a.first < b.first; });
    }
    return out;
  }

  std::string name_;
  Map map_;  // everything when not segmented; else the keys that carry no time
  std::map<int64_t, std::shared_ptr<Map>> segments_;
  SegmentFloor floor_;
};

class LoggingStore : public KeyValueStore {
 public:
  LoggingStore(std::unique_ptr<KeyValueStore> inner, ChangelogWriter writer)
      : inner_(std::move(inner)), writer_(std::move(writer)) {}
  const std::string& name() const override { return inner_->name(); }
  std::optional<std::string> get(const std::string& key) override { return inner_->get(key); }
  bool get_into(const std::string& key, std::string& out) override {
    return inner_->get_into(key, out);
  }
  void put(const std::string& key, const std::optional<std::string>& value,
           const RecordContext& context) override {
    inner_->put(key, value, context);
    writer_(key, value, context.timestamp);
  }
  std::vector<BytesPair> range(const std::string& from, const std::string& to) override {
    return inner_->range(from, to);
  }
  std::vector<BytesPair> prefix_scan(const std::string& prefix) override {
    return inner_->prefix_scan(prefix);
  }
  std::vector<BytesPair> all() override { return inner_->all(); }
  std::unique_ptr<KeyValueCursor> scan(const KeyRange& range) override {
    return inner_->scan(range);
  }
  std::unique_ptr<KeyValueCursor> query_scan(const KeyRange& range) override {
    return inner_->query_scan(range);
  }
  const SegmentLayout* segment_layout() const override { return inner_->segment_layout(); }
  int64_t approximate_num_entries() override { return inner_->approximate_num_entries(); }
  void flush() override { inner_->flush(); }
  void erase_local(const std::vector<std::string>& keys) override { inner_->erase_local(keys); }

 private:
  std::unique_ptr<KeyValueStore> inner_;
  ChangelogWriter writer_;
};

}  // namespace

std::unique_ptr<KeyValueStore> make_in_memory_store(std::string name) {
  return std::make_unique<InMemoryStore>(std::move(name));
}

std::unique_ptr<KeyValueStore> make_logging_store(std::unique_ptr<KeyValueStore> inner,
                                                  ChangelogWriter writer) {
  return std::make_unique<LoggingStore>(std::move(inner), std::move(writer));
}

void CachingStore::Order::push_back(Node* n) {
  n->second.prev = tail;
  n->second.next = nullptr;
  (tail ? tail->second.next : head) = n;
  tail = n;
}

void CachingStore::Order::remove(Node* n) {
  (n->second.prev ? n->second.prev->second.next : head) = n->second.next;
  (n->second.next ? n->second.next->second.prev : tail) = n->second.prev;
  n->second.prev = n->second.next = nullptr;
}

CachingStore::~CachingStore() {
  for (auto& [key, entry] : dirty_) budget_.used -= size_of(key, entry);
}

int64_t CachingStore::size_of(const std::string& key, const Entry& e) {
  // Bytes held plus a fixed allowance for the entry's bookkeeping.
  return static_cast<int64_t>(key.size() * 2 + (e.value ? e.value->size() : 0) + e.topic.size() +
                              64);
}

std::optional<std::string> CachingStore::get(const std::string& key) {
  auto it = dirty_.find(key);
  if (it != dirty_.end()) {
    last_hit_ = &*it;
    return it->second.value;
  }
  last_read_value_ = inner_->get(key);
  last_read_key_ = key;
  last_read_valid_ = true;
  return last_read_value_;
}

bool CachingStore::get_into(const std::string& key, std::string& out) {
  auto it = dirty_.find(key);
  if (it != dirty_.end()) {
    last_hit_ = &*it;
    if (it->second.value) out.assign(*it->second.value);
    return it->second.value.has_value();
  }
  // Kept as get() keeps it: the old value of the put that usually follows, which makes an entry.
  bool found = inner_->get_into(key, out);
  if (found)
    last_read_value_ = out;
  else
    last_read_value_.reset();
  last_read_key_.assign(key);
  last_read_valid_ = true;
  return found;
}

void CachingStore::put(const std::string& key, const std::optional<std::string>& value,
                       const RecordContext& context) {
  // An aggregation reads the key it then writes: the entry its read found saves a second lookup.
  Node* n = std::exchange(last_hit_, nullptr);
  bool inserted = false;
  if (!n || n->first != key) std::tie(n, inserted) = emplace(key);
  Entry& e = n->second;
  if (!inserted) {
    budget_.used -= size_of(key, e);
    order_.remove(n);
  } else if (last_read_valid_ && last_read_key_ == key) {
    e.old = std::move(last_read_value_);
    e.old_known = true;
  }
  last_read_valid_ = false;
  e.value = value;
  e.held_value = e.held_value || value.has_value();
  e.timestamp = context.timestamp;
  e.topic = context.topic;
  e.partition = context.partition;
  e.offset = context.offset;
  e.headers = context.headers ? *context.headers : Headers{};
  order_.push_back(n);
  budget_.used += size_of(key, e);
  // Over budget, the oldest entries go down first, as Kafka's cache evicts: recent keys keep
  // absorbing their updates.
  if (budget_.used > budget_.max_bytes && !flushing_) evict_until(budget_.max_bytes * 3 / 4);
}

std::vector<BytesPair> CachingStore::range(const std::string& from, const std::string& to) {
  flush();
  return inner_->range(from, to);
}

std::vector<BytesPair> CachingStore::prefix_scan(const std::string& prefix) {
  flush();
  return inner_->prefix_scan(prefix);
}

std::vector<BytesPair> CachingStore::all() {
  flush();
  return inner_->all();
}

// Unlike range() and all(), which flush first (the DSL's own scans), a cursor forwards nothing: the
// dirty entries in range are copied (the cache's budget bounds them, not the store's size) and
// laid over the cursor below, as Kafka's merged cache iterator. The copy keeps the scan
// consistent while the stream thread writes on through the cache, or evicts, during it.
// A window or session store's scan comes segment by segment (ScanOrder), and the pending writes
// are merged in that order.
PendingWrites CachingStore::pending_in(const KeyRange& range, const ScanOrder& order) const {
  PendingWrites pending;
  for (const auto& [key, entry] : dirty_)
    if (order.wants(range, key)) pending.emplace_back(key, entry.value);
  sort_pending(pending, order);
  return pending;
}

std::unique_ptr<KeyValueCursor> CachingStore::scan(const KeyRange& range) {
  ScanOrder order = ScanOrder::of(*inner_, range.reverse);
  return overlay_cursor(pending_in(range, order), inner_->scan(range), order);
}

std::unique_ptr<KeyValueCursor> CachingStore::query_scan(const KeyRange& range) {
  ScanOrder order = ScanOrder::of(*inner_, range.reverse);
  return overlay_cursor(pending_in(range, order), inner_->query_scan(range), order);
}

int64_t CachingStore::approximate_num_entries() {
  flush();
  return inner_->approximate_num_entries();
}

std::pair<CachingStore::Node*, bool> CachingStore::emplace(const std::string& key) {
  auto [it, inserted] = dirty_.try_emplace(key);
  return {&*it, inserted};
}

void CachingStore::write_down(Node* n) {
  if (n == last_hit_) last_hit_ = nullptr;
  order_.remove(n);
  // Out of the map while it is forwarded: what the listener does may write to this cache again.
  auto node = dirty_.extract(n->first);
  const std::string& key = node.key();
  Entry& e = node.mapped();
  budget_.used -= size_of(key, e);
  std::optional<std::string> old;
  if (listener_) old = e.old_known ? std::move(e.old) : inner_->get(key);
  RecordContext context{e.topic, e.partition, e.offset, e.timestamp, &e.headers};
  inner_->put(key, e.value, context);
  bool transient = forward_transient_deletes_ && e.held_value;
  if (listener_ && (e.value || old || transient)) listener_(key, e.value, old, context);
}

void CachingStore::evict_until(int64_t bytes) {
  flushing_ = true;
  while (order_.head && budget_.used > bytes) write_down(order_.head);
  flushing_ = false;
}

void CachingStore::flush() {
  if (flushing_) return;
  flushing_ = true;
  while (order_.head) write_down(order_.head);
  inner_->flush();
  flushing_ = false;
}

void CachingStore::erase_local(const std::vector<std::string>& keys) {
  // A pending update is still forwarded: it was made while the entry was live.
  for (const auto& key : keys)
    if (dirty_.count(key)) {
      flush();
      break;
    }
  last_read_valid_ = false;
  inner_->erase_local(keys);
}

std::optional<std::string> CachingStore::query_get(const std::string& key) {
  auto it = dirty_.find(key);
  if (it != dirty_.end()) return it->second.value;
  return inner_->query_get(key);
}

int64_t CachingStore::query_num_entries() {
  // An estimate, as Kafka's: pending new keys may already be below.
  int64_t pending = 0;
  for (const auto& [key, entry] : dirty_)
    if (entry.value) ++pending;
  return inner_->query_num_entries() + pending;
}

}  // namespace oxbow::streams::detail
