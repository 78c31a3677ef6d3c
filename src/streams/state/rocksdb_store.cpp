#include "streams/state/rocksdb_store.h"

#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>
#include <rocksdb/write_buffer_manager.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <unordered_map>

#include "oxbow/streams/errors.h"
#include "streams/state/cursors.h"
#include "streams/state/rocksdb_cursor.h"
#include "streams/state/segment_cursor.h"

namespace oxbow::streams::detail {

namespace {

constexpr const char* kCommittedFamily = "oxbow-committed";
constexpr const char* kOffsetKey = "changelog-offset";
constexpr const char* kSegmentPrefix = "oxbow-segment-";
constexpr size_t kRestoreBatchBytes = 4 << 20;
constexpr size_t kDirectBatchBytes = 1 << 20;
constexpr size_t kMaxOverlaid = 64;

std::string encode_offset(int64_t offset) {
  std::string out(8, '\0');
  for (int i = 7; i >= 0; --i) {
    out[static_cast<size_t>(i)] = static_cast<char>(offset & 0xff);
    offset >>= 8;
  }
  return out;
}

std::optional<int64_t> decode_offset(const std::string& bytes) {
  if (bytes.size() != 8) return std::nullopt;
  uint64_t v = 0;
  for (char c : bytes) v = (v << 8) | static_cast<uint8_t>(c);
  return static_cast<int64_t>(v);
}

void check(const rocksdb::Status& status, const std::string& what) {
  if (!status.ok()) throw StreamsException(what + ": " + status.ToString());
}

// For the reads and writes of every record: the message is built only on a failure.
void check(const rocksdb::Status& status, const std::string& store, const char* what) {
  if (!status.ok()) check(status, "state store " + store + ": " + what);
}

}  // namespace

struct RocksDbMemory::Shared {
  std::shared_ptr<rocksdb::Cache> cache;
  std::shared_ptr<rocksdb::WriteBufferManager> write_buffers;
  size_t write_buffer_size = 0;
};

RocksDbMemory::RocksDbMemory(int64_t max_bytes)
    : max_bytes_(max_bytes), shared_(std::make_unique<Shared>()) {
  auto bytes = static_cast<size_t>(std::max<int64_t>(max_bytes, 8 << 20));
  // Index and filter blocks go to the high-priority pool, so hot data cannot evict them.
  shared_->cache = rocksdb::NewLRUCache(bytes, -1, false, 0.1);
  // Memtables may take half of the budget; what they take is reserved in the cache, so the
  // cache's blocks shrink to make room.
  shared_->write_buffers = std::make_shared<rocksdb::WriteBufferManager>(bytes / 2, shared_->cache);
  shared_->write_buffer_size = std::clamp<size_t>(bytes / 8, 1 << 20, 16 << 20);
}

RocksDbMemory::~RocksDbMemory() = default;

int64_t RocksDbMemory::usage() const {
  return static_cast<int64_t>(shared_->cache->GetUsage());
}

struct RocksDbStore::Db {
  std::string path;
  std::shared_ptr<RocksDbMemory> memory;
  std::unique_ptr<rocksdb::DB> db;
  rocksdb::ColumnFamilyHandle* data = nullptr;  // everything, or a segmented store's timeless keys
  rocksdb::ColumnFamilyHandle* committed = nullptr;
  std::map<int64_t, rocksdb::ColumnFamilyHandle*> segments;
  std::vector<rocksdb::ColumnFamilyHandle*> expired;  // buffered: hidden, dropped at commit
  std::vector<rocksdb::ColumnFamilyHandle*> others;   // families of no known role, kept open
  // The open batch, and the latest write of each key in it (nullopt: a delete): reads look keys
  // up in the hash map first, which is cheaper than RocksDB's indexed batch (an ordered skip
  // list, and a merge of it with the database on every read).
  rocksdb::WriteBatch batch;
  std::unordered_map<std::string, std::optional<std::string>> latest;
  // Buffered mode, which cannot write the batch down before a scan: the latest writes in key
  // order too, kept from a store's first scan over more than a few of them (only stores that
  // scan pay for it).
  std::map<std::string, std::optional<std::string>> ordered;
  bool keep_ordered = false;
  rocksdb::WriteBatch restoring;
  rocksdb::WriteOptions write;
  rocksdb::ReadOptions read;
  bool row_cache = true;  // off for window stores (use_segments)

