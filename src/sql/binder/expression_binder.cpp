#include "sql/binder/expression_binder.h"

#include <charconv>
#include <limits>

#include "sql/binder/ddl_binder.h"
#include "sql/binder/sql_error.h"
#include "sql/parser/parser.h"

namespace oxbow::sql {

namespace {

using parser::Expr;
using parser::ExprKind;

std::string text_of(const Expr& e) {
  return e.kind == ExprKind::kNull ? "NULL" : format(e);
}

std::string typed_text(const Expr& e, const BoundExpr& b) {
  return text_of(e) + " (" + (b.type ? b.type->to_string() : "NULL") + ")";
}

// ksqlDB's names of the comparison operators, as its messages print them.
std::string operator_name(const std::string& op) {
  if (op == "=") return "EQUAL";
  if (op == "<>") return "NOT_EQUAL";
  if (op == "<") return "LESS_THAN";
  if (op == "<=") return "LESS_THAN_OR_EQUAL";
  if (op == ">") return "GREATER_THAN";
  if (op == ">=") return "GREATER_THAN_OR_EQUAL";
  return "IS_DISTINCT_FROM";
}

// A literal, signed or not (-1).
bool is_literal(const Expr& e) {
  if (e.kind == ExprKind::kNegate) return is_literal(*e.args[0]);
  for (ExprKind k : {ExprKind::kNull, ExprKind::kBoolean, ExprKind::kInteger, ExprKind::kDecimal,
                     ExprKind::kDouble, ExprKind::kString, ExprKind::kTypedLiteral})
    if (e.kind == k) return true;
  return false;
}

bool unit_param(const FunctionVariant& v, size_t i) {
  return i < v.params.size() && v.params[i].family == ParamType::Family::kIntervalUnit;
}

bool is_time(SqlBaseType b) {
  return b == SqlBaseType::kDate || b == SqlBaseType::kTime || b == SqlBaseType::kTimestamp;
}

BoundExprPtr node(BoundKind kind, const Expr& parsed, SqlTypePtr type) {
  auto b = std::make_unique<BoundExpr>();
  b->kind = kind;
  b->parsed = &parsed;
  b->type = std::move(type);
  b->negated = parsed.negated;
  return b;
}

// The type two values take together (IN lists, CASE branches, constructors): the first known
// one, which the others must widen to.
SqlTypePtr common_type(const std::vector<const BoundExpr*>& items) {
  SqlTypePtr common;
  for (const BoundExpr* b : items)
    if (b->type && !common) common = b->type;
  return common;
}

// Whether CAST may turn `from` into `to` (docs/sql/ksqldb-facts.md §2.4).
bool castable(const SqlType& from, const SqlType& to) {
  if (from.equals(to) || can_implicitly_cast(from, to)) return true;
  SqlBaseType f = from.base(), t = to.base();
  if (t == SqlBaseType::kString) return f != SqlBaseType::kBytes;
  if (from.is_numeric() && to.is_numeric()) return true;
  if (f == SqlBaseType::kString) return to.is_numeric() || t == SqlBaseType::kBoolean || is_time(t);
  if (f == SqlBaseType::kTimestamp) return t == SqlBaseType::kDate || t == SqlBaseType::kTime;
  if (f == SqlBaseType::kDate) return t == SqlBaseType::kTimestamp;
  if (f == SqlBaseType::kArray && t == SqlBaseType::kArray)
    return castable(*from.element(), *to.element());
  if (f == SqlBaseType::kMap && t == SqlBaseType::kMap)
    return castable(*from.key(), *to.key()) && castable(*from.element(), *to.element());
  return f == SqlBaseType::kStruct && t == SqlBaseType::kStruct;
}

SqlTypePtr decimal_literal_type(const std::string& text) {
  size_t dot = text.find('.');
  std::string whole = text.substr(0, dot),
              fraction = dot == std::string::npos ? "" : text.substr(dot + 1);
  size_t lead = whole.find_first_not_of('0');
  whole = lead == std::string::npos ? "" : whole.substr(lead);
  int scale = static_cast<int>(fraction.size());
  int precision = std::max(1, static_cast<int>(whole.size()) + scale);
  return SqlType::decimal(precision, scale);
}

}  // namespace

void Scope::add_source(const DataSource& source, const std::string& alias) {
  sources.push_back(alias);
  for (const auto& c : source.columns) columns.push_back({alias, c.name, c.type, c.ns, false});
  columns.push_back({alias, "ROWTIME", SqlType::bigint(), ColumnNamespace::kValue, true});
  columns.push_back({alias, "ROWPARTITION", SqlType::integer(), ColumnNamespace::kValue, true});
  columns.push_back({alias, "ROWOFFSET", SqlType::bigint(), ColumnNamespace::kValue, true});
  if (source.window) {
    columns.push_back({alias, "WINDOWSTART", SqlType::bigint(), ColumnNamespace::kKey, true});
    columns.push_back({alias, "WINDOWEND", SqlType::bigint(), ColumnNamespace::kKey, true});
  }
}

void ExpressionBinder::fail(const std::string& message) const {
  if (clause_ == "WHERE" || clause_ == "HAVING")
    throw SqlError("Error in " + clause_ + " expression: " + message);
  throw SqlError(message);
}

BoundExprPtr ExpressionBinder::bind(const Expr& expr) {
  BoundExprPtr b = bind_node(expr);
  if (clause_ == "SELECT" && !b->type)
    throw SqlError(
        "Can't infer a type of null. Please explicitly cast it to a required type, e.g. "
        "CAST(null AS VARCHAR).");
  return b;
}

BoundExprPtr ExpressionBinder::bind_condition(const Expr& expr) {
  BoundExprPtr b = bind_node(expr);
  if (!b->type || b->type->base() != SqlBaseType::kBoolean)
    throw SqlError("Type error in " + clause_ + " expression: Should evaluate to boolean but is " +
                   typed_text(expr, *b) + " instead.");
  return b;
}

std::vector<BoundExprPtr> ExpressionBinder::bind_all(const Expr& e, size_t from) {
  std::vector<BoundExprPtr> out;
  for (size_t i = from; i < e.args.size(); ++i) out.push_back(bind_node(*e.args[i]));
  return out;
}

BoundExprPtr ExpressionBinder::bind_node(const Expr& e) {
  switch (e.kind) {
    case ExprKind::kColumn:
      return column(e);
    case ExprKind::kNull:
    case ExprKind::kBoolean:
    case ExprKind::kInteger:
    case ExprKind::kDecimal:
    case ExprKind::kDouble:
    case ExprKind::kString:
    case ExprKind::kTypedLiteral:
      return literal(e);
    case ExprKind::kArithmetic:
    case ExprKind::kNegate:
    case ExprKind::kConcat:
      return arithmetic(e);
    case ExprKind::kComparison:
      return comparison(e);
    case ExprKind::kAnd:
    case ExprKind::kOr:
    case ExprKind::kNot:
      return logical(e);
    case ExprKind::kIsNull:
    case ExprKind::kBetween:
    case ExprKind::kIn:
    case ExprKind::kLike:
      return predicate(e);
    case ExprKind::kCase:
      return case_expression(e);
    case ExprKind::kCast:
      return cast(e);
    case ExprKind::kFunction:
      return function(e);
    case ExprKind::kSubscript:
    case ExprKind::kDereference:
      return access(e);
    case ExprKind::kArray:
    case ExprKind::kMap:
    case ExprKind::kStruct:
      return constructor(e);
    case ExprKind::kStar:
      fail("'*' is only allowed as COUNT(*) or a select item");
    case ExprKind::kLambda:
      fail("Lambda functions are only allowed as arguments of TRANSFORM, FILTER and REDUCE: " +
           format(e));
    case ExprKind::kTimeUnit:
      return column(e);
    case ExprKind::kAtTimeZone:
      fail("AT TIME ZONE is not supported yet: " + format(e));
    case ExprKind::kVariable:
      fail("Variable ${" + e.name + "} is not defined");
  }
  fail("Unknown expression");
}

BoundExprPtr ExpressionBinder::column(const Expr& e) {
  const std::string& name = e.kind == ExprKind::kTimeUnit ? e.text : e.name;
  if (e.qualifier.empty())
    for (auto v = lambda_scope_.rbegin(); v != lambda_scope_.rend(); ++v)
      if (v->name == name) {
        auto b = node(BoundKind::kLambdaVariable, e, v->type);
        b->column = v->variable;
        return b;
      }
  if (e.kind == ExprKind::kTimeUnit && parser::is_reserved(name))
    fail("Time unit " + name + " is only allowed as an argument of functions taking one");
  std::string shown = e.qualifier.empty() ? name : e.qualifier + "." + name;
  if (!e.qualifier.empty()) {
    bool known = false;
    for (const auto& s : scope_.sources) known = known || s == e.qualifier;
    if (!known) throw SqlError("'" + e.qualifier + "' is not a valid stream/table name or alias.");
  }
  int found = -1;
  std::string candidates;
  for (size_t i = 0; i < scope_.columns.size(); ++i) {
    const ScopeColumn& c = scope_.columns[i];
    if (c.name != name || (!e.qualifier.empty() && c.source != e.qualifier)) continue;
    if (found >= 0 && !c.pseudo) {
      candidates += ", " + c.source + "." + c.name;
      continue;
    }
    if (found < 0) {
      found = static_cast<int>(i);
      candidates = c.source + "." + c.name;
    }
  }
  if (found < 0 && e.qualifier.empty() && clause_ == "SELECT" && scope_.synthetic_key &&
      name == scope_.synthetic_key->name)
    return synthetic_key(e);
  if (found < 0) throw SqlError(clause_ + " column '" + shown + "' cannot be resolved.");
  size_t last = candidates.rfind(", ");
  if (last != std::string::npos)
    throw SqlError(e.position, "Column '" + name + "' is ambiguous. Could be " +
                                   candidates.substr(0, last) + " or " +
                                   candidates.substr(last + 2) + ".");
  auto b = node(BoundKind::kColumn, e, scope_.columns[found].type);
  b->column = found;
  return b;
}

// The synthetic key's value: the first of the ON condition's sides that is not NULL (both are
// equal when both are there), as ksqlDB's join keys its records.
BoundExprPtr ExpressionBinder::synthetic_key(const Expr& e) {
  BoundExprPtr left = bind_node(*scope_.synthetic_key->left);
  auto b = node(BoundKind::kFunction, e, left->type);
  b->op = "COALESCE";
  b->args.push_back(std::move(left));
  b->args.push_back(bind_node(*scope_.synthetic_key->right));
  return b;
}

BoundExprPtr ExpressionBinder::literal(const Expr& e) {
  switch (e.kind) {
    case ExprKind::kNull:
      return node(BoundKind::kNull, e, nullptr);
    case ExprKind::kBoolean: {
      auto b = node(BoundKind::kLiteral, e, SqlType::boolean());
      b->text = e.text;
      return b;
    }
    case ExprKind::kInteger: {
      int64_t v = 0;
      auto [end, error] = std::from_chars(e.text.data(), e.text.data() + e.text.size(), v);
      if (error != std::errc()) throw SqlError("Invalid numeric literal: " + e.text);
      auto b =
          node(BoundKind::kLiteral, e,
               v <= std::numeric_limits<int32_t>::max() ? SqlType::integer() : SqlType::bigint());
      b->text = e.text;
      return b;
    }
    case ExprKind::kDecimal: {
      auto b = node(BoundKind::kLiteral, e, decimal_literal_type(e.text));
      b->text = e.text;
      return b;
    }
    case ExprKind::kDouble: {
      auto b = node(BoundKind::kLiteral, e, SqlType::double_type());
      b->text = e.text;
      return b;
    }
    case ExprKind::kTypedLiteral: {
      SqlBaseType base = e.name == "DATE"        ? SqlBaseType::kDate
                         : e.name == "TIME"      ? SqlBaseType::kTime
                         : e.name == "TIMESTAMP" ? SqlBaseType::kTimestamp
                                                 : SqlBaseType::kString;
      if (base == SqlBaseType::kString && e.name != "STRING" && e.name != "VARCHAR")
        fail("Unknown type of literal: " + e.name);
      auto b = node(BoundKind::kLiteral, e, SqlType::of(base));
      b->text = e.text;
      return b;
    }
    default: {
      auto b = node(BoundKind::kLiteral, e, SqlType::string());
      b->text = e.text;
      return b;
    }
  }
}

BoundExprPtr ExpressionBinder::arithmetic(const Expr& e) {
  auto args = bind_all(e);
  SqlTypePtr type;
  if (e.kind == ExprKind::kNegate) {
    if (args[0]->type && !args[0]->type->is_numeric())
      fail("Error processing expression: " + format(e) + ". Unsupported arithmetic types. " +
           args[0]->type->base_name());
    type = args[0]->type;
  } else if (e.kind == ExprKind::kConcat) {
    for (const auto& a : args)
      if (a->type && a->type->base() != SqlBaseType::kString)
        fail("Error processing expression: " + format(e) + ". Unsupported concatenation of " +
             a->type->to_string());
    type = SqlType::string();
  } else {
    const SqlTypePtr& l = args[0]->type ? args[0]->type : args[1]->type;
    const SqlTypePtr& r = args[1]->type ? args[1]->type : args[0]->type;
    if (l && r) {
      try {
        type = arithmetic_result(e.text[0], *l, *r);
      } catch (const SqlTypeError& error) {
        fail("Error processing expression: " + format(e) + ". " + error.what());
      }
    }
  }
  auto b = node(e.kind == ExprKind::kConcat   ? BoundKind::kConcat
                : e.kind == ExprKind::kNegate ? BoundKind::kNegate
                                              : BoundKind::kArithmetic,
                e, type);
  b->op = e.text;
  b->args = std::move(args);
  return b;
}

void ExpressionBinder::require_comparable(const BoundExpr& l, const BoundExpr& r,
                                          const std::string& op) const {
  if (!l.type || !r.type) return;
  const SqlType &a = *l.type, &b = *r.type;
  bool ordering = op != "=" && op != "<>" && op.find("DISTINCT") == std::string::npos;
  bool ok = (a.is_numeric() && b.is_numeric()) ||
            (a.base() == SqlBaseType::kString && b.base() == SqlBaseType::kString) ||
            (is_time(a.base()) && (is_time(b.base()) || b.base() == SqlBaseType::kString)) ||
            (is_time(b.base()) && a.base() == SqlBaseType::kString) ||
            (a.base() == SqlBaseType::kBoolean && b.base() == SqlBaseType::kBoolean) ||
            (a.base() == SqlBaseType::kBytes && b.base() == SqlBaseType::kBytes);
  bool container = a.base() == SqlBaseType::kArray || a.base() == SqlBaseType::kMap ||
                   a.base() == SqlBaseType::kStruct;
  if (container) ok = !ordering && a.equals(b);
  if (!ok)
    fail("Cannot compare " + typed_text(*l.parsed, l) + " to " + typed_text(*r.parsed, r) +
         " with " + operator_name(op) + ".");
}

BoundExprPtr ExpressionBinder::comparison(const Expr& e) {
  if (e.args[0]->kind == ExprKind::kNull || e.args[1]->kind == ExprKind::kNull) {
    if (e.text.find("DISTINCT") == std::string::npos)
      fail("Comparison with NULL not supported: " + text_of(*e.args[0]) + " " + e.text + " " +
           text_of(*e.args[1]));
  }
  auto args = bind_all(e);
  require_comparable(*args[0], *args[1], e.text);
  auto b = node(BoundKind::kComparison, e, SqlType::boolean());
  b->op = e.text;
  b->args = std::move(args);
  return b;
}

BoundExprPtr ExpressionBinder::logical(const Expr& e) {
  auto args = bind_all(e);
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i]->type && args[i]->type->base() != SqlBaseType::kBoolean)
      fail("Logical operator requires BOOLEAN operands, but " + typed_text(*e.args[i], *args[i]) +
           " is not");
  auto b = node(e.kind == ExprKind::kAnd  ? BoundKind::kAnd
                : e.kind == ExprKind::kOr ? BoundKind::kOr
                                          : BoundKind::kNot,
                e, SqlType::boolean());
  b->args = std::move(args);
  return b;
}

