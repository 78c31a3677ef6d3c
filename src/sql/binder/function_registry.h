#pragma once
// The functions queries may call, by name: each with its variants (parameters and result type),
// resolved as ksqlDB resolves them (an exact match first, else one that the arguments widen to
// implicitly; two or more such is ambiguous), with its messages (docs/sql/ksqldb-facts.md §5).
// The scalar functions here are the first of ksqlDB's list; the evaluator implements each.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "sql/types/sql_type.h"

namespace oxbow::sql {

// What a parameter takes: a type (and what widens to it), or a family of types.
struct ParamType {
  enum class Family { kExact, kAny, kNumeric, kComparable, kArray, kSameAsFirst };
  Family family = Family::kExact;
  SqlTypePtr type;  // kExact

  static ParamType exact(SqlTypePtr t) { return {Family::kExact, std::move(t)}; }
  static ParamType any() { return {Family::kAny, nullptr}; }
};

// The arguments' types (null for a NULL literal) to the result's type.
using ResultType = std::function<SqlTypePtr(const std::vector<SqlTypePtr>& args)>;

struct FunctionVariant {
  std::vector<ParamType> params;
  bool variadic = false;  // the last parameter repeats
  ResultType result;
};

struct FunctionInfo {
  std::string name;
  bool aggregate = false;
  std::vector<FunctionVariant> variants;
};

struct ResolvedFunction {
  const FunctionInfo* function = nullptr;
  const FunctionVariant* variant = nullptr;
  SqlTypePtr type;
};

class FunctionRegistry {
 public:
  // The functions built in.
  FunctionRegistry();
  void add(FunctionInfo info);
  const FunctionInfo* find(const std::string& name) const;  // upper-cased name
  // Throws SqlError: "Can't find any functions with the name 'X'", "Function 'X' does not accept
  // parameters (T1, T2).", "Function 'X' cannot be resolved due to ambiguous method parameters
  // (T1, T2).".
  ResolvedFunction resolve(const std::string& name, const std::vector<SqlTypePtr>& args) const;

 private:
  std::map<std::string, FunctionInfo> functions_;
};

}  // namespace oxbow::sql
