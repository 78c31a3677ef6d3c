#include "sql/execution/program.h"

#include <charconv>
#include <map>

#include "sql/binder/sql_error.h"
#include "sql/execution/operations.h"

namespace oxbow::sql {

namespace {

using Kind = Value::Kind;

Kind kind_of(const SqlType& t) {
  switch (t.base()) {
    case SqlBaseType::kBoolean:
      return Kind::kBoolean;
    case SqlBaseType::kInteger:
      return Kind::kInteger;
    case SqlBaseType::kBigint:
      return Kind::kBigint;
    case SqlBaseType::kDecimal:
      return Kind::kDecimal;
    case SqlBaseType::kDouble:
      return Kind::kDouble;
    case SqlBaseType::kString:
      return Kind::kString;
    case SqlBaseType::kBytes:
      return Kind::kBytes;
    case SqlBaseType::kDate:
      return Kind::kDate;
    case SqlBaseType::kTime:
      return Kind::kTime;
    case SqlBaseType::kTimestamp:
      return Kind::kTimestamp;
    case SqlBaseType::kArray:
      return Kind::kArray;
    case SqlBaseType::kMap:
      return Kind::kMap;
    case SqlBaseType::kStruct:
      return Kind::kStruct;
  }
  return Kind::kNull;
}

int comparison_of(const std::string& op) {
  if (op == "=") return ops::kEqual;
  if (op == "<>") return ops::kNotEqual;
  if (op == "<") return ops::kLess;
  if (op == "<=") return ops::kLessOrEqual;
  if (op == ">") return ops::kGreater;
  if (op == ">=") return ops::kGreaterOrEqual;
  if (op == "IS DISTINCT FROM") return ops::kDistinct;
  return ops::kNotDistinct;
}

}  // namespace

class ProgramCompiler {
 public:
  ProgramCompiler(Program& program, const std::vector<int>& row_index,
                  const std::function<int(const BoundExpr&)>& substitute)
      : p_(program), row_index_(row_index), substitute_(substitute) {}

  int emit(const BoundExpr& e) {
    if (substitute_)
      if (int index = substitute_(e); index >= 0) return add(ops::load_column, {}, index);
    switch (e.kind) {
      case BoundKind::kColumn: {
        int index = row_index_.at(static_cast<size_t>(e.column));
        if (index < 0)
          throw SqlError("Column not available to the evaluator: " + format(*e.parsed));
        return add(ops::load_column, {}, index);
      }
      case BoundKind::kNull:
        return add(ops::set_null, {});
      case BoundKind::kLiteral:
        return add(ops::load_constant, {}, constant(e));
      case BoundKind::kArithmetic:
        return arithmetic(e);
      case BoundKind::kNegate:
        return add(ops::negate, {emit(*e.args[0])}, e.op[0]);
      case BoundKind::kConcat:
        return add(ops::concat, {emit(*e.args[0]), emit(*e.args[1])});
      case BoundKind::kComparison:
        return add(ops::compare, {compared(e, 0, 1), compared(e, 1, 0)}, comparison_of(e.op));
      case BoundKind::kAnd:
      case BoundKind::kOr:
        return logical(e);
      case BoundKind::kNot:
        return add(ops::logical_not, {emit(*e.args[0])});
      case BoundKind::kIsNull:
        return add(ops::is_null, {emit(*e.args[0])}, e.negated ? 1 : 0);
      case BoundKind::kBetween:
        return add(ops::between, {compared(e, 0, 1), compared(e, 1, 0), compared(e, 2, 0)},
                   e.negated ? 1 : 0);
      case BoundKind::kIn: {
        int value = emit(*e.args[0]);
        int list = this->list(e, 1, e.args[0].get());
        int r = add(ops::in_list, {value}, list);
        p_.code_.back().scale = e.negated ? 1 : 0;
        return r;
      }
      case BoundKind::kLike: {
        std::vector<int> operands = {emit(*e.args[0]), emit(*e.args[1])};
        if (e.args.size() > 2) operands.push_back(emit(*e.args[2]));
        return add(ops::like, operands, e.negated ? 1 : 0);
      }
      case BoundKind::kCase:
        return case_expression(e);
      case BoundKind::kCast: {
        int r = add(ops::cast, {emit(*e.args[0])}, static_cast<int>(kind_of(*e.type)));
        p_.code_.back().scale = e.type->scale();
        p_.code_.back().precision = e.type->precision();
        return r;
      }
      case BoundKind::kFunction:
        return e.lambda == LambdaCall::kNone ? function(e) : lambda_loop(e);
      case BoundKind::kLambdaVariable:
        return lambda_registers_.at(e.column);
      case BoundKind::kLambda:
        break;  // only inside a lambda_loop
      case BoundKind::kSubscript:
        return add(ops::subscript, {emit(*e.args[0]), emit(*e.args[1])});
      case BoundKind::kDereference: {
        const SqlType& s = *e.args[0]->type;
        int index = 0;
        for (size_t k = 0; k < s.fields().size(); ++k)
          if (s.fields()[k].name == e.op) index = static_cast<int>(k);
        return add(ops::field, {emit(*e.args[0])}, index);
      }
      case BoundKind::kArray:
      case BoundKind::kMap:
      case BoundKind::kStruct: {
        int r = add(ops::make_container, {}, list(e, 0));
        p_.code_.back().scale = static_cast<int>(kind_of(*e.type));
        return r;
      }
    }
    throw SqlError("Expression not supported by the evaluator: " + format(*e.parsed));
  }

