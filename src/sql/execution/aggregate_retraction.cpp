// Taking a row back out of an aggregate (ksqlDB's undo), for aggregations over tables: a table's
// row that changes leaves its old group (its old values retracted) before it joins its new one.
// Only the functions ksqlDB can undo: COUNT, SUM, AVG, COLLECT_LIST, HISTOGRAM.
#include "sql/execution/aggregates.h"
#include "sql/execution/operations.h"

namespace oxbow::sql {

namespace {

using Kind = Value::Kind;

void subtract_from(Value& sum, const Value& x) {
  switch (sum.kind()) {
    case Kind::kInteger:
      sum.set_integer(static_cast<int32_t>(static_cast<uint32_t>(sum.integer()) -
                                           static_cast<uint32_t>(x.integer())));
      break;
    case Kind::kBigint:
      sum.set_bigint(static_cast<int64_t>(static_cast<uint64_t>(sum.bigint()) -
                                          static_cast<uint64_t>(x.as_int64())));
      break;
    case Kind::kDecimal: {
      __int128 b = x.kind() == Kind::kDecimal ? x.unscaled() : x.as_int64();
      for (int sb = x.kind() == Kind::kDecimal ? x.scale() : 0; sb < sum.scale(); ++sb) b *= 10;
      sum.set_decimal(sum.unscaled() - b, sum.scale());
      break;
    }
    default:
      sum.set_double(sum.as_double() - x.as_double());
      break;
  }
}

// The list or map without `x` (a list's first occurrence; a histogram's count of it less one,
// the entry gone at zero).
void remove_from(Value& s, const Value& x, bool histogram) {
  if (s.is_null()) return;
  auto items = std::make_shared<std::vector<Value>>(s.items());
  if (histogram) {
    for (size_t i = 0; i + 1 < items->size(); i += 2) {
      if ((*items)[i].text() != x.text()) continue;
      int64_t n = (*items)[i + 1].bigint() - 1;
      if (n > 0)
        (*items)[i + 1].set_bigint(n);
      else
        items->erase(items->begin() + static_cast<std::ptrdiff_t>(i),
                     items->begin() + static_cast<std::ptrdiff_t>(i) + 2);
      break;
    }
  } else {
    for (auto it = items->begin(); it != items->end(); ++it)
      if (ops::compare_values(*it, x) == 0) {
        items->erase(it);
        break;
      }
  }
  s.set_items(s.kind(), std::move(items));
}

}  // namespace

bool can_retract(const std::string& function) {
  for (const char* f : {"COUNT", "SUM", "AVG", "COLLECT_LIST", "HISTOGRAM"})
    if (function == f) return true;
  return false;
}

void retract(const AggregateCall& call, const Row& args, Row& state) {
  Value& s = state[static_cast<size_t>(call.state)];
  const std::string& f = call.function;
  if (f == "COUNT") {
    if (call.args.empty() || !args[static_cast<size_t>(call.first_arg)].is_null())
      s.set_bigint(s.bigint() - 1);
    return;
  }
  const Value& x = args[static_cast<size_t>(call.first_arg)];
  if (x.is_null()) return;
  if (f == "SUM") return subtract_from(s, x);
  if (f == "AVG") {
    subtract_from(s, x);
    Value& n = state[static_cast<size_t>(call.state) + 1];
    return n.set_bigint(n.bigint() - 1);
  }
  remove_from(s, x, f == "HISTOGRAM");
}

}  // namespace oxbow::sql
