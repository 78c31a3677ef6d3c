#pragma once
// A RocksDB iterator as a store cursor (bytes_store.h), over a snapshot taken when it is made:
// the scan reads the store as it was then, whatever is written during it.
#include <memory>
#include <string>

#include "streams/state/bytes_store.h"

namespace rocksdb {
class DB;
class ColumnFamilyHandle;
struct ReadOptions;
}  // namespace rocksdb

namespace oxbow::streams::detail {

// `family` of `db` within `range`; `read`: the store's read options. The cursor must go before
// the database is closed. Throws StreamsException naming `store` when RocksDB fails.
std::unique_ptr<KeyValueCursor> rocksdb_cursor(rocksdb::DB& db, rocksdb::ColumnFamilyHandle* family,
                                               const rocksdb::ReadOptions& read,
                                               const KeyRange& range, const std::string& store);

}  // namespace oxbow::streams::detail
