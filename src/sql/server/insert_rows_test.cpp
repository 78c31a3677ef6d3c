// /inserts-stream's rows made into records (insert_rows.h): ksqlDB's names, coercions and
// refusals, and the bytes INSERT VALUES writes.
#include "sql/server/insert_rows.h"

#include <gtest/gtest.h>

namespace oxbow::sql::server {
namespace {

using nlohmann::json;

DataSource pageviews() {
  DataSource s;
  s.name = "PAGEVIEWS";
  s.topic = "pageviews";
  s.formats.key_format = "KAFKA";
  s.formats.value_format = "JSON";
  s.columns = {{"VIEWER", SqlType::string(), ColumnNamespace::kKey, ""},
               {"PAGE", SqlType::string(), ColumnNamespace::kValue, ""},
               {"SECS", SqlType::integer(), ColumnNamespace::kValue, ""},
               {"Mixed", SqlType::bigint(), ColumnNamespace::kValue, ""},
               {"PRICE", SqlType::decimal(4, 2), ColumnNamespace::kValue, ""},
               {"TAGS", SqlType::array(SqlType::integer()), ColumnNamespace::kValue, ""}};
  return s;
}

std::string refusal(const InsertRows& rows, const json& row) {
  try {
    rows.record(row, 0);
  } catch (const InsertRowError& e) {
    return e.what();
  }
  return "";
}

TEST(InsertRowsTest, ARowIsWrittenAsInsertValuesWritesIt) {
  InsertRows rows(pageviews());
  InsertedRecord r = rows.record(
      json::parse(R"({"viewer":"ann","Page":"/a","secs":5,"`Mixed`":7,"price":1.5,"tags":[1,2]})"),
      42);
  EXPECT_EQ(r.topic, "pageviews");
  EXPECT_EQ(r.key, "ann");
  EXPECT_EQ(r.value, R"({"PAGE":"/a","SECS":5,"Mixed":7,"PRICE":1.50,"TAGS":[1,2]})");
  EXPECT_EQ(r.timestamp, 42);
  // Missing and null value columns are null; an integer widens to BIGINT and DECIMAL, text
  // reads as DECIMAL.
  r = rows.record(json::parse(R"({"VIEWER":"bo","`Mixed`":null,"PRICE":"2.345"})"), 0);
  EXPECT_EQ(r.value, R"({"PAGE":null,"SECS":null,"Mixed":null,"PRICE":2.35,"TAGS":null})");
}

TEST(InsertRowsTest, RefusesAsKsqlDbsApiDoes) {
  InsertRows rows(pageviews());
  EXPECT_EQ(refusal(rows, {{"PAGE", "/a"}}), "Key field must be specified: VIEWER");
  EXPECT_EQ(refusal(rows, {{"VIEWER", nullptr}}), "Key field must be specified: VIEWER");
  EXPECT_EQ(refusal(rows, {{"VIEWER", "a"}, {"SECS", "5"}}),
            "Can't coerce a field of type class java.lang.String into type INTEGER");
  EXPECT_EQ(refusal(rows, {{"VIEWER", "a"}, {"SECS", 5000000000}}),
            "Can't coerce a field of type class java.lang.Long into type INTEGER");
  EXPECT_EQ(refusal(rows, {{"VIEWER", "a"}, {"SECS", 1.5}}),
            "Can't coerce a field of type class java.lang.Double into type INTEGER");
  EXPECT_EQ(refusal(rows, {{"VIEWER", 1}}),
            "Can't coerce a field of type class java.lang.Integer into type STRING");
  EXPECT_EQ(refusal(rows, {{"VIEWER", "a"}, {"TAGS", {1, "x"}}}),
            "Can't coerce a field of type class io.vertx.core.json.JsonArray into type "
            "ARRAY<INTEGER>");
  // `Mixed` is only reachable quoted: unquoted names are upper-cased.
  EXPECT_EQ(refusal(rows, {{"VIEWER", "a"}, {"viewer", "b"}}),
            "Found duplicate column / struct field name: VIEWER");
}

TEST(InsertRowsTest, TimesAreReadFromTheirText) {
  DataSource s;
  s.topic = "t";
  s.formats.key_format = "KAFKA";
  s.formats.value_format = "JSON";
  s.columns = {{"AT", SqlType::of(SqlBaseType::kTimestamp), ColumnNamespace::kValue, ""},
               {"ON", SqlType::of(SqlBaseType::kDate), ColumnNamespace::kValue, ""}};
  InsertRows rows(s);
  EXPECT_EQ(rows.record({{"at", "1970-01-01T00:00:01.500"}, {"on", "1970-01-03"}}, 0).value,
            R"({"AT":1500,"ON":2})");
  EXPECT_EQ(refusal(rows, {{"AT", 1500}}),
            "Can't coerce a field of type class java.lang.Integer into type TIMESTAMP");
  EXPECT_EQ(refusal(rows, {{"AT", "not a time"}}),
            "Can't coerce a field of type class java.lang.String into type TIMESTAMP");
}

TEST(InsertRowsTest, IdentifiersAreUpperCasedUnlessQuoted) {
  EXPECT_EQ(identifier_text("pageViews"), "PAGEVIEWS");
  EXPECT_EQ(identifier_text("`pageViews`"), "pageViews");
}

}  // namespace
}  // namespace oxbow::sql::server
