#pragma once
// Binds a SELECT against the catalog (ksqlDB's analyzer): its sources and joins checked by
// ksqlDB's rules (docs/sql/ksqldb-facts.md §4.4), its clauses bound (expression_binder.h), the
// aggregation rules (§4.3), and the result's columns named and keyed as ksqlDB names and keys them
// (§4.2). What it returns is what the planner builds a topology from.
#include <optional>
#include <string>
#include <vector>

#include "sql/binder/bound_expression.h"
#include "sql/binder/function_registry.h"
#include "sql/catalog/catalog.h"
#include "sql/parser/ast.h"

namespace oxbow::sql {

struct QueryContext {
  // The sink of CREATE ... AS SELECT / INSERT INTO: a persistent query must project its key.
  std::optional<std::string> sink;
};

enum class JoinKind { kStreamStream, kStreamTable, kTableTable, kForeignKey };

struct BoundJoin {
  parser::JoinType type = parser::JoinType::kInner;
  JoinKind kind = JoinKind::kStreamTable;
  const DataSource* right = nullptr;
  std::string alias;
  BoundExprPtr left_key, right_key;  // the ON condition's sides, the right source's on the right
  std::optional<parser::WithinClause> within;
};

struct OutputColumn {
  std::string name;
  SqlTypePtr type;
  bool key = false;
  BoundExprPtr expr;
};

struct BoundQuery {
  const DataSource* from = nullptr;
  std::string from_alias;
  std::vector<BoundJoin> joins;
  Scope scope;
  BoundExprPtr where;
  std::vector<BoundExprPtr> group_by, partition_by;
  bool partition_by_null = false;  // PARTITION BY NULL: a keyless result
  BoundExprPtr having;
  std::optional<parser::WindowClause> window;
  parser::EmitType emit = parser::EmitType::kNone;
  std::optional<int64_t> limit;
  bool aggregate = false;
  bool table_functions = false;  // EXPLODE or CUBE_EXPLODE in the projection
  SourceKind result_kind = SourceKind::kStream;
  std::vector<OutputColumn> columns;  // keys first
  // Column references the binder wrote for `*`: the bound projection points into them.
  std::vector<parser::ExprPtr> synthesized;
};

// Throws SqlError.
BoundQuery bind_query(const parser::Query& query, const Catalog& catalog,
                      const FunctionRegistry& functions, const QueryContext& context);

// The join columns equivalent to the key after `q`'s first `joins` joins (ksqlDB's JoinTree: a
// join's two sides, and those of the join before it when its side is one of them; none after a
// FULL join), in ksqlDB's order: the earlier joins' first, left side before right. None: the
// join's key is synthetic.
std::vector<const BoundExpr*> viable_join_key_columns(const BoundQuery& q, size_t joins);
// A scope column's name in the plans: `ALIAS_NAME` in a join, as ksqlDB's planner rewrites
// source columns there (pseudo columns keep their names), else its own name.
std::string plan_name(const BoundQuery& q, int column);
// The name ksqlDB gives the synthetic key of `q`'s first `joins` joins: ROWKEY, or ROWKEY_<n>
// with the first n that no column of their sources uses.
std::string synthetic_key_name(const BoundQuery& q, size_t joins);

// The joins of `query` bound onto `bound` (its FROM and scope already set). Throws SqlError.
void bind_joins(const parser::Query& query, const Catalog& catalog,
                const FunctionRegistry& functions, BoundQuery& bound);

}  // namespace oxbow::sql
