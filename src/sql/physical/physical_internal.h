#pragma once
// What the physical plan's files share: ksqlDB's analysis of an aggregation's input columns and
// calls (aggregate_analysis.cpp) and list texts.
#include <string>
#include <vector>

#include "sql/binder/query_binder.h"

namespace oxbow::sql::physical {

// "[a, b]", as Java prints a list.
std::string list_text(const std::vector<std::string>& items);

// What ksqlDB's aggregate analysis records of a query: the columns the aggregation reads (its
// "columns not part of aggregate", every column named outside the window bounds, in the order
// SELECT, WHERE, GROUP BY, HAVING name them) and its aggregate calls, each argument that is not a
// column named by the internal column that carries it (KSQL_INTERNAL_COL_<n>).
class AggregateAnalysis {
 public:
  explicit AggregateAnalysis(const BoundQuery& q);
  std::string required_text() const;
  std::string calls_text() const { return list_text(call_texts_); }
  // Not compared by ksqlDB, whose check lets SUM(x + 1) become SUM(x * 1.5) (both read the same
  // internal column): here the states' layout follows the arguments' types, so they must stay.
  std::string arg_types_text() const;

 private:
  void require(const std::string& name);
  void visit(const BoundExpr& e);
  void name_calls();

  const BoundQuery& q_;
  std::vector<std::string> required_;
  std::vector<const BoundExpr*> calls_;
  std::vector<std::string> call_texts_;
};

}  // namespace oxbow::sql::physical
