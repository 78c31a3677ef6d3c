// The re-keys a query's rows need not go through because they are keyed so already: a PARTITION
// BY of the key the rows have (no re-key step, and windowed keys stay windowed), a GROUP BY of
// the FROM source's key columns (grouped without a repartition topic), a join side keyed by its
// join expression (no re-key before the join). A node's key columns are read from its schema,
// where the builder keys a join's rows as ksqlDB's planner does (logical_builder.cpp); a nested
// join's rows are keyed by each column equivalent to that key.
#include "sql/optimizer/optimizer.h"

namespace oxbow::sql::optimizer {

namespace {

using logical::Node;
using logical::NodeKind;

// Whether rows of `schema` are keyed by the column `e` alone.
bool keyed_by(const logical::Schema& schema, const BoundQuery& q, const BoundExpr& e) {
  const logical::SchemaColumn* key = nullptr;
  for (const auto& c : schema.columns) {
    if (!c.key) continue;
    if (key) return false;
    key = &c;
  }
  return key && e.kind == BoundKind::kColumn && key->name == plan_name(q, e.column);
}

// GROUP BY exactly the FROM source's key columns, in order, with no join in between.
bool groups_by_key(const BoundQuery& q) {
  if (!q.joins.empty() || q.group_by.empty()) return false;
  std::vector<std::string> keys;
  for (const auto& c : q.from->columns)
    if (c.ns == ColumnNamespace::kKey) keys.push_back(c.name);
  if (keys.size() != q.group_by.size()) return false;
  for (size_t k = 0; k < keys.size(); ++k) {
    const BoundExpr& g = *q.group_by[k];
    if (g.kind != BoundKind::kColumn) return false;
    const ScopeColumn& c = q.scope.columns[static_cast<size_t>(g.column)];
    if (c.pseudo || c.ns != ColumnNamespace::kKey || c.name != keys[k]) return false;
  }
  return true;
}

// Whether the rows of the join `nested` are keyed by `key`: by any column equivalent to its key
// (ksqlDB's join equivalence set, as the binder lists its columns), not only the one its schema
// names (after a FULL join, by none). An expression is never taken as equivalent.
bool nested_keyed_by(const BoundQuery& q, const Node& nested, const BoundExpr& key) {
  size_t joins = 1;
  while (joins <= q.joins.size() && &q.joins[joins - 1] != nested.join) ++joins;
  if (key.kind != BoundKind::kColumn) return false;
  for (const BoundExpr* viable : viable_join_key_columns(q, joins))
    if (viable->column == key.column) return true;
  return false;
}

// A join side must be re-keyed by `key` when it is a stream-shaped relation keyed otherwise; a
// table is never re-keyed (the binder refused such a join), nor a foreign-key join's sides.
bool rekeys(const BoundQuery& q, const BoundJoin& j, const Node& side, const BoundExpr& key) {
  if (j.kind == JoinKind::kForeignKey || side.schema.kind == SourceKind::kTable) return false;
  if (side.kind == NodeKind::kJoin) return !nested_keyed_by(q, side, key);
  return !keyed_by(side.schema, q, key);
}

// The schema of `n` again after its input's changed, for the nodes whose rows are their input's
// (a filter, the sink), extend them (table functions) or keep their window (the projection).
void follow_input(Node& n) {
  const logical::Schema& input = n.input().schema;
  switch (n.kind) {
    case NodeKind::kFilter:
    case NodeKind::kSink:
      n.schema = input;
      break;
    case NodeKind::kTableFunction: {
      std::vector<logical::SchemaColumn> columns = input.columns;
      columns.insert(columns.end(), n.schema.columns.end() - static_cast<long>(n.calls.size()),
                     n.schema.columns.end());
      n.schema = input;
      n.schema.columns = std::move(columns);
      break;
    }
    case NodeKind::kProject:
      n.schema.window = input.window;
      break;
    default:
      break;
  }
}

// Rewrites `n` and the nodes under it; whether its schema changed.
bool rewrite(Node& n, const BoundQuery& q) {
  bool changed = false;
  for (auto& input : n.inputs) changed = rewrite(*input, q) || changed;
  switch (n.kind) {
    case NodeKind::kPartitionBy:
      n.keeps_key = n.keys.size() == 1 && keyed_by(n.input().schema, q, *n.keys.front());
      if (n.keeps_key) n.schema = n.input().schema;
      return n.keeps_key;
    case NodeKind::kAggregate:  // keyed by GROUP BY whatever its input
      n.groups_by_key = groups_by_key(q);
      return false;
    case NodeKind::kJoin:
      n.rekey_left = rekeys(q, *n.join, n.input(0), *n.join->left_key);
      n.rekey_right = rekeys(q, *n.join, n.input(1), *n.join->right_key);
      return false;
    default:
      if (changed) follow_input(n);
      return changed;
  }
}

}  // namespace

void eliminate_repartitions(Node& root, const BoundQuery& q) {
  rewrite(root, q);
}

}  // namespace oxbow::sql::optimizer
