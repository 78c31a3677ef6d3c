#pragma once
// Key-value stores on RocksDB, sharing one memory budget, that remember which changelog offset
// their data reflects.
//
// On-disk format: one RocksDB database per store, at <task directory>/rocksdb/<store name>.
//  - column family "default": the store's entries, keys and values exactly as the serdes wrote
//    them (bytewise order, so range() is byte order as Kafka's RocksDB stores); the DSL's stores
//    are timestamped, their values prefixed with 8 bytes of timestamp (state/timestamped.h);
//  - column family "oxbow-committed": one entry, "changelog-offset" -> the next changelog offset
//    the data reflects, as 8 bytes big-endian. It is written in the same write batch as the data
//    it describes, so after any crash the two agree;
//  - window and session stores (segments.h): column family "oxbow-segment-<n>" for each live
//    segment n (keys and values as above), "default" only for keys too short to carry a time;
//    expiry drops a segment's family. A window store written before segments existed has its
//    windows in "default": they move to their segments when the store is first opened as one
//    (each batch copies and deletes together, so a crash leaves every entry in one place).
// The write-ahead log is on (not synced): a process killed with -9 loses nothing RocksDB
// acknowledged; after a power cut RocksDB recovers a consistent prefix, with its offset.
//
// Two write modes. Direct (at-least-once): writes go to the database in batches of about 1 MiB,
// before a scan that would have to lay more than a few of them over, and at each commit (reads
// see the open batch through a hash index); a crash leaves the data at or ahead of its offset,
// and replaying from there only repeats updates.
// Buffered (exactly-once): writes wait in the open batch, which reads see through the same hash
// index (and scans through a sorted copy of it, kept once a store has scanned over more than a
// few), and reach the database only with commit(), after the transaction that carried them
// committed; a crash or an aborted
// transaction leaves the store at its last committed state, so recovery replays only the
// changelog's tail.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "streams/state/key_value_store.h"
#include "streams/state/segments.h"

namespace oxbow::streams::detail {

// What every RocksDB store of one KafkaStreams instance shares: one LRU block cache of
// `max_bytes`, to which a write buffer manager also charges the memtables, so that block cache,
// index and filter blocks and memtables together stay within the budget.
class RocksDbMemory {
 public:
  explicit RocksDbMemory(int64_t max_bytes);
  ~RocksDbMemory();
  int64_t max_bytes() const { return max_bytes_; }
  // Bytes the cache holds now (blocks and the memtables' reservations).
  int64_t usage() const;
  struct Shared;
  Shared& shared() { return *shared_; }

 private:
  int64_t max_bytes_;
  std::unique_ptr<Shared> shared_;
};

class RocksDbStore : public KeyValueStore, public SegmentedStore {
 public:
  // Opens (creating) the database at `path`. Throws StreamsException with RocksDB's reason.
  static std::unique_ptr<RocksDbStore> open(std::string name, const std::string& path,
                                            std::shared_ptr<RocksDbMemory> memory, bool buffered);
  ~RocksDbStore() override;

  const std::string& name() const override { return name_; }
  std::optional<std::string> get(const std::string& key) override;
  bool get_into(const std::string& key, std::string& out) override;
  void put(const std::string& key, const std::optional<std::string>& value,
           const RecordContext& context) override;
  std::vector<BytesPair> range(const std::string& from, const std::string& to) override;
  std::vector<BytesPair> prefix_scan(const std::string& prefix) override;
  std::vector<BytesPair> all() override;
  int64_t approximate_num_entries() override;
  void flush() override {}
  std::unique_ptr<KeyValueCursor> scan(const KeyRange& range) override;
  // Interactive queries (other threads): direct mode's open batch is laid over what the database
  // holds rather than written down, which only the stream thread may do.
  std::unique_ptr<KeyValueCursor> query_scan(const KeyRange& range) override;
  void use_segments(const SegmentLayout& layout) override;
  bool drop_segments_before(int64_t first_live) override;
  const SegmentLayout* segment_layout() const override {
    return floor_.layout ? &*floor_.layout : nullptr;
  }

  // The next changelog offset the database reflects; nullopt for a new store.
  std::optional<int64_t> committed_offset() const { return committed_offset_; }
  // Makes buffered writes durable, with `next_offset` (if any) recorded beside them.
  void commit(std::optional<int64_t> next_offset);
  // Drops buffered writes: the store returns to its last commit.
  void discard();
  // Restoration: writes straight to the database, in batches that carry their offset.
  void restore(std::string_view key, std::optional<std::string_view> value);
  void finish_restore_batch(int64_t next_offset);
  // Every entry and the offset removed (a changelog that no longer matches the local data).
  void wipe();
  // The segments' column families the database holds (a window store's).
  size_t segment_families() const;
  // Bytes of memtables and the on-disk size RocksDB estimates, for metrics.
  int64_t memtable_bytes();
  int64_t disk_bytes();

 private:
  struct Db;
  RocksDbStore(std::string name, std::unique_ptr<Db> db, bool buffered);
  struct Bounds;
  // Entries within `bounds` in key order, every family merged, direct mode's open batch laid
  // over them (written down first if it is large).
  std::vector<BytesPair> scan(const Bounds& bounds);
  std::unique_ptr<KeyValueCursor> cursor(const KeyRange& range, bool stream_thread);
  // Drops the families of segments the floor has passed (buffered: hidden now, dropped with the
  // next commit, after the writes already made to them). True if any went.
  bool drop_expired();
  void move_into_segments();

  std::string name_;
  std::unique_ptr<Db> db_;
  bool buffered_;
  std::optional<int64_t> committed_offset_;
  SegmentFloor floor_;
};

}  // namespace oxbow::streams::detail