  ~Db() { close(); }

  std::vector<rocksdb::ColumnFamilyHandle*> families() const {
    std::vector<rocksdb::ColumnFamilyHandle*> out{data, committed};
    for (const auto& [id, handle] : segments) out.push_back(handle);
    out.insert(out.end(), expired.begin(), expired.end());
    out.insert(out.end(), others.begin(), others.end());
    return out;
  }

  void close() {
    if (!db) return;
    // Memtables to disk, so that the next open has no write-ahead log to replay.
    auto all = families();
    db->Flush(rocksdb::FlushOptions(), all);
    for (auto* handle : all) db->DestroyColumnFamilyHandle(handle);
    data = committed = nullptr;
    segments.clear();
    expired.clear();
    others.clear();
    db->Close();
    db.reset();
  }

  rocksdb::Options options() const {
    auto& shared = memory->shared();
    rocksdb::Options o;
    o.create_if_missing = true;
    o.create_missing_column_families = true;
    o.write_buffer_manager = shared.write_buffers;
    o.write_buffer_size = shared.write_buffer_size;
    o.max_write_buffer_number = 3;
    // A small bloom filter over each memtable's keys: aggregations look up many keys that are
    // not there yet (each new window), which then skip the memtables' skip lists.
    o.memtable_prefix_bloom_size_ratio = 0.02;
    o.memtable_whole_key_filtering = true;
    o.keep_log_file_num = 2;
    o.max_log_file_size = 1 << 20;
    o.compression = rocksdb::kLZ4Compression;
    // Rows found in table files are kept in the shared cache too: a table's lookups (joins) then
    // skip the index and data block searches (a quarter of a lookup's time).
    if (row_cache) o.row_cache = shared.cache;
    rocksdb::BlockBasedTableOptions table;
    table.block_cache = shared.cache;
    table.cache_index_and_filter_blocks = true;
    table.cache_index_and_filter_blocks_with_high_priority = true;
    table.pin_l0_filter_and_index_blocks_in_cache = true;
    table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
    // A hash index in each data block: point lookups (joins, aggregations) skip the binary search.
    table.data_block_index_type = rocksdb::BlockBasedTableOptions::kDataBlockBinaryAndHash;
    o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
    return o;
  }

  void open() {
    std::error_code ec;
    std::filesystem::create_directories(path, ec);
    if (ec)
      throw StreamsException("cannot create state store directory " + path + ": " + ec.message());
    auto o = options();
    rocksdb::ColumnFamilyOptions family(o);
    // Every family the database has must be opened: a window store's segments among them.
    std::vector<std::string> names;
    if (!rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(o), path, &names).ok()) names.clear();
    for (const char* name : {rocksdb::kDefaultColumnFamilyName.c_str(), kCommittedFamily})
      if (std::find(names.begin(), names.end(), name) == names.end()) names.emplace_back(name);
    std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
    for (const auto& name : names) descriptors.emplace_back(name, family);
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* raw = nullptr;
    check(rocksdb::DB::Open(rocksdb::DBOptions(o), path, descriptors, &handles, &raw),
          "cannot open state store at " + path);
    db.reset(raw);
    for (auto* handle : handles) {
      const std::string& name = handle->GetName();
      if (name == rocksdb::kDefaultColumnFamilyName)
        data = handle;
      else if (name == kCommittedFamily)
        committed = handle;
      else if (auto id = segment_id(name))
        segments[*id] = handle;
      else
        others.push_back(handle);
    }
  }

