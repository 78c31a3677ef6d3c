#pragma once
// What the planners of the query shapes share: the evaluator's row of an input record (the FROM
// source's keys, values, then ROWTIME, ROWPARTITION, ROWOFFSET: the scope's order) and the
// reporting of expression errors.
#include <optional>
#include <string>
#include <vector>

#include "oxbow/streams/kstream.h"
#include "oxbow/streams/options.h"
#include "oxbow/streams/processor.h"
#include "oxbow/streams/streams_builder.h"
#include "sql/binder/query_binder.h"
#include "sql/execution/program.h"
#include "sql/planner/query_planner.h"

namespace oxbow::sql::planning {

// Where a query's rows go: its sink's topic or, when `rows` is set, a push query's callback.
// `sink` gives the formats of the query's own topics and stores either way.
struct Output {
  const DataSource& sink;
  RowCallback rows;
};

// What the planner reads of a physical plan: the steps from the sink down to the relation the
// query reads (a source step, or a join step over two sides).
struct PlanShape {
  const physical::Step* partition_by = nullptr;  // PARTITION BY's re-key (none: keys kept)
  const physical::Step* group_by = nullptr;      // GROUP BY's grouping (StreamGroupBy...)
  const physical::Step* relation = nullptr;      // a source or a join
  // For each scope column, whether the rows the planner makes of records carry it: all but the
  // value columns no step reads (the source steps' columns_read).
  std::vector<bool> in_rows;
  bool joined() const { return relation->sources.size() == 2; }
  bool groups_by_key() const { return group_by && group_by->type == "StreamGroupByKey"; }
};
PlanShape shape_of(const physical::Step& plan, const BoundQuery& q);

// One side of a join step: the relation it reads (a source, or the join below), the re-key
// before the join (none: kept as it is) and WHERE's conjuncts pushed down to it (none: none).
struct JoinSide {
  const physical::Step* relation = nullptr;
  const physical::Step* rekey = nullptr;
  const physical::Step* pushed = nullptr;
};
JoinSide side_of(const physical::Step& side);

// Where each of `q`'s scope columns is in the row its sources' records make (-1: not there): each
// source's key columns, the value columns `shape` keeps, its pseudo columns and, for a windowed
// source, its window's bounds (InputRow's layout, side after side for a join).
std::vector<int> input_row_index(const BoundQuery& q, const PlanShape& shape);
// A query of one windowed source (no joins): its InputRow carries the bounds.
bool windowed_source(const BoundQuery& q);

// What the row made of a source's record holds: its key columns, the value columns `values`
// (positions in the record's value, ascending), ROWTIME, ROWPARTITION, ROWOFFSET and, when
// `windowed` (the key ends with its window's bounds), WINDOWSTART and WINDOWEND.
struct RowLayout {
  size_t key_count = 0;
  std::vector<uint32_t> values;
  bool windowed = false;
  size_t width() const { return key_count + values.size() + (windowed ? 5 : 3); }
};
// The layout of the rows of `source`, joined under `alias`: the value columns `shape` keeps.
RowLayout row_layout(const BoundQuery& q, const PlanShape& shape, const DataSource& source,
                     const std::string& alias, bool windowed);

class InputRow {
 public:
  explicit InputRow(RowLayout layout) : layout_(std::move(layout)), row_(layout_.width()) {}
  const Row& fill(const Row& key, const Row& value, int64_t timestamp,
                  const std::optional<streams::RecordMetadata>& metadata);

