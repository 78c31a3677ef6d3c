#pragma once
// Binds expressions of a query clause against its scope: names resolved (ambiguity and unknown
// qualifiers refused), types inferred and checked, each refusal in ksqlDB's words with the
// clause named as ksqlDB names it ("SELECT column 'X' cannot be resolved.", "Error in WHERE
// expression: Cannot compare ...").
#include <string>

#include "sql/binder/bound_expression.h"
#include "sql/binder/function_registry.h"
#include "sql/catalog/catalog.h"

namespace oxbow::sql {

// Whether `e` calls a table function (EXPLODE, CUBE_EXPLODE) anywhere.
bool has_table_function(const BoundExpr& e);

class ExpressionBinder {
 public:
  // `clause`: "SELECT", "WHERE", "HAVING", "GROUP BY", "PARTITION BY", "JOIN ON".
  ExpressionBinder(const Scope& scope, const FunctionRegistry& functions, const Catalog& catalog,
                   std::string clause)
      : scope_(scope), functions_(functions), catalog_(catalog), clause_(std::move(clause)) {}

  // Throws SqlError.
  BoundExprPtr bind(const parser::Expr& expr);
  // As bind(), and the result must be a BOOLEAN (WHERE, HAVING, JOIN ON).
  BoundExprPtr bind_condition(const parser::Expr& expr);

 private:
  BoundExprPtr bind_node(const parser::Expr& e);
  BoundExprPtr column(const parser::Expr& e);
  BoundExprPtr synthetic_key(const parser::Expr& e);
  BoundExprPtr literal(const parser::Expr& e);
  BoundExprPtr arithmetic(const parser::Expr& e);
  BoundExprPtr comparison(const parser::Expr& e);
  BoundExprPtr logical(const parser::Expr& e);
  BoundExprPtr predicate(const parser::Expr& e);
  BoundExprPtr case_expression(const parser::Expr& e);
  BoundExprPtr cast(const parser::Expr& e);
  BoundExprPtr function(const parser::Expr& e);
  // An argument of a call to `info` (null: unknown) at `index`: a bare unit is the unit's name
  // where a variant takes a unit there, else a column of that name.
  BoundExprPtr argument(const parser::Expr& e, const FunctionInfo* info, size_t index);
  BoundExprPtr lambda_function(const parser::Expr& e);
  BoundExprPtr lambda(const parser::Expr& e, const std::vector<SqlTypePtr>& parameters);
  BoundExprPtr access(const parser::Expr& e);
  BoundExprPtr constructor(const parser::Expr& e);
  std::vector<BoundExprPtr> bind_all(const parser::Expr& e, size_t from = 0);
  // ksqlDB's prefix for errors of this clause's expressions ("Error in WHERE expression: ").
  [[noreturn]] void fail(const std::string& message) const;
  void require_comparable(const BoundExpr& l, const BoundExpr& r, const std::string& op) const;

  const Scope& scope_;
  const FunctionRegistry& functions_;
  const Catalog& catalog_;
  std::string clause_;
  int aggregate_depth_ = 0;
  // The lambda parameters in scope, innermost last: name, variable, type.
  struct LambdaVariable {
    std::string name;
    int variable;
    SqlTypePtr type;
  };
  std::vector<LambdaVariable> lambda_scope_;
  int lambda_variables_ = 0;
};

}  // namespace oxbow::sql
