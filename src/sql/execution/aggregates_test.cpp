#include "sql/execution/aggregates.h"

#include <gtest/gtest.h>

#include "sql/binder/function_registry.h"
#include "sql/binder/sql_error.h"

namespace oxbow::sql {
namespace {

Value v_int(int32_t n) {
  Value v;
  v.set_integer(n);
  return v;
}
Value v_double(double d) {
  Value v;
  v.set_double(d);
  return v;
}
Value v_string(const std::string& s) {
  Value v;
  v.set_string(s);
  return v;
}
Value v_bigint(int64_t n) {
  Value v;
  v.set_bigint(n);
  return v;
}

// One aggregate call over rows of arguments, and over the same rows split in two sessions that
// are then merged: both results' debug text (they must agree).
class Aggregation {
 public:
  Aggregation(std::string function, SqlTypePtr result, std::vector<SqlTypePtr> args) {
    call_.function = std::move(function);
    call_.result = std::move(result);
    call_.args = std::move(args);
    std::vector<AggregateCall> calls{call_};
    width_ = layout_aggregates(calls).size();
    call_ = calls[0];
  }
  // The rows accumulated, then `retracted` taken back out (an aggregation over a table).
  std::string run_unmerged(const std::vector<Row>& rows) { return run_retracting(rows, {}); }
  std::string run_retracting(const std::vector<Row>& rows, const std::vector<Row>& retracted) {
    Row state = fresh();
    for (const Row& r : rows) accumulate(call_, r, state);
    for (const Row& r : retracted) retract(call_, r, state);
    Value out;
    aggregate_result(call_, state, out);
    return out.debug_string();
  }
  std::string run(const std::vector<Row>& rows) {
    Row whole = fresh(), a = fresh(), b = fresh();
    for (size_t i = 0; i < rows.size(); ++i) {
      accumulate(call_, rows[i], whole);
      accumulate(call_, rows[i], i % 2 ? b : a);
    }
    merge_aggregate(call_, b, a);
    Value one, merged;
    aggregate_result(call_, whole, one);
    aggregate_result(call_, a, merged);
    return one.debug_string() + (merged.debug_string() == one.debug_string()
                                     ? ""
                                     : " (merged: " + merged.debug_string() + ")");
  }