 private:
  RowLayout layout_;
  Row row_;
};

// Counts an expression's error and logs it, as ksqlDB's processing log records it.
void report_error(QueryCounters& counters, const std::string& error, const std::string& where);

// The compiled parts of a filter-and-project step, shared by its tasks' processors.
struct SelectPlan {
  std::optional<Program> where;
  std::vector<Program> values;  // the value columns of the result, in order
  std::vector<std::string> value_names;
  std::vector<Program> keys;  // PARTITION BY: the result's key columns, in order
  RowLayout layout;           // of the source's rows
  std::shared_ptr<QueryCounters> counters;
  // Table functions (table_functions.cpp): each call's array argument, and whether it is
  // CUBE_EXPLODE; `values` then read each call's current element after the input row's columns.
  std::vector<Program> table_args;
  std::vector<bool> cube;
};

// One task's evaluation of a SelectPlan: WHERE, then the projection.
class Selector {
 public:
  explicit Selector(std::shared_ptr<const SelectPlan> plan)
      : plan_(std::move(plan)), input_(plan_->layout) {
    if (plan_->where) where_ = plan_->where->new_frame();
    for (const auto& p : plan_->values) values_.push_back(p.new_frame());
    for (const auto& p : plan_->keys) keys_.push_back(p.new_frame());
    for (const auto& p : plan_->table_args) table_args_.push_back(p.new_frame());
  }
  // The record's row, or null when WHERE drops it.
  const Row* input(const Row& key, const Row& value, int64_t timestamp,
                   const std::optional<streams::RecordMetadata>& metadata) {
    if (value.empty()) return nullptr;  // a null value: nothing to select from
    return accept(input_.fill(key, value, timestamp, metadata));
  }
  // `row` (a whole input row: a join's), or null when WHERE drops it.
  const Row* accept(const Row& row) {
    if (!plan_->where) return &row;
    const Value& keep = plan_->where->evaluate(row, where_);
    if (!where_.error.empty()) report_error(*plan_->counters, where_.error, "WHERE");
    return keep.is_null() || !keep.boolean() ? nullptr : &row;
  }
  Row project(const Row& row, const std::vector<Program>& programs, std::vector<Frame>& frames) {
    Row out(programs.size());
    for (size_t k = 0; k < programs.size(); ++k) {
      out[k] = programs[k].evaluate(row, frames[k]);
      if (!frames[k].error.empty())
        report_error(*plan_->counters, frames[k].error,
                     k < plan_->value_names.size() ? plan_->value_names[k] : "the key");
    }
    return out;
  }
  Row value(const Row& row) { return project(row, plan_->values, values_); }
  Row key(const Row& row) { return project(row, plan_->keys, keys_); }
  bool has_table_functions() const { return !plan_->table_args.empty(); }
  // The rows a table function makes of `row`: each `row` followed by the calls' current elements
  // (NULL for a call whose array is shorter); none for an empty or NULL array.
  std::vector<Row> expand(const Row& row);

