#pragma once
// The functions queries may call, by name: each with its variants (parameters and result type),
// resolved as ksqlDB resolves them (an exact match first, else one that the arguments widen to
// implicitly; two or more such is ambiguous), with its messages (docs/sql/ksqldb-facts.md §5).
//
// The functions themselves are data (sql/functions/, one entry a function: name, category,
// description, variants, and for a scalar the implementation the evaluator calls), defined there
// and reached through builtin_functions(), so that the binder never includes the evaluator's
// headers. SHOW FUNCTIONS and DESCRIBE FUNCTION read the same entries (list(), describe()).
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sql/types/sql_type.h"

namespace oxbow::sql {

class FunctionCall;  // sql/execution/operations.h: a call's arguments, result and error
// A scalar function's body: reads the call's arguments, writes its result or reports an error.
using ScalarImplementation = void (*)(FunctionCall& call);

// What a parameter takes: a type (and what widens to it), a family of types, or a generic one
// (T, K, V...) bound by the first argument that meets it, which later ones must equal or widen to.
struct ParamType {
  enum class Family {
    kExact,
    kAny,           // any type, bound to nothing
    kNumeric,       // INT, BIGINT, DECIMAL, DOUBLE
    kComparable,    // a primitive with an order (not BOOLEAN, BYTES or a container)
    kArray,         // ARRAY<element>; children[0] is the element's
    kMap,           // MAP<key, value>; children[0] and [1]
    kGeneric,       // name: T, U, K, V, ...
    kDecimal,       // any DECIMAL (an integer widens to its DECIMAL)
    kIntervalUnit,  // DAYS, HOURS, ...: taken as the unit's name in a STRING
    kSameAsFirst,   // the first argument's type
    kLambda,        // a lambda: children are its parameters' types, then its body's
  };
  Family family = Family::kExact;
  SqlTypePtr type;                  // kExact
  std::string generic;              // kGeneric
  std::vector<ParamType> children;  // kArray, kMap
  std::string name;                 // the parameter's name, for DESCRIBE FUNCTION

  static ParamType exact(SqlTypePtr t) { return {Family::kExact, std::move(t), {}, {}, {}}; }
  static ParamType any() { return {Family::kAny, nullptr, {}, {}, {}}; }
  // As ksqlDB's DESCRIBE FUNCTION prints it: VARCHAR, INT, ARRAY<T>, MAP<K, V>, INTERVAL UNIT,
  // LAMBDA (T) => U.
  std::string to_string() const;
};

// The arguments' types (as the chosen variant takes them; null for a NULL literal) to the
// result's type.
using ResultType = std::function<SqlTypePtr(const std::vector<SqlTypePtr>& args)>;

// The functions that take lambdas, which the evaluator compiles into loops over the collection
// (each lambda's body inlined) rather than calling an implementation.
enum class LambdaCall {
  kNone,
  kTransformArray,
  kTransformMap,
  kFilterArray,
  kFilterMap,
  kReduceArray,
  kReduceMap
};

struct FunctionVariant {
  std::vector<ParamType> params;
  bool variadic = false;      // a parameter repeats: the last, or the one before `after_variadic`
  size_t after_variadic = 0;  // parameters after the repeating one (TOPK's k after its columns)
  ResultType result;
  std::string returns;                            // the result as DESCRIBE FUNCTION prints it
  std::string description;                        // this variant's, for DESCRIBE FUNCTION
  ScalarImplementation implementation = nullptr;  // scalars; null for those not run yet
  bool sees_nulls = false;  // the implementation decides; otherwise a NULL argument gives NULL
  LambdaCall lambda = LambdaCall::kNone;  // a loop the evaluator compiles, for lambdas' variants
};

// A variant from ksqlDB-like signature text: `params` as "str VARCHAR, pos INT" (a "..." after
// a type makes that parameter repeat, at most one; generic names are single capitals or T1, K...;
// DECIMAL is any DECIMAL, NUMBER any number, ANY any type, INTERVALUNIT a time unit, LAMBDA<T, U>
// a lambda from T to U, LAMBDA<S, T, S> one of two parameters), `returns` a
// type in the same words, generics standing for what their arguments bound them to. Throws
// std::invalid_argument on text it cannot read (a programming error, caught by tests).
FunctionVariant signature(std::string_view params, std::string_view returns,
                          ScalarImplementation implementation = nullptr,
                          std::string description = {});
// The same with a result computed from the arguments' types (DECIMAL's precision and scale).
FunctionVariant signature(std::string_view params, std::string returns_text, ResultType result,
                          ScalarImplementation implementation = nullptr,
                          std::string description = {});

enum class FunctionKind { kScalar, kAggregate, kTable };

struct FunctionInfo {
  std::string name;
  bool aggregate = false;
  std::vector<FunctionVariant> variants;
  FunctionKind kind = FunctionKind::kScalar;  // kAggregate exactly when `aggregate`
  std::string category;                       // ksqlDB's: STRING, MATHEMATICAL, DATE / TIME, ...
  std::string description;
  // Aggregates whose arguments from this position on are fixed when the query starts (TOPK's k,
  // EARLIEST_BY_OFFSET's ignoreNulls) and must be literals, as ksqlDB requires; 0: none.
  // A parameter's position: with a repeating parameter before it, counted in the variant's
  // parameters, so that the call's trailing arguments are the literal ones.
  size_t literal_args_from = 0;