 private:
  Row fresh() {
    Row state(width_);
    init_aggregate(call_, state);
    return state;
  }
  AggregateCall call_;
  size_t width_ = 0;
};

TEST(Aggregates, CountDistinctSkipsNulls) {
  Aggregation a("COUNT_DISTINCT", SqlType::bigint(), {SqlType::string()});
  EXPECT_EQ(a.run({{v_string("a")}, {v_string("b")}, {Value()}, {v_string("a")}}), "2");
  EXPECT_EQ(a.run({}), "0");
}

// topk-group-by.json and topk-distinct.json: greatest first, k of them, NULLs skipped.
TEST(Aggregates, TopkAndTopkDistinct) {
  Aggregation top("TOPK", SqlType::array(SqlType::integer()),
                  {SqlType::integer(), SqlType::integer()});
  std::vector<Row> rows = {{v_int(5), v_int(3)}, {v_int(9), v_int(3)}, {Value(), v_int(3)},
                           {v_int(9), v_int(3)}, {v_int(1), v_int(3)}, {v_int(7), v_int(3)}};
  EXPECT_EQ(top.run(rows), "[9, 9, 7]");
  Aggregation distinct("TOPKDISTINCT", SqlType::array(SqlType::integer()),
                       {SqlType::integer(), SqlType::integer()});
  EXPECT_EQ(distinct.run(rows), "[9, 7, 5]");
}

// topk-group-by.json's "topk integer struct" and "topk string struct": with other columns each
// kept row is a STRUCT of the sort column and theirs; a NULL sort column is skipped, a NULL
// other column kept; a row tying with kept ones goes after them.
TEST(Aggregates, TopkWithOtherColumns) {
  auto row_type = SqlType::structure(
      {{"sort_col", SqlType::integer()}, {"col0", SqlType::string()}, {"col1", SqlType::bigint()}});
  Aggregation top("TOPK", SqlType::array(row_type),
                  {SqlType::integer(), SqlType::string(), SqlType::bigint(), SqlType::integer()});
  auto row = [](Value sort, Value name, int64_t n) {
    return Row{sort, name, v_bigint(n), v_int(3)};
  };
  // Unmerged: which of two tying rows comes first after a session merge depends on the sessions.
  EXPECT_EQ(
      top.run_unmerged({row(v_int(0), v_string("zero"), 1), row(v_int(100), v_string("one"), 2),
                        row(v_int(99), v_string("two"), 3), row(Value(), v_string("three"), 4),
                        row(v_int(100), Value(), 5)}),
      "[Struct{100, 'one', 2}, Struct{100, null, 5}, Struct{99, 'two', 3}]");
  // A full list and a row equal to its last: the one kept stays.
  EXPECT_EQ(top.run_unmerged({row(v_int(3), v_string("a"), 1), row(v_int(2), v_string("b"), 2),
                              row(v_int(1), v_string("c"), 3), row(v_int(1), v_string("d"), 4)}),
            "[Struct{3, 'a', 1}, Struct{2, 'b', 2}, Struct{1, 'c', 3}]");
  // Merged sessions keep the greatest of both.
  EXPECT_EQ(top.run({row(v_int(5), v_string("a"), 1), row(v_int(9), v_string("b"), 2),
                     row(v_int(7), v_string("c"), 3), row(v_int(1), v_string("d"), 4)}),
            "[Struct{9, 'b', 2}, Struct{7, 'c', 3}, Struct{5, 'a', 1}]");
}

// TOPK as ksqlDB 0.29's DESCRIBE FUNCTION lists it (TopkKudaf's four factories), typed by its
// arguments; TOPKDISTINCT takes no other columns (TopkDistinctKudaf has none).
TEST(Aggregates, TopkSignaturesAndTypes) {
  const FunctionRegistry& registry = FunctionRegistry::builtins();
  const FunctionInfo& info = registry.describe("topk");
  std::vector<std::string> listed;
  for (const auto& v : info.variants) listed.push_back(info.signature_text(v) + " " + v.returns);
  EXPECT_EQ(listed, (std::vector<std::string>{"TOPK(val1 INT, val2 ANY[], k INT) ARRAY<S>",
                                              "TOPK(val1 BIGINT, val2 ANY[], k INT) ARRAY<S>",
                                              "TOPK(val1 DOUBLE, val2 ANY[], k INT) ARRAY<S>",
                                              "TOPK(val1 VARCHAR, val2 ANY[], k INT) ARRAY<S>"}));
  auto type = [&](std::vector<SqlTypePtr> args) {
    return registry.resolve("TOPK", args).type->to_string();
  };
  EXPECT_EQ(type({SqlType::integer(), SqlType::integer()}), "ARRAY<INTEGER>");
  EXPECT_EQ(
      type({SqlType::string(), SqlType::integer(), SqlType::double_type(), SqlType::integer()}),
      "ARRAY<STRUCT<`sort_col` STRING, `col0` INTEGER, `col1` DOUBLE>>");
  // k is the last argument whatever comes before it.
  auto resolved =
      registry.resolve("TOPK", {SqlType::bigint(), SqlType::string(), SqlType::integer()});
  EXPECT_EQ(resolved.function->first_literal_arg(*resolved.variant, 3), 2u);
  resolved = registry.resolve("TOPK", {SqlType::bigint(), SqlType::integer()});
  EXPECT_EQ(resolved.function->first_literal_arg(*resolved.variant, 2), 1u);
  EXPECT_THROW(registry.resolve("TOPK", {SqlType::integer()}), SqlError);
  EXPECT_THROW(
      registry.resolve("TOPKDISTINCT", {SqlType::integer(), SqlType::string(), SqlType::integer()}),
      SqlError);
}

// AverageUdaf: the sum kept in the argument's type (an INT sum wraps as Java's int does), and
// the mean of no values 0.0, whether none came, all were NULL or all were retracted.
TEST(Aggregates, AverageAsKsqlDbComputesIt) {
  Aggregation avg("AVG", SqlType::double_type(), {SqlType::integer()});
  EXPECT_EQ(avg.run({{v_int(1)}, {v_int(2)}, {Value()}}), "1.5");
  EXPECT_EQ(avg.run({}), "0");
  EXPECT_EQ(avg.run({{Value()}}), "0");
  EXPECT_EQ(avg.run({{v_int(2147483647)}, {v_int(1)}}), "-1073741824");
  EXPECT_EQ(avg.run_retracting({{v_int(4)}, {v_int(6)}}, {{v_int(4)}}), "6");
  EXPECT_EQ(avg.run_retracting({{v_int(4)}, {v_int(6)}}, {{v_int(4)}, {v_int(6)}}), "0");
  Aggregation longs("AVG", SqlType::double_type(), {SqlType::bigint()});
  // average-udaf.json "average long": -1 and Long.MAX_VALUE sum to MAX_VALUE - 1 in a long.
  EXPECT_EQ(longs.run({{v_bigint(-1)}, {v_bigint(9223372036854775807)}, {v_bigint(1)}}),
            "3074457345618258432");
}

// histogram.json: a count for each distinct string, NULLs skipped.
TEST(Aggregates, Histogram) {
  Aggregation h("HISTOGRAM", SqlType::map(SqlType::string(), SqlType::bigint()),
                {SqlType::string()});
  EXPECT_EQ(h.run({{v_string("a")}, {v_string("b")}, {v_string("a")}, {Value()}}),
            "{'a'=2, 'b'=1}");
}

// standarddeviation.json "stddev_sample int": 0, 10, 50, 10, 7, 3, NULL, 6 for one key gives
// at the end 4.193248541803041 (the per-key results there interleave two keys; these are key 0's
// values 0, 10 → 7.0710678118654755).
TEST(Aggregates, StandardDeviation) {
  Aggregation sample("STDDEV_SAMPLE", SqlType::double_type(), {SqlType::integer()});
  EXPECT_EQ(sample.run({{v_int(0)}, {v_int(10)}}), "7.0710678118654755");
  EXPECT_EQ(sample.run({{v_int(5)}}), "0");
  EXPECT_EQ(sample.run({{v_int(1)}, {v_int(2)}, {Value()}, {v_int(3)}, {v_int(4)}}),
            "1.2909944487358056");
  // STDDEV_SAMP: ksqlDB's gives the sample variance.
  Aggregation samp("STDDEV_SAMP", SqlType::double_type(), {SqlType::integer()});
  EXPECT_EQ(samp.run({{v_int(1)}, {v_int(2)}, {v_int(3)}, {v_int(4)}}), "1.6666666666666667");
}

// correlation-udaf.json: Pearson's r; rows with a NULL skipped; NaN for fewer than two.
TEST(Aggregates, Correlation) {
  Aggregation c("CORRELATION", SqlType::double_type(),
                {SqlType::double_type(), SqlType::double_type()});
  EXPECT_EQ(c.run({{v_double(1), v_double(2)},
                   {v_double(2), v_double(4)},
                   {v_double(3), Value()},
                   {v_double(3), v_double(6)}}),
            "1");
  EXPECT_EQ(c.run({{v_double(1), v_double(3)}, {v_double(2), v_double(1)}}), "-1");
  EXPECT_EQ(c.run({{v_double(1), v_double(2)}}), "nan");
}

}  // namespace
}  // namespace oxbow::sql