 private:
  int add(Operation op, std::vector<int> operands, int data = -1) {
    Instr i;
    i.op = op;
    i.dst = p_.registers_++;
    if (!operands.empty()) i.a = operands[0];
    if (operands.size() > 1) i.b = operands[1];
    if (operands.size() > 2) i.c = operands[2];
    i.data = data;
    p_.code_.push_back(i);
    return i.dst;
  }

  // `compared_to`: the value an IN list's items are compared with, which they are made
  // comparable to.
  int list(const BoundExpr& e, size_t from, const BoundExpr* compared_to = nullptr) {
    std::vector<int> registers;
    for (size_t k = from; k < e.args.size(); ++k)
      registers.push_back(compared_to
                              ? comparable(emit(*e.args[k]), e.args[k]->type, compared_to->type)
                              : emit(*e.args[k]));
    p_.lists_.push_back(std::move(registers));
    return static_cast<int>(p_.lists_.size() - 1);
  }

  int constant(const BoundExpr& e) {
    Value v;
    switch (e.type->base()) {
      case SqlBaseType::kBoolean:
        v.set_boolean(e.text == "true");
        break;
      case SqlBaseType::kInteger:
        v.set_integer(std::stoi(e.text));
        break;
      case SqlBaseType::kBigint:
        v.set_bigint(std::stoll(e.text));
        break;
      case SqlBaseType::kDouble:
        v.set_double(std::stod(e.text));
        break;
      case SqlBaseType::kDecimal: {
        __int128 digits = 0;
        for (char c : e.text)
          if (c != '.') digits = digits * 10 + (c - '0');
        v.set_decimal(digits, e.type->scale());
        break;
      }
      case SqlBaseType::kString:
        v.set_string(e.text);
        break;
      default:
        throw SqlError("Literal not supported by the evaluator yet: " + format(*e.parsed));
    }
    p_.constants_.push_back(v);
    return static_cast<int>(p_.constants_.size() - 1);
  }

  int arithmetic(const BoundExpr& e) {
    int a = emit(*e.args[0]), b = emit(*e.args[1]);
    if (!e.type) return add(ops::set_null, {});
    switch (e.type->base()) {
      case SqlBaseType::kInteger:
        return add(ops::arithmetic_integer, {a, b}, e.op[0]);
      case SqlBaseType::kBigint:
        return add(ops::arithmetic_bigint, {a, b}, e.op[0]);
      case SqlBaseType::kDouble:
        return add(ops::arithmetic_double, {a, b}, e.op[0]);
      case SqlBaseType::kString:
        return add(ops::concat, {a, b});
      case SqlBaseType::kDecimal: {
        int r = add(ops::arithmetic_decimal, {a, b}, e.op[0]);
        p_.code_.back().scale = e.type->scale();
        p_.code_.back().precision = e.type->precision();
        return r;
      }
      default:
        throw SqlError("Arithmetic not supported by the evaluator: " + format(*e.parsed));
    }
  }

