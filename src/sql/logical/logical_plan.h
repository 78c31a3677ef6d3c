#pragma once
// The logical plan of a SELECT (issue 42's pipeline, docs/sql/plan-pipeline.md): the operators a
// bound query runs, as a tree from its sink down to its sources, in the order the planner runs
// them (ksqlDB's LogicalPlanner): sources and joins, WHERE, PARTITION BY, table functions,
// aggregation and HAVING, projection, sink. Each node knows the schema of the rows it gives.
// The plan borrows the BoundQuery's sources and expressions: the query must outlive it.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sql/binder/query_binder.h"

namespace oxbow::sql::logical {

enum class NodeKind {
  kSource,
  kJoin,
  kFilter,
  kPartitionBy,
  kAggregate,
  kTableFunction,
  kProject,
  kSink
};

struct SchemaColumn {
  std::string name;
  SqlTypePtr type;
  bool key = false;
};

// The rows an operator gives: their columns (keys first), stream or table, and the window of
// their keys (none: unwindowed).
struct Schema {
  std::vector<SchemaColumn> columns;
  SourceKind kind = SourceKind::kStream;
  std::optional<SourceWindow> window;

  // "`ID` BIGINT KEY, `NAME` STRING".
  std::string text() const;
};

struct Node {
  NodeKind kind = NodeKind::kSource;
  Schema schema;
  // A join's two sides (left, right); one input for the others, none for a source.
  std::vector<std::unique_ptr<Node>> inputs;

  // kSource: the source and its alias in the query.
  const DataSource* source = nullptr;
  std::string alias;
  // kJoin: the join as bound.
  const BoundJoin* join = nullptr;
  // kFilter: the conjuncts a row must satisfy; HAVING's (above an aggregate) or WHERE's, whose
  // conjuncts over the FROM stream alone the optimizer also checks before the joins
  // (`pushed_down`).
  std::vector<const BoundExpr*> predicates;
  bool having = false, pushed_down = false;
  // kPartitionBy: the new key's expressions (none: PARTITION BY NULL). kAggregate: GROUP BY's.
  std::vector<const BoundExpr*> keys;
  // kPartitionBy: by the key the rows already have (nothing changes, no re-key step; set by the
  // optimizer).
  bool keeps_key = false;
  // kAggregate: the aggregate calls (of the projection and HAVING, each once) and the WINDOW.
  // kTableFunction: the table function calls.
  std::vector<const BoundExpr*> calls;
  const parser::WindowClause* window = nullptr;
  // kSink: its name (empty: a transient query's result).
  std::string sink;

  // The optimizer's decisions (sql/optimizer/), which the physical plan and the planner follow.
  // kAggregate: GROUP BY exactly its input's key columns, in order: grouped without a repartition
  // (ksqlDB's StreamGroupByKey).
  bool groups_by_key = false;
  // kJoin: whether its left and right sides must be re-keyed by their join expressions (a stream
  // not keyed by it; never a table or a foreign-key join's side).
  bool rekey_left = false, rekey_right = false;
  // kSource: the scope columns (indexes into BoundQuery::scope.columns) of this source that an
  // operator above reads, ascending: projection pruning leaves the others out of its rows.
  std::vector<int> columns_read;

  const Node& input(size_t i = 0) const { return *inputs.at(i); }
};

// The plain plan of `query` into `sink` (empty: transient), each clause where the query puts it:
// no filter below the joins, every PARTITION BY a re-key. optimizer/optimizer.h rewrites it.
std::unique_ptr<Node> build_logical_plan(const BoundQuery& query, const std::string& sink);

// The plan as EXPLAIN prints it: one operator a line, from the sink down, each input indented
// under the operator that reads it, with each operator's schema.
std::string logical_plan_text(const Node& root);

// The window of the keys a WINDOW clause makes.
SourceWindow window_of(const parser::WindowClause& window);

}  // namespace oxbow::sql::logical
