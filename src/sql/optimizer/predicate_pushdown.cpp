// WHERE's conjuncts that read only the FROM source's columns, checked on the FROM stream's
// records before its first join as well as after the joins: rows they drop never reach a join's
// store or repartition topic. Only before an INNER or LEFT join, which keeps each left row as it
// is or drops it (a RIGHT or FULL join makes rows with the left side's columns NULL, which the
// conjunct must then see), and only over a stream (a table's update is not a row to drop early).
#include "sql/optimizer/optimizer.h"

namespace oxbow::sql::optimizer {

namespace {

using logical::Node;
using logical::NodeKind;

void split_and(const BoundExpr& e, std::vector<const BoundExpr*>& out) {
  if (e.kind != BoundKind::kAnd) return out.push_back(&e);
  for (const auto& a : e.args) split_and(*a, out);
}

// Whether `e` reads only columns the FROM source's records carry (the window bounds only when
// its keys are windowed: a windowed aggregation's bounds come after the joins).
bool reads_only_from(const BoundQuery& q, const BoundExpr& e) {
  if (e.kind == BoundKind::kColumn) {
    const ScopeColumn& c = q.scope.columns[static_cast<size_t>(e.column)];
    if (c.source != q.from_alias) return false;
    if (!c.pseudo) return c.ns == ColumnNamespace::kKey || c.ns == ColumnNamespace::kValue;
    return (c.name != "WINDOWSTART" && c.name != "WINDOWEND") || q.from->window.has_value();
  }
  for (const auto& a : e.args)
    if (!reads_only_from(q, *a)) return false;
  return true;
}

// The first join: the deepest along the left inputs, where the nested joins are.
Node* first_join(Node& root) {
  Node* join = nullptr;
  for (Node* at = &root; !at->inputs.empty(); at = at->inputs.front().get())
    if (at->kind == NodeKind::kJoin) join = at;
  return join;
}

}  // namespace

void push_down_predicates(Node& root, const BoundQuery& q) {
  Node* join = first_join(root);
  if (!q.where || !join || q.from->kind != SourceKind::kStream) return;
  parser::JoinType type = join->join->type;
  if (type != parser::JoinType::kInner && type != parser::JoinType::kLeft) return;
  std::unique_ptr<Node>& from = join->inputs.front();
  if (from->kind != NodeKind::kSource) return;  // pushed already
  std::vector<const BoundExpr*> conjuncts, pushed;
  split_and(*q.where, conjuncts);
  for (const BoundExpr* c : conjuncts)
    if (reads_only_from(q, *c)) pushed.push_back(c);
  if (pushed.empty()) return;
  auto filter = std::make_unique<Node>();
  filter->kind = NodeKind::kFilter;
  filter->schema = from->schema;
  filter->predicates = std::move(pushed);
  filter->pushed_down = true;
  filter->inputs.push_back(std::move(from));
  from = std::move(filter);
}

}  // namespace oxbow::sql::optimizer
