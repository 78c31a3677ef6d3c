// Interactive queries' scans (store_calls.h's query_scan). A store is read under its task's lock,
// which the stream thread waits for while a query holds it; a caller may take its time between
// two next() calls, or never close its iterator, so a query's cursor holds neither the lock nor a
// cursor of the store between its calls. It reads a batch of at most kBatch entries of one store
// under the lock, and the next batch from just past the last key it returned. Each batch is
// consistent (the store's own cursor: a RocksDB snapshot, the cache's pending writes); the scan
// as a whole sees writes made between batches ahead of its position, as Kafka's in-memory
// store's iterator does. Its memory is one batch, whatever the store's size.
//
// Window and session stores' fetches read the same way, over their stores' segment-ordered
// cursors (state/window_queries.h); a fetch of one key stops after the first store that had
// anything for it.
#include "oxbow/streams/queryable.h"
#include "streams/state/cursors.h"
#include "streams/state/window_key.h"
#include "streams/state/window_queries.h"

namespace oxbow::streams::detail {

namespace {

constexpr size_t kBatch = 256;

// A cursor over one store from just past `last` (none: from the start), read under its lock.
using Opener = std::function<std::unique_ptr<KeyValueCursor>(
    KeyValueStore& store, const std::optional<std::string>& last)>;

class QueryCursor : public KeyValueCursor {
 public:
  QueryCursor(std::shared_ptr<const StoreAccess> access, Opener open, bool first_only)
      : access_(std::move(access)), open_(std::move(open)), first_only_(first_only) {
    fill();
  }
  bool valid() const override { return i_ < batch_.size(); }
  std::string_view key() const override { return batch_[i_].first; }
  std::string_view value() const override { return batch_[i_].second; }
  void next() override {
    if (++i_ == batch_.size()) fill();
  }

 private:
  // The next non-empty batch, from this store or the ones after it; none at the end.
  void fill() {
    batch_.clear();
    i_ = 0;
    bool more = !done_;
    while (batch_.empty() && more) {
      size_t index = 0;
      more = false;
      access_->visit([&](KeyValueStore& store) {
        if (index++ < store_index_) return true;
        more = true;
        read_from(store);
        return false;
      });
    }
  }

  void read_from(KeyValueStore& store) {
    // The same store as the last batch's, unless a rebalance moved or closed it meanwhile.
    if (last_ && &store != store_)
      throw InvalidStateStoreException("the state store " + access_->name +
                                       " was migrated or closed during a scan of it");
    store_ = &store;
    auto cursor = open_(store, last_);
    if (read_batch(*cursor, kBatch, batch_)) {
      last_ = batch_.back().first;
      return;
    }
    ++store_index_;  // this store is done
    done_ = first_only_ && (last_ || !batch_.empty());
    last_.reset();
  }

  std::shared_ptr<const StoreAccess> access_;
  Opener open_;
  bool first_only_;
  bool done_ = false;
  size_t store_index_ = 0;
  const KeyValueStore* store_ = nullptr;
  std::optional<std::string> last_;
  std::vector<BytesPair> batch_;
  size_t i_ = 0;
};

}  // namespace

CursorPtr query_scan(std::shared_ptr<const StoreAccess> access, const KeyRange& range) {
  Opener open = [range](KeyValueStore& store, const std::optional<std::string>& last) {
    return store.query_scan(resumed_after(range, last, ScanOrder::of(store, range.reverse)));
  };
  return CursorPtr(new QueryCursor(std::move(access), std::move(open), false));
}

CursorPtr query_window_scan(std::shared_ptr<const StoreAccess> access, const WindowScan& scan,
                            bool first_only) {
  std::optional<KeyRange> range = window_range(scan);
  Opener open = [range, scan](KeyValueStore& store, const std::optional<std::string>& last) {
    if (!range) return vector_cursor({}, KeyRange::everything());
    KeyRange resumed = resumed_after(*range, last, ScanOrder::of(store, range->reverse));
    return window_cursor(store.query_scan(resumed), scan);
  };
  return CursorPtr(new QueryCursor(std::move(access), std::move(open), first_only));
}

int64_t window_start_of(std::string_view store_key) {
  return window_store_start(store_key);
}

}  // namespace oxbow::streams::detail
