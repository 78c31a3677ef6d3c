#include "sql/binder/query_binder.h"

#include <gtest/gtest.h>

#include "sql/binder/ddl_binder.h"
#include "sql/binder/sql_error.h"
#include "sql/parser/parser.h"

namespace oxbow::sql {
namespace {

class QueryBinderTest : public ::testing::Test {
 protected:
  QueryBinderTest() {
    add("CREATE STREAM pageviews (userid STRING KEY, page STRING, action STRING, "
        "viewtime BIGINT, addr STRUCT<town STRING>) WITH (kafka_topic='p', value_format='json', "
        "partitions=2);");
    add("CREATE STREAM clicks (userid STRING KEY, page STRING) WITH (kafka_topic='c', "
        "value_format='json', partitions=2);");
    add("CREATE TABLE users (userid STRING PRIMARY KEY, level STRING, regionid STRING) WITH "
        "(kafka_topic='u', value_format='json', partitions=2);");
    add("CREATE TABLE regions (regionid STRING PRIMARY KEY, name STRING) WITH "
        "(kafka_topic='r', value_format='json', partitions=4);");
    add("CREATE TABLE other (id STRING PRIMARY KEY, x STRING) WITH (kafka_topic='o', "
        "value_format='json', partitions=3);");
  }
  void add(const std::string& ddl) {
    auto statements = parser::parse(ddl);
    catalog_.put_source(
        bind_create_source(std::get<parser::CreateSource>(statements.at(0).body), catalog_, {})
            .source);
  }
  // "NAME TYPE [KEY], ..." of the result, its kind, or the error's message.
  std::string bind(const std::string& select, std::optional<std::string> sink = "OUTPUT") {
    statements_.push_back(parser::parse(select));
    auto& query = *std::get<std::unique_ptr<parser::Query>>(statements_.back().at(0).body);
    try {
      BoundQuery q = bind_query(query, catalog_, functions_, QueryContext{sink});
      std::string out = q.result_kind == SourceKind::kTable ? "TABLE: " : "STREAM: ";
      for (size_t i = 0; i < q.columns.size(); ++i)
        out += (i ? ", " : "") + q.columns[i].name + " " + q.columns[i].type->to_string() +
               (q.columns[i].key ? " KEY" : "");
      return out;
    } catch (const SqlError& e) {
      return e.what();
    }
  }