BoundExprPtr ExpressionBinder::predicate(const Expr& e) {
  auto args = bind_all(e);
  BoundKind kind = BoundKind::kIsNull;
  if (e.kind == ExprKind::kBetween) {
    kind = BoundKind::kBetween;
    require_comparable(*args[0], *args[1], ">=");
    require_comparable(*args[0], *args[2], "<=");
  } else if (e.kind == ExprKind::kIn) {
    kind = BoundKind::kIn;
    for (size_t i = 1; i < args.size(); ++i) require_comparable(*args[0], *args[i], "=");
  } else if (e.kind == ExprKind::kLike) {
    kind = BoundKind::kLike;
    for (size_t i = 0; i < args.size(); ++i)
      if (args[i]->type && args[i]->type->base() != SqlBaseType::kString)
        fail("LIKE requires STRING operands, but " + typed_text(*e.args[i], *args[i]) + " is not");
  }
  auto b = node(kind, e, SqlType::boolean());
  b->args = std::move(args);
  return b;
}

BoundExprPtr ExpressionBinder::case_expression(const Expr& e) {
  auto args = bind_all(e);
  size_t i = e.has_operand ? 1 : 0, end = args.size() - (e.has_else ? 1 : 0);
  std::vector<const BoundExpr*> results;
  for (; i + 1 < end; i += 2) {
    const BoundExpr& when = *args[i];
    if (e.has_operand)
      require_comparable(*args[0], when, "=");
    else if (!when.type || when.type->base() != SqlBaseType::kBoolean)
      fail("WHEN operand type should be boolean. Type for '" + text_of(*e.args[i]) + "' is " +
           (when.type ? when.type->to_string() : "NULL"));
    results.push_back(args[i + 1].get());
  }
  if (e.has_else) results.push_back(args.back().get());
  SqlTypePtr type = common_type(results);
  if (!type) fail("Invalid Case expression. All case branches have NULL type");
  for (const BoundExpr* r : results)
    if (r->type && !can_implicitly_cast(*r->type, *type))
      fail(
          "Invalid Case expression. Type for all 'THEN' clauses should be the same. THEN "
          "expression '" +
          text_of(*r->parsed) + "' has type: " + r->type->to_string() +
          ". Previous THEN expression(s) type: " + type->to_string() + ".");
  auto b = node(BoundKind::kCase, e, type);
  b->has_operand = e.has_operand;
  b->has_else = e.has_else;
  b->args = std::move(args);
  return b;
}

