#pragma once
// An expression compiled once per query into a flat program over registers (no tree walked per
// row): each instruction reads registers or the input row and writes one register; CASE jumps.
// Values of fixed width are computed in place, so a row costs no allocation for them.
//
// Run-time semantics are ksqlDB's (docs/sql/ksqldb-facts.md §2.5-2.6): NULL in, NULL out for
// arithmetic and functions; a comparison with NULL is false; AND and OR short-circuit as Java's
// && and || and, with NOT, fail the whole expression on a NULL operand they read (unboxing);
// INTEGER and BIGINT overflow wraps; what ksqlDB's generated Java raises as an exception (an
// integer divided by zero, a DECIMAL that would need rounding or overflows its precision, a CAST
// that cannot convert, a function whose UDF throws) fails the whole expression: its value is
// NULL, whatever enclosed the failing part (IS NULL, COALESCE, ...), and the error is reported
// (the caller logs it and counts the record, as ksqlDB's processing log does). CASE evaluates
// only the branch it takes.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sql/binder/bound_expression.h"
#include "sql/execution/value.h"

namespace oxbow::sql {

struct Frame;
struct Instr;
struct CallSite;    // operations.h: a scalar function's implementation and types
struct LambdaLoop;  // operations.h: TRANSFORM / FILTER / REDUCE's loop over a collection
// Runs one instruction; returns the next instruction's index.
using Operation = size_t (*)(const Instr& instr, Frame& frame, size_t pc);

struct Instr {
  Operation op = nullptr;
  int dst = -1, a = -1, b = -1, c = -1;
  int data = -1;  // a constant, a list of registers, a field's index, a jump's target, a type
  int scale = 0;  // DECIMAL results: the scale
  int precision = 0;
  // What a call or a lambda's loop needs besides ints, made once when the program is compiled
  // and shared by its copies (reading it per row costs nothing).
  std::shared_ptr<const CallSite> call;
  std::shared_ptr<const LambdaLoop> loop;
};

struct Frame {
  const Row* row = nullptr;
  std::vector<Value> registers;
  const std::vector<Value>* constants = nullptr;
  const std::vector<std::vector<int>>* lists = nullptr;
  // The collections lambdas are building: one per loop of the program, so that a loop nested in
  // another's body keeps its own.
  std::vector<std::vector<Value>> builders;
  std::string error;  // the first error of this evaluation, empty if none
};

class Program {
 public:
  // The expression's value for `row`, in `frame` (made by new_frame(), reused row after row):
  // valid until the next evaluation. `frame.error` says what went wrong, if anything did.
  const Value& evaluate(const Row& row, Frame& frame) const;
  Frame new_frame() const;

  // `expr` bound against a scope whose column i is the row's value `row_index[i]` (-1: not in
  // the row). `substitute(node)`, if given: the row's value that stands for a whole node (after
  // an aggregation, a grouping expression or an aggregate's result), or -1 to compute it.
  // Throws SqlError for what the evaluator does not support yet.
  static Program compile(const BoundExpr& expr, const std::vector<int>& row_index,
                         const std::function<int(const BoundExpr&)>& substitute = {});

 private:
  friend class ProgramCompiler;
  std::vector<Instr> code_;
  std::vector<Value> constants_;
  std::vector<std::vector<int>> lists_;
  int registers_ = 0;
  int builders_ = 0;  // lambdas' loops making a collection
  int result_ = 0;
};

}  // namespace oxbow::sql
