#include "streams/state/rocksdb_store.h"

#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/write_batch_with_index.h>
#include <rocksdb/write_buffer_manager.h>

#include <algorithm>
#include <filesystem>

#include "oxbow/streams/errors.h"

namespace oxbow::streams::detail {

namespace {

constexpr const char* kCommittedFamily = "oxbow-committed";
constexpr const char* kOffsetKey = "changelog-offset";
constexpr size_t kRestoreBatchBytes = 4 << 20;
constexpr size_t kDirectBatchBytes = 1 << 20;

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
  rocksdb::ColumnFamilyHandle* data = nullptr;
  rocksdb::ColumnFamilyHandle* committed = nullptr;
  rocksdb::WriteBatchWithIndex pending{rocksdb::BytewiseComparator(), 0, true};
  rocksdb::WriteBatch restoring;
  rocksdb::WriteOptions write;
  rocksdb::ReadOptions read;

  ~Db() { close(); }

  void close() {
    if (!db) return;
    // Memtables to disk, so that the next open has no write-ahead log to replay.
    db->Flush(rocksdb::FlushOptions(), {data, committed});
    if (data) db->DestroyColumnFamilyHandle(data);
    if (committed) db->DestroyColumnFamilyHandle(committed);
    data = committed = nullptr;
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
    o.keep_log_file_num = 2;
    o.max_log_file_size = 1 << 20;
    o.compression = rocksdb::kLZ4Compression;
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
    std::vector<rocksdb::ColumnFamilyDescriptor> families{
        {rocksdb::kDefaultColumnFamilyName, family}, {kCommittedFamily, family}};
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* raw = nullptr;
    check(rocksdb::DB::Open(rocksdb::DBOptions(o), path, families, &handles, &raw),
          "cannot open state store at " + path);
    db.reset(raw);
    data = handles[0];
    committed = handles[1];
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

std::optional<std::string> RocksDbStore::get(const std::string& key) {
  std::string value;
  rocksdb::Status s =
      db_->pending.GetFromBatchAndDB(db_->db.get(), db_->read, db_->data, key, &value);
  if (s.IsNotFound()) return std::nullopt;
  check(s, "state store " + name_ + ": read");
  return value;
}

void RocksDbStore::put(const std::string& key, const std::optional<std::string>& value,
                       const RecordContext&) {
  check(value ? db_->pending.Put(db_->data, key, *value) : db_->pending.Delete(db_->data, key),
        "state store " + name_ + ": write");
  // Direct mode writes in batches, one write-ahead-log append each, rather than one per update.
  if (!buffered_ && db_->pending.GetDataSize() > kDirectBatchBytes) {
    check(db_->db->Write(db_->write, db_->pending.GetWriteBatch()),
          "state store " + name_ + ": write");
    db_->pending.Clear();
  }
}

std::vector<BytesPair> RocksDbStore::scan(const std::string& from, const std::string* to,
                                          const std::string* prefix) {
  std::unique_ptr<rocksdb::Iterator> it(db_->db->NewIterator(db_->read, db_->data));
  it.reset(db_->pending.NewIteratorWithBase(db_->data, it.release()));
  std::vector<BytesPair> out;
  for (it->Seek(from); it->Valid(); it->Next()) {
    rocksdb::Slice k = it->key();
    if (to && k.compare(*to) > 0) break;
    if (prefix && !k.starts_with(*prefix)) break;
    out.emplace_back(k.ToString(), it->value().ToString());
  }
  check(it->status(), "state store " + name_ + ": scan");
  return out;
}

std::vector<BytesPair> RocksDbStore::range(const std::string& from, const std::string& to) {
  if (from > to) return {};
  return scan(from, &to, nullptr);
}

std::vector<BytesPair> RocksDbStore::prefix_scan(const std::string& prefix) {
  return scan(prefix, nullptr, &prefix);
}

std::vector<BytesPair> RocksDbStore::all() {
  return scan(std::string(), nullptr, nullptr);
}

int64_t RocksDbStore::approximate_num_entries() {
  uint64_t n = 0;
  db_->db->GetIntProperty(db_->data, "rocksdb.estimate-num-keys", &n);
  return static_cast<int64_t>(n) + db_->pending.GetWriteBatch()->Count();
}

void RocksDbStore::commit(std::optional<int64_t> next_offset) {
  if (next_offset) db_->pending.Put(db_->committed, kOffsetKey, encode_offset(*next_offset));
  if (db_->pending.GetWriteBatch()->Count() > 0)
    check(db_->db->Write(db_->write, db_->pending.GetWriteBatch()),
          "state store " + name_ + ": commit");
  db_->pending.Clear();
  if (next_offset) committed_offset_ = next_offset;
}

void RocksDbStore::discard() {
  db_->pending.Clear();
}

void RocksDbStore::restore(const std::string& key, const std::optional<std::string>& value) {
  if (value)
    db_->restoring.Put(db_->data, key, *value);
  else
    db_->restoring.Delete(db_->data, key);
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
  db_->pending.Clear();
  db_->restoring.Clear();
  db_->destroy();
  db_->open();
  committed_offset_.reset();
}

int64_t RocksDbStore::memtable_bytes() {
  uint64_t n = 0;
  db_->db->GetIntProperty(db_->data, "rocksdb.cur-size-all-mem-tables", &n);
  return static_cast<int64_t>(n);
}

int64_t RocksDbStore::disk_bytes() {
  uint64_t n = 0;
  db_->db->GetIntProperty(db_->data, "rocksdb.total-sst-files-size", &n);
  return static_cast<int64_t>(n);
}

}  // namespace oxbow::streams::detail
