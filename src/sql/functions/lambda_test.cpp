// TRANSFORM, FILTER and REDUCE: lambdas bound with their parameters typed from the collection
// and compiled into loops. The row (function_test_util.h): arr [3, 1, null, 2],
// m {'b'=2, 'a'=1}, sarr ['a', 'b', 'a'], n 10, ni NULL.
#include "common/allocation_counter.h"
#include "sql/functions/function_test_util.h"

namespace oxbow::sql {
namespace {

using Lambdas = FunctionTest;

// array_transform.json, transform-map.json, complex-lambda.json.
TEST_F(Lambdas, Transform) {
  EXPECT_EQ(eval("TRANSFORM(arr, x => x * 2)"), "[6, 2, null, 4]");
  EXPECT_EQ(eval("TRANSFORM(sarr, x => UCASE(x))"), "['A', 'B', 'A']");
  EXPECT_EQ(eval("TRANSFORM(m, (k, v) => UCASE(k), (k, v) => v + 1)"), "{'B'=3, 'A'=2}");
  EXPECT_EQ(eval("TRANSFORM(arr, x => x + n)"), "[13, 11, null, 12]");            // an outer column
  EXPECT_EQ(eval("TRANSFORM(sarr, s => CONCAT(s, '!'))"), "['a!', 'b!', 'a!']");  // shadows S
  EXPECT_EQ(eval("TRANSFORM(ARRAY[ARRAY[1, 2], ARRAY[3]], a => TRANSFORM(a, x => x + 1))"),
            "[[2, 3], [4]]");
  EXPECT_EQ(eval("TRANSFORM(CAST(NULL AS ARRAY<INT>), x => x)"), "null");
  EXPECT_EQ(type_of("TRANSFORM(arr, x => CAST(x AS STRING))"), "ARRAY<STRING>");
  EXPECT_EQ(type_of("TRANSFORM(m, (k, v) => v, (k, v) => k)"), "MAP<INTEGER, STRING>");
  // Java's Collectors.toMap refuses a key made twice.
  EXPECT_EQ(eval("TRANSFORM(m, (k, v) => 'x', (k, v) => v)"),
            "ERROR: Duplicate key x (attempted merging values 2 and 1)");
}

// array_filter and filter-map QTT cases.
TEST_F(Lambdas, Filter) {
  EXPECT_EQ(eval("FILTER(arr, x => x > 1)"), "[3, 2]");
  EXPECT_EQ(eval("FILTER(arr, x => x IS NULL)"), "[null]");
  EXPECT_EQ(eval("FILTER(m, (k, v) => v > 1 OR k = 'a')"), "{'b'=2, 'a'=1}");
  EXPECT_EQ(eval("FILTER(m, (k, v) => k LIKE 'b%')"), "{'b'=2}");
  EXPECT_EQ(eval("FILTER(arr, x => CAST(NULL AS BOOLEAN))"),
            "ERROR: FILTER's function returned NULL");
}

// reduce-array and reduce-map QTT cases: a NULL state is NULL, a NULL collection the state.
TEST_F(Lambdas, Reduce) {
  EXPECT_EQ(eval("REDUCE(arr, 0, (s, x) => s + COALESCE(x, 0))"), "6");
  EXPECT_EQ(eval("REDUCE(arr, 0, (s, x) => s + x)"), "null");
  EXPECT_EQ(eval("REDUCE(m, '', (s, k, v) => CONCAT(s, k))"), "'ba'");
  EXPECT_EQ(eval("REDUCE(m, 0, (s, k, v) => s + v)"), "3");
  EXPECT_EQ(eval("REDUCE(arr, ni, (s, x) => s)"), "null");
  EXPECT_EQ(eval("REDUCE(CAST(NULL AS ARRAY<INT>), 5, (s, x) => s + x)"), "5");
  EXPECT_EQ(eval("REDUCE(sarr, CAST(0 AS BIGINT), (s, x) => s + LEN(x))"), "3");
  EXPECT_EQ(eval("REDUCE(TRANSFORM(arr, x => COALESCE(x, 0)), 1, (s, x) => s * (x + 1))"), "24");
}

TEST_F(Lambdas, Misuse) {
  EXPECT_EQ(eval("TRANSFORM(arr, (x, y) => x)"),
            "REFUSED: Was expecting 1 arguments but found 2, [X, Y]. Check your lambda "
            "statement.");
  EXPECT_EQ(eval("REDUCE(m, 0, (s, x) => s)"),
            "REFUSED: Was expecting 3 arguments but found 2, [S, X]. Check your lambda "
            "statement.");
  EXPECT_EQ(eval("FILTER(arr, x => x + 1)"),
            "REFUSED: Function 'FILTER' does not accept parameters (ARRAY<INTEGER>, INTEGER).");
  EXPECT_EQ(eval("REDUCE(arr, 0, (s, x) => 'a')"),
            "REFUSED: Function 'REDUCE' does not accept parameters (ARRAY<INTEGER>, INTEGER, "
            "STRING).");
  EXPECT_EQ(eval("TRANSFORM(s, x => x)"),
            "REFUSED: Function 'TRANSFORM' does not accept parameters (STRING, LAMBDA).");
  EXPECT_EQ(eval("ABS(x => x)"), "REFUSED: Function 'ABS' does not accept parameters (LAMBDA).");
  EXPECT_EQ(eval("TRANSFORM(arr, x => y)"), "REFUSED: SELECT column 'Y' cannot be resolved.");
  EXPECT_EQ(eval("TRANSFORM(arr)"),
            "REFUSED: Function 'TRANSFORM' does not accept parameters (ARRAY<INTEGER>).");
  EXPECT_EQ(eval("TRANSFORM(arr, x => SUM(x))"),
            "REFUSED: Aggregate functions can not be used inside lambda functions: SUM(X)");
  // The lambda's parameter is out of scope after it.
  EXPECT_EQ(eval("ARRAY_LENGTH(TRANSFORM(arr, q => q)) + q"),
            "REFUSED: SELECT column 'Q' cannot be resolved.");
}

TEST_F(Lambdas, Described) {
  const FunctionInfo& transform = functions_.describe("TRANSFORM");
  EXPECT_EQ(transform.category, "LAMBDA");
  EXPECT_EQ(transform.signature_text(transform.variants[0]),
            "TRANSFORM(array ARRAY<T>, function LAMBDA (T) => U)");
  EXPECT_EQ(transform.variants[0].returns, "ARRAY<U>");
}

// A program's call sites and loops are shared by its copies, so a copy outlives the original.
TEST_F(Lambdas, ProgramCopiesOutliveTheOriginal) {
  parsed_.push_back(parser::parse_expression("TRANSFORM(sarr, x => UCASE(x))"));
  bound_.push_back(ExpressionBinder(scope_, functions_, catalog_, "SELECT").bind(*parsed_.back()));
  auto original = std::make_unique<Program>(Program::compile(*bound_.back(), row_index_));
  Program copy = *original;
  original.reset();
  Frame f = copy.new_frame();
  EXPECT_EQ(copy.evaluate(row_, f).debug_string(), "['A', 'B', 'A']");
}

// A loop allocates its result (the elements' buffer and the shared vector), not per element.
TEST_F(Lambdas, AllocationsDoNotGrowWithTheArray) {
  auto count = [&](size_t size) {
    auto items = std::make_shared<std::vector<Value>>(size);
    for (size_t k = 0; k < size; ++k) (*items)[k].set_integer(static_cast<int32_t>(k));
    row_[10].set_items(Value::Kind::kArray, items);
    parsed_.push_back(parser::parse_expression("TRANSFORM(FILTER(arr, x => x > 0), x => x * 2)"));
    bound_.push_back(
        ExpressionBinder(scope_, functions_, catalog_, "SELECT").bind(*parsed_.back()));
    Program p = Program::compile(*bound_.back(), row_index_);
    Frame f = p.new_frame();
    p.evaluate(row_, f);  // warm up
    oxbow::testing::start_counting_allocations();
    const Value& v = p.evaluate(row_, f);
    size_t allocations = oxbow::testing::stop_counting_allocations();
    EXPECT_EQ(v.items().size(), size - 1);
    return allocations;
  };
  size_t small = count(4);
  EXPECT_LE(small, 4u);
  EXPECT_EQ(count(1000), small);
}

}  // namespace
}  // namespace oxbow::sql
