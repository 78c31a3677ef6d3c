#pragma once
// Evaluates expressions over one row of a stream with a column of each type, for the function
// groups' tests: eval("UCASE(s)") is the result's debug text, or "ERROR: <message>" when the
// evaluation reported one (which fails the whole expression: "-> value" follows if it did not).
#include <gtest/gtest.h>

#include "sql/binder/ddl_binder.h"
#include "sql/binder/expression_binder.h"
#include "sql/binder/sql_error.h"
#include "sql/execution/program.h"
#include "sql/parser/parser.h"

namespace oxbow::sql {

class FunctionTest : public ::testing::Test {
 protected:
  FunctionTest() {
    auto statements = parser::parse(
        "CREATE STREAM s (i INT, n BIGINT, d DOUBLE, dec DECIMAL(4, 2), s STRING, b BOOLEAN, "
        "bs BYTES, dt DATE, t TIME, ts TIMESTAMP, arr ARRAY<INT>, m MAP<STRING, INT>, "
        "st STRUCT<a STRING, b INT>, ns STRING, ni INT, sarr ARRAY<STRING>) WITH "
        "(kafka_topic='s', value_format='json');");
    source_ =
        bind_create_source(std::get<parser::CreateSource>(statements.at(0).body), catalog_, {})
            .source;
    scope_.add_source(source_, "S");
    for (size_t i = 0; i < scope_.columns.size(); ++i)
      row_index_.push_back(i < source_.columns.size() ? static_cast<int>(i) : -1);
    row_.resize(source_.columns.size());
    using Kind = Value::Kind;
    row_[0].set_integer(-7);
    row_[1].set_bigint(10);
    row_[2].set_double(2.5);
    row_[3].set_decimal(-150, 2);  // -1.50
    row_[4].set_string("Hello World");
    row_[5].set_boolean(true);
    row_[6].set_text(Kind::kBytes, "\x01\x02\x03\x04", 4);
    row_[7].set_time(Kind::kDate, 18628);                   // 2021-01-01
    row_[8].set_time(Kind::kTime, 45'296'789);              // 12:34:56.789
    row_[9].set_time(Kind::kTimestamp, 1'609'504'496'789);  // 2021-01-01T12:34:56.789Z
    auto arr = std::make_shared<std::vector<Value>>(4);
    (*arr)[0].set_integer(3), (*arr)[1].set_integer(1),
        (*arr)[3].set_integer(2);  // [3, 1, null, 2]
    row_[10].set_items(Kind::kArray, arr);
    auto m = std::make_shared<std::vector<Value>>(4);
    (*m)[0].set_string("b"), (*m)[1].set_integer(2), (*m)[2].set_string("a"),
        (*m)[3].set_integer(1);
    row_[11].set_items(Kind::kMap, m);
    auto st = std::make_shared<std::vector<Value>>(2);
    (*st)[0].set_string("x"), (*st)[1].set_integer(1);
    row_[12].set_items(Kind::kStruct, st);
    auto sarr = std::make_shared<std::vector<Value>>(3);
    (*sarr)[0].set_string("a"), (*sarr)[1].set_string("b"), (*sarr)[2].set_string("a");
    row_[15].set_items(Kind::kArray, sarr);
  }

  // The result's debug text, "ERROR: <message>" when the evaluation reported one (followed by
  // "-> value" if the value is not NULL, which a failed expression's must be), or
  // "REFUSED: <message>" when the expression does not bind or compile.
  std::string eval(const std::string& text) {
    try {
      parsed_.push_back(parser::parse_expression(text));
      bound_.push_back(
          ExpressionBinder(scope_, functions_, catalog_, "SELECT").bind(*parsed_.back()));
      Program p = Program::compile(*bound_.back(), row_index_);
      Frame f = p.new_frame();
      const Value& v = p.evaluate(row_, f);
      if (f.error.empty()) return v.debug_string();
      // A reported error fails the whole expression: its value must be NULL.
      return "ERROR: " + f.error + (v.is_null() ? "" : " -> " + v.debug_string());
    } catch (const SqlError& e) {
      return std::string("REFUSED: ") + e.what();
    }
  }
  // The type the expression binds to.
  std::string type_of(const std::string& text) {
    parsed_.push_back(parser::parse_expression(text));
    bound_.push_back(
        ExpressionBinder(scope_, functions_, catalog_, "SELECT").bind(*parsed_.back()));
    return bound_.back()->type ? bound_.back()->type->to_string() : "NULL";
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

}  // namespace oxbow::sql
