// What a pull query's WHERE clause bounds (pull_query.h): the conjuncts that compare the key
// column or a window bound with a constant narrow what is read from the store. Everything else
// (OR, functions of the key, other columns) is left to the WHERE clause, which every row read
// still goes through; so a bound here may be loose, never too tight.
#include <algorithm>
#include <climits>

#include "sql/binder/query_binder.h"
#include "sql/engine/pull_query.h"
#include "sql/execution/operations.h"
#include "sql/execution/program.h"

namespace oxbow::sql {

namespace {

using Kind = Value::Kind;

bool is_constant(const BoundExpr& e) {
  if (e.kind == BoundKind::kColumn || e.kind == BoundKind::kLambdaVariable || e.aggregate)
    return false;
  return std::all_of(e.args.begin(), e.args.end(), [](const auto& a) { return is_constant(*a); });
}

// A constant expression's value, or none when it is not constant, fails or is NULL.
std::optional<Value> constant_value(const BoundExpr& e) {
  if (!is_constant(e)) return std::nullopt;
  try {
    Program program = Program::compile(e, {});
    Frame frame = program.new_frame();
    Row empty;
    Value v = program.evaluate(empty, frame);
    if (!frame.error.empty() || v.is_null()) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// `v` as a value of `type`, when that is exact (an INT widened to BIGINT, a BIGINT that fits an
// INT); none for other types, whose keys are then read by a scan.
std::optional<Value> coerced(const Value& v, const SqlType& type) {
  Value out;
  switch (type.base()) {
    case SqlBaseType::kString:
      if (v.kind() != Kind::kString) return std::nullopt;
      return v;
    case SqlBaseType::kInteger:
      if (v.kind() != Kind::kInteger && v.kind() != Kind::kBigint) return std::nullopt;
      if (v.as_int64() < INT32_MIN || v.as_int64() > INT32_MAX) return std::nullopt;
      out.set_integer(static_cast<int32_t>(v.as_int64()));
      return out;
    case SqlBaseType::kBigint:
      if (v.kind() != Kind::kInteger && v.kind() != Kind::kBigint) return std::nullopt;
      out.set_bigint(v.as_int64());
      return out;
    case SqlBaseType::kDouble:
      if (v.kind() != Kind::kInteger && v.kind() != Kind::kBigint && v.kind() != Kind::kDouble)
        return std::nullopt;
      out.set_double(v.as_double());
      return out;
    default:
      return std::nullopt;
  }
}

void conjuncts(const BoundExpr& e, std::vector<const BoundExpr*>& out) {
  if (e.kind == BoundKind::kAnd) {
    for (const auto& a : e.args) conjuncts(*a, out);
    return;
  }
  out.push_back(&e);
}

// `column op constant`, the comparison turned around when the constant comes first.
struct Comparison {
  int column = -1;
  std::string op;
  Value constant;
};

std::string flipped(const std::string& op) {
  if (op == "<") return ">";
  if (op == "<=") return ">=";
  if (op == ">") return "<";
  if (op == ">=") return "<=";
  return op;
}

std::optional<Comparison> comparison_of(const BoundExpr& e) {
  if (e.kind != BoundKind::kComparison || e.args.size() != 2) return std::nullopt;
  static const std::vector<std::string> kOps = {"=", "<", "<=", ">", ">="};
  if (std::find(kOps.begin(), kOps.end(), e.op) == kOps.end()) return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    const BoundExpr& column = *e.args[static_cast<size_t>(side)];
    if (column.kind != BoundKind::kColumn) continue;
    auto constant = constant_value(*e.args[static_cast<size_t>(1 - side)]);
    if (!constant) return std::nullopt;
    return Comparison{column.column, side == 0 ? e.op : flipped(e.op), *constant};
  }
  return std::nullopt;
}

bool is_column(const BoundExpr& e, int column) {
  return e.kind == BoundKind::kColumn && e.column == column;
}

class Bounder {
 public:
  Bounder(int key, const SqlType* key_type, int start, int end, std::optional<int64_t> size)
      : key_(key), key_type_(key_type), start_(start), end_(end), size_(size) {}

  void add(const BoundExpr& e) {
    if (auto c = comparison_of(e)) return compare(*c);
    if (e.negated || e.args.empty() || !is_column(*e.args[0], key_)) return;
    if (e.kind == BoundKind::kIn) return lookup(e);
    if (e.kind == BoundKind::kBetween && e.args.size() == 3) {
      auto low = constant_value(*e.args[1]), high = constant_value(*e.args[2]);
      if (low) compare({key_, ">=", *low});
      if (high) compare({key_, "<=", *high});
    }
  }
  PullBounds bounds() {
    if (!keys_.empty()) {
      bounds_.keys.kind = KeyBounds::Kind::kLookup;
      bounds_.keys.keys = std::move(*keys_.begin());
    } else if (bounds_.keys.lower || bounds_.keys.upper) {
      bounds_.keys.kind = KeyBounds::Kind::kRange;
    }
    return bounds_;
  }

 private:
  void compare(const Comparison& c) {
    if (c.column == key_ && key_type_) return key_bound(c);
    if (c.column >= 0 && c.column == start_) return time_bound(c.op, c.constant, 0);
    if (c.column >= 0 && c.column == end_ && size_) return time_bound(c.op, c.constant, *size_);
  }
  void lookup(const BoundExpr& in) {
    if (!key_type_) return;
    std::vector<Value> keys;
    for (size_t i = 1; i < in.args.size(); ++i) {
      auto v = constant_value(*in.args[i]);
      auto key = v ? coerced(*v, *key_type_) : std::nullopt;
      if (!key) return;  // a NULL or a value of another type: left to WHERE
      // Each row once, however often IN names its key.
      auto same = [&](const Value& k) { return ops::compare_values(k, *key) == 0; };
      if (std::none_of(keys.begin(), keys.end(), same)) keys.push_back(*key);
    }
    keys_.push_back(std::move(keys));
  }
  void key_bound(const Comparison& c) {
    auto key = coerced(c.constant, *key_type_);
    if (!key) return;
    if (c.op == "=") return keys_.push_back({*key});
    auto& side = c.op[0] == '>' ? bounds_.keys.lower : bounds_.keys.upper;
    const int tighter = c.op[0] == '>' ? 1 : -1;
    if (!side || ops::compare_values(*key, *side) * tighter > 0) side = *key;
  }
  // A bound on the window's start, or on its end (`shift`: the window's size).
  void time_bound(const std::string& op, const Value& v, int64_t shift) {
    if (v.kind() != Kind::kInteger && v.kind() != Kind::kBigint) return;
    const int64_t t = v.as_int64();
    if (t == INT64_MIN || t == INT64_MAX || t - shift == INT64_MIN) return;
    const int64_t at = t - shift;
    TimeBounds& b = bounds_.starts;
    if (op == "=" || op == ">=") b.from = std::max(b.from, at);
    if (op == ">") b.from = std::max(b.from, at + 1);
    if (op == "=" || op == "<=") b.to = std::min(b.to, at);
    if (op == "<") b.to = std::min(b.to, at - 1);
  }

  int key_;
  const SqlType* key_type_;
  int start_, end_;
  std::optional<int64_t> size_;
  std::vector<std::vector<Value>> keys_;
  PullBounds bounds_;
};

int pseudo_column(const BoundQuery& q, const char* name) {
  for (size_t i = 0; i < q.scope.columns.size(); ++i)
    if (q.scope.columns[i].pseudo && q.scope.columns[i].name == name) return static_cast<int>(i);
  return -1;
}

}  // namespace

PullBounds pull_bounds(const BoundQuery& query, const std::vector<int>& key_columns, bool windowed,
                       std::optional<int64_t> window_size_ms) {
  // Key bounds on a single key column only: a lookup of a composite key needs every column.
  const int key = key_columns.size() == 1 ? key_columns.front() : -1;
  const SqlType* key_type =
      key >= 0 ? query.scope.columns[static_cast<size_t>(key)].type.get() : nullptr;
  Bounder bounder(key, key_type, windowed ? pseudo_column(query, "WINDOWSTART") : -1,
                  windowed ? pseudo_column(query, "WINDOWEND") : -1, window_size_ms);
  if (query.where) {
    std::vector<const BoundExpr*> parts;
    conjuncts(*query.where, parts);
    for (const BoundExpr* part : parts) bounder.add(*part);
  }
  return bounder.bounds();
}

std::optional<std::vector<StoreRange>> store_ranges(const KeyBounds& bounds,
                                                    const std::string& key_format,
                                                    const SqlType& key_type) {
  if (key_format != "KAFKA") return std::nullopt;
  std::vector<StoreRange> ranges;
  if (key_type.base() == SqlBaseType::kString) {
    // UTF-8's bytes sort as its code points, and no UTF-8 text holds the byte 0xFF.
    Value low, high;
    low.set_string(bounds.lower ? bounds.lower->text() : "");
    high.set_string(bounds.upper ? bounds.upper->text() : "\xff");
    if (low.text() <= high.text()) ranges.push_back({low, high});
    return ranges;
  }
  const bool integer = key_type.base() == SqlBaseType::kInteger;
  if (!integer && key_type.base() != SqlBaseType::kBigint) return std::nullopt;
  const int64_t low = bounds.lower ? bounds.lower->as_int64() : integer ? INT32_MIN : INT64_MIN;
  const int64_t high = bounds.upper ? bounds.upper->as_int64() : integer ? INT32_MAX : INT64_MAX;
  auto value = [integer](int64_t v) {
    Value out;
    if (integer)
      out.set_integer(static_cast<int32_t>(v));
    else
      out.set_bigint(v);
    return out;
  };
  // Big-endian two's complement: the negative values' bytes sort after the others', each part
  // in order.
  if (low < 0 && low <= std::min<int64_t>(high, -1))
    ranges.push_back({value(low), value(std::min<int64_t>(high, -1))});
  if (high >= 0 && std::max<int64_t>(low, 0) <= high)
    ranges.push_back({value(std::max<int64_t>(low, 0)), value(high)});
  return ranges;
}

}  // namespace oxbow::sql
