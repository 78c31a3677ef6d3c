// The logical plan built from a BoundQuery, bottom up, in the order the planner (planner/) runs a
// query's operators: the FROM source, each join over the relation before it, WHERE, PARTITION BY,
// table functions, the aggregation and HAVING, the projection. The tree is the plain one: the
// rewrites (WHERE's conjuncts below the first join, PARTITION BY the key it has) are the
// optimizer's passes over it (sql/optimizer/).
#include <algorithm>
#include <set>

#include "sql/logical/logical_plan.h"

namespace oxbow::sql::logical {

SourceWindow window_of(const parser::WindowClause& window) {
  SourceWindow w;
  w.type = window.type == parser::WindowType::kSession   ? SourceWindowType::kSession
           : window.type == parser::WindowType::kHopping ? SourceWindowType::kHopping
                                                         : SourceWindowType::kTumbling;
  if (w.type != SourceWindowType::kSession) w.size_ms = window.size_ms;
  return w;
}

namespace {

std::unique_ptr<Node> node_over(NodeKind kind, std::unique_ptr<Node> input) {
  auto node = std::make_unique<Node>();
  node->kind = kind;
  node->schema = input->schema;
  node->inputs.push_back(std::move(input));
  return node;
}

// Every call in `e` that `wanted` picks, each text once (as the planner's slots are by text).
template <typename Wanted>
void find_calls(const BoundExpr& e, Wanted wanted, std::set<std::string>& seen,
                std::vector<const BoundExpr*>& out) {
  if (wanted(e)) {
    if (seen.insert(format(*e.parsed)).second) out.push_back(&e);
    return;
  }
  for (const auto& a : e.args) find_calls(*a, wanted, seen, out);
}

class Builder {
 public:
  explicit Builder(const BoundQuery& q) : q_(q) {}

  std::unique_ptr<Node> build(const std::string& sink) {
    std::unique_ptr<Node> top = source(*q_.from, q_.from_alias);
    for (size_t n = 1; n <= q_.joins.size(); ++n) top = join(std::move(top), n);
    if (q_.where) {
      top = node_over(NodeKind::kFilter, std::move(top));
      top->predicates = {q_.where.get()};
    }
    if (!q_.partition_by.empty() || q_.partition_by_null) top = partition_by(std::move(top));
    if (q_.table_functions) top = table_functions(std::move(top));
    if (q_.aggregate) top = aggregate(std::move(top));
    if (q_.having) {
      top = node_over(NodeKind::kFilter, std::move(top));
      top->predicates = {q_.having.get()};
      top->having = true;
    }
    top = node_over(NodeKind::kProject, std::move(top));
    top->schema.columns.clear();
    for (const auto& c : q_.columns) top->schema.columns.push_back({c.name, c.type, c.key});
    top->schema.kind = q_.result_kind;
    top = node_over(NodeKind::kSink, std::move(top));
    top->sink = sink;
    return top;
  }

 private:
  std::unique_ptr<Node> source(const DataSource& s, const std::string& alias) const {
    auto node = std::make_unique<Node>();
    node->kind = NodeKind::kSource;
    node->source = &s;
    node->alias = alias;
    node->schema.kind = s.kind;
    node->schema.window = s.window;
    for (size_t i = 0; i < q_.scope.columns.size(); ++i)
      if (const ScopeColumn& c = q_.scope.columns[i]; c.source == alias && !c.pseudo)
        node->schema.columns.push_back(
            {plan_name(q_, static_cast<int>(i)), c.type, c.ns == ColumnNamespace::kKey});
    return node;
  }

  // The key columns of the relation after the first `joins` joins, as ksqlDB's planner keys it: a
  // foreign-key join keeps the FROM table's key; another join is keyed by the first column
  // equivalent to its key (the binder's viable_join_key_columns) that the projection selects, or
  // the first of them, or else by the synthetic key (ROWKEY, ROWKEY_<n>).
  std::vector<SchemaColumn> join_keys(size_t joins) const {
    const BoundJoin& j = q_.joins[joins - 1];
    if (j.kind == JoinKind::kForeignKey) {  // the FROM table's key
      std::vector<SchemaColumn> keys;
      for (size_t i = 0; i < q_.scope.columns.size(); ++i)
        if (const ScopeColumn& c = q_.scope.columns[i];
            c.source == q_.from_alias && !c.pseudo && c.ns == ColumnNamespace::kKey)
          keys.push_back({plan_name(q_, static_cast<int>(i)), c.type, true});
      return keys;
    }
    std::vector<const BoundExpr*> viable = viable_join_key_columns(q_, joins);
    if (viable.empty()) return {{synthetic_key_name(q_, joins), j.left_key->type, true}};
    auto projected = [this](const BoundExpr* v) {
      for (const auto& c : q_.columns)
        if (c.expr->kind == BoundKind::kColumn && c.expr->column == v->column) return true;
      return false;
    };
    auto chosen = std::find_if(viable.begin(), viable.end(), projected);
    const BoundExpr* key = chosen == viable.end() ? viable.front() : *chosen;
    return {{plan_name(q_, key->column), key->type, true}};
  }