BoundExprPtr ExpressionBinder::cast(const Expr& e) {
  auto args = bind_all(e);
  SqlTypePtr target = bind_type(*e.type, catalog_);
  if (args[0]->type && !castable(*args[0]->type, *target)) {
    std::string message = "Cast of " + args[0]->type->to_string() + " to " + target->to_string() +
                          " is not supported";
    if (clause_ == "SELECT") throw SqlError("Invalid Select: " + message);
    fail(message);
  }
  auto b = node(BoundKind::kCast, e, target);
  b->args = std::move(args);
  return b;
}

BoundExprPtr ExpressionBinder::function(const Expr& e) {
  for (const auto& a : e.args)
    if (a->kind == ExprKind::kLambda) return lambda_function(e);
  const FunctionInfo* info = functions_.find(e.name);
  bool aggregate = info && info->aggregate;
  // The aggregation computes its calls before any row's lambda runs.
  if (aggregate && !lambda_scope_.empty())
    fail("Aggregate functions can not be used inside lambda functions: " + format(e));
  if (aggregate && aggregate_depth_ > 0) {
    std::string inner = e.name + "()";
    fail("Aggregate functions can not be nested: " + inner);
  }
  if (aggregate) ++aggregate_depth_;
  std::vector<BoundExprPtr> args;
  bool star = e.args.size() == 1 && e.args[0]->kind == ExprKind::kStar;
  try {
    if (!star)
      for (size_t i = 0; i < e.args.size(); ++i) args.push_back(argument(*e.args[i], info, i));
  } catch (const SqlError& error) {
    if (aggregate) --aggregate_depth_;
    std::string what = error.what();
    const std::string nested = "Aggregate functions can not be nested: ";
    if (what.find(nested) != std::string::npos) {
      // Named from the outside in: SUM(COUNT()).
      size_t at = what.find(nested) + nested.size();
      fail(nested + e.name + "(" + what.substr(at) + ")");
    }
    throw;
  }
  if (aggregate) --aggregate_depth_;
  std::vector<SqlTypePtr> types;
  for (const auto& a : args) types.push_back(a->type);
  ResolvedFunction resolved = functions_.resolve(e.name, types);
  // A unit's parameter takes a bare unit only, not just any STRING: refused as ksqlDB would.
  for (size_t i = 0; i < args.size(); ++i)
    if (unit_param(*resolved.variant, i) && !args[i]->interval_unit) {
      std::string list;
      for (const auto& t : types)
        list += (list.empty() ? "(" : ", ") + (t ? t->to_string() : "NULL");
      fail("Function '" + e.name + "' does not accept parameters " + list + ").");
    }
  for (size_t i = resolved.function->first_literal_arg(*resolved.variant, e.args.size());
       i > 0 && i < e.args.size(); ++i)
    if (!is_literal(*e.args[i]))
      fail("Parameter " + std::to_string(i + 1) + " passed to function " + resolved.function->name +
           " must be a literal constant, but was expression: '" + format(*e.args[i]) + "'");
  auto b = node(BoundKind::kFunction, e, resolved.type);
  b->op = resolved.function->name;
  b->aggregate = aggregate;
  b->table_function = resolved.function->kind == FunctionKind::kTable;
  if (b->table_function && clause_ != "SELECT")
    fail("Table functions can only be used in the SELECT clause: " + format(e));
  if (b->table_function)
    for (const auto& a : args)
      if (has_table_function(*a)) fail("Table functions cannot be nested: " + format(e));
  b->args = std::move(args);
  return b;
}