  static std::optional<int64_t> segment_id(const std::string& name) {
    if (name.rfind(kSegmentPrefix, 0) != 0) return std::nullopt;
    try {
      return std::stoll(name.substr(std::strlen(kSegmentPrefix)));
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }

  rocksdb::ColumnFamilyHandle* create_segment(int64_t id) {
    rocksdb::ColumnFamilyHandle* handle = nullptr;
    check(db->CreateColumnFamily(rocksdb::ColumnFamilyOptions(options()),
                                 kSegmentPrefix + std::to_string(id), &handle),
          "state store at " + path + ": cannot create a segment");
    segments[id] = handle;
    return handle;
  }

  void drop(rocksdb::ColumnFamilyHandle* handle) {
    check(db->DropColumnFamily(handle), "state store at " + path + ": cannot drop a segment");
    db->DestroyColumnFamilyHandle(handle);
  }

  rocksdb::ColumnFamilyHandle* family(const SegmentFloor& floor, std::string_view key, bool create);
  std::vector<rocksdb::ColumnFamilyHandle*> live() const;  // the families reads see

  // Direct mode's open batch to the database.
  void write_down(const std::string& store) {
    if (batch.Count() == 0) return;
    check(db->Write(write, &batch), "state store " + store + ": write");
    forget_pending();
  }

  void forget_pending() {
    batch.Clear();
    latest.clear();
    ordered.clear();
  }

  void destroy() {
    close();
    check(rocksdb::DestroyDB(path, options()), "cannot remove state store at " + path);
  }
};

std::unique_ptr<RocksDbStore> RocksDbStore::open(std::string name, const std::string& path,
                                                 std::shared_ptr<RocksDbMemory> memory,
                                                 bool buffered) {
  auto db = std::make_unique<Db>();
  db->path = path;
  db->memory = std::move(memory);
  db->open();
  auto store =
      std::unique_ptr<RocksDbStore>(new RocksDbStore(std::move(name), std::move(db), buffered));
  std::string offset;
  auto s = store->db_->db->Get(store->db_->read, store->db_->committed, kOffsetKey, &offset);
  if (s.ok())
    store->committed_offset_ = decode_offset(offset);
  else if (!s.IsNotFound())
    check(s, "cannot read state store at " + path);
  return store;
}

RocksDbStore::RocksDbStore(std::string name, std::unique_ptr<Db> db, bool buffered)
    : name_(std::move(name)), db_(std::move(db)), buffered_(buffered) {}

RocksDbStore::~RocksDbStore() = default;

namespace {

bool key_less(const BytesPair& a, const BytesPair& b) {
  return a.first < b.first;
}

}  // namespace

// A scan's bounds: keys from `from`, up to `to` (inclusive) or while they start with `prefix`.
struct RocksDbStore::Bounds {
  const std::string& from;
  const std::string* to = nullptr;
  const std::string* prefix = nullptr;

