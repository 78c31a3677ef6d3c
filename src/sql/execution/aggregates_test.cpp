#include "sql/execution/aggregates.h"

#include <gtest/gtest.h>

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
