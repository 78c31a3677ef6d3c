// Loads, jumps, arithmetic (with DECIMAL's exact rules), comparisons and logic.
#include <cmath>
#include <cstdlib>

#include "sql/execution/operations.h"

namespace oxbow::sql::ops {

namespace {

using Kind = Value::Kind;

Value& dst(const Instr& i, Frame& f) {
  return f.registers[i.dst];
}
const Value& reg(Frame& f, int r) {
  return f.registers[r];
}

// An error ksqlDB's generated Java raises as an exception: the whole expression fails (its value
// NULL, the error reported), whatever would have used this part's value.
size_t fail(Frame& f, Value& out, const std::string& message) {
  if (f.error.empty()) f.error = message;
  out.set_null();
  return kAbort;
}

__int128 pow10(int n) {
  __int128 v = 1;
  for (int k = 0; k < n; ++k) v *= 10;
  return v;
}

// A number as a DECIMAL's unscaled digits at its own scale.
void as_decimal(const Value& v, __int128& unscaled, int& scale) {
  if (v.kind() == Kind::kDecimal) {
    unscaled = v.unscaled();
    scale = v.scale();
  } else {
    unscaled = v.as_int64();
    scale = 0;
  }
}

// To `to` digits after the point; false if that would drop digits that are not zero.
bool rescale(__int128& unscaled, int from, int to) {
  if (to >= from) {
    unscaled *= pow10(to - from);
    return true;
  }
  __int128 divisor = pow10(from - to);
  if (unscaled % divisor != 0) return false;
  unscaled /= divisor;
  return true;
}

bool fits(__int128 unscaled, int precision) {
  __int128 limit = pow10(precision);
  return unscaled < limit && unscaled > -limit;
}

bool any_null(Frame& f, const Instr& i) {
  return reg(f, i.a).is_null() || (i.b >= 0 && reg(f, i.b).is_null());
}

}  // namespace

size_t load_column(const Instr& i, Frame& f, size_t pc) {
  dst(i, f) = (*f.row)[i.data];
  return pc + 1;
}

size_t load_constant(const Instr& i, Frame& f, size_t pc) {
  dst(i, f) = (*f.constants)[i.data];
  return pc + 1;
}

size_t copy(const Instr& i, Frame& f, size_t pc) {
  if (i.dst != i.a) dst(i, f) = reg(f, i.a);
  return pc + 1;
}

size_t set_null(const Instr& i, Frame& f, size_t pc) {
  dst(i, f).set_null();
  return pc + 1;
}

size_t jump(const Instr& i, Frame&, size_t) {
  return static_cast<size_t>(i.data);
}

size_t jump_unless_true(const Instr& i, Frame& f, size_t pc) {
  const Value& v = reg(f, i.a);
  return v.kind() == Kind::kBoolean && v.boolean() ? pc + 1 : static_cast<size_t>(i.data);
}

// Two's complement: INTEGER and BIGINT overflow wraps, as Java's arithmetic does.
size_t arithmetic_integer(const Instr& i, Frame& f, size_t pc) {
  Value& out = dst(i, f);
  if (any_null(f, i)) return out.set_null(), pc + 1;
  uint32_t x = static_cast<uint32_t>(reg(f, i.a).integer()),
           y = static_cast<uint32_t>(reg(f, i.b).integer());
  int32_t sx = reg(f, i.a).integer(), sy = reg(f, i.b).integer();
  switch (i.data) {
    case '+':
      out.set_integer(static_cast<int32_t>(x + y));
      break;
    case '-':
      out.set_integer(static_cast<int32_t>(x - y));
      break;
    case '*':
      out.set_integer(static_cast<int32_t>(x * y));
      break;
    case '/':
    case '%':
      if (sy == 0) return fail(f, out, "/ by zero");
      if (sy == -1) {  // INT_MIN / -1 wraps; % -1 is 0
        out.set_integer(i.data == '/' ? static_cast<int32_t>(0u - x) : 0);
        break;
      }
      out.set_integer(i.data == '/' ? sx / sy : sx % sy);
      break;
  }
  return pc + 1;
}

size_t arithmetic_bigint(const Instr& i, Frame& f, size_t pc) {
  Value& out = dst(i, f);
  if (any_null(f, i)) return out.set_null(), pc + 1;
  int64_t sx = reg(f, i.a).as_int64(), sy = reg(f, i.b).as_int64();
  uint64_t x = static_cast<uint64_t>(sx), y = static_cast<uint64_t>(sy);
  switch (i.data) {
    case '+':
      out.set_bigint(static_cast<int64_t>(x + y));
      break;
    case '-':
      out.set_bigint(static_cast<int64_t>(x - y));
      break;
    case '*':
      out.set_bigint(static_cast<int64_t>(x * y));
      break;
    case '/':
    case '%':
      if (sy == 0) return fail(f, out, "/ by zero");
      if (sy == -1) {
        out.set_bigint(i.data == '/' ? static_cast<int64_t>(0u - x) : 0);
        break;
      }
      out.set_bigint(i.data == '/' ? sx / sy : sx % sy);
      break;
  }
  return pc + 1;
}

size_t arithmetic_double(const Instr& i, Frame& f, size_t pc) {
  Value& out = dst(i, f);
  if (any_null(f, i)) return out.set_null(), pc + 1;
  double x = reg(f, i.a).as_double(), y = reg(f, i.b).as_double();
  switch (i.data) {
    case '+':
      out.set_double(x + y);
      break;
    case '-':
      out.set_double(x - y);
      break;
    case '*':
      out.set_double(x * y);
      break;
    case '/':
      out.set_double(x / y);
      break;
    case '%':
      out.set_double(std::fmod(x, y));
      break;
  }
  return pc + 1;
}

// Exact, as ksqlDB's MathContext(precision, UNNECESSARY) then setScale(scale): a result that
// would need rounding, or more digits than the type holds, is an error.
size_t arithmetic_decimal(const Instr& i, Frame& f, size_t pc) {
  Value& out = dst(i, f);
  if (any_null(f, i)) return out.set_null(), pc + 1;
  __int128 x, y;
  int sx, sy;
  as_decimal(reg(f, i.a), x, sx);
  as_decimal(reg(f, i.b), y, sy);
  __int128 result = 0;
  bool exact = true;
  switch (i.data) {
    case '+':
    case '-':
    case '%': {
      int s = std::max(sx, sy);
      rescale(x, sx, s);
      rescale(y, sy, s);
      if (i.data == '%' && y == 0) return fail(f, out, "Division by zero");
      result = i.data == '+' ? x + y : i.data == '-' ? x - y : x % y;
      exact = rescale(result, s, i.scale);
      break;
    }
    case '*':
      result = x * y;
      exact = rescale(result, sx + sy, i.scale);
      break;
    case '/': {
      if (y == 0) return fail(f, out, "Division by zero");
      // x / y at the result's scale: x * 10^(scale - sx + sy) / y, which must divide exactly.
      int shift = i.scale - sx + sy;
      __int128 numerator = x;
      if (shift >= 0)
        numerator *= pow10(shift);
      else
        y *= pow10(-shift);
      exact = numerator % y == 0;
      result = numerator / y;
      break;
    }
  }
  if (!exact) return fail(f, out, "Rounding necessary");
  if (!fits(result, i.precision))
    return fail(f, out,
                "Numeric field overflow: DECIMAL(" + std::to_string(i.precision) + ", " +
                    std::to_string(i.scale) + ")");
  out.set_decimal(result, i.scale);
  return pc + 1;
}

size_t negate(const Instr& i, Frame& f, size_t pc) {
  Value& out = dst(i, f);
  const Value& v = reg(f, i.a);
  if (i.data == '+' || v.is_null()) return copy(i, f, pc);
  switch (v.kind()) {
    case Kind::kInteger:
      out.set_integer(static_cast<int32_t>(0u - static_cast<uint32_t>(v.integer())));
      break;
    case Kind::kBigint:
      out.set_bigint(static_cast<int64_t>(0u - static_cast<uint64_t>(v.bigint())));
      break;
    case Kind::kDouble:
      out.set_double(-v.dbl());
      break;
    case Kind::kDecimal:
      out.set_decimal(-v.unscaled(), v.scale());
      break;
    default:
      out.set_null();
      break;
  }
  return pc + 1;
}

// The compiler gives every node its own register: dst is neither operand.
size_t concat(const Instr& i, Frame& f, size_t pc) {
  Value& out = dst(i, f);
  if (any_null(f, i)) return out.set_null(), pc + 1;
  out.set_string(reg(f, i.a).text());
  out.append_text(reg(f, i.b).text());
  return pc + 1;
}

int compare_values(const Value& x, const Value& y) {
  auto sign = [](auto a, auto b) { return a < b ? -1 : a > b ? 1 : 0; };
  Kind a = x.kind(), b = y.kind();
  bool numbers =
      (a == Kind::kInteger || a == Kind::kBigint || a == Kind::kDouble || a == Kind::kDecimal) &&
      (b == Kind::kInteger || b == Kind::kBigint || b == Kind::kDouble || b == Kind::kDecimal);
  if (numbers) {
    if (a == Kind::kDouble || b == Kind::kDouble) return sign(x.as_double(), y.as_double());
    if (a == Kind::kDecimal || b == Kind::kDecimal) {
      __int128 ux, uy;
      int sx, sy;
      as_decimal(x, ux, sx);
      as_decimal(y, uy, sy);
      int s = std::max(sx, sy);
      rescale(ux, sx, s);
      rescale(uy, sy, s);
      return sign(ux, uy);
    }
    return sign(x.as_int64(), y.as_int64());
  }
  switch (a) {
    case Kind::kString:
    case Kind::kBytes:
      return x.text().compare(y.text()) < 0 ? -1 : x.text() == y.text() ? 0 : 1;
    case Kind::kBoolean:
      return sign(x.boolean(), y.boolean());
    case Kind::kDate:
    case Kind::kTime:
    case Kind::kTimestamp:
      return sign(x.bigint(), y.bigint());
    default:
      return x.debug_string() == y.debug_string() ? 0 : 1;
  }
}

size_t compare(const Instr& i, Frame& f, size_t pc) {
  Value& out = dst(i, f);
  const Value &x = reg(f, i.a), &y = reg(f, i.b);
  if (i.data == kDistinct || i.data == kNotDistinct) {
    bool same = x.is_null() || y.is_null() ? x.is_null() && y.is_null() : compare_values(x, y) == 0;
    out.set_boolean(i.data == kDistinct ? !same : same);
    return pc + 1;
  }
  if (x.is_null() || y.is_null()) return out.set_boolean(false), pc + 1;  // ksqlDB: false, not NULL
  int c = compare_values(x, y);
  bool r = false;
  switch (i.data) {
    case kEqual:
      r = c == 0;
      break;
    case kNotEqual:
      r = c != 0;
      break;
    case kLess:
      r = c < 0;
      break;
    case kLessOrEqual:
      r = c <= 0;
      break;
    case kGreater:
      r = c > 0;
      break;
    case kGreaterOrEqual:
      r = c >= 0;
      break;
  }
  out.set_boolean(r);
  return pc + 1;
}

namespace {

// Java's unboxing of a null Boolean in ksqlDB's generated code: a NullPointerException that
// fails the whole expression.
size_t unboxed_null(Frame& f, const char* op) {
  if (f.error.empty())
    f.error = std::string("java.lang.NullPointerException: a NULL operand of ") + op;
  return kAbort;
}

}  // namespace

size_t logical_left(const Instr& i, Frame& f, size_t pc) {
  const Value& x = reg(f, i.a);
  bool is_or = i.scale == 1;
  if (x.is_null()) return unboxed_null(f, is_or ? "OR" : "AND");
  if (x.boolean() != is_or) return pc + 1;  // TRUE AND ..., FALSE OR ...: the right decides
  dst(i, f).set_boolean(is_or);
  return static_cast<size_t>(i.data);
}

size_t logical_right(const Instr& i, Frame& f, size_t pc) {
  const Value& y = reg(f, i.a);
  if (y.is_null()) return unboxed_null(f, i.scale == 1 ? "OR" : "AND");
  dst(i, f).set_boolean(y.boolean());
  return pc + 1;
}

size_t logical_not(const Instr& i, Frame& f, size_t pc) {
  const Value& x = reg(f, i.a);
  if (x.is_null()) return unboxed_null(f, "NOT");
  dst(i, f).set_boolean(!x.boolean());
  return pc + 1;
}

size_t is_null(const Instr& i, Frame& f, size_t pc) {
  bool null = reg(f, i.a).is_null();
  dst(i, f).set_boolean(i.data == 1 ? !null : null);
  return pc + 1;
}

size_t between(const Instr& i, Frame& f, size_t pc) {
  const Value &x = reg(f, i.a), &low = reg(f, i.b), &high = reg(f, i.c);
  Value& out = dst(i, f);
  if (x.is_null() || low.is_null() || high.is_null()) return out.set_boolean(false), pc + 1;
  bool inside = compare_values(x, low) >= 0 && compare_values(x, high) <= 0;
  out.set_boolean(i.data == 1 ? !inside : inside);
  return pc + 1;
}

size_t in_list(const Instr& i, Frame& f, size_t pc) {
  const Value& x = reg(f, i.a);
  bool found = false;
  if (!x.is_null())
    for (int r : (*f.lists)[i.data])
      if (!reg(f, r).is_null() && compare_values(x, reg(f, r)) == 0) found = true;
  dst(i, f).set_boolean(i.scale == 1 ? !x.is_null() && !found : found);
  return pc + 1;
}

// ---- lambdas' loops

namespace {

bool over_map(LambdaCall call) {
  return call == LambdaCall::kTransformMap || call == LambdaCall::kFilterMap ||
         call == LambdaCall::kReduceMap;
}

bool reduces(LambdaCall call) {
  return call == LambdaCall::kReduceArray || call == LambdaCall::kReduceMap;
}

bool same_key(const Value& x, const Value& y) {
  if (x.is_null() || y.is_null()) return x.is_null() && y.is_null();
  return compare_values(x, y) == 0;
}

// TRANSFORM of a map: Java's Collectors.toMap refuses a key made twice.
bool add_entry(std::vector<Value>& entries, const Value& key, const Value& value, Frame& f,
               Value& out) {
  for (size_t k = 0; k < entries.size(); k += 2)
    if (same_key(entries[k], key)) {
      fail(f, out,
           "Duplicate key " + cast_text(key) + " (attempted merging values " +
               cast_text(entries[k + 1]) + " and " + cast_text(value) + ")");
      return false;
    }
  entries.push_back(key);
  entries.push_back(value);
  return true;
}

}  // namespace

// NULL collections: NULL (REDUCE: its initial state, itself NULL-in NULL-out).
size_t lambda_begin(const Instr& i, Frame& f, size_t pc) {
  const LambdaLoop& l = *i.loop;
  Value& out = dst(i, f);
  const Value& collection = reg(f, l.collection);
  if (reduces(l.call)) {
    const Value& initial = reg(f, i.b);
    if (initial.is_null()) return out.set_null(), l.finish + 1;
    out = initial;
    if (collection.is_null()) return l.finish + 1;
  } else {
    if (collection.is_null()) return out.set_null(), l.finish + 1;
    auto& builder = f.builders[static_cast<size_t>(l.builder)];
    builder.clear();
    builder.reserve(collection.items().size());  // the only allocation of the result's elements
  }
  f.registers[l.index].set_bigint(0);
  return pc + 1;
}

size_t lambda_next(const Instr& i, Frame& f, size_t pc) {
  const LambdaLoop& l = *i.loop;
  const auto& items = reg(f, l.collection).items();
  Value& index = f.registers[l.index];
  auto at = static_cast<size_t>(index.bigint());
  if (at >= items.size()) return l.finish;
  f.registers[l.params[0]] = items[at];  // a copy that reuses the register's buffer
  if (over_map(l.call)) f.registers[l.params[1]] = items[at + 1];
  index.set_bigint(static_cast<int64_t>(at + (over_map(l.call) ? 2 : 1)));
  return pc + 1;
}

size_t lambda_step(const Instr& i, Frame& f, size_t pc) {
  (void)pc;
  const LambdaLoop& l = *i.loop;
  if (reduces(l.call)) {
    dst(i, f) = reg(f, l.bodies[0]);  // the next state
    return l.next;
  }
  auto& builder = f.builders[static_cast<size_t>(l.builder)];
  const Value& result = reg(f, l.bodies[0]);
  switch (l.call) {
    case LambdaCall::kTransformArray:
      builder.push_back(result);
      break;
    case LambdaCall::kTransformMap:
      if (!add_entry(builder, result, reg(f, l.bodies[1]), f, dst(i, f))) return kAbort;
      break;
    case LambdaCall::kFilterArray:
    case LambdaCall::kFilterMap:
      // Java unboxes the predicate's result: NULL fails the call.
      if (result.is_null()) return fail(f, dst(i, f), "FILTER's function returned NULL");
      if (!result.boolean()) break;
      builder.push_back(reg(f, l.params[0]));
      if (l.call == LambdaCall::kFilterMap) builder.push_back(reg(f, l.params[1]));
      break;
    default:
      break;
  }
  return l.next;
}

size_t lambda_finish(const Instr& i, Frame& f, size_t pc) {
  const LambdaLoop& l = *i.loop;
  if (reduces(l.call)) return pc + 1;
  auto& builder = f.builders[static_cast<size_t>(l.builder)];
  dst(i, f).set_items(over_map(l.call) ? Kind::kMap : Kind::kArray,
                      std::make_shared<const std::vector<Value>>(std::move(builder)));
  return pc + 1;
}

}  // namespace oxbow::sql::ops
