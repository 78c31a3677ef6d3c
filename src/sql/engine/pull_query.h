#pragma once
// Pull queries (a SELECT without EMIT): ksqlDB's rules for what one may ask, the store of the
// persistent query that materialises the table, what of the store to read (keys looked up, key
// ranges, window-start bounds, or everything) and how a store row becomes a result row (the
// aggregation's projection and HAVING, then the pull query's WHERE and projection). Reading the
// store is the server's (src/sql/server/pull_query_reader.h): this plans only, under the engine's
// lock; the plan then runs without it.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "oxbow/streams/serde.h"
#include "oxbow/streams/windows.h"
#include "sql/catalog/data_source.h"
#include "sql/execution/value.h"
#include "sql/parser/ast.h"

namespace oxbow::sql {

class Engine;
struct BoundQuery;
struct BoundExpr;

// ksqlDB's tail of every pull-query error (PullQueryValidator's syntax help).
extern const char* const kPullQueryHelp;

// Which of the key's values to read, on a table with one key column. The WHERE clause is applied
// to every row read whatever this says: bounds only narrow what is read.
struct KeyBounds {
  enum class Kind { kScan, kLookup, kRange };
  Kind kind = Kind::kScan;
  std::vector<Value> keys;            // kLookup: each key's value, of the key column's type
  std::optional<Value> lower, upper;  // kRange: both inclusive, none: unbounded on that side
};

// Inclusive bounds on a window's start (a windowed table).
struct TimeBounds {
  int64_t from = INT64_MIN;
  int64_t to = INT64_MAX;
};

// A range of store keys: what the store's byte order lets a range scan serve exactly.
struct StoreRange {
  Value from, to;  // inclusive
};

// How a KeyBounds range reads a store whose keys are serialized in `key_format` with type
// `key_type`: the store ranges that hold every key in [lower, upper] (at most two: a signed
// integer's negative values sort after its positive ones in big-endian bytes), or none when the
// serialized order is not the type's order (then the whole store is scanned and filtered).
std::optional<std::vector<StoreRange>> store_ranges(const KeyBounds& bounds,
                                                    const std::string& key_format,
                                                    const SqlType& key_type);

// What the WHERE clause of `query` (bound over a table whose key columns are `key_columns`, scope
// indices) bounds: the key's values and the window's start. windowed: the table's window size,
// none for session windows (whose ends vary), only with `windowed`.
struct PullBounds {
  KeyBounds keys;
  TimeBounds starts;
};
PullBounds pull_bounds(const BoundQuery& query, const std::vector<int>& key_columns, bool windowed,
                       std::optional<int64_t> window_size_ms);

enum class PullStoreKind { kKeyValue, kWindow, kSession };

// Makes the pull query's rows from the store's: not shared between threads (one per query).
class PullRows {
 public:
  virtual ~PullRows() = default;
  // The result row of a store entry (`key`: the table's key columns; `window`: null unless
  // windowed; `stored`: the store's value; `timestamp`: its last update's), or of a stream's
  // record (`stored`: its value columns), or none when HAVING or WHERE leaves it out.
  virtual std::optional<Row> row(const Row& key, const streams::Window* window, const Row& stored,
                                 int64_t timestamp) = 0;
};

// A pull query on a stream reads its topic from the beginning to the end each partition has when
// the query starts (ksqlDB 0.29's scan of a stream), its records read with the stream's serdes.
struct StreamScan {
  std::string topic;
  streams::Serde<Row> key, value;
};

struct PullPlan {
  std::string query_id;              // query_<milliseconds>, as ksqlDB names pull queries
  std::string source;                // the table's or stream's name
  std::optional<StreamScan> stream;  // a stream's: no store, no materializing query
  std::string materializing_query;
  std::string store;
  PullStoreKind store_kind = PullStoreKind::kKeyValue;
  std::optional<int64_t> window_size_ms;  // time windows: end = start + size
  PullBounds bounds;
  // The store ranges a kRange reads (empty: a full scan and WHERE).
  std::vector<StoreRange> ranges;
  std::optional<int64_t> limit;
  std::vector<std::string> column_names, column_types;
  std::vector<Column> columns;  // the same as value columns, for the rows' JSON
  std::vector<bool> key_columns;
  std::string schema;  // ksqlDB's: "`K` STRING KEY, `N` BIGINT"
  std::unique_ptr<PullRows> rows;
};

// Plans `query` (a SELECT without EMIT) against `engine`'s catalog and persistent queries; throws
// SqlError with ksqlDB's message when ksqlDB refuses it or it is not served here.
PullPlan plan_pull_query(const Engine& engine, const parser::Query& query);

}  // namespace oxbow::sql
