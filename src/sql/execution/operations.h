#pragma once
// The evaluator's instructions (program.h), each a function over a frame's registers.
#include <cstdint>
#include <string_view>

#include "sql/binder/function_registry.h"
#include "sql/execution/program.h"

namespace oxbow::sql {

// A scalar function's call (binder/function_registry.h), as its implementation sees it: the
// arguments, already of the variant's parameter types, and the result to write. Where ksqlDB's
// UDF throws, the implementation calls fail(): the whole expression fails (its value NULL, the
// error reported and logged), as ksqlDB's CompiledExpression catches the exception. Where the
// UDF catches its own error and returns null, it calls null_result(): NULL, nothing reported.
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
  void null_result() { out_.set_null(); }
  bool failed() const { return failed_; }

 private:
  Frame& frame_;
  const std::vector<int>& args_;
  const CallSite& site_;
  Value& out_;
  bool failed_ = false;
};

// TRANSFORM, FILTER or REDUCE compiled into a loop (program.cpp): lambda_begin; then for each
// element lambda_next (the parameters loaded), the lambdas' bodies, lambda_step (the element's
// result kept, back to lambda_next); after the last, lambda_finish (the collection made).
struct LambdaLoop {
  LambdaCall call = LambdaCall::kNone;
  int collection = -1;          // the array's or map's register
  int index = -1;               // the next element's position (a BIGINT register)
  int params[2] = {-1, -1};     // the element (array), or the key and the value (map)
  int bodies[2] = {-1, -1};     // the bodies' results (TRANSFORM of a map: key, value)
  int builder = -1;             // the frame's collection under construction
  size_t next = 0, finish = 0;  // lambda_next's and lambda_finish's instructions
};

}  // namespace oxbow::sql

namespace oxbow::sql::ops {

// What an instruction returns to stop the program: the expression has failed (frame.error says
// why) and its value is NULL, whatever its parts computed.
inline constexpr size_t kAbort = SIZE_MAX;

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
// AND and OR as ksqlDB's generated Java evaluates them (`a && b`, `a || b` over Booleans):
// logical_left tests the left operand a (scale 1: OR): FALSE for AND, TRUE for OR, is the result
// and the right operand is skipped (a jump to data); else logical_right takes the right operand
// a as the result. NOT negates a. A NULL operand fails the whole expression (kAbort), as Java's
// unboxing of a null Boolean throws there.
size_t logical_left(const Instr& i, Frame& f, size_t pc);
size_t logical_right(const Instr& i, Frame& f, size_t pc);
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

// Lambdas' loops (see LambdaLoop): dst the result; lambda_begin's b: REDUCE's initial state.
size_t lambda_begin(const Instr& i, Frame& f, size_t pc);
size_t lambda_next(const Instr& i, Frame& f, size_t pc);
size_t lambda_step(const Instr& i, Frame& f, size_t pc);
size_t lambda_finish(const Instr& i, Frame& f, size_t pc);

// Java's Double.toString (1.5, 100.0, 1.0E10), and the text CAST(v AS STRING) gives.
std::string java_double(double d);
std::string cast_text(const Value& v);

// The proleptic Gregorian calendar (Java's ISO chronology), by days since 1970-01-01.
struct CivilDate {
  int64_t year;
  int month, day;
};
int64_t days_from_civil(int64_t year, int month, int day);
CivilDate civil_from_days(int64_t days);
int days_in_month(int64_t year, int month);
// Floor division and its remainder (never negative for a positive divisor).
int64_t floor_div(int64_t a, int64_t b);
int64_t floor_mod(int64_t a, int64_t b);

// The ISO texts of ksqlDB's CAST (docs/sql/ksqldb-facts.md §2.4): DATE 2021-01-01, TIME
// 12:34:56 (whole seconds, HH:mm when they are 0, as Java's LocalTime prints), TIMESTAMP
// 2021-01-01T12:34:56.789 in UTC.
void append_date_text(std::string& out, int64_t days);
void append_time_text(std::string& out, int64_t ms_of_day);
void append_timestamp_text(std::string& out, int64_t epoch_ms);
// And back, ksqlDB's partials accepted (2021-01 is its first day; 2021-01-01T10 is 10:00;
// a timestamp may end with Z or an offset, else it is UTC). False with ksqlDB's message.
bool parse_date_text(std::string_view s, int64_t& days, std::string& error);
bool parse_time_text(std::string_view s, int64_t& ms_of_day, std::string& error);
bool parse_timestamp_text(std::string_view s, int64_t& epoch_ms, std::string& error);

// Three-way comparison of two non-null values of comparable kinds.
int compare_values(const Value& x, const Value& y);

}  // namespace oxbow::sql::ops