  // The join's rows: its key columns, then both sides' columns.
  // The `joins`-th join (from 1) over `left`, the relation of the joins before it.
  std::unique_ptr<Node> join(std::unique_ptr<Node> left, size_t joins) const {
    const BoundJoin& j = q_.joins[joins - 1];
    auto node = std::make_unique<Node>();
    node->kind = NodeKind::kJoin;
    node->join = &j;
    std::unique_ptr<Node> right = source(*j.right, j.alias);
    node->schema.columns = join_keys(joins);
    std::set<std::string> keys;
    for (const auto& k : node->schema.columns) keys.insert(k.name);
    for (const Node* side : {left.get(), right.get()})
      for (const auto& c : side->schema.columns)
        if (!keys.count(c.name)) node->schema.columns.push_back({c.name, c.type, false});
    bool tables = left->schema.kind == SourceKind::kTable && j.right->kind == SourceKind::kTable;
    node->schema.kind = tables ? SourceKind::kTable : SourceKind::kStream;
    node->schema.window = q_.from->window;
    node->inputs.push_back(std::move(left));
    node->inputs.push_back(std::move(right));
    return node;
  }

  // Rows keyed by PARTITION BY's expressions (the result's key columns), the old key now a value;
  // by nothing for PARTITION BY NULL (whether the key is the one the rows have is the optimizer's
  // question: optimizer/repartition_elimination.cpp).
  std::unique_ptr<Node> partition_by(std::unique_ptr<Node> input) const {
    auto node = node_over(NodeKind::kPartitionBy, std::move(input));
    for (const auto& p : q_.partition_by) node->keys.push_back(p.get());
    std::vector<SchemaColumn> columns;
    for (const auto& c : q_.columns)
      if (c.key) columns.push_back({c.name, c.type, true});
    for (auto c : node->schema.columns) {
      c.key = false;
      columns.push_back(std::move(c));
    }
    node->schema.columns = std::move(columns);
    node->schema.window.reset();
    return node;
  }

  // Each row and the current elements of its table function calls (KSQL_SYNTH_<n>).
  std::unique_ptr<Node> table_functions(std::unique_ptr<Node> input) const {
    auto node = node_over(NodeKind::kTableFunction, std::move(input));
    std::set<std::string> seen;
    for (const auto& c : q_.columns)
      find_calls(
          *c.expr, [](const BoundExpr& e) { return e.table_function; }, seen, node->calls);
    for (size_t n = 0; n < node->calls.size(); ++n)
      node->schema.columns.push_back({"KSQL_SYNTH_" + std::to_string(n), node->calls[n]->type});
    return node;
  }

  // A table keyed by GROUP BY's expressions (named as the result names them), its values the
  // aggregate calls' results (KSQL_AGG_VARIABLE_<n>), windowed by WINDOW.
  std::unique_ptr<Node> aggregate(std::unique_ptr<Node> input) const {
    auto node = node_over(NodeKind::kAggregate, std::move(input));
    node->schema.columns.clear();
    std::vector<const OutputColumn*> result_keys;
    for (const auto& c : q_.columns)
      if (c.key) result_keys.push_back(&c);
    for (size_t k = 0; k < q_.group_by.size(); ++k) {
      const BoundExpr& g = *q_.group_by[k];
      node->keys.push_back(&g);
      bool named = result_keys.size() == q_.group_by.size();
      node->schema.columns.push_back(
          {named ? result_keys[k]->name : format(*g.parsed), g.type, true});
    }
    std::set<std::string> seen;
    auto aggregate_call = [](const BoundExpr& e) { return e.aggregate; };
    for (const auto& c : q_.columns) find_calls(*c.expr, aggregate_call, seen, node->calls);
    if (q_.having) find_calls(*q_.having, aggregate_call, seen, node->calls);
    for (size_t n = 0; n < node->calls.size(); ++n)
      node->schema.columns.push_back(
          {"KSQL_AGG_VARIABLE_" + std::to_string(n), node->calls[n]->type});
    node->schema.kind = SourceKind::kTable;
    node->window = q_.window ? &*q_.window : nullptr;
    node->schema.window.reset();
    if (q_.window) node->schema.window = window_of(*q_.window);
    return node;
  }

  const BoundQuery& q_;
};

}  // namespace

std::unique_ptr<Node> build_logical_plan(const BoundQuery& query, const std::string& sink) {
  return Builder(query).build(sink);
}

}  // namespace oxbow::sql::logical
