#include "sql/execution/aggregates.h"

#include <algorithm>
#include <cmath>

#include "sql/binder/sql_error.h"
#include "sql/execution/operations.h"

namespace oxbow::sql {

namespace {

using Kind = Value::Kind;

// ksql.functions.collect_list.limit / collect_set.limit: values past it are dropped.
constexpr size_t kCollectLimit = 1000;

void add_into(Value& sum, const Value& x) {
  switch (sum.kind()) {
    case Kind::kInteger:
      sum.set_integer(static_cast<int32_t>(static_cast<uint32_t>(sum.integer()) +
                                           static_cast<uint32_t>(x.integer())));
      break;
    case Kind::kBigint:
      sum.set_bigint(static_cast<int64_t>(static_cast<uint64_t>(sum.bigint()) +
                                          static_cast<uint64_t>(x.as_int64())));
      break;
    case Kind::kDecimal: {
      __int128 a = sum.unscaled(), b = x.kind() == Kind::kDecimal ? x.unscaled() : x.as_int64();
      int sa = sum.scale(), sb = x.kind() == Kind::kDecimal ? x.scale() : 0;
      for (; sb < sa; ++sb) b *= 10;
      sum.set_decimal(a + b, sa);
      break;
    }
    default:
      sum.set_double(sum.as_double() + x.as_double());
      break;
  }
}

void zero_of(const SqlType& type, Value& v) {
  switch (type.base()) {
    case SqlBaseType::kInteger:
      v.set_integer(0);
      break;
    case SqlBaseType::kBigint:
      v.set_bigint(0);
      break;
    case SqlBaseType::kDecimal:
      v.set_decimal(0, type.scale());
      break;
    default:
      v.set_double(0);
      break;
  }
}

// AVG sums in its argument's Java type, as ksqlDB's does (an INT sum wraps at 32 bits); what
// else widens to DOUBLE sums as one.
SqlTypePtr average_sum_type(const AggregateCall& call) {
  const SqlTypePtr& arg = call.args.at(0);
  if (arg && (arg->base() == SqlBaseType::kInteger || arg->base() == SqlBaseType::kBigint))
    return arg;
  return SqlType::double_type();
}

// The columns of a call's state: most keep their result; AVG a sum and a count; the moment-based
// ones their sums and count; COUNT_DISTINCT the distinct values seen.
std::vector<SqlTypePtr> state_types(const AggregateCall& call) {
  const std::string& f = call.function;
  auto dbl = SqlType::double_type(), bigint = SqlType::bigint();
  if (f == "AVG") return {average_sum_type(call), bigint};
  if (f == "STDDEV_SAMP" || f == "STDDEV_SAMPLE") return {bigint, dbl, dbl};  // n, sum, M2
  if (f == "CORRELATION") return {dbl, dbl, dbl, dbl, dbl, bigint};  // x, y, x², y², xy sums, n
  if (f == "COUNT_DISTINCT") return {SqlType::array(call.args.at(0))};
  if (f == "TOPK" || f == "TOPKDISTINCT") return {call.result, SqlType::integer()};  // values, k
  return {call.result};
}

// ksql.functions.histogram's limit: values past it are not counted.
constexpr size_t kHistogramLimit = 1000;

bool contains(const std::vector<Value>& items, const Value& x) {
  for (const auto& e : items)
    if (ops::compare_values(e, x) == 0) return true;
  return false;
}

// What TOPK orders by: the value, or for TOPK with other columns its struct's sort_col.
const Value& sort_key(const Value& v) {
  return v.kind() == Kind::kStruct ? v.items().front() : v;
}

// TOPK and TOPKDISTINCT: `x` into `top` (greatest first), kept to `k` values. A value equal to
// some already there goes after them, as ksqlDB's stable sort leaves it.
void add_to_top(std::vector<Value>& top, const Value& x, size_t k, bool distinct) {
  if (distinct && contains(top, x)) return;
  auto at = std::find_if(top.begin(), top.end(), [&](const Value& e) {
    return ops::compare_values(sort_key(x), sort_key(e)) > 0;
  });
  if (static_cast<size_t>(at - top.begin()) >= k) return;
  top.insert(at, x);
  if (top.size() > k) top.resize(k);
}

// TOPK with other columns: the row's sort column and the others (NULLs kept), as one STRUCT.
Value top_k_row(const AggregateCall& call, const Row& args) {
  auto fields = std::make_shared<std::vector<Value>>();
  for (size_t i = 0; i + 1 < call.args.size(); ++i)
    fields->push_back(args[static_cast<size_t>(call.first_arg) + i]);
  Value row;
  row.set_items(Kind::kStruct, std::move(fields));
  return row;
}

void count_into_histogram(std::vector<Value>& map, const Value& key, int64_t n) {
  for (size_t i = 0; i + 1 < map.size(); i += 2)
    if (map[i].text() == key.text()) return map[i + 1].set_bigint(map[i + 1].bigint() + n);
  if (map.size() / 2 >= kHistogramLimit) return;
  map.push_back(key);
  map.emplace_back().set_bigint(n);
}

Value* cell(Row& state, const AggregateCall& call, size_t k) {
  return &state[static_cast<size_t>(call.state) + k];
}

// Youngs and Cramer's update of the sample variance's state (n, sum, M2) by x.
void add_moment(Row& state, const AggregateCall& call, double x) {
  Value *n = cell(state, call, 0), *sum = cell(state, call, 1), *m2 = cell(state, call, 2);
  int64_t count = n->bigint() + 1;
  double total = sum->dbl() + x;
  if (count > 1) {
    double delta = static_cast<double>(count) * x - total;
    m2->set_double(m2->dbl() + delta * delta / (static_cast<double>(count) * (count - 1)));
  }
  n->set_bigint(count);
  sum->set_double(total);
}

void merge_moments(Row& state, const Row& other, const AggregateCall& call) {
  size_t at = static_cast<size_t>(call.state);
  int64_t na = state[at].bigint(), nb = other[at].bigint();
  double sa = state[at + 1].dbl(), sb = other[at + 1].dbl();
  double m2 = state[at + 2].dbl() + other[at + 2].dbl();
  if (na > 0 && nb > 0) {
    double inner = sa / static_cast<double>(na) - sb / static_cast<double>(nb);
    m2 += static_cast<double>(na) * static_cast<double>(nb) * inner * inner /
          static_cast<double>(na + nb);
  }
  state[at].set_bigint(na + nb);
  state[at + 1].set_double(sa + sb);
  state[at + 2].set_double(m2);
}

// The state of the functions added by ksqlDB after the first ones, on one row's arguments.
void accumulate_more(const AggregateCall& call, const Row& args, Row& state) {
  const std::string& f = call.function;
  const Value& x = args[static_cast<size_t>(call.first_arg)];
  Value& s = *cell(state, call, 0);
  if (f == "CORRELATION") {
    const Value& y = args[static_cast<size_t>(call.first_arg) + 1];
    if (x.is_null() || y.is_null()) return;
    double a = x.as_double(), b = y.as_double();
    const double add[] = {a, b, a * a, b * b, a * b};
    for (size_t k = 0; k < 5; ++k)
      cell(state, call, k)->set_double(cell(state, call, k)->dbl() + add[k]);
    Value* n = cell(state, call, 5);
    return n->set_bigint(n->bigint() + 1);
  }
  if (x.is_null()) return;
  if (f == "STDDEV_SAMP" || f == "STDDEV_SAMPLE") return add_moment(state, call, x.as_double());
  auto items = std::make_shared<std::vector<Value>>(s.is_null() ? std::vector<Value>() : s.items());
  Kind kind = Kind::kArray;
  if (f == "COUNT_DISTINCT") {
    if (contains(*items, x)) return;
    items->push_back(x);
  } else if (f == "HISTOGRAM") {
    count_into_histogram(*items, x, 1);
    kind = Kind::kMap;
  } else {  // TOPK, TOPKDISTINCT: k is the last argument, a constant
    const Value& k = args[static_cast<size_t>(call.first_arg) + call.args.size() - 1];
    int32_t size = static_cast<int32_t>(std::max<int64_t>(k.is_null() ? 0 : k.as_int64(), 0));
    cell(state, call, 1)->set_integer(size);  // for session merges, which see no arguments
    add_to_top(*items, call.args.size() > 2 ? top_k_row(call, args) : x, static_cast<size_t>(size),
               f == "TOPKDISTINCT");
  }
  s.set_items(kind, std::move(items));
}

// Two sessions' states of those functions merged into `state`.
bool merge_more(const AggregateCall& call, const Row& other, Row& state) {
  const std::string& f = call.function;
  size_t at = static_cast<size_t>(call.state);
  if (f == "STDDEV_SAMP" || f == "STDDEV_SAMPLE") return merge_moments(state, other, call), true;
  if (f == "CORRELATION") {
    for (size_t k = 0; k < 5; ++k)
      state[at + k].set_double(state[at + k].dbl() + other[at + k].dbl());
    state[at + 5].set_bigint(state[at + 5].bigint() + other[at + 5].bigint());
    return true;
  }
  if (f != "COUNT_DISTINCT" && f != "HISTOGRAM" && f != "TOPK" && f != "TOPKDISTINCT") return false;
  Value& s = state[at];
  const Value& o = other[at];
  if (o.is_null()) return true;
  if (s.is_null()) return s = o, true;
  auto items = std::make_shared<std::vector<Value>>(s.items());
  const auto& more = o.items();
  if (f == "HISTOGRAM") {
    for (size_t i = 0; i + 1 < more.size(); i += 2)
      count_into_histogram(*items, more[i], more[i + 1].bigint());
    s.set_items(Kind::kMap, std::move(items));
    return true;
  }
  size_t k = 0;
  if (f != "COUNT_DISTINCT") {
    const Value &ka = state[at + 1], &kb = other[at + 1];
    k = static_cast<size_t>(
        std::max(ka.is_null() ? 0 : ka.integer(), kb.is_null() ? 0 : kb.integer()));
    state[at + 1].set_integer(static_cast<int32_t>(k));
  }
  for (const auto& e : more) {
    if (f == "COUNT_DISTINCT") {
      if (!contains(*items, e)) items->push_back(e);
    } else {
      add_to_top(*items, e, k, f == "TOPKDISTINCT");
    }
  }
  s.set_items(Kind::kArray, std::move(items));
  return true;
}

// The results of those functions; false for the others.
bool result_more(const AggregateCall& call, const Row& state, Value& out) {
  const std::string& f = call.function;
  size_t at = static_cast<size_t>(call.state);
  if (f == "COUNT_DISTINCT")
    return out.set_bigint(state[at].is_null() ? 0 : static_cast<int64_t>(state[at].items().size())),
           true;
  if (f == "STDDEV_SAMP" || f == "STDDEV_SAMPLE") {
    int64_t n = state[at].bigint();
    double variance = n < 2 ? 0.0 : state[at + 2].dbl() / static_cast<double>(n - 1);
    // ksqlDB's STDDEV_SAMP gives the variance itself; STDDEV_SAMPLE its square root.
    return out.set_double(f == "STDDEV_SAMP" ? variance : std::sqrt(variance)), true;
  }
  if (f == "CORRELATION") {
    double sx = state[at].dbl(), sy = state[at + 1].dbl(), sxx = state[at + 2].dbl(),
           syy = state[at + 3].dbl(), sxy = state[at + 4].dbl();
    double n = static_cast<double>(state[at + 5].bigint());
    double numerator = n * sxy - sx * sy;
    double denominator = std::sqrt((n * sxx - sx * sx) * (n * syy - sy * sy));
    double r = numerator / denominator;
    return out.set_double(std::isnan(r) ? std::nan("") : r), true;  // Java has one NaN
  }
  return false;
}

}  // namespace

std::vector<Column> layout_aggregates(std::vector<AggregateCall>& calls) {
  static const char* kSupported[] = {"COUNT",
                                     "SUM",
                                     "AVG",
                                     "MIN",
                                     "MAX",
                                     "LATEST_BY_OFFSET",
                                     "EARLIEST_BY_OFFSET",
                                     "COLLECT_LIST",
                                     "COLLECT_SET",
                                     "COUNT_DISTINCT",
                                     "TOPK",
                                     "TOPKDISTINCT",
                                     "HISTOGRAM",
                                     "STDDEV_SAMP",
                                     "STDDEV_SAMPLE",
                                     "CORRELATION"};
  std::vector<Column> state;
  int arg = 0;
  for (auto& call : calls) {
    bool known = false;
    for (const char* f : kSupported) known = known || call.function == f;
    if (!known)
      throw SqlError("Aggregate " + call.function + " is not supported by the engine yet.");
    call.first_arg = arg;
    arg += static_cast<int>(call.args.size());
    call.state = static_cast<int>(state.size());
    for (const SqlTypePtr& type : state_types(call))
      state.push_back(
          {"KSQL_AGG_VARIABLE_" + std::to_string(state.size()), type, ColumnNamespace::kValue, ""});
  }
  return state;
}

void init_aggregate(const AggregateCall& call, Row& state) {
  Value& s = state[static_cast<size_t>(call.state)];
  const std::string& f = call.function;
  if (f == "COUNT") return s.set_bigint(0);
  if (f == "SUM") return zero_of(*call.result, s);
  if (f == "AVG") {
    zero_of(*average_sum_type(call), s);
    state[static_cast<size_t>(call.state) + 1].set_bigint(0);
    return;
  }
  if (f == "COLLECT_LIST" || f == "COLLECT_SET" || f == "COUNT_DISTINCT" || f == "TOPK" ||
      f == "TOPKDISTINCT")
    return s.set_items(Kind::kArray, std::make_shared<std::vector<Value>>());
  if (f == "HISTOGRAM") return s.set_items(Kind::kMap, std::make_shared<std::vector<Value>>());
  if (f == "STDDEV_SAMP" || f == "STDDEV_SAMPLE" || f == "CORRELATION") {
    auto types = state_types(call);
    for (size_t k = 0; k < types.size(); ++k)
      zero_of(*types[k], state[static_cast<size_t>(call.state) + k]);
    return;
  }
  s.set_null();
}

void accumulate(const AggregateCall& call, const Row& args, Row& state) {
  Value& s = state[static_cast<size_t>(call.state)];
  const std::string& f = call.function;
  if (f == "COUNT") {
    if (call.args.empty() || !args[static_cast<size_t>(call.first_arg)].is_null())
      s.set_bigint(s.bigint() + 1);
    return;
  }
  static const char* kMore[] = {"COUNT_DISTINCT", "TOPK",          "TOPKDISTINCT", "HISTOGRAM",
                                "STDDEV_SAMP",    "STDDEV_SAMPLE", "CORRELATION"};
  for (const char* more : kMore)
    if (f == more) return accumulate_more(call, args, state);
  const Value& x = args[static_cast<size_t>(call.first_arg)];
  if (x.is_null()) return;
  if (f == "SUM") return add_into(s, x);
  if (f == "AVG") {
    add_into(s, x);
    Value& n = state[static_cast<size_t>(call.state) + 1];
    n.set_bigint(n.bigint() + 1);
    return;
  }
  if (f == "MIN" || f == "MAX") {
    if (s.is_null()) return void(s = x);
    int c = ops::compare_values(x, s);
    if ((f == "MIN" && c < 0) || (f == "MAX" && c > 0)) s = x;
    return;
  }
  if (f == "LATEST_BY_OFFSET") return void(s = x);
  if (f == "EARLIEST_BY_OFFSET") {
    if (s.is_null()) s = x;
    return;
  }
  // COLLECT_LIST / COLLECT_SET: a copy, since the state row's array may be shared.
  const auto& items = s.items();
  if (items.size() >= kCollectLimit) return;
  if (f == "COLLECT_SET")
    for (const auto& e : items)
      if (ops::compare_values(e, x) == 0) return;
  auto grown = std::make_shared<std::vector<Value>>(items);
  grown->push_back(x);
  s.set_items(Kind::kArray, std::move(grown));
}

void merge_aggregate(const AggregateCall& call, const Row& other, Row& state) {
  size_t at = static_cast<size_t>(call.state);
  Value& s = state[at];
  const Value& o = other[at];
  const std::string& f = call.function;
  if (merge_more(call, other, state)) return;
  if (o.is_null()) return;
  if (s.is_null()) return void(s = o);
  if (f == "COUNT") return s.set_bigint(s.bigint() + o.bigint());
  if (f == "SUM") return add_into(s, o);
  if (f == "AVG") {
    add_into(s, o);
    state[at + 1].set_bigint(state[at + 1].bigint() + other[at + 1].bigint());
    return;
  }
  if (f == "MIN" || f == "MAX") {
    int c = ops::compare_values(o, s);
    if ((f == "MIN" && c < 0) || (f == "MAX" && c > 0)) s = o;
    return;
  }
  if (f == "COLLECT_LIST" || f == "COLLECT_SET") {
    auto merged = std::make_shared<std::vector<Value>>(s.items());
    for (const auto& e : o.items()) {
      if (merged->size() >= kCollectLimit) break;
      bool present = false;
      if (f == "COLLECT_SET")
        for (const auto& m : *merged) present = present || ops::compare_values(m, e) == 0;
      if (!present) merged->push_back(e);
    }
    s.set_items(Kind::kArray, std::move(merged));
  }
  // LATEST_BY_OFFSET / EARLIEST_BY_OFFSET keep the session's own value.
}

void aggregate_result(const AggregateCall& call, const Row& state, Value& out) {
  if (result_more(call, state, out)) return;
  const Value& s = state[static_cast<size_t>(call.state)];
  if (call.function == "AVG") {
    // ksqlDB's AVG of no values (none yet, all NULL, or all retracted) is 0.0, not NULL.
    int64_t n = state[static_cast<size_t>(call.state) + 1].bigint();
    return out.set_double(n == 0 ? 0.0 : s.as_double() / static_cast<double>(n));
  }
  out = s;
}

}  // namespace oxbow::sql