  // AND / OR: the right operand evaluated only when the left does not decide (Java's && and ||).
  int logical(const BoundExpr& e) {
    int result = p_.registers_++;
    int left = emit(*e.args[0]);
    size_t test = p_.code_.size();
    add_into(ops::logical_left, result, left, e.kind == BoundKind::kOr);
    add_into(ops::logical_right, result, emit(*e.args[1]), e.kind == BoundKind::kOr);
    p_.code_[test].data = static_cast<int>(p_.code_.size());
    return result;
  }

  void add_into(Operation op, int dst, int a, bool is_or) {
    Instr i;
    i.op = op;
    i.dst = dst;
    i.a = a;
    i.scale = is_or ? 1 : 0;
    p_.code_.push_back(i);
  }

  // Each WHEN evaluated only when the ones before it were not TRUE, each THEN only when taken.
  int case_expression(const BoundExpr& e) {
    int result = p_.registers_++;
    std::vector<size_t> to_end;
    size_t k = e.has_operand ? 1 : 0, end = e.args.size() - (e.has_else ? 1 : 0);
    int operand = e.has_operand ? emit(*e.args[0]) : -1;
    for (; k + 1 < end; k += 2) {
      int when = emit(*e.args[k]);
      if (operand >= 0) {
        const SqlTypePtr &o = e.args[0]->type, &w = e.args[k]->type;
        when = add(ops::compare, {comparable(operand, o, w), comparable(when, w, o)}, ops::kEqual);
      }
      size_t test = p_.code_.size();
      add(ops::jump_unless_true, {when});
      int then = emit(*e.args[k + 1]);
      move_into(result, then);
      to_end.push_back(p_.code_.size());
      add(ops::jump, {});
      p_.code_[test].data = static_cast<int>(p_.code_.size());
    }
    if (e.has_else)
      move_into(result, emit(*e.args.back()));
    else
      move_into(result, -1);
    for (size_t j : to_end) p_.code_[j].data = static_cast<int>(p_.code_.size());
    return result;
  }

  void move_into(int dst, int from) {
    Instr i;
    i.op = from < 0 ? ops::set_null : ops::copy;
    i.dst = dst;
    i.a = from;
    p_.code_.push_back(i);
  }

  // A scalar function through its entry in the built-in functions (sql/functions/): each
  // argument first widened to what the chosen variant takes, so that implementations see the
  // parameter's type (an INT given to a DOUBLE parameter arrives as a DOUBLE).
  int function(const BoundExpr& e) {
    if (e.aggregate)
      throw SqlError("Aggregate " + e.op + " is computed by the aggregation, not an expression");
    std::vector<SqlTypePtr> types;
    for (const auto& a : e.args) types.push_back(a->type);
    ResolvedFunction resolved = FunctionRegistry::builtins().resolve(e.op, types);
    if (!resolved.variant->implementation)
      throw SqlError("Function not supported by the evaluator yet: " + e.op);
    std::vector<int> registers;
    for (size_t k = 0; k < e.args.size(); ++k)
      registers.push_back(widen(emit(*e.args[k]), types[k], resolved.params[k]));
    p_.lists_.push_back(std::move(registers));
    int r = add(ops::call_function, {}, static_cast<int>(p_.lists_.size() - 1));
    ops::set_call_site(p_.code_.back(), resolved, resolved.params);
    return r;
  }

  // Operand k of a comparison, made comparable with operand `other`.
  int compared(const BoundExpr& e, size_t k, size_t other) {
    return comparable(emit(*e.args[k]), e.args[k]->type, e.args[other]->type);
  }

  // A value compared with one of type `other`: a STRING read as the DATE, TIME or TIMESTAMP it
  // is compared with, a DATE compared with a TIMESTAMP as its midnight (ksqlDB's comparisons).
  int comparable(int from, const SqlTypePtr& have, const SqlTypePtr& other) {
    if (!have || !other) return from;
    SqlBaseType h = have->base(), o = other->base();
    bool time = o == SqlBaseType::kDate || o == SqlBaseType::kTime || o == SqlBaseType::kTimestamp;
    if ((h == SqlBaseType::kString && time) ||
        (h == SqlBaseType::kDate && o == SqlBaseType::kTimestamp))
      return add(ops::cast, {from}, static_cast<int>(kind_of(*other)));
    return from;
  }

