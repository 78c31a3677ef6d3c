#include "streams/state/rocksdb_cursor.h"

#include <rocksdb/db.h>

#include "oxbow/streams/errors.h"
#include "streams/state/cursors.h"

namespace oxbow::streams::detail {

namespace {

class RocksDbCursor : public KeyValueCursor {
 public:
  RocksDbCursor(rocksdb::DB& db, rocksdb::ColumnFamilyHandle* family,
                const rocksdb::ReadOptions& read, const KeyRange& range, std::string store)
      : db_(db), snapshot_(db.GetSnapshot()), range_(range), store_(std::move(store)) {
    rocksdb::ReadOptions options = read;
    options.snapshot = snapshot_;
    it_.reset(db.NewIterator(options, family));
    if (!range_.reverse) {
      it_->Seek(range_.from);
    } else if (!range_.to) {
      it_->SeekToLast();
    } else {
      it_->SeekForPrev(*range_.to);
      if (range_.to_exclusive && it_->Valid() && view(it_->key()) == *range_.to) it_->Prev();
    }
    settle();
  }
  ~RocksDbCursor() override {
    it_.reset();
    db_.ReleaseSnapshot(snapshot_);
  }
  bool valid() const override { return valid_; }
  std::string_view key() const override { return view(it_->key()); }
  std::string_view value() const override { return view(it_->value()); }
  void next() override {
    step();
    settle();
  }

 private:
  static std::string_view view(const rocksdb::Slice& s) { return {s.data(), s.size()}; }
  void step() {
    if (range_.reverse)
      it_->Prev();
    else
      it_->Next();
  }
  void settle() {
    valid_ = false;
    for (; it_->Valid(); step()) {
      ScanStep s = classify(range_, view(it_->key()));
      if (s == ScanStep::kStop) return;
      if (s == ScanStep::kTake) {
        valid_ = true;
        return;
      }
    }
    if (!it_->status().ok())
      throw StreamsException("state store " + store_ + ": scan: " + it_->status().ToString());
  }

  rocksdb::DB& db_;
  const rocksdb::Snapshot* snapshot_;
  std::unique_ptr<rocksdb::Iterator> it_;
  KeyRange range_;
  std::string store_;
  bool valid_ = false;
};

}  // namespace

std::unique_ptr<KeyValueCursor> rocksdb_cursor(rocksdb::DB& db, rocksdb::ColumnFamilyHandle* family,
                                               const rocksdb::ReadOptions& read,
                                               const KeyRange& range, const std::string& store) {
  return std::make_unique<RocksDbCursor>(db, family, read, range, store);
}

}  // namespace oxbow::streams::detail
