#pragma once
// What the planners of the query shapes share: the evaluator's row of an input record (the FROM
// source's keys, values, then ROWTIME, ROWPARTITION, ROWOFFSET: the scope's order) and the
// reporting of expression errors.
#include <optional>
#include <string>
#include <vector>

#include "oxbow/streams/processor.h"
#include "sql/binder/query_binder.h"
#include "sql/execution/program.h"
#include "sql/planner/query_planner.h"

namespace oxbow::sql::planning {

// For each scope column, its place in the input row, or -1 (not read from a record).
std::vector<int> input_row_index(const Scope& scope);

class InputRow {
 public:
  InputRow(size_t key_count, size_t value_count)
      : key_count_(key_count), value_count_(value_count), row_(key_count + value_count + 3) {}
  const Row& fill(const Row& key, const Row& value, int64_t timestamp,
                  const std::optional<streams::RecordMetadata>& metadata);

 private:
  size_t key_count_, value_count_;
  Row row_;
};

// Counts an expression's error and logs it, as ksqlDB's processing log records it.
void report_error(QueryCounters& counters, const std::string& error, const std::string& where);

// Throws SqlError for what the engine does not run yet.
[[noreturn]] void unsupported(const std::string& what);

streams::Topology plan_aggregate(const BoundQuery& query, const DataSource& sink,
                                 std::shared_ptr<QueryCounters> counters);

}  // namespace oxbow::sql::planning
