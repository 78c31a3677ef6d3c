#include "sql/execution/aggregates.h"

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

}  // namespace

std::vector<Column> layout_aggregates(std::vector<AggregateCall>& calls) {
  static const char* kSupported[] = {
      "COUNT",        "SUM",        "AVG", "MIN", "MAX", "LATEST_BY_OFFSET", "EARLIEST_BY_OFFSET",
      "COLLECT_LIST", "COLLECT_SET"};
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
    auto name = [&] { return "KSQL_AGG_VARIABLE_" + std::to_string(state.size()); };
    if (call.function == "AVG") {
      state.push_back({name(), SqlType::double_type(), ColumnNamespace::kValue, ""});
      state.push_back({name(), SqlType::bigint(), ColumnNamespace::kValue, ""});
    } else {
      state.push_back({name(), call.result, ColumnNamespace::kValue, ""});
    }
  }
  return state;
}

void init_aggregate(const AggregateCall& call, Row& state) {
  Value& s = state[static_cast<size_t>(call.state)];
  const std::string& f = call.function;
  if (f == "COUNT") return s.set_bigint(0);
  if (f == "SUM") return zero_of(*call.result, s);
  if (f == "AVG") {
    s.set_double(0);
    state[static_cast<size_t>(call.state) + 1].set_bigint(0);
    return;
  }
  if (f == "COLLECT_LIST" || f == "COLLECT_SET")
    return s.set_items(Kind::kArray, std::make_shared<std::vector<Value>>());
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
  const Value& x = args[static_cast<size_t>(call.first_arg)];
  if (x.is_null()) return;
  if (f == "SUM") return add_into(s, x);
  if (f == "AVG") {
    s.set_double(s.dbl() + x.as_double());
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
  if (o.is_null()) return;
  if (s.is_null()) return void(s = o);
  if (f == "COUNT") return s.set_bigint(s.bigint() + o.bigint());
  if (f == "SUM") return add_into(s, o);
  if (f == "AVG") {
    s.set_double(s.dbl() + o.dbl());
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
  const Value& s = state[static_cast<size_t>(call.state)];
  if (call.function == "AVG") {
    int64_t n = state[static_cast<size_t>(call.state) + 1].bigint();
    if (n == 0) return out.set_null();
    return out.set_double(s.dbl() / static_cast<double>(n));
  }
  out = s;
}

}  // namespace oxbow::sql
