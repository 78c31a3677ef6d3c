// Table functions (ksqlDB's UDTFs, docs/sql/ksqldb-facts.md §5.2): EXPLODE(array) gives a row for
// each element, CUBE_EXPLODE(array) a row for each combination of the elements and NULLs (2^n,
// those that only NULL elements tell apart left out). Several calls in one projection go side by
// side, as far as the longest; the shorter ones give NULL past their end.
#include "sql/binder/sql_error.h"
#include "sql/planner/planner_internal.h"

namespace oxbow::sql::planning {

namespace {

void find_table_calls(const BoundExpr& e, std::vector<const BoundExpr*>& out) {
  if (e.table_function) return out.push_back(&e);
  for (const auto& a : e.args) find_table_calls(*a, out);
}

// CUBE_EXPLODE's rows of `items`: element i kept when bit (n - 1 - i) of the mask is set, so that
// [a, b] gives [NULL, NULL], [NULL, b], [a, NULL], [a, b]; a NULL element is never "kept".
std::vector<Value> cube_of(const std::vector<Value>& items) {
  std::vector<Value> out;
  size_t n = std::min<size_t>(items.size(), 20);  // 2^20 rows is plenty for one record
  for (size_t mask = 0; mask < (size_t{1} << n); ++mask) {
    bool duplicate = false;
    auto combination = std::make_shared<std::vector<Value>>(n);
    for (size_t i = 0; i < n; ++i) {
      bool keep = mask & (size_t{1} << (n - 1 - i));
      if (keep && items[i].is_null()) duplicate = true;
      if (keep) (*combination)[i] = items[i];
    }
    if (!duplicate) out.emplace_back().set_items(Value::Kind::kArray, std::move(combination));
  }
  return out;
}

}  // namespace

std::function<int(const BoundExpr&)> plan_table_functions(const BoundQuery& q,
                                                          const std::vector<int>& row_index,
                                                          SelectPlan& plan) {
  std::vector<const BoundExpr*> calls;
  for (const auto& c : q.columns)
    if (!c.key) find_table_calls(*c.expr, calls);
  int width = 0;
  for (int i : row_index) width = std::max(width, i + 1);
  for (const BoundExpr* call : calls) {
    plan.table_args.push_back(Program::compile(*call->args.at(0), row_index));
    plan.cube.push_back(call->op == "CUBE_EXPLODE");
  }
  return [calls, width](const BoundExpr& e) {
    for (size_t i = 0; i < calls.size(); ++i)
      if (calls[i] == &e) return width + static_cast<int>(i);
    return -1;
  };
}

std::vector<Row> Selector::expand(const Row& row) {
  size_t calls = plan_->table_args.size(), longest = 0;
  std::vector<std::vector<Value>> elements(calls);
  for (size_t c = 0; c < calls; ++c) {
    const Value& array = plan_->table_args[c].evaluate(row, table_args_[c]);
    if (!table_args_[c].error.empty())
      report_error(*plan_->counters, table_args_[c].error, "a table function's argument");
    if (array.is_null()) continue;
    elements[c] = plan_->cube[c] ? cube_of(array.items()) : array.items();
    longest = std::max(longest, elements[c].size());
  }
  std::vector<Row> out(longest, row);
  for (size_t j = 0; j < longest; ++j)
    for (size_t c = 0; c < calls; ++c)
      out[j].push_back(j < elements[c].size() ? elements[c][j] : Value());
  return out;
}

}  // namespace oxbow::sql::planning