bool has_table_function(const BoundExpr& e) {
  if (e.table_function) return true;
  for (const auto& a : e.args)
    if (has_table_function(*a)) return true;
  return false;
}

BoundExprPtr ExpressionBinder::argument(const Expr& e, const FunctionInfo* info, size_t index) {
  if (e.kind != ExprKind::kTimeUnit) return bind_node(e);
  bool takes_unit = false;
  for (const auto& v : info ? info->variants : std::vector<FunctionVariant>{})
    takes_unit = takes_unit || unit_param(v, index);
  if (!takes_unit) return column(e);
  auto b = node(BoundKind::kLiteral, e, SqlType::string());
  b->text = e.text;
  b->interval_unit = true;
  return b;
}

BoundExprPtr ExpressionBinder::lambda_function(const Expr& e) {
  std::vector<BoundExprPtr> args(e.args.size());
  std::vector<SqlTypePtr> types(e.args.size());
  std::vector<bool> is_lambda(e.args.size());
  for (size_t i = 0; i < e.args.size(); ++i) {
    is_lambda[i] = e.args[i]->kind == ExprKind::kLambda;
    if (!is_lambda[i]) args[i] = bind_node(*e.args[i]), types[i] = args[i]->type;
  }
  ResolvedFunction resolved = functions_.resolve_lambda_call(
      e.name, types, is_lambda, [&](size_t i, const std::vector<SqlTypePtr>& parameters) {
        args[i] = lambda(*e.args[i], parameters);
        return args[i]->type;
      });
  if (resolved.variant->lambda == LambdaCall::kNone)
    fail("Function '" + e.name + "' does not take lambda functions");
  auto b = node(BoundKind::kFunction, e, resolved.type);
  b->op = resolved.function->name;
  b->lambda = resolved.variant->lambda;
  b->args = std::move(args);
  return b;
}

