#pragma once
// A persistent query's physical plan to the Streams topology that runs it, built through Streams'
// public DSL over the generic row type (sql/execution/value.h's Row) with serdes made from the
// sources' formats (sql/serde/): streams and tables filtered and projected, re-keyed by PARTITION
// BY, expanded by table functions, joined and aggregated (docs/sql/engine.md says which shapes
// run). The plan's steps decide the topology's shape: which relation it reads (a source or a
// join), which sides a join re-keys and into which key format, whether PARTITION BY re-keys and
// GROUP BY repartitions, which conjuncts run before a join. Consecutive steps that ksqlDB runs as
// one processor each (filter, re-key, flat map, projection) run as one processor here, so that a
// record is not handed from node to node for each.
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "oxbow/streams/errors.h"
#include "oxbow/streams/topology.h"
#include "oxbow/streams/windows.h"
#include "sql/binder/query_binder.h"
#include "sql/execution/processing_log.h"
#include "sql/execution/value.h"
#include "sql/physical/physical_plan.h"

namespace oxbow::sql {

// What a query's records went through that ksqlDB's processing log records: expressions that
// failed (their column NULL, or, in WHERE, the row dropped) and records that did not deserialize
// (skipped), each counted and, when `log` is set, written there (else warned about in the
// process's log).
// A query's traffic on one topic, for DESCRIBE EXTENDED's runtime statistics (ksqlDB's
// per-topic consumer, producer and deserialization-error metrics): per record one relaxed
// increment and a relaxed store of the time (a coarse clock, a few nanoseconds).
struct TopicTraffic {
  std::atomic<int64_t> messages{0};
  std::atomic<int64_t> last_message_ms{0};  // 0: none yet
  std::atomic<int64_t> failed{0};           // records read that did not deserialize
  std::atomic<int64_t> last_failed_ms{0};
  void count_message();
  void count_failure();
};

// Wall-clock milliseconds from the coarse clock (within a few milliseconds, cheap per record).
int64_t coarse_now_ms();

// A push query's end, in place of its sink's topic (ksqlDB's transient queries end in a
// foreach): called on the Streams threads with each row the query makes. `key` holds the sink's
// key columns (a windowed result's followed by WINDOWSTART and WINDOWEND, as a windowed source's
// keys read), `value` its value columns. For a table's result, `value` is null when the key's row
// is gone (deleted, or no longer passing WHERE or HAVING: the tombstone the sink's topic would
// get). A table's row without value columns (a query selecting only its key) is not null:
// `value` then holds a single NULL that stands for no columns.
using RowCallback = std::function<void(const Row& key, const Row* value)>;

struct QueryCounters;
// A push query's topology (the query as plan_query below plans it) ending in `rows` instead of
// the sink's topic: `sink` still gives the formats of the query's internal topics and stores
// (repartitions, the aggregates' keys) and the result's kind.
streams::Topology plan_query(const physical::Step& plan, const BoundQuery& query,
                             const DataSource& sink, std::shared_ptr<QueryCounters> counters,
                             RowCallback rows);

struct QueryCounters {
  std::atomic<int64_t> expression_errors{0};
  std::atomic<int64_t> deserialization_errors{0};
  // Exceptions a node of the query threw on a record (Streams' processing-exception handler).
  std::atomic<int64_t> processing_errors{0};
  std::string query_id;
  std::shared_ptr<ProcessingLog> log;
  // By topic: what the query read and what it wrote. Filled while the query is planned, only
  // read (and the counts inside updated) once it runs.
  std::map<std::string, std::shared_ptr<TopicTraffic>> consumed, produced;
  static std::shared_ptr<TopicTraffic> traffic(
      std::map<std::string, std::shared_ptr<TopicTraffic>>& by_topic, const std::string& topic);
};

// The query's processing-exception handler, as ksqlDB's: what a node throws on a record is
// counted and written to the processing log, and the query goes on with the next record.
streams::ProcessingExceptionHandler processing_error_handler(
    std::shared_ptr<QueryCounters> counters);

// The topology of `plan`, the physical plan of `query` into `sink` (physical/physical_plan.h).
streams::Topology plan_query(const physical::Step& plan, const BoundQuery& query,
                             const DataSource& sink, std::shared_ptr<QueryCounters> counters);

// The store of an aggregation (GROUP BY): its rows are the grouping (the sink's key, windowed or
// not) and the aggregates' states, not the result's values.
constexpr const char* kAggregateStore = "Aggregate-Aggregate-Materialize";
// The store of a table query without GROUP BY (a table's filter and projection, or a join of
// tables), when its result is not windowed: its rows are the result's, keyed by the sink's key,
// for pull queries. ksqlDB instead reads the source table's store through the query's steps at
// each pull query; this costs a store and its changelog, and serves a join of tables as well.
constexpr const char* kTableQueryStore = "Project-Materialize";

// For pull queries (sql/engine/pull_query.h): a row of an aggregation's store made into the
// query's result values, as its own projection step makes them (ksqlDB's materialization applies
// the query's select and HAVING to the store's rows the same way). Not shared between threads.
class AggregateResults {
 public:
  // `plan` is the physical plan of `query`, a GROUP BY query.
  AggregateResults(const physical::Step& plan, const BoundQuery& query);
  ~AggregateResults();
  AggregateResults(const AggregateResults&) = delete;
  AggregateResults& operator=(const AggregateResults&) = delete;
  // The result's value columns of the group `key` in `window` (null: not windowed) whose
  // aggregates' states are `states`; an empty row when HAVING leaves the group out.
  Row value(const Row& key, const streams::Window* window, const Row& states);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace oxbow::sql