  // TRANSFORM, FILTER or REDUCE as a loop (operations.h, LambdaLoop), each lambda's body
  // compiled once inside it with its parameters bound to the loop's registers.
  int lambda_loop(const BoundExpr& e) {
    auto loop = std::make_shared<LambdaLoop>();
    loop->call = e.lambda;
    bool reduce = e.lambda == LambdaCall::kReduceArray || e.lambda == LambdaCall::kReduceMap;
    bool map = e.lambda == LambdaCall::kTransformMap || e.lambda == LambdaCall::kFilterMap ||
               e.lambda == LambdaCall::kReduceMap;
    loop->collection = emit(*e.args[0]);
    int initial = reduce ? emit(*e.args[1]) : -1;
    if (reduce) initial = widen(initial, e.args[1]->type, e.type);
    int result = p_.registers_++;
    loop->index = p_.registers_++;
    loop->params[0] = p_.registers_++;
    if (map) loop->params[1] = p_.registers_++;
    if (!reduce) loop->builder = p_.builders_++;
    size_t begin = p_.code_.size();
    add_loop_instr(ops::lambda_begin, result, initial);
    loop->next = p_.code_.size();
    add_loop_instr(ops::lambda_next, result);
    for (size_t k = reduce ? 2 : 1, body = 0; k < e.args.size(); ++k, ++body) {
      const BoundExpr& lambda = *e.args[k];
      // REDUCE's state is the result's register itself; the others are the element's.
      size_t first = reduce ? 1 : 0;
      if (reduce) lambda_registers_[lambda.lambda_params[0]] = result;
      for (size_t j = first; j < lambda.lambda_params.size(); ++j)
        lambda_registers_[lambda.lambda_params[j]] = loop->params[j - first];
      int r = emit(*lambda.args[0]);
      if (reduce) r = widen(r, lambda.args[0]->type, e.type);
      loop->bodies[body] = r;
    }
    add_loop_instr(ops::lambda_step, result);
    loop->finish = p_.code_.size();
    add_loop_instr(ops::lambda_finish, result);
    for (size_t k = begin; k < p_.code_.size(); ++k)
      if (p_.code_[k].op == ops::lambda_begin || p_.code_[k].op == ops::lambda_next ||
          p_.code_[k].op == ops::lambda_step || p_.code_[k].op == ops::lambda_finish)
        if (!p_.code_[k].loop) p_.code_[k].loop = loop;
    return result;
  }

  void add_loop_instr(Operation op, int result, int b = -1) {
    Instr i;
    i.op = op;
    i.dst = result;
    i.b = b;
    p_.code_.push_back(i);
  }

  // `from` (of type `have`) as `want`: numbers converted; other types are passed as they are.
  int widen(int from, const SqlTypePtr& have, const SqlTypePtr& want) {
    if (!have || !want || have->equals(*want)) return from;
    bool numbers = have->is_numeric() && want->is_numeric();
    bool text_to_time = have->base() == SqlBaseType::kString &&
                        (want->base() == SqlBaseType::kDate || want->base() == SqlBaseType::kTime ||
                         want->base() == SqlBaseType::kTimestamp);
    if (!numbers && !text_to_time) return from;
    int r = add(ops::cast, {from}, static_cast<int>(kind_of(*want)));
    p_.code_.back().scale = want->scale();
    p_.code_.back().precision = want->precision();
    return r;
  }

  Program& p_;
  std::map<int, int> lambda_registers_;  // a lambda variable's register
  const std::vector<int>& row_index_;
  const std::function<int(const BoundExpr&)>& substitute_;
};

Program Program::compile(const BoundExpr& expr, const std::vector<int>& row_index,
                         const std::function<int(const BoundExpr&)>& substitute) {
  Program p;
  ProgramCompiler compiler(p, row_index, substitute);
  p.result_ = compiler.emit(expr);
  return p;
}

Frame Program::new_frame() const {
  Frame f;
  f.registers.resize(static_cast<size_t>(registers_));
  f.constants = &constants_;
  f.lists = &lists_;
  f.builders.resize(static_cast<size_t>(builders_));
  return f;
}

const Value& Program::evaluate(const Row& row, Frame& frame) const {
  frame.row = &row;
  frame.error.clear();
  size_t pc = 0;
  while (pc < code_.size()) pc = code_[pc].op(code_[pc], frame, pc);
  if (pc == ops::kAbort) frame.registers[static_cast<size_t>(result_)].set_null();
  return frame.registers[static_cast<size_t>(result_)];
}

}  // namespace oxbow::sql