// The lambda's body bound with its parameters (of `parameters`' types) in scope.
BoundExprPtr ExpressionBinder::lambda(const Expr& e, const std::vector<SqlTypePtr>& parameters) {
  if (e.field_names.size() != parameters.size()) {
    std::string names;
    for (const auto& n : e.field_names) names += (names.empty() ? "" : ", ") + n;
    fail("Was expecting " + std::to_string(parameters.size()) + " arguments but found " +
         std::to_string(e.field_names.size()) + ", [" + names + "]. Check your lambda statement.");
  }
  auto b = node(BoundKind::kLambda, e, nullptr);
  size_t outer = lambda_scope_.size();
  for (size_t k = 0; k < parameters.size(); ++k) {
    b->lambda_params.push_back(lambda_variables_++);
    lambda_scope_.push_back({e.field_names[k], b->lambda_params.back(), parameters[k]});
  }
  try {
    b->args.push_back(bind_node(*e.args[0]));
  } catch (...) {
    lambda_scope_.resize(outer);
    throw;
  }
  lambda_scope_.resize(outer);
  b->type = b->args[0]->type;
  return b;
}

BoundExprPtr ExpressionBinder::access(const Expr& e) {
  auto args = bind_all(e);
  const SqlTypePtr& container = args[0]->type;
  SqlTypePtr type;
  if (e.kind == ExprKind::kDereference) {
    const SqlField* field =
        container && container->base() == SqlBaseType::kStruct ? container->field(e.name) : nullptr;
    if (!field) fail("Can't find field '" + e.name + "' in " + typed_text(*e.args[0], *args[0]));
    type = field->type;
  } else if (container && container->base() == SqlBaseType::kArray) {
    if (args[1]->type && args[1]->type->base() != SqlBaseType::kInteger &&
        args[1]->type->base() != SqlBaseType::kBigint)
      fail("Array index must be an INTEGER, not " + args[1]->type->to_string());
    type = container->element();
  } else if (container && container->base() == SqlBaseType::kMap) {
    if (args[1]->type && !can_implicitly_cast(*args[1]->type, *container->key()))
      fail("Map key must be " + container->key()->to_string() + ", not " +
           args[1]->type->to_string());
    type = container->element();
  } else {
    fail("Subscript expression can only be used on ARRAY or MAP, not " +
         typed_text(*e.args[0], *args[0]));
  }
  auto b = node(e.kind == ExprKind::kDereference ? BoundKind::kDereference : BoundKind::kSubscript,
                e, type);
  b->op = e.name;
  b->args = std::move(args);
  return b;
}

