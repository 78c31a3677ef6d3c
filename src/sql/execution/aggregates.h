#pragma once
// Aggregate functions at run time (docs/sql/ksqldb-facts.md §5.1): each call keeps its state in
// one or more columns of the aggregation's state row (what its store holds per key), updated by
// each input row's arguments, and gives its result from that state. NULL arguments are skipped
// (COUNT(x) counts the rest, COUNT(*) every row).
#include <string>
#include <vector>

#include "sql/catalog/data_source.h"
#include "sql/execution/value.h"
#include "sql/types/sql_type.h"

namespace oxbow::sql {

struct AggregateCall {
  std::string function;          // COUNT, SUM, AVG, MIN, MAX, LATEST_BY_OFFSET, ...
  SqlTypePtr result;             // the call's type
  std::vector<SqlTypePtr> args;  // the arguments' types (none for COUNT(*))
  int first_arg = 0;             // where its arguments start in the arguments row
  int state = 0;                 // where its state starts in the state row
};

// The state columns of `calls` (KSQL_AGG_VARIABLE_<n>), laying out each call's `state` and
// `first_arg`. Throws SqlError for a function not supported yet.
std::vector<Column> layout_aggregates(std::vector<AggregateCall>& calls);

void init_aggregate(const AggregateCall& call, Row& state);
void accumulate(const AggregateCall& call, const Row& args, Row& state);
// Two sessions' states merged into `state` (when a record joins them into one session).
void merge_aggregate(const AggregateCall& call, const Row& other, Row& state);
void aggregate_result(const AggregateCall& call, const Row& state, Value& out);

// Aggregations over tables (aggregate_retraction.cpp): whether ksqlDB can take a row back out of
// `function`'s state, and doing so.
bool can_retract(const std::string& function);
void retract(const AggregateCall& call, const Row& args, Row& state);

}  // namespace oxbow::sql