  bool past(std::string_view key) const {
    return (to && key > *to) || (prefix && key.substr(0, prefix->size()) != *prefix);
  }
  bool contains(std::string_view key) const { return key >= from && !past(key); }
};

rocksdb::ColumnFamilyHandle* RocksDbStore::Db::family(const SegmentFloor& floor,
                                                      std::string_view key, bool create) {
  auto segment = floor.segment_of(key);
  if (!segment) return data;
  if (*segment < floor.first_live) return nullptr;
  if (auto it = segments.find(*segment); it != segments.end()) return it->second;
  return create ? create_segment(*segment) : nullptr;
}

std::optional<std::string> RocksDbStore::get(const std::string& key) {
  std::string value;
  if (!get_into(key, value)) return std::nullopt;
  return value;
}

bool RocksDbStore::get_into(const std::string& key, std::string& out) {
  rocksdb::ColumnFamilyHandle* family = db_->family(floor_, key, false);
  if (!family) return false;
  rocksdb::Status s;
  if (auto it = db_->latest.find(key); it != db_->latest.end()) {
    if (!it->second) return false;
    out.assign(*it->second);
    return true;
  }
  s = db_->db->Get(db_->read, family, key, &out);
  if (s.IsNotFound()) return false;
  check(s, name_, "read");
  return true;
}

void RocksDbStore::put(const std::string& key, const std::optional<std::string>& value,
                       const RecordContext&) {
  if (floor_.observe(key)) drop_expired();
  rocksdb::ColumnFamilyHandle* family = db_->family(floor_, key, true);
  if (!family) return;  // an expired segment's window: skipped, as Kafka's segmented stores do
  check(value ? db_->batch.Put(family, key, *value) : db_->batch.Delete(family, key), name_,
        "write");
  db_->latest.insert_or_assign(key, value);
  if (buffered_) {
    if (db_->keep_ordered) db_->ordered.insert_or_assign(key, value);
    return;
  }
  // Written in batches, one write-ahead-log append each, rather than one per update.
  if (db_->batch.GetDataSize() > kDirectBatchBytes) db_->write_down(name_);
}

std::vector<BytesPair> RocksDbStore::scan(const Bounds& bounds) {
  // A few pending writes are laid over the scan, more are written down first: a session or
  // sliding aggregation scans a key's windows for every record, between a write or two.
  if (!buffered_ && db_->latest.size() > kMaxOverlaid) db_->write_down(name_);
  std::vector<BytesPair> out;
  auto scan_family = [&](rocksdb::ColumnFamilyHandle* family) {
    auto middle = static_cast<std::ptrdiff_t>(out.size());
    std::unique_ptr<rocksdb::Iterator> it(db_->db->NewIterator(db_->read, family));
    for (it->Seek(bounds.from); it->Valid(); it->Next()) {
      rocksdb::Slice k = it->key();
      if (bounds.past(std::string_view(k.data(), k.size()))) break;
      out.emplace_back(k.ToString(), it->value().ToString());
    }
    check(it->status(), "state store " + name_ + ": scan");
    // A key lives in one family only: each family's run merges into key order.
    std::inplace_merge(out.begin(), out.begin() + middle, out.end(), key_less);
  };
  scan_family(db_->data);
  for (const auto& [id, family] : db_->segments)
    if (id >= floor_.first_live) scan_family(family);
  if (db_->latest.empty()) return out;
  // The open batch laid over the database's entries, in key order.
  std::vector<std::pair<const std::string*, const std::optional<std::string>*>> mine;
  if (buffered_ && !db_->keep_ordered && db_->latest.size() > kMaxOverlaid) {
    db_->ordered.insert(db_->latest.begin(), db_->latest.end());
    db_->keep_ordered = true;
  }
  // Buffered writes to segments expired since wait for the commit to go; reads skip them.
  auto live = [&](const std::string& key) {
    auto segment = floor_.segment_of(key);
    return !segment || *segment >= floor_.first_live;
  };
  if (db_->keep_ordered) {
    for (auto it = db_->ordered.lower_bound(bounds.from);
         it != db_->ordered.end() && !bounds.past(it->first); ++it)
      if (live(it->first)) mine.emplace_back(&it->first, &it->second);
  } else {
    for (const auto& [key, value] : db_->latest)
      if (bounds.contains(key) && live(key)) mine.emplace_back(&key, &value);
    std::sort(mine.begin(), mine.end(),
              [](const auto& a, const auto& b) { return *a.first < *b.first; });
  }
  std::vector<BytesPair> merged;
  merged.reserve(out.size() + mine.size());
  size_t i = 0;
  for (const auto& [key, value] : mine) {
    while (i < out.size() && out[i].first < *key) merged.push_back(std::move(out[i++]));
    if (i < out.size() && out[i].first == *key) ++i;
    if (*value) merged.emplace_back(*key, **value);
  }
  while (i < out.size()) merged.push_back(std::move(out[i++]));
  return merged;
}

std::vector<BytesPair> RocksDbStore::range(const std::string& from, const std::string& to) {
  if (from > to) return {};
  return scan(Bounds{from, &to});
}

std::vector<BytesPair> RocksDbStore::prefix_scan(const std::string& prefix) {
  return scan(Bounds{prefix, nullptr, &prefix});
}

std::vector<BytesPair> RocksDbStore::all() {
  static const std::string kFirst;
  return scan(Bounds{kFirst});
}

std::unique_ptr<KeyValueCursor> RocksDbStore::scan(const KeyRange& range) {
  return cursor(range, true);
}

std::unique_ptr<KeyValueCursor> RocksDbStore::query_scan(const KeyRange& range) {
  return cursor(range, false);
}

// The open batch's writes in range are copied over the snapshot's cursor: a few of them (more
// are written down first by the stream thread in direct mode, as scan() does), a query's (which
// may not write), or exactly-once's (which may not before its commit): a batch's worth, or one
// transaction's writes, never the store.
// A window or session store's cursor walks its segments' families (segment_cursor.h), each
// opened with its own snapshot when reached; the open batch is laid over them in that order, its
// writes to segments already expired left out (buffered mode drops them only at the commit).
std::unique_ptr<KeyValueCursor> RocksDbStore::cursor(const KeyRange& range, bool stream_thread) {
  if (!buffered_ && stream_thread && db_->latest.size() > kMaxOverlaid) db_->write_down(name_);
  ScanOrder order{floor_.layout, range.reverse};
  PendingWrites pending;
  for (const auto& [key, value] : db_->latest)
    if (order.wants(range, key) && db_->family(floor_, key, false))
      pending.emplace_back(key, value);
  sort_pending(pending, order);
  std::unique_ptr<KeyValueCursor> below;
  if (!floor_.layout) {
    below = rocksdb_cursor(*db_->db, db_->data, db_->read, range, name_);
  } else {
    SegmentSource source;
    source.seek = [this, reverse = range.reverse](int64_t bound) {
      return seek_segment(db_->segments, floor_.first_live, bound, reverse);
    };
    source.open = [this](int64_t segment, const KeyRange& r) {
      auto* family = segment == ScanOrder::kUnsegmented ? db_->data : db_->segments.at(segment);
      return rocksdb_cursor(*db_->db, family, db_->read, r, name_);
    };
    below = segment_cursor(std::move(source), order, range);
  }
  return overlay_cursor(std::move(pending), std::move(below), order);
}

namespace {

int64_t sum_property(rocksdb::DB& db, const std::vector<rocksdb::ColumnFamilyHandle*>& families,
                     const char* property) {
  uint64_t total = 0;
  for (auto* family : families) {
    uint64_t n = 0;
    db.GetIntProperty(family, property, &n);
    total += n;
  }
  return static_cast<int64_t>(total);
}

}  // namespace

std::vector<rocksdb::ColumnFamilyHandle*> RocksDbStore::Db::live() const {
  std::vector<rocksdb::ColumnFamilyHandle*> out{data};
  for (const auto& [id, handle] : segments) out.push_back(handle);
  return out;
}

int64_t RocksDbStore::approximate_num_entries() {
  int64_t pending = db_->batch.Count();
  return sum_property(*db_->db, db_->live(), "rocksdb.estimate-num-keys") + pending;
}

void RocksDbStore::commit(std::optional<int64_t> next_offset) {
  rocksdb::WriteBatch& batch = db_->batch;
  if (next_offset)
    check(batch.Put(db_->committed, kOffsetKey, encode_offset(*next_offset)),
          "state store " + name_ + ": commit");
  if (batch.Count() > 0)
    check(db_->db->Write(db_->write, &batch), "state store " + name_ + ": commit");
  db_->forget_pending();
  for (auto* family : db_->expired) db_->drop(family);
  db_->expired.clear();
  if (next_offset) committed_offset_ = next_offset;
}

void RocksDbStore::discard() {
  db_->forget_pending();
  for (auto* family : db_->expired) db_->drop(family);
  db_->expired.clear();
}

void RocksDbStore::restore(std::string_view key, std::optional<std::string_view> value) {
  if (floor_.observe(key)) drop_expired();
  rocksdb::ColumnFamilyHandle* family = db_->family(floor_, key, true);
  if (!family) return;  // expired by the windows restored after it
  if (value)
    db_->restoring.Put(family, key, *value);
  else
    db_->restoring.Delete(family, key);
  // Written early without their offset, these are still records of the committed changelog:
  // a crash replays them onto the same values.
  if (db_->restoring.GetDataSize() > kRestoreBatchBytes) {
    check(db_->db->Write(db_->write, &db_->restoring), "state store " + name_ + ": restore");
    db_->restoring.Clear();
  }
}

void RocksDbStore::finish_restore_batch(int64_t next_offset) {
  db_->restoring.Put(db_->committed, kOffsetKey, encode_offset(next_offset));
  check(db_->db->Write(db_->write, &db_->restoring), "state store " + name_ + ": restore");
  db_->restoring.Clear();
  committed_offset_ = next_offset;
}

void RocksDbStore::wipe() {
  db_->forget_pending();
  db_->restoring.Clear();
  db_->destroy();
  db_->open();
  committed_offset_.reset();
  floor_ = SegmentFloor{floor_.layout};
}

size_t RocksDbStore::segment_families() const {
  return db_->segments.size() + db_->expired.size();
}

int64_t RocksDbStore::memtable_bytes() {
  return sum_property(*db_->db, db_->live(), "rocksdb.cur-size-all-mem-tables");
}

int64_t RocksDbStore::disk_bytes() {
  return sum_property(*db_->db, db_->live(), "rocksdb.total-sst-files-size");
}

void RocksDbStore::use_segments(const SegmentLayout& layout) {
  floor_.layout = layout;
  // Aggregations look up mostly windows not written yet, which a row cache never holds but is
  // asked for in every table file before its bloom filter: a fifth more time per window update.
  // Reopened without it, before anything is written.
  db_->row_cache = false;
  db_->close();
  db_->open();
  move_into_segments();
}

bool RocksDbStore::drop_segments_before(int64_t first_live) {
  return floor_.raise(first_live) && drop_expired();
}

bool RocksDbStore::drop_expired() {
  auto end = db_->segments.lower_bound(floor_.first_live);
  std::vector<rocksdb::ColumnFamilyHandle*> going;
  for (auto it = db_->segments.begin(); it != end; ++it) going.push_back(it->second);
  if (going.empty()) return false;
  db_->segments.erase(db_->segments.begin(), end);
  // Writes already batched for them go first: restored records are the committed changelog's.
  if (db_->restoring.Count() > 0) {
    check(db_->db->Write(db_->write, &db_->restoring), "state store " + name_ + ": restore");
    db_->restoring.Clear();
  }
  if (buffered_ && db_->batch.Count() > 0) {
    db_->expired.insert(db_->expired.end(), going.begin(), going.end());
    return true;
  }
  db_->write_down(name_);
  for (auto* family : going) db_->drop(family);
  return true;
}

void RocksDbStore::move_into_segments() {
  std::unique_ptr<rocksdb::Iterator> it(db_->db->NewIterator(db_->read, db_->data));
  // The latest window first, so that windows it expired are deleted rather than moved.
  bool any = false;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    std::string_view key(it->key().data(), it->key().size());
    if (!floor_.segment_of(key)) continue;
    any = true;
    floor_.observe(key);
  }
  check(it->status(), "state store " + name_ + ": scan");
  if (!any) return;
  rocksdb::WriteBatch move;
  int64_t moved = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    std::string_view key(it->key().data(), it->key().size());
    if (!floor_.segment_of(key)) continue;
    if (auto* family = db_->family(floor_, key, true)) {
      check(move.Put(family, it->key(), it->value()), "state store " + name_ + ": write");
      ++moved;
    }
    check(move.Delete(db_->data, it->key()), "state store " + name_ + ": write");
    if (move.GetDataSize() > kRestoreBatchBytes) {
      check(db_->db->Write(db_->write, &move), "state store " + name_ + ": write");
      move.Clear();
    }
  }
  check(it->status(), "state store " + name_ + ": scan");
  check(db_->db->Write(db_->write, &move), "state store " + name_ + ": write");
  spdlog::info("state store {}: {} windows moved into segments (local state from before them)",
               name_, moved);
}

}  // namespace oxbow::streams::detail