BoundExprPtr ExpressionBinder::constructor(const Expr& e) {
  auto args = bind_all(e);
  SqlTypePtr type;
  if (e.kind == ExprKind::kArray) {
    if (args.empty())
      fail(
          "Array constructor cannot be empty. Please supply at least one element (see "
          "https://github.com/confluentinc/ksql/issues/4239).");
    std::vector<const BoundExpr*> items;
    for (const auto& a : args) items.push_back(a.get());
    SqlTypePtr element = common_type(items);
    if (!element)
      fail(
          "Cannot construct an array with all NULL elements (see "
          "https://github.com/confluentinc/ksql/issues/4239). As a workaround, you may cast a "
          "NULL value to the desired type.");
    type = SqlType::array(element);
  } else if (e.kind == ExprKind::kMap) {
    if (args.empty())
      fail(
          "Map constructor cannot be empty. Please supply at least one key value pair (see "
          "https://github.com/confluentinc/ksql/issues/4239).");
    std::vector<const BoundExpr*> keys, values;
    for (size_t i = 0; i + 1 < args.size(); i += 2) {
      keys.push_back(args[i].get());
      values.push_back(args[i + 1].get());
    }
    SqlTypePtr key = common_type(keys), value = common_type(values);
    if (!key) fail("Cannot construct a map with all NULL keys");
    if (!value) fail("Cannot construct a map with all NULL values");
    type = SqlType::map(key, value);
  } else {
    std::vector<SqlField> fields;
    for (size_t i = 0; i < args.size(); ++i)
      fields.push_back({e.field_names[i], args[i]->type ? args[i]->type : SqlType::string()});
    try {
      type = SqlType::structure(std::move(fields));
    } catch (const SqlTypeError&) {
      fail("Duplicate field names found in STRUCT");
    }
  }
  auto b = node(e.kind == ExprKind::kArray ? BoundKind::kArray
                : e.kind == ExprKind::kMap ? BoundKind::kMap
                                           : BoundKind::kStruct,
                e, type);
  b->args = std::move(args);
  return b;
}

}  // namespace oxbow::sql
