#include "sql/binder/expression_binder.h"

#include <gtest/gtest.h>

#include "sql/binder/ddl_binder.h"
#include "sql/binder/sql_error.h"
#include "sql/parser/parser.h"

namespace oxbow::sql {
namespace {

class ExpressionBinderTest : public ::testing::Test {
 protected:
  ExpressionBinderTest() {
    add("CREATE STREAM s (id INT KEY, name STRING, amount DECIMAL(4, 2), n BIGINT, d DOUBLE, "
        "b BOOLEAN, arr ARRAY<INTEGER>, m MAP<STRING, BIGINT>, st STRUCT<town STRING>, "
        "ts TIMESTAMP) WITH (kafka_topic='s', value_format='json');",
        "S");
    add("CREATE TABLE t (id INT PRIMARY KEY, level STRING) WITH (kafka_topic='t', "
        "value_format='json');",
        "U");
  }
  void add(const std::string& ddl, const std::string& alias) {
    auto statements = parser::parse(ddl);
    auto bound =
        bind_create_source(std::get<parser::CreateSource>(statements.at(0).body), catalog_, {});
    catalog_.put_source(bound.source);
    scope_.add_source(bound.source, alias);
  }
  // The bound expression's type, or the error's message.
  std::string type_of(const std::string& text, const std::string& clause = "SELECT") {
    parsed_.push_back(parser::parse_expression(text));
    try {
      ExpressionBinder binder(scope_, functions_, catalog_, clause);
      auto b =
          clause == "WHERE" ? binder.bind_condition(*parsed_.back()) : binder.bind(*parsed_.back());
      return b->type ? b->type->to_string() : "NULL";
    } catch (const SqlError& e) {
      return e.what();
    }
  }