  // SCALAR, AGGREGATE or TABLE, as SHOW FUNCTIONS prints the type.
  const char* type_name() const;
  // "SUBSTRING(str VARCHAR, pos INT)": a variant as DESCRIBE FUNCTION prints it.
  std::string signature_text(const FunctionVariant& v) const;
  // Where a call of `v` with `args` arguments starts its literal ones (0: none).
  size_t first_literal_arg(const FunctionVariant& v, size_t args) const;
};

struct ResolvedFunction {
  const FunctionInfo* function = nullptr;
  const FunctionVariant* variant = nullptr;
  SqlTypePtr type;
  // What each argument becomes before the call (its own type unless it widens to the
  // parameter's; null for a NULL literal no parameter types).
  std::vector<SqlTypePtr> params;
};

// The functions sql/functions/ defines, in one list (defined there).
const std::vector<FunctionInfo>& builtin_functions();

class FunctionRegistry {
 public:
  // The functions built in.
  FunctionRegistry();
  // One registry of the built-in functions for the whole process (the evaluator's).
  static const FunctionRegistry& builtins();

  void add(FunctionInfo info);
  const FunctionInfo* find(const std::string& name) const;  // upper-cased name
  // Throws SqlError: "Can't find any functions with the name 'X'", "Function 'X' does not accept
  // parameters (T1, T2).", "Function 'X' cannot be resolved due to ambiguous method parameters
  // (T1, T2).".
  ResolvedFunction resolve(const std::string& name, const std::vector<SqlTypePtr>& args) const;
  // A call with lambdas among its arguments (`lambda[i]`; `args[i]` is null there), resolved as
  // ksqlDB does: the variant chosen by the other arguments, whose generics type each lambda's
  // parameters; `bind_lambda(i, parameter types)` binds lambda i's body and returns its type,
  // which the variant's lambda result must accept. The resolution's `params` hold, for a lambda,
  // its body's type.
  using LambdaBinder =
      std::function<SqlTypePtr(size_t i, const std::vector<SqlTypePtr>& parameters)>;
  ResolvedFunction resolve_lambda_call(const std::string& name, const std::vector<SqlTypePtr>& args,
                                       const std::vector<bool>& lambda,
                                       const LambdaBinder& bind_lambda) const;

  // SHOW FUNCTIONS: every function, by name.
  std::vector<const FunctionInfo*> list() const;
  // DESCRIBE FUNCTION x (any case). Throws SqlError "Can't find any functions with the name 'x'".
  const FunctionInfo& describe(const std::string& name) const;

 private:
  // `v` for `args` (`variant` null when they do not fit it); the first non-null argument's type
  // stands for "the first's" (COALESCE(NULL, x) is x's type).
  ResolvedFunction resolve_variant(const FunctionInfo* info, const FunctionVariant& v,
                                   const std::vector<SqlTypePtr>& args) const;
  [[noreturn]] void args_text_error(const std::string& name, const std::vector<SqlTypePtr>& args,
                                    const std::vector<bool>& lambda) const;

  std::map<std::string, FunctionInfo> functions_;
};

}  // namespace oxbow::sql
