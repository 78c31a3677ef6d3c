#pragma once
// The evaluator's instructions (program.h), each a function over a frame's registers.
#include "sql/binder/function_registry.h"
#include "sql/execution/program.h"

namespace oxbow::sql {

// A scalar function's call (binder/function_registry.h), as its implementation sees it: the
// arguments, already of the variant's parameter types, the result to write, and the error to
// report (which makes the result NULL).
class FunctionCall {
 public:
  FunctionCall(Frame& frame, const std::vector<int>& args, const CallSite& site, Value& out)
      : frame_(frame), args_(args), site_(site), out_(out) {}
  size_t size() const { return args_.size(); }
  const Value& operator[](size_t k) const { return frame_.registers[args_[k]]; }
  // The argument's type as the call takes it (null for a NULL literal that no parameter types).
  const SqlTypePtr& arg_type(size_t k) const;
  const SqlTypePtr& result_type() const;
  Value& out() { return out_; }
  void fail(const std::string& message);

 private:
  Frame& frame_;
  const std::vector<int>& args_;
  const CallSite& site_;
  Value& out_;
};

}  // namespace oxbow::sql

namespace oxbow::sql::ops {

// Loads and control.
size_t load_column(const Instr& i, Frame& f, size_t pc);       // dst = row[data]
size_t load_constant(const Instr& i, Frame& f, size_t pc);     // dst = constants[data]
size_t copy(const Instr& i, Frame& f, size_t pc);              // dst = a
size_t set_null(const Instr& i, Frame& f, size_t pc);          // dst = NULL
size_t jump(const Instr& i, Frame& f, size_t pc);              // to data
size_t jump_unless_true(const Instr& i, Frame& f, size_t pc);  // to data unless a is TRUE

// Arithmetic by result kind; data: the operator character.
size_t arithmetic_integer(const Instr& i, Frame& f, size_t pc);
size_t arithmetic_bigint(const Instr& i, Frame& f, size_t pc);
size_t arithmetic_double(const Instr& i, Frame& f, size_t pc);
size_t arithmetic_decimal(const Instr& i, Frame& f, size_t pc);
size_t negate(const Instr& i, Frame& f, size_t pc);
size_t concat(const Instr& i, Frame& f, size_t pc);

// Comparisons; data: the operator (see kEqual...).
enum Comparison {
  kEqual,
  kNotEqual,
  kLess,
  kLessOrEqual,
  kGreater,
  kGreaterOrEqual,
  kDistinct,
  kNotDistinct
};
size_t compare(const Instr& i, Frame& f, size_t pc);
size_t logical_and(const Instr& i, Frame& f, size_t pc);
size_t logical_or(const Instr& i, Frame& f, size_t pc);
size_t logical_not(const Instr& i, Frame& f, size_t pc);
size_t is_null(const Instr& i, Frame& f, size_t pc);  // data 1: IS NOT NULL
size_t between(const Instr& i, Frame& f, size_t pc);  // a BETWEEN b AND c; data 1: NOT
size_t in_list(const Instr& i, Frame& f, size_t pc);  // a IN lists[data]; scale 1: NOT
size_t like(const Instr& i, Frame& f, size_t pc);     // a LIKE b [ESCAPE c]; data 1: NOT

// CAST to the kind in data (Value::Kind), with scale and precision for DECIMAL.
size_t cast(const Instr& i, Frame& f, size_t pc);

// Access and constructors.
size_t subscript(const Instr& i, Frame& f, size_t pc);       // a[b]: arrays from 1, maps by key
size_t field(const Instr& i, Frame& f, size_t pc);           // a's field number data
size_t make_container(const Instr& i, Frame& f, size_t pc);  // lists[data] into kind scale

// Calls a scalar function: arguments in lists[data], the call site (implementation and types)
// in `call`.
size_t call_function(const Instr& i, Frame& f, size_t pc);
// An instruction's call site for `resolved` with arguments of types `args`: `call` set.
void set_call_site(Instr& i, const ResolvedFunction& resolved, const std::vector<SqlTypePtr>& args);

// Java's Double.toString (1.5, 100.0, 1.0E10), and the text CAST(v AS STRING) gives.
std::string java_double(double d);
std::string cast_text(const Value& v);

// Three-way comparison of two non-null values of comparable kinds.
int compare_values(const Value& x, const Value& y);

}  // namespace oxbow::sql::ops
