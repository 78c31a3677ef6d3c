// ksqlDB's aggregate analysis, as far as its upgrade validation compares it: the columns an
// aggregation reads and its calls over internal columns (AggregateAnalyzer and AggregateNode's
// InternalSchema).
#include <algorithm>
#include <map>

#include "sql/physical/physical_internal.h"

namespace oxbow::sql::physical {

std::string list_text(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
  return out + "]";
}

namespace {

bool is_window_bound(const BoundQuery& q, int column) {
  const ScopeColumn& c = q.scope.columns[static_cast<size_t>(column)];
  return c.pseudo && (c.name == "WINDOWSTART" || c.name == "WINDOWEND");
}

// The projection as written: the bound columns put the keys first.
std::vector<const BoundExpr*> written_order(const BoundQuery& q) {
  std::vector<const BoundExpr*> exprs;
  for (const auto& c : q.columns) exprs.push_back(c.expr.get());
  auto at = [](const BoundExpr* e) {
    return std::make_pair(e->parsed->position.line, e->parsed->position.column);
  };
  if (std::all_of(exprs.begin(), exprs.end(), [](auto* e) { return e->parsed; }))
    std::stable_sort(exprs.begin(), exprs.end(), [&](auto* a, auto* b) { return at(a) < at(b); });
  return exprs;
}

}  // namespace

AggregateAnalysis::AggregateAnalysis(const BoundQuery& q) : q_(q) {
  for (const BoundExpr* e : written_order(q)) visit(*e);
  if (q.where) visit(*q.where);
  for (const auto& g : q.group_by) visit(*g);
  if (q.having) visit(*q.having);
  name_calls();
}

std::string AggregateAnalysis::required_text() const {
  std::vector<std::string> quoted;
  for (const auto& name : required_) quoted.push_back("`" + name + "`");
  return list_text(quoted);
}

std::string AggregateAnalysis::arg_types_text() const {
  std::vector<std::string> calls;
  for (const BoundExpr* call : calls_) {
    std::string types;
    for (const auto& a : call->args)
      types += (types.empty() ? "" : ", ") + (a->type ? a->type->to_string() : "NULL");
    calls.push_back(call->op + "(" + types + ")");
  }
  return list_text(calls);
}

void AggregateAnalysis::require(const std::string& name) {
  if (std::find(required_.begin(), required_.end(), name) == required_.end())
    required_.push_back(name);
}

void AggregateAnalysis::visit(const BoundExpr& e) {
  if (e.kind == BoundKind::kColumn) {
    if (!is_window_bound(q_, e.column)) require(plan_name(q_, e.column));
    return;
  }
  if (e.kind == BoundKind::kFunction && e.aggregate) {
    calls_.push_back(&e);
    if (e.args.empty()) require("ROWTIME");  // COUNT(*): ksqlDB counts ROWTIME
  }
  for (const auto& a : e.args) visit(*a);
}

// After the required columns, each distinct argument that is not a column gets the next
// internal column (KSQL_INTERNAL_COL_<n>); a trailing literal (TOPK's k) stays as written.
void AggregateAnalysis::name_calls() {
  std::map<std::string, std::string> internal;
  for (const auto& name : required_) internal[name] = name;
  size_t next = required_.size();
  for (const BoundExpr* call : calls_) {
    std::vector<std::string> args;
    if (call->args.empty()) args.push_back("ROWTIME");
    for (size_t i = 0; i < call->args.size(); ++i) {
      const BoundExpr& a = *call->args[i];
      std::string text = a.kind == BoundKind::kColumn ? plan_name(q_, a.column) : format(*a.parsed);
      auto [it, added] = internal.emplace(text, "KSQL_INTERNAL_COL_" + std::to_string(next));
      if (added) ++next;
      bool literal = i > 0 && (a.kind == BoundKind::kLiteral || a.kind == BoundKind::kNull);
      args.push_back(literal ? text : it->second);
    }
    std::string joined;
    for (const auto& a : args) joined += (joined.empty() ? "" : ", ") + a;
    call_texts_.push_back(call->op + "(" + joined + ")");
  }
}

}  // namespace oxbow::sql::physical
