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
  // conjuncts over the FROM stream alone are also checked before the joins (`pushed_down`).
  std::vector<const BoundExpr*> predicates;
  bool having = false, pushed_down = false;
  // kPartitionBy: the new key's expressions (none: PARTITION BY NULL). kAggregate: GROUP BY's.
  std::vector<const BoundExpr*> keys;
  // kPartitionBy: by the key the rows already have (nothing changes, no re-key step).
  bool keeps_key = false;
  // kAggregate: the aggregate calls (of the projection and HAVING, each once) and the WINDOW.
  // kTableFunction: the table function calls.
  std::vector<const BoundExpr*> calls;
  const parser::WindowClause* window = nullptr;
  // kSink: its name (empty: a transient query's result).
  std::string sink;

  const Node& input(size_t i = 0) const { return *inputs.at(i); }
};

// The plan of `query` into `sink` (empty: transient). `partition_by_keeps_key`: its PARTITION BY
// is by the key its rows already have (the planner's decision, planner/query_planner.h), so that
// windowed keys stay windowed.
std::unique_ptr<Node> build_logical_plan(const BoundQuery& query, const std::string& sink,
                                         bool partition_by_keeps_key);

// The plan as EXPLAIN prints it: one operator a line, from the sink down, each input indented
// under the operator that reads it, with each operator's schema.
std::string logical_plan_text(const Node& root);

// The window of the keys a WINDOW clause makes.
SourceWindow window_of(const parser::WindowClause& window);

}  // namespace oxbow::sql::logical