  Catalog catalog_;
  FunctionRegistry functions_;
  std::vector<std::vector<parser::Statement>> statements_;
};

TEST_F(QueryBinderTest, ProjectionNamesAndKeys) {
  EXPECT_EQ(bind("SELECT * FROM pageviews;"),
            "STREAM: USERID STRING KEY, PAGE STRING, ACTION STRING, VIEWTIME BIGINT, ADDR "
            "STRUCT<`TOWN` STRING>");
  EXPECT_EQ(bind("SELECT userid, viewtime * 2, UCASE(page) AS p, addr->town FROM pageviews;"),
            "STREAM: USERID STRING KEY, KSQL_COL_0 BIGINT, P STRING, TOWN STRING");
  EXPECT_EQ(bind("SELECT page FROM pageviews;"),
            "The query used to build `OUTPUT` must include the key column USERID in its "
            "projection (eg, SELECT USERID...).");
  EXPECT_EQ(bind("SELECT page FROM pageviews EMIT CHANGES;", std::nullopt), "STREAM: PAGE STRING");
  EXPECT_EQ(bind("SELECT userid FROM pageviews;"), "The projection contains no value columns.");
  EXPECT_EQ(bind("SELECT userid, rowtime FROM pageviews;"),
            "Reserved column name in select: `ROWTIME`. Please remove or alias the column.");
  // Transient queries may, as in ksqlDB.
  EXPECT_EQ(bind("SELECT userid, rowtime FROM pageviews EMIT CHANGES;", std::nullopt),
            "STREAM: USERID STRING KEY, ROWTIME BIGINT");
  EXPECT_EQ(bind("SELECT userid, page AS rowpartition FROM pageviews;"),
            "`ROWPARTITION` is a reserved column name. You cannot use it as an alias for a "
            "column.");
  EXPECT_EQ(bind("SELECT userid, page, page FROM pageviews;"),
            "Duplicate value columns found in schema: `PAGE` STRING");
  EXPECT_EQ(bind("SELECT * FROM nowhere;"), "NOWHERE does not exist.");
}

TEST_F(QueryBinderTest, Aggregations) {
  EXPECT_EQ(bind("SELECT page, COUNT(*) FROM pageviews WINDOW TUMBLING (SIZE 5 SECONDS) GROUP "
                 "BY page HAVING COUNT(*) > 3;"),
            "TABLE: PAGE STRING KEY, KSQL_COL_0 BIGINT");
  EXPECT_EQ(bind("SELECT page, action, COUNT(*) FROM pageviews GROUP BY page;"),
            "Non-aggregate SELECT expression(s) not part of GROUP BY: ACTION\nEither add the "
            "column(s) to the GROUP BY or remove them from the SELECT.");
  EXPECT_EQ(bind("SELECT page FROM pageviews GROUP BY page;"),
            "GROUP BY requires aggregate functions in either the SELECT or HAVING clause.");
  EXPECT_EQ(bind("SELECT COUNT(*) AS n FROM pageviews GROUP BY page;"),
            "The query used to build `OUTPUT` must include the grouping expression PAGE in its "
            "projection (eg, SELECT PAGE...).");
  EXPECT_EQ(bind("SELECT page, COUNT(*) FROM pageviews GROUP BY page, SUM(viewtime);"),
            "GROUP BY does not support aggregate functions: SUM is an aggregate function.");
  EXPECT_EQ(bind("SELECT page, COUNT(*) FROM pageviews GROUP BY page, page;"),
            "Duplicate GROUP BY expression: PAGE");
  EXPECT_EQ(bind("SELECT page, COUNT(*) FROM pageviews WINDOW TUMBLING (SIZE 1 SECOND);"),
            "WINDOW clause requires a GROUP BY clause.");
  EXPECT_EQ(bind("SELECT level, MAX(regionid), LATEST_BY_OFFSET(regionid) FROM users GROUP BY "
                 "level;"),
            "The aggregation functions LATEST_BY_OFFSET and MAX cannot be applied to a table "
            "source, only to a stream source.");
  EXPECT_EQ(bind("SELECT page, COUNT(*) FROM pageviews GROUP BY page EMIT FINAL;"),
            "EMIT FINAL is only supported for windowed aggregations.");
  EXPECT_EQ(bind("SELECT page, COUNT(*) FROM pageviews GROUP BY page HAVING action = 'x';")
                .rfind("Non-aggregate HAVING expression not part of GROUP BY: (ACTION = 'x')", 0),
            0u);
}

TEST_F(QueryBinderTest, PartitionBy) {
  EXPECT_EQ(bind("SELECT page, userid FROM pageviews PARTITION BY page;"),
            "STREAM: PAGE STRING KEY, USERID STRING");
  EXPECT_EQ(bind("SELECT page FROM pageviews PARTITION BY something;"),
            "PARTITION BY column 'SOMETHING' cannot be resolved. 'SOMETHING' must be a column in "
            "the source schema since PARTITION BY is applied on the input.");
  EXPECT_EQ(bind("SELECT page FROM pageviews PARTITION BY NULL, page;"),
            "Cannot PARTITION BY multiple columns including NULL");
}

TEST_F(QueryBinderTest, Joins) {
  EXPECT_EQ(bind("SELECT p.userid, page, level FROM pageviews p LEFT JOIN users u ON p.userid "
                 "= u.userid;"),
            "STREAM: P_USERID STRING KEY, PAGE STRING, LEVEL STRING");
  EXPECT_EQ(bind("SELECT * FROM users u JOIN pageviews p ON p.userid = u.userid;"),
            "Invalid join order: table-stream joins are not supported; only stream-table joins. "
            "Got USERS [INNER] JOIN PAGEVIEWS.");
  EXPECT_EQ(bind("SELECT * FROM pageviews p FULL OUTER JOIN users u ON p.userid = u.userid;"),
            "Invalid join type: full-outer join not supported for stream-table join. Got "
            "PAGEVIEWS [FULL] OUTER JOIN USERS.");
  EXPECT_EQ(bind("SELECT * FROM pageviews p JOIN clicks c ON p.userid = c.userid;")
                .rfind("Stream-Stream joins must have a WITHIN clause specified.", 0),
            0u);
  EXPECT_EQ(bind("SELECT * FROM pageviews p JOIN users u WITHIN 1 HOUR ON p.userid = u.userid;")
                .rfind("A window definition was provided for a Stream-Table join.", 0),
            0u);
  EXPECT_EQ(bind("SELECT * FROM pageviews p JOIN users u ON p.userid = u.userid AND "
                 "p.page = u.level;"),
            "Invalid join condition: joins on multiple conditions are not yet supported. Got "
            "((P.USERID = U.USERID) AND (P.PAGE = U.LEVEL)).");
  EXPECT_EQ(bind("SELECT * FROM pageviews p JOIN users u ON p.page = u.level;"),
            "Invalid join condition: stream-table joins require to join on the table's primary "
            "key. Got P.PAGE = U.LEVEL.");
  EXPECT_EQ(bind("SELECT * FROM pageviews p JOIN users u ON u.userid = 'x';"),
            "Invalid comparison expression ''x'' in join '(U.USERID = 'x')'. Each side of the "
            "join comparision must contain references from exactly one source.");
  EXPECT_EQ(bind("SELECT * FROM pageviews p JOIN users u ON p.userid = p.page;"),
            "Each side of the join must reference exactly one source and not the same source. "
            "Left side references `P` and right references `P`");
  EXPECT_EQ(bind("SELECT * FROM pageviews p JOIN pageviews q WITHIN 1 SECOND ON p.userid = "
                 "q.userid;"),
            "Can not join 'PAGEVIEWS' to 'PAGEVIEWS': self joins are not yet supported.");
  EXPECT_EQ(bind("SELECT * FROM pageviews p JOIN other o ON p.userid = o.id;"),
            "Can't join `P` with `O` since the number of partitions don't match. `P` partitions "
            "= 2; `O` partitions = 3. Please repartition either one so that the number of "
            "partitions match.");
  EXPECT_EQ(bind("SELECT * FROM pageviews p JOIN users u ON p.viewtime = u.userid;"),
            "Invalid join condition: types don't match. Got P.VIEWTIME{BIGINT} = "
            "U.USERID{STRING}.");
  EXPECT_EQ(bind("SELECT u.userid, name FROM users u JOIN regions r ON u.regionid = "
                 "r.regionid;"),
            "TABLE: USERID STRING KEY, NAME STRING");
  EXPECT_EQ(bind("SELECT name FROM users u JOIN regions r ON u.regionid = r.regionid;"),
            "Primary key column missing in projection. For foreign-key table-table joins, the "
            "projection must include all primary key columns from the left input table (`U`). "
            "Missing column: `USERID`.");
  EXPECT_EQ(bind("SELECT * FROM users u RIGHT JOIN regions r ON u.regionid = r.regionid;"),
            "RIGHT OUTER JOIN on a foreign key is not supported");
  EXPECT_EQ(bind("SELECT page, level FROM pageviews p JOIN users u ON p.userid = u.userid;"),
            "The query used to build `OUTPUT` must include the join expressions P.USERID or "
            "U.USERID in its projection (eg, SELECT P.USERID...).");
}

}  // namespace
}  // namespace oxbow::sql
