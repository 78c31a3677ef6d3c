#include "sql/execution/program.h"

#include <gtest/gtest.h>

#include <limits>

#include "common/allocation_counter.h"
#include "sql/binder/ddl_binder.h"
#include "sql/binder/expression_binder.h"
#include "sql/binder/sql_error.h"
#include "sql/parser/parser.h"

namespace oxbow::sql {
namespace {

class ProgramTest : public ::testing::Test {
 protected:
  ProgramTest() {
    auto statements = parser::parse(
        "CREATE STREAM s (id INT KEY, name STRING, amount DECIMAL(4, 2), n BIGINT, d DOUBLE, "
        "b BOOLEAN, arr ARRAY<INTEGER>, st STRUCT<town STRING, zip INT>) WITH "
        "(kafka_topic='s', value_format='json');");
    source_ =
        bind_create_source(std::get<parser::CreateSource>(statements.at(0).body), catalog_, {})
            .source;
    scope_.add_source(source_, "S");
    for (size_t i = 0; i < scope_.columns.size(); ++i)
      row_index_.push_back(i < source_.columns.size() ? static_cast<int>(i) : -1);
    row_.resize(source_.columns.size());
    row_[0].set_integer(7);
    row_[1].set_string("Alice");
    row_[2].set_decimal(150, 2);  // 1.50
    row_[3].set_bigint(10);
    row_[4].set_double(2.5);
    row_[5].set_boolean(true);
    auto arr = std::make_shared<std::vector<Value>>(3);
    (*arr)[0].set_integer(1), (*arr)[1].set_integer(2), (*arr)[2].set_integer(3);
    row_[6].set_items(Value::Kind::kArray, arr);
    auto st = std::make_shared<std::vector<Value>>(2);
    (*st)[0].set_string("Paris"), (*st)[1].set_null();
    row_[7].set_items(Value::Kind::kStruct, st);
  }

  Program compile(const std::string& text) {
    parsed_.push_back(parser::parse_expression(text));
    bound_.push_back(ExpressionBinder(scope_, functions_, catalog_, "WHERE").bind(*parsed_.back()));
    return Program::compile(*bound_.back(), row_index_);
  }
  // The value, or "ERROR: message" when the evaluation reported one.
  std::string eval(const std::string& text) {
    Program p = compile(text);
    Frame f = p.new_frame();
    const Value& v = p.evaluate(row_, f);
    return f.error.empty() ? v.debug_string() : "ERROR: " + f.error + " -> " + v.debug_string();
  }

