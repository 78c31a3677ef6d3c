#pragma once
// A bound persistent query to the Streams topology that runs it, built through Streams' public
// DSL over the generic row type (sql/execution/value.h's Row) with serdes made from the sources'
// formats (sql/serde/). The first shape: a stream filtered and projected into a stream, its key
// kept. Aggregations, joins, PARTITION BY and tables come next; each is refused with a
// SqlError until then.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "oxbow/streams/topology.h"
#include "sql/binder/query_binder.h"

namespace oxbow::sql {

// What a query's rows went through that ksqlDB's processing log would record: expressions that
// failed (their column NULL, or, in WHERE, the row dropped).
struct QueryCounters {
  std::atomic<int64_t> expression_errors{0};
};

streams::Topology plan_query(const BoundQuery& query, const DataSource& sink,
                             std::shared_ptr<QueryCounters> counters);

}  // namespace oxbow::sql
