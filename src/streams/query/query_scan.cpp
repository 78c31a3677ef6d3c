// Interactive queries' scans (store_calls.h's query_scan). A store is read under its task's lock,
// which the stream thread waits for while a query holds it; a caller may take its time between
// two next() calls, or never close its iterator, so a query's cursor holds neither the lock nor a
// cursor of the store between its calls. It reads a batch of at most kBatch entries of one store
// under the lock, and the next batch from just past the last key it returned. Each batch is
// consistent (the store's own cursor: a RocksDB snapshot, the cache's pending writes); the scan
// as a whole sees writes made between batches ahead of its position, as Kafka's in-memory
// store's iterator does. Its memory is one batch, whatever the store's size.
#include "oxbow/streams/queryable.h"
#include "streams/state/cursors.h"

namespace oxbow::streams::detail {

namespace {

constexpr size_t kBatch = 256;

class QueryCursor : public KeyValueCursor {
 public:
  QueryCursor(std::shared_ptr<const StoreAccess> access, const KeyRange& range)
      : access_(std::move(access)), range_(range) {
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
    bool more = true;
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
    auto cursor = store.query_scan(resumed_after(range_, last_));
    if (read_batch(*cursor, kBatch, batch_)) {
      last_ = batch_.back().first;
      return;
    }
    ++store_index_;  // this store is done
    last_.reset();
  }

  std::shared_ptr<const StoreAccess> access_;
  KeyRange range_;
  size_t store_index_ = 0;
  const KeyValueStore* store_ = nullptr;
  std::optional<std::string> last_;
  std::vector<BytesPair> batch_;
  size_t i_ = 0;
};

}  // namespace

CursorPtr query_scan(std::shared_ptr<const StoreAccess> access, const KeyRange& range) {
  return CursorPtr(new QueryCursor(std::move(access), range));
}

}  // namespace oxbow::streams::detail
