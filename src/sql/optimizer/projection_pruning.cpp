// The columns of each source that some operator above reads: WHERE's and HAVING's predicates,
// join keys, PARTITION BY's and GROUP BY's expressions, aggregate and table function calls and
// the projection. The others need not be deserialized nor carried through repartitions and
// stores. A source's key columns always count as read, as its records keep their keys.
#include <set>

#include "sql/optimizer/optimizer.h"

namespace oxbow::sql::optimizer {

namespace {

using logical::Node;
using logical::NodeKind;

void columns_of(const BoundExpr& e, std::set<int>& read) {
  if (e.kind == BoundKind::kColumn) read.insert(e.column);
  for (const auto& a : e.args) columns_of(*a, read);
}

void columns_of(const std::vector<const BoundExpr*>& exprs, std::set<int>& read) {
  for (const BoundExpr* e : exprs) columns_of(*e, read);
}

// The scope columns the operators of `n`'s tree read.
void reads(const Node& n, const BoundQuery& q, std::set<int>& read) {
  switch (n.kind) {
    case NodeKind::kJoin:
      columns_of(*n.join->left_key, read);
      columns_of(*n.join->right_key, read);
      break;
    case NodeKind::kFilter:
      columns_of(n.predicates, read);
      break;
    case NodeKind::kPartitionBy:
    case NodeKind::kAggregate:
    case NodeKind::kTableFunction:
      columns_of(n.keys, read);
      columns_of(n.calls, read);
      break;
    case NodeKind::kProject:
      for (const auto& c : q.columns) columns_of(*c.expr, read);
      break;
    case NodeKind::kSource:
    case NodeKind::kSink:
      break;
  }
  for (const auto& input : n.inputs) reads(*input, q, read);
}

// Whether `c` is a column of the source's records: a windowed aggregation's window bounds are
// in its alias's scope too, but the aggregation makes them.
bool carried_by(const ScopeColumn& c, const DataSource& source) {
  bool window_bound = c.pseudo && (c.name == "WINDOWSTART" || c.name == "WINDOWEND");
  return !window_bound || source.window.has_value();
}

void mark_sources(Node& n, const BoundQuery& q, const std::set<int>& read) {
  for (auto& input : n.inputs) mark_sources(*input, q, read);
  if (n.kind != NodeKind::kSource) return;
  n.columns_read.clear();
  for (size_t i = 0; i < q.scope.columns.size(); ++i) {
    const ScopeColumn& c = q.scope.columns[i];
    if (c.source != n.alias || !carried_by(c, *n.source)) continue;
    bool key = !c.pseudo && c.ns == ColumnNamespace::kKey;
    if (key || read.count(static_cast<int>(i))) n.columns_read.push_back(static_cast<int>(i));
  }
}

}  // namespace

void prune_projections(Node& root, const BoundQuery& q) {
  std::set<int> read;
  reads(root, q, read);
  mark_sources(root, q, read);
}

}  // namespace oxbow::sql::optimizer
