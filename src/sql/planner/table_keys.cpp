// The key column a table relation has in ksqlDB's plan, and its refusal to re-key a table
// (SchemaKTable.selectKey): a table is re-partitioned only into another key format, never by
// another expression, so PARTITION BY over a table (or a table-table join) runs only when it is
// by the key column itself, and a join that would re-key a table is refused the same way.
#include <map>

#include "sql/binder/sql_error.h"
#include "sql/planner/planner_internal.h"

namespace oxbow::sql::planning {

std::string rewritten_name(const BoundQuery& q, const ScopeColumn& c) {
  return q.joins.empty() ? c.name : c.source + "_" + c.name;
}

namespace {

void collect_columns(const BoundQuery& q, const BoundExpr& e,
                     std::map<const parser::Expr*, std::string>& out) {
  if (e.kind == BoundKind::kColumn && e.parsed)
    out[e.parsed] = rewritten_name(q, q.scope.columns[static_cast<size_t>(e.column)]);
  for (const auto& a : e.args) collect_columns(q, *a, out);
}

}  // namespace

std::string planner_text(const BoundQuery& q, const BoundExpr& e) {
  std::map<const parser::Expr*, std::string> names;
  collect_columns(q, e, names);
  return format(*e.parsed, [&names](const parser::Expr& column) -> std::optional<std::string> {
    auto it = names.find(&column);
    if (it == names.end()) return std::nullopt;
    return it->second;
  });
}

std::vector<std::string> relation_key_names(const BoundQuery& q, size_t joins) {
  std::vector<std::string> names;
  bool foreign_key = joins > 0 && q.joins[joins - 1].kind == JoinKind::kForeignKey;
  if (joins == 0 || foreign_key) {  // the FROM table's own key columns
    for (const auto& c : q.scope.columns)
      if (c.source == q.from_alias && !c.pseudo && c.ns == ColumnNamespace::kKey)
        names.push_back(rewritten_name(q, c));
    return names;
  }
  std::vector<const BoundExpr*> viable = viable_join_key_columns(q, joins);
  if (viable.empty()) return {synthetic_key_name(q, joins)};
  // The first viable column the projection selects names the key (else the first of all).
  const BoundExpr* chosen = viable.front();
  for (const BoundExpr* v : viable) {
    bool projected = false;
    for (const auto& c : q.columns)
      projected = projected || (c.expr->kind == BoundKind::kColumn && c.expr->column == v->column);
    if (projected) {
      chosen = v;
      break;
    }
  }
  return {rewritten_name(q, q.scope.columns[static_cast<size_t>(chosen->column)])};
}

void refuse_table_repartition(const std::vector<std::string>& key_names,
                              const std::string& new_key) {
  if (key_names.size() != 1)
    throw SqlError(
        "Cannot repartition a TABLE source. If this is a join, joins on tables with multiple "
        "columns is not yet supported.");
  throw SqlError(
      "Cannot repartition a TABLE source. If this is a join, make sure that the criteria uses "
      "the TABLE's key column " +
      key_names.front() + " instead of [" + new_key + "]");
}

void refuse_windowed_repartition() {
  throw SqlError(
      "Implicit repartitioning of windowed sources is not supported. See "
      "https://github.com/confluentinc/ksql/issues/4385.");
}

void check_table_partition_by(const BoundQuery& q, const PlanShape& shape) {
  if (!shape.partition_by) return;
  std::string listed = q.partition_by_null ? "null" : "";
  for (const auto& p : q.partition_by) listed += (listed.empty() ? "" : ", ") + planner_text(q, *p);
  refuse_table_repartition(relation_key_names(q, q.joins.size()), listed);
}

}  // namespace oxbow::sql::planning