 private:
  std::shared_ptr<const SelectPlan> plan_;
  InputRow input_;
  Frame where_;
  std::vector<Frame> values_, keys_, table_args_;
};

// A stream query's filter, PARTITION BY, table functions and projection over `input`, into the
// sink (stream_select.cpp): a source's records or (`rows_ready`) a join's whole scope rows.
void select_onto(const streams::KStream<Row, Row>& input, const BoundQuery& query,
                 const PlanShape& shape, const Output& out, std::shared_ptr<QueryCounters> counters,
                 bool rows_ready);

// Compiles `q`'s table function calls into `plan` (their arguments over `row_index`) and returns
// the substitution that makes `values` read each call's current element.
std::function<int(const BoundExpr&)> plan_table_functions(const BoundQuery& q,
                                                          const std::vector<int>& row_index,
                                                          SelectPlan& plan);

// How a query reads a source: its formats' serdes, a record that does not deserialize counted
// and written to the processing log before Streams skips it.
streams::Consumed<Row, Row> consumed_from(const DataSource& source,
                                          const std::shared_ptr<QueryCounters>& counters);

// How a query writes its sink's values: the sink's format, each record counted in the
// counters' `produced` traffic of the sink's topic.
streams::Serde<Row> sink_value_serde(const DataSource& sink,
                                     const std::shared_ptr<QueryCounters>& counters);

// The key a callback receives (RowCallback): the key columns, then a window's bounds; none for
// keyless records.
inline const Row& callback_key(const Row& key, Row&) {
  return key;
}
inline const Row& callback_key(const streams::Void&, Row& scratch) {
  scratch.clear();
  return scratch;
}
inline const Row& callback_key(const streams::Windowed<Row>& key, Row& scratch) {
  scratch = key.key;
  scratch.emplace_back().set_bigint(key.window.start);
  scratch.emplace_back().set_bigint(key.window.end);
  return scratch;
}

// A table's row as the projection leaves it. A push query may select no value column (only the
// key), but an empty row is how the engine carries a deleted one: such a row holds one NULL
// instead, which the callback's reader never looks at (it reads the value columns by position).
inline Row table_row(Row values) {
  if (values.empty()) values.emplace_back();
  return values;
}

// Ends `result`, the query's rows, where `out` says: the sink's topic, keys in `key_serde` and
// values in the sink's value format (counted as the sink's traffic), or the callback.
template <class K>
void end_query(const streams::KStream<K, Row>& result, const Output& out,
               const streams::Serde<K>& key_serde, const std::shared_ptr<QueryCounters>& counters) {
  if (!out.rows) {
    result.to(out.sink.topic,
              streams::Produced<K, Row>::with(key_serde, sink_value_serde(out.sink, counters)));
    return;
  }
  const bool table = out.sink.kind == SourceKind::kTable;
  result.foreach([rows = out.rows, table](const K& key, const Row& value) {
    Row scratch;
    rows(callback_key(key, scratch), table && value.empty() ? nullptr : &value);
  });
}

// Tables keep their key (table_keys.cpp). The names ksqlDB's plan gives the key columns of the
// relation after `q`'s first `joins` joins (0: the FROM table's); a join's is its first join
// column equivalent to the key that the projection selects (`ALIAS_NAME`), a FULL join's ROWKEY.
std::vector<std::string> relation_key_names(const BoundQuery& q, size_t joins);
// `e` as ksqlDB's planner prints it: column references unqualified, or `ALIAS_NAME` in a join.
std::string planner_text(const BoundQuery& q, const BoundExpr& e);
// ksqlDB's refusal to re-key a table whose key columns are `key_names` by `new_key`.
[[noreturn]] void refuse_table_repartition(const std::vector<std::string>& key_names,
                                           const std::string& new_key);
// PARTITION BY over a table (or a table join): by its key column it changes nothing (the plan
// has no re-key); by anything else it is refused.
void check_table_partition_by(const BoundQuery& q, const PlanShape& shape);
// A column's name once ksqlDB's planner has rewritten it: `ALIAS_NAME` in a join, else NAME.
std::string rewritten_name(const BoundQuery& q, const ScopeColumn& c);
// ksqlDB's refusal to re-key records whose keys are windowed (SchemaKStream.selectKey).
[[noreturn]] void refuse_windowed_repartition();

// Throws SqlError for what the engine does not run yet.
[[noreturn]] void unsupported(const std::string& what);

// Queries over tables and joins: sources read as rows of their scope columns, joined by ksqlDB's
// rules (join_planner.cpp).
streams::Topology plan_relational(const BoundQuery& query, const PlanShape& shape,
                                  const Output& out, std::shared_ptr<QueryCounters> counters);

// `by_key`: grouped by the source's key, in place (no repartition).
streams::Topology plan_aggregate(const BoundQuery& query, const PlanShape& shape, const Output& out,
                                 std::shared_ptr<QueryCounters> counters);
// GROUP BY over a table: rows re-grouped with their old values, retracted from the groups they
// leave (only the aggregates ksqlDB can undo).
streams::Topology plan_table_aggregate(const BoundQuery& query, const PlanShape& shape,
                                       const Output& out, std::shared_ptr<QueryCounters> counters);
// The same over `table`: a source's rows, or (`rows_ready`) a table-table join's whole rows.
void table_aggregate_onto(const streams::KTable<Row, Row>& table, const BoundQuery& query,
                          const PlanShape& shape, const Output& out,
                          std::shared_ptr<QueryCounters> counters, bool rows_ready);
// The aggregation of `input` into the sink: a source's records, or (`rows_ready`) records whose
// values are whole scope rows, as a join gives them (never grouped in place).
void aggregate_onto(const streams::KStream<Row, Row>& input, const BoundQuery& query,
                    const PlanShape& shape, const Output& out,
                    std::shared_ptr<QueryCounters> counters, bool rows_ready);

}  // namespace oxbow::sql::planning