  Catalog catalog_;
  FunctionRegistry functions_;
  DataSource source_;
  Scope scope_;
  std::vector<int> row_index_;
  Row row_;
  std::vector<parser::ExprPtr> parsed_;
  std::vector<BoundExprPtr> bound_;
};

TEST_F(ProgramTest, ArithmeticByType) {
  EXPECT_EQ(eval("id + 1"), "8");
  EXPECT_EQ(eval("id * n"), "70");
  EXPECT_EQ(eval("d * 2"), "5");
  EXPECT_EQ(eval("amount + 1"), "2.50");
  EXPECT_EQ(eval("amount * amount"), "2.2500");
  EXPECT_EQ(eval("amount - 2.25"), "-0.75");
  EXPECT_EQ(eval("-amount"), "-1.50");
  EXPECT_EQ(eval("2147483647 + 1"), "-2147483648");  // wraps, as Java's int
  EXPECT_EQ(eval("id / 0"), "ERROR: / by zero -> null");
  EXPECT_EQ(eval("amount / 3.0"), "0.500000");
  EXPECT_EQ(eval("1.00 / 3.0"), "ERROR: Rounding necessary -> null");
  EXPECT_EQ(eval("name + '!'"), "'Alice!'");
}

TEST_F(ProgramTest, NullsAndComparisons) {
  EXPECT_EQ(eval("id > 5 AND name = 'Alice'"), "true");
  EXPECT_EQ(eval("amount > 1"), "true");
  EXPECT_EQ(eval("amount = 1.5"), "true");
  EXPECT_EQ(eval("st->zip = 1"), "false");  // a comparison with NULL is false
  EXPECT_EQ(eval("st->zip IS NULL"), "true");
  EXPECT_EQ(eval("st->zip IS DISTINCT FROM 1"), "true");
  EXPECT_EQ(eval("st->zip + 1"), "null");
  EXPECT_EQ(eval("NOT (st->zip > 1)"), "true");
  EXPECT_EQ(eval("b OR st->zip > 1"), "true");
  EXPECT_EQ(eval("n BETWEEN 5 AND 10"), "true");
  EXPECT_EQ(eval("id NOT IN (1, 2, 3)"), "true");
  EXPECT_EQ(eval("name LIKE 'A_i%'"), "true");
  EXPECT_EQ(eval("name LIKE 'a%'"), "false");
  EXPECT_EQ(eval("'50%' LIKE '50!%' ESCAPE '!'"), "true");
}

// ksqlDB's generated `a && b` / `a || b` over Booleans: short-circuit, and a NULL that is read
// unboxes to a NullPointerException, which fails the whole expression.
TEST_F(ProgramTest, LogicShortCircuitsAndFailsOnANullItReads) {
  row_[5].set_null();  // b
  const std::string npe = "ERROR: java.lang.NullPointerException: a NULL operand of ";
  EXPECT_EQ(eval("id = 0 AND b"), "false");
  EXPECT_EQ(eval("id = 7 OR b"), "true");
  EXPECT_EQ(eval("id = 7 AND b"), npe + "AND -> null");
  EXPECT_EQ(eval("b OR id = 7"), npe + "OR -> null");
  EXPECT_EQ(eval("NOT b"), npe + "NOT -> null");
  EXPECT_EQ(eval("(id = 7 AND b) IS NULL"), npe + "AND -> null");  // not TRUE: all of it fails
  EXPECT_EQ(eval("id = 7 OR 1 / (id - 7) > 0"), "true");           // the division never runs
  EXPECT_EQ(eval("id = 0 AND 1 / (id - 7) > 0"), "false");
}

// ksqlDB's CompiledExpression catches any exception its generated Java throws: the whole
// expression is NULL (and the error logged), whatever encloses the part that threw.
TEST_F(ProgramTest, AnExceptionFailsTheWholeExpression) {
  const std::string by_zero = "ERROR: / by zero -> null";
  EXPECT_EQ(eval("COALESCE(id / 0, 1)"), by_zero);
  EXPECT_EQ(eval("IFNULL(id % 0, 1)"), by_zero);  // Java's % by zero throws as / does
  EXPECT_EQ(eval("(id / 0) IS NULL"), by_zero);
  EXPECT_EQ(eval("(n / 0) IS NOT NULL"), by_zero);  // BIGINT alike
  EXPECT_EQ(eval("COALESCE(CAST('x' AS INT), 0)"), "ERROR: Cannot cast 'x' to a number -> null");
  EXPECT_EQ(eval("COALESCE(CAST('x' AS DOUBLE), 0)"), "ERROR: Cannot cast 'x' to DOUBLE -> null");
  EXPECT_EQ(eval("CAST('2021-13-01' AS DATE) IS NULL").rfind("ERROR: Failed to parse date", 0), 0u);
  EXPECT_EQ(eval("COALESCE(1.00 / 0.00, 1.00)"), "ERROR: Division by zero -> null");
  EXPECT_EQ(eval("COALESCE(1.00 / 3.0, 1.00)"), "ERROR: Rounding necessary -> null");
  EXPECT_EQ(eval("CASE WHEN id / 0 > 1 THEN 1 ELSE 2 END"), by_zero);
  EXPECT_EQ(eval("ARRAY[1, id / 0]"), by_zero);
  EXPECT_EQ(eval("COALESCE(LEN(REGEXP_REPLACE(name, '(', 'x')), 0)"),
            "ERROR: Invalid regular expression pattern: ( -> null");  // a UDF that throws
  // Not exceptions in Java: DOUBLE division by zero, an array index outside the array.
  EXPECT_EQ(eval("CAST(d / 0 AS STRING)"), "'Infinity'");
  EXPECT_EQ(eval("CAST(-d / 0 AS STRING)"), "'-Infinity'");
  EXPECT_EQ(eval("CAST(d % 0 AS STRING)"), "'NaN'");
  EXPECT_EQ(eval("COALESCE(arr[5], 0)"), "0");
}

// ksqlDB's CastEvaluator reads a STRING with Java's parsers after String.trim(): parseInt's range
// and signs, parseDouble's finite numbers, SqlBooleans' prefixes of true and yes.
TEST_F(ProgramTest, CastOfTextIsJavasParsing) {
  EXPECT_EQ(eval("CAST(' 12 ' AS INT)"), "12");
  EXPECT_EQ(eval("CAST('+7' AS INT)"), "7");
  EXPECT_EQ(eval("CAST('-7' AS BIGINT)"), "-7");
  EXPECT_EQ(eval("CAST('99999999999' AS INT)"),
            "ERROR: Cannot cast '99999999999' to a number -> null");  // no wrapping
  EXPECT_EQ(eval("CAST('99999999999' AS BIGINT)"), "99999999999");
  EXPECT_EQ(eval("CAST('1.5' AS INT)"), "ERROR: Cannot cast '1.5' to a number -> null");
  EXPECT_EQ(eval("CAST('' AS INT)"), "ERROR: Cannot cast '' to a number -> null");
  EXPECT_EQ(eval("CAST(' 1e3' AS DOUBLE)"), "1000");
  EXPECT_EQ(eval("CAST('2.5d' AS DOUBLE)"), "2.5");
  EXPECT_EQ(eval("CAST('inf' AS DOUBLE)"), "ERROR: Cannot cast 'inf' to DOUBLE -> null");
  EXPECT_EQ(eval("CAST('NaN' AS DOUBLE)"), "ERROR: Cannot cast 'NaN' to DOUBLE -> null");
  EXPECT_EQ(eval("CAST('1e999' AS DOUBLE)"), "ERROR: Cannot cast '1e999' to DOUBLE -> null");
  EXPECT_EQ(eval("CAST('Y' AS BOOLEAN)"), "true");
  EXPECT_EQ(eval("CAST(' tr ' AS BOOLEAN)"), "true");
  EXPECT_EQ(eval("CAST('truex' AS BOOLEAN)"), "false");
  EXPECT_EQ(eval("CAST('' AS BOOLEAN)"), "false");
  EXPECT_EQ(eval("CAST(' 2021-01-02 ' AS DATE) = CAST('2021-01-02' AS DATE)"), "true");
}

// CASE runs only the branch it takes (ksqlDB's generated code is a chain of ?: over suppliers),
// so a failing branch not taken fails nothing.
TEST_F(ProgramTest, CaseEvaluatesOnlyTheBranchItTakes) {
  EXPECT_EQ(eval("CASE WHEN id = 7 THEN 1 ELSE id / 0 END"), "1");
  EXPECT_EQ(eval("CASE WHEN id = 0 THEN id / 0 WHEN id = 7 THEN 2 END"), "2");
  EXPECT_EQ(eval("CASE id WHEN 7 THEN 'seven' WHEN id / 0 THEN 'never' END"), "'seven'");
  EXPECT_EQ(eval("CASE WHEN id = 0 THEN 1 ELSE id / 0 END"), "ERROR: / by zero -> null");
}

TEST_F(ProgramTest, CaseCastsAccessAndFunctions) {
  EXPECT_EQ(eval("CASE WHEN id > 10 THEN 'big' WHEN id > 5 THEN 'mid' ELSE 'small' END"), "'mid'");
  EXPECT_EQ(eval("CASE id WHEN 7 THEN 1 END"), "1");
  EXPECT_EQ(eval("CASE WHEN false THEN id / 0 ELSE 0 END"), "0");  // untaken branch not run
  EXPECT_EQ(eval("CAST(id AS STRING)"), "'7'");
  EXPECT_EQ(eval("CAST(amount AS STRING)"), "'1.50'");
  EXPECT_EQ(eval("CAST(d AS STRING)"), "'2.5'");
  EXPECT_EQ(eval("CAST(1e10 AS STRING)"), "'1.0E10'");
  EXPECT_EQ(eval("CAST('12' AS INT) + 1"), "13");
  EXPECT_EQ(eval("CAST('x' AS INT)"), "ERROR: Cannot cast 'x' to a number -> null");
  EXPECT_EQ(eval("CAST(d AS DECIMAL(4, 2))"), "2.50");
  EXPECT_EQ(eval("CAST('TRUE' AS BOOLEAN)"), "true");
  EXPECT_EQ(eval("CAST(arr AS STRING)"), "'[1, 2, 3]'");
  EXPECT_EQ(eval("arr[1] + arr[-1]"), "4");
  EXPECT_EQ(eval("arr[5]"), "null");
  EXPECT_EQ(eval("st->town"), "'Paris'");
  EXPECT_EQ(eval("UCASE(name) || LCASE(name)"), "'ALICEalice'");
  EXPECT_EQ(eval("LEN(name) + ABS(-3)"), "8");
  EXPECT_EQ(eval("SUBSTRING(name, 2, 3)"), "'lic'");
  EXPECT_EQ(eval("COALESCE(st->zip, id)"), "7");
  EXPECT_EQ(eval("ROUND(d)"), "3");
  EXPECT_EQ(eval("ARRAY[id, 2]"), "[7, 2]");
}

TEST_F(ProgramTest, FixedWidthRowsCostNoAllocation) {
  Program p = compile("(id + n * 2 > 10 AND amount * 2 >= 3.00) OR d / 2 < 1 OR b IS NULL");
  Frame f = p.new_frame();
  p.evaluate(row_, f);  // warm
  bool all = true;
  oxbow::testing::start_counting_allocations();
  for (int i = 0; i < 1000; ++i) {
    row_[0].set_integer(i);
    all = all && p.evaluate(row_, f).boolean();
  }
  EXPECT_EQ(oxbow::testing::stop_counting_allocations(), 0);
  EXPECT_TRUE(all);
}

// Double.toString: where the shortest digits are one, Java writes the two nearest the exact
// value (JDK's own cases: Double.MIN_VALUE is 4.9E-324, 1e23 is 1.0E23, 2e-323 is 2.0E-323).
TEST(JavaDoubleText, ScientificFormWithOneShortestDigit) {
  EXPECT_EQ(java_double_text(std::numeric_limits<double>::denorm_min()), "4.9E-324");
  EXPECT_EQ(java_double_text(-std::numeric_limits<double>::denorm_min()), "-4.9E-324");
  EXPECT_EQ(java_double_text(2 * std::numeric_limits<double>::denorm_min()), "9.9E-324");
  EXPECT_EQ(java_double_text(4 * std::numeric_limits<double>::denorm_min()), "2.0E-323");
  EXPECT_EQ(java_double_text(1e23), "1.0E23");
  EXPECT_EQ(java_double_text(-1e23), "-1.0E23");
  EXPECT_EQ(java_double_text(1e7), "1.0E7");
  EXPECT_EQ(java_double_text(2e-4), "2.0E-4");
  // Unchanged: more than one shortest digit, and the plain form.
  EXPECT_EQ(java_double_text(1.5e-323), "1.5E-323");
  EXPECT_EQ(java_double_text(std::numeric_limits<double>::max()), "1.7976931348623157E308");
  EXPECT_EQ(java_double_text(1.25e-5), "1.25E-5");
  EXPECT_EQ(java_double_text(0.001), "0.001");
  EXPECT_EQ(java_double_text(5.0), "5.0");
}

}  // namespace
}  // namespace oxbow::sql