  Catalog catalog_;
  Scope scope_;
  FunctionRegistry functions_;
  std::vector<parser::ExprPtr> parsed_;
};

TEST_F(ExpressionBinderTest, ColumnsResolveByNameAndAlias) {
  EXPECT_EQ(type_of("name"), "STRING");
  EXPECT_EQ(type_of("u.level"), "STRING");
  EXPECT_EQ(type_of("s.rowtime"), "BIGINT");
  EXPECT_EQ(type_of("unknown"), "SELECT column 'UNKNOWN' cannot be resolved.");
  EXPECT_EQ(type_of("bob = 1", "WHERE"), "WHERE column 'BOB' cannot be resolved.");
  EXPECT_EQ(type_of("x.name"), "'X' is not a valid stream/table name or alias.");
  EXPECT_EQ(type_of("id"), "Line: 1, Col: 1: Column 'ID' is ambiguous. Could be S.ID or U.ID.");
  EXPECT_EQ(type_of("windowstart"), "SELECT column 'WINDOWSTART' cannot be resolved.");
}

TEST_F(ExpressionBinderTest, LiteralsAndArithmetic) {
  EXPECT_EQ(type_of("1"), "INTEGER");
  EXPECT_EQ(type_of("3000000000"), "BIGINT");
  EXPECT_EQ(type_of("9223372036854775808"), "Invalid numeric literal: 9223372036854775808");
  EXPECT_EQ(type_of("1.50"), "DECIMAL(3, 2)");
  EXPECT_EQ(type_of("1e3"), "DOUBLE");
  EXPECT_EQ(type_of("amount * 2"), "DECIMAL(15, 2)");
  EXPECT_EQ(type_of("n + s.id"), "BIGINT");
  EXPECT_EQ(type_of("d - amount"), "DOUBLE");
  EXPECT_EQ(type_of("name + name"), "STRING");
  EXPECT_EQ(type_of("name || 'x'"), "STRING");
  EXPECT_EQ(type_of("true + 1.5 = 1", "WHERE"),
            "Error in WHERE expression: Error processing expression: (true + 1.5). Unsupported "
            "arithmetic types. BOOLEAN DECIMAL");
  EXPECT_EQ(type_of("NULL"),
            "Can't infer a type of null. Please explicitly cast it to a required type, e.g. "
            "CAST(null AS VARCHAR).");
}

TEST_F(ExpressionBinderTest, ComparisonsAndConditions) {
  EXPECT_EQ(type_of("s.id >= 'not an int'", "WHERE"),
            "Error in WHERE expression: Cannot compare S.ID (INTEGER) to 'not an int' (STRING) "
            "with GREATER_THAN_OR_EQUAL.");
  EXPECT_EQ(type_of("'not a boolean'", "WHERE"),
            "Type error in WHERE expression: Should evaluate to boolean but is 'not a boolean' "
            "(STRING) instead.");
  EXPECT_EQ(type_of("arr < arr"),
            "Cannot compare ARR (ARRAY<INTEGER>) to ARR (ARRAY<INTEGER>) with LESS_THAN.");
  EXPECT_EQ(type_of("arr = arr"), "BOOLEAN");
  EXPECT_EQ(type_of("NULL <> NULL"), "Comparison with NULL not supported: NULL <> NULL");
  EXPECT_EQ(type_of("name IS NULL AND b", "WHERE"), "BOOLEAN");
  EXPECT_EQ(type_of("ts > '2024-01-01T00:00:00'", "WHERE"), "BOOLEAN");
  EXPECT_EQ(type_of("n BETWEEN 1 AND amount", "WHERE"), "BOOLEAN");
  EXPECT_EQ(type_of("s.id IN (1, 'x')", "WHERE"),
            "Error in WHERE expression: Cannot compare S.ID (INTEGER) to 'x' (STRING) with "
            "EQUAL.");
  EXPECT_EQ(type_of("name NOT LIKE 'a%'", "WHERE"), "BOOLEAN");
}

TEST_F(ExpressionBinderTest, CaseCastsAccessAndConstructors) {
  EXPECT_EQ(type_of("CASE WHEN b THEN n ELSE 1 END"), "BIGINT");
  // The first branch's type decides; a later one must widen to it.
  EXPECT_EQ(type_of("CASE WHEN b THEN 1 ELSE n END"),
            "Invalid Case expression. Type for all 'THEN' clauses should be the same. THEN "
            "expression 'N' has type: BIGINT. Previous THEN expression(s) type: INTEGER.");
  EXPECT_EQ(type_of("CASE WHEN b THEN NULL ELSE NULL END"),
            "Invalid Case expression. All case branches have NULL type");
  EXPECT_EQ(type_of("CAST(name AS INT)"), "INTEGER");
  EXPECT_EQ(type_of("CAST(name AS ARRAY<INT>)"),
            "Invalid Select: Cast of STRING to ARRAY<INTEGER> is not supported");
  EXPECT_EQ(type_of("arr[1]"), "INTEGER");
  EXPECT_EQ(type_of("m['k']"), "BIGINT");
  EXPECT_EQ(type_of("st->town"), "STRING");
  EXPECT_EQ(type_of("ARRAY[1, 2]"), "ARRAY<INTEGER>");
  EXPECT_EQ(type_of("ARRAY[NULL]").rfind("Cannot construct an array with all NULL elements", 0),
            0u);
  EXPECT_EQ(type_of("MAP('a' := 1)"), "MAP<STRING, INTEGER>");
  EXPECT_EQ(type_of("STRUCT(a := 1, b := 'x')"), "STRUCT<`A` INTEGER, `B` STRING>");
}

TEST_F(ExpressionBinderTest, Functions) {
  EXPECT_EQ(type_of("COUNT(*)"), "BIGINT");
  EXPECT_EQ(type_of("SUM(s.id)"), "INTEGER");
  EXPECT_EQ(type_of("SUM(amount)"), "DECIMAL(4, 2)");
  EXPECT_EQ(type_of("AVG(n)"), "DOUBLE");
  EXPECT_EQ(type_of("COLLECT_LIST(name)"), "ARRAY<STRING>");
  EXPECT_EQ(type_of("ROUND(d)"), "BIGINT");
  EXPECT_EQ(type_of("LEN(name)"), "INTEGER");
  EXPECT_EQ(type_of("SQRT(n)"), "DOUBLE");
  EXPECT_EQ(type_of("COALESCE(NULL, n, s.id)"), "BIGINT");
  EXPECT_EQ(type_of("WONT_FIND_ME(1)"), "Can't find any functions with the name 'WONT_FIND_ME'");
  EXPECT_EQ(type_of("LEN(1)"), "Function 'LEN' does not accept parameters (INTEGER).");
  EXPECT_EQ(type_of("SUM(COUNT(*))"), "Aggregate functions can not be nested: SUM(COUNT())");
}

}  // namespace
}  // namespace oxbow::sql
