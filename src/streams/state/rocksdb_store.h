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
//    it describes, so after any crash the two agree.
// The write-ahead log is on (not synced): a process killed with -9 loses nothing RocksDB
// acknowledged; after a power cut RocksDB recovers a consistent prefix, with its offset.
//
// Two write modes. Direct (at-least-once): writes go to the database in batches of about 1 MiB
// (reads see the open batch) and at each commit; a crash leaves the data at or ahead of its
// offset, and replaying from there only repeats updates. Buffered
// (exactly-once): writes wait in an indexed batch that reads see, and reach the database only with
// commit(), after the transaction that carried them committed; a crash or an aborted transaction
// leaves the store at its last committed state, so recovery replays only the changelog's tail.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "streams/state/key_value_store.h"

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

class RocksDbStore : public KeyValueStore {
 public:
  // Opens (creating) the database at `path`. Throws StreamsException with RocksDB's reason.
  static std::unique_ptr<RocksDbStore> open(std::string name, const std::string& path,
                                            std::shared_ptr<RocksDbMemory> memory, bool buffered);
  ~RocksDbStore() override;

  const std::string& name() const override { return name_; }
  std::optional<std::string> get(const std::string& key) override;
  void put(const std::string& key, const std::optional<std::string>& value,
           const RecordContext& context) override;
  std::vector<BytesPair> range(const std::string& from, const std::string& to) override;
  std::vector<BytesPair> prefix_scan(const std::string& prefix) override;
  std::vector<BytesPair> all() override;
  int64_t approximate_num_entries() override;
  void flush() override {}

  // The next changelog offset the database reflects; nullopt for a new store.
  std::optional<int64_t> committed_offset() const { return committed_offset_; }
  // Makes buffered writes durable, with `next_offset` (if any) recorded beside them.
  void commit(std::optional<int64_t> next_offset);
  // Drops buffered writes: the store returns to its last commit.
  void discard();
  // Restoration: writes straight to the database, in batches that carry their offset.
  void restore(const std::string& key, const std::optional<std::string>& value);
  void finish_restore_batch(int64_t next_offset);
  // Every entry and the offset removed (a changelog that no longer matches the local data).
  void wipe();
  // Bytes of memtables and the on-disk size RocksDB estimates, for metrics.
  int64_t memtable_bytes();
  int64_t disk_bytes();

 private:
  struct Db;
  RocksDbStore(std::string name, std::unique_ptr<Db> db, bool buffered);
  std::vector<BytesPair> scan(const std::string& from, const std::string* to,
                              const std::string* prefix);

  std::string name_;
  std::unique_ptr<Db> db_;
  bool buffered_;
  std::optional<int64_t> committed_offset_;
};

}  // namespace oxbow::streams::detail
