#pragma once
// An expression bound to a query's scope: every column resolved to its place in the scope, every
// node typed (docs/sql/ksqldb-facts.md §2). The evaluator is compiled from this tree; messages
// print the parsed expression it keeps (`parsed`) in ksqlDB's canonical text.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sql/binder/function_registry.h"
#include "sql/catalog/data_source.h"
#include "sql/parser/ast.h"
#include "sql/types/sql_type.h"

namespace oxbow::sql {

// The columns a query's expressions may name: each source's (by alias), and its pseudo columns.
struct ScopeColumn {
  std::string source;  // the alias (or the source's name when it has none)
  std::string name;
  SqlTypePtr type;
  ColumnNamespace ns = ColumnNamespace::kValue;
  bool pseudo = false;  // ROWTIME, ROWPARTITION, ROWOFFSET, WINDOWSTART, WINDOWEND
};

// ksqlDB's synthetic key column of a join whose key is no source's column (a FULL OUTER join, or
// one on two expressions): its name (ROWKEY, or ROWKEY_<n> clear of the sources' columns) and
// the ON condition's two sides, whose first non-NULL value it holds.
struct SyntheticKey {
  std::string name;
  const parser::Expr* left = nullptr;
  const parser::Expr* right = nullptr;
};

struct Scope {
  std::vector<ScopeColumn> columns;
  std::vector<std::string> sources;  // aliases, in FROM then JOIN order
  // The final join's synthetic key, which only a projection may name (not after GROUP BY).
  std::optional<SyntheticKey> synthetic_key;

  // The columns of `source` under `alias`, with its pseudo columns (the window bounds when it is
  // windowed).
  void add_source(const DataSource& source, const std::string& alias);
};

enum class BoundKind {
  kColumn,      // column: the index in the scope
  kNull,        // a NULL literal (type null until a context types it)
  kLiteral,     // text: the literal as written; type
  kArithmetic,  // op: + - * / %
  kNegate,
  kConcat,
  kComparison,  // op: = <> < <= > >= IS DISTINCT FROM, IS NOT DISTINCT FROM
  kAnd,
  kOr,
  kNot,
  kIsNull,
  kBetween,
  kIn,
  kLike,
  kCase,
  kCast,
  kFunction,        // name; aggregate; lambda: the loop of TRANSFORM, FILTER or REDUCE
  kLambda,          // args: the body; lambda_params: its parameters' variables; type: the body's
  kLambdaVariable,  // column: the variable (numbered across the whole expression)
  kSubscript,
  kDereference,  // name: the field
  kArray,
  kMap,
  kStruct,
};

struct BoundExpr {
  BoundKind kind = BoundKind::kNull;
  SqlTypePtr type;  // null only for a bare NULL
  const parser::Expr* parsed = nullptr;
  std::vector<std::unique_ptr<BoundExpr>> args;
  int column = -1;
  std::string op;    // operator, function name or field name
  std::string text;  // literal text
  bool negated = false;
  bool aggregate = false;                      // an aggregate function's call
  bool table_function = false;                 // EXPLODE, CUBE_EXPLODE: rows, not a value
  bool has_operand = false, has_else = false;  // kCase
  LambdaCall lambda = LambdaCall::kNone;       // kFunction taking lambdas
  std::vector<int> lambda_params;              // kLambda
  bool interval_unit = false;  // a STRING literal naming a unit written bare (DATEADD(DAYS, ...))
};
using BoundExprPtr = std::unique_ptr<BoundExpr>;

}  // namespace oxbow::sql
