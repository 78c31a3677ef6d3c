#include "sql/logical/logical_plan.h"

#include <gtest/gtest.h>

#include <deque>

#include "sql/binder/ddl_binder.h"
#include "sql/logical/logical_plan_testing.h"
#include "sql/parser/parser.h"

namespace oxbow::sql::logical {
namespace {

class LogicalPlanTest : public ::testing::Test {
 protected:
  LogicalPlanTest() {
    add("CREATE STREAM pageviews (userid STRING KEY, page STRING, viewtime BIGINT) WITH "
        "(kafka_topic='p', value_format='json', partitions=2);");
    add("CREATE TABLE users (userid STRING PRIMARY KEY, level STRING, regionid STRING) WITH "
        "(kafka_topic='u', value_format='json', partitions=2);");
    add("CREATE TABLE regions (regionid STRING PRIMARY KEY, name STRING) WITH "
        "(kafka_topic='r', value_format='json', partitions=2);");
    add("CREATE STREAM orders (id INT KEY, items ARRAY<STRING>, region STRING) WITH "
        "(kafka_topic='o', value_format='json', partitions=2);");
  }
  void add(const std::string& ddl) {
    auto statements = parser::parse(ddl);
    catalog_.put_source(
        bind_create_source(std::get<parser::CreateSource>(statements.at(0).body), catalog_, {})
            .source);
  }
  // The plan of `select` into OUTPUT, or transient (the parsed and bound query kept alive with
  // it).
  const Node& plan(const std::string& select, const std::string& sink = "OUTPUT") {
    statements_.push_back(parser::parse(select));
    auto& query = *std::get<std::unique_ptr<parser::Query>>(statements_.back().at(0).body);
    bound_.push_back(bind_query(query, catalog_, functions_,
                                QueryContext{sink.empty() ? std::nullopt : std::optional(sink)}));
    plans_.push_back(build_logical_plan(bound_.back(), sink));
    return *plans_.back();
  }
  // Whether the plan's text has `line`, from its start (the indent) on.
  static ::testing::AssertionResult prints(const Node& plan, const std::string& line) {
    std::string text = logical_plan_text(plan);
    if (("\n" + text).find("\n" + line) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "no line starting \"" << line << "\" in\n" << text;
  }

  Catalog catalog_;
  FunctionRegistry functions_;
  std::deque<std::vector<parser::Statement>> statements_;
  std::deque<BoundQuery> bound_;
  std::vector<std::unique_ptr<Node>> plans_;
};

TEST_F(LogicalPlanTest, FilterThenProjection) {
  const Node& sink = plan("SELECT userid, page FROM pageviews WHERE viewtime > 1;");
  EXPECT_EQ(shape(sink), "Sink(Project(Filter(Source)))");
  EXPECT_EQ(sink.sink, "OUTPUT");
  const Node& project = sink.input();
  EXPECT_EQ(project.schema.text(), "`USERID` STRING KEY, `PAGE` STRING");
  EXPECT_EQ(sink.schema.text(), project.schema.text());
  const Node& filter = project.input();
  EXPECT_EQ(predicates(filter), "(VIEWTIME > 1)");
  EXPECT_FALSE(filter.having);
  EXPECT_FALSE(filter.pushed_down);
  const Node& source = filter.input();
  EXPECT_EQ(source.source->name, "PAGEVIEWS");
  EXPECT_EQ(source.schema.text(), "`USERID` STRING KEY, `PAGE` STRING, `VIEWTIME` BIGINT");
  EXPECT_EQ(filter.schema.text(), source.schema.text());
  for (const Node* n : {&sink, &project, &filter, &source}) {
    EXPECT_EQ(n->schema.kind, SourceKind::kStream);
    EXPECT_FALSE(n->schema.window);
  }
  EXPECT_EQ(logical_plan_text(sink),
            " > [ SINK ] | OUTPUT | Schema: `USERID` STRING KEY, `PAGE` STRING\n"
            "   > [ PROJECT ] | Schema: `USERID` STRING KEY, `PAGE` STRING\n"
            "     > [ FILTER ] | WHERE (VIEWTIME > 1) | Schema: `USERID` STRING KEY, `PAGE` "
            "STRING, `VIEWTIME` BIGINT\n"
            "       > [ SOURCE ] | PAGEVIEWS (topic p) | Schema: `USERID` STRING KEY, `PAGE` "
            "STRING, `VIEWTIME` BIGINT\n");
}

TEST_F(LogicalPlanTest, WindowedAggregateWithHaving) {
  const Node& sink = plan(
      "SELECT page, COUNT(*) AS n, MAX(viewtime) AS latest FROM pageviews "
      "WINDOW TUMBLING (SIZE 5 SECONDS) WHERE viewtime > 0 GROUP BY page HAVING COUNT(*) > 3;");
  EXPECT_EQ(shape(sink), "Sink(Project(Filter(Aggregate(Filter(Source)))))");
  const Node& having = sink.input().input();
  EXPECT_TRUE(having.having);
  EXPECT_EQ(predicates(having), "(COUNT(*) > 3)");
  const Node& aggregate = having.input();
  ASSERT_EQ(aggregate.keys.size(), 1u);
  EXPECT_EQ(format(*aggregate.keys[0]->parsed), "PAGE");
  ASSERT_EQ(aggregate.calls.size(), 2u);  // COUNT(*) once, though HAVING reads it too
  EXPECT_EQ(aggregate.schema.text(),
            "`PAGE` STRING KEY, `KSQL_AGG_VARIABLE_0` BIGINT, `KSQL_AGG_VARIABLE_1` BIGINT");
  EXPECT_EQ(aggregate.schema.kind, SourceKind::kTable);
  ASSERT_TRUE(aggregate.window);
  ASSERT_TRUE(aggregate.schema.window);
  EXPECT_EQ(aggregate.schema.window->type, SourceWindowType::kTumbling);
  EXPECT_EQ(aggregate.schema.window->size_ms, 5000);
  EXPECT_EQ(predicates(aggregate.input()), "(VIEWTIME > 0)");  // WHERE below the aggregation
  EXPECT_EQ(aggregate.input().schema.kind, SourceKind::kStream);
  EXPECT_FALSE(aggregate.input().schema.window);
  const Node& project = sink.input();
  EXPECT_EQ(project.schema.text(), "`PAGE` STRING KEY, `N` BIGINT, `LATEST` BIGINT");
  EXPECT_EQ(project.schema.kind, SourceKind::kTable);
  ASSERT_TRUE(project.schema.window);
  EXPECT_EQ(project.schema.window->size_ms, 5000);
  EXPECT_TRUE(
      prints(sink, "     > [ FILTER ] | HAVING (COUNT(*) > 3) | Schema: `PAGE` STRING KEY"));
  EXPECT_TRUE(prints(sink, "       > [ AGGREGATE ] | GROUP BY PAGE | windowed | Schema: "));
}

// WHERE stays above the joins (the optimizer pushes its conjuncts down: optimizer_test.cpp).
TEST_F(LogicalPlanTest, StreamTableJoinUnderWhere) {
  const Node& sink = plan(
      "SELECT p.userid, p.page, u.level FROM pageviews p LEFT JOIN users u ON p.userid = "
      "u.userid WHERE p.viewtime > 1 AND u.level = 'Platinum';");
  EXPECT_EQ(shape(sink), "Sink(Project(Filter(Join(Source, Source))))");
  const Node& where = sink.input().input();
  EXPECT_FALSE(where.pushed_down);
  EXPECT_EQ(predicates(where), "((P.VIEWTIME > 1) AND (U.LEVEL = 'Platinum'))");
  const Node& join = where.input();
  EXPECT_EQ(join.join->alias, "U");
  EXPECT_EQ(join.schema.kind, SourceKind::kStream);
  EXPECT_EQ(join.schema.text(),
            "`P_USERID` STRING KEY, `P_PAGE` STRING, `P_VIEWTIME` BIGINT, `U_USERID` STRING, "
            "`U_LEVEL` STRING, `U_REGIONID` STRING");
  EXPECT_EQ(join.input(0).alias, "P");
  const Node& table = join.input(1);
  EXPECT_EQ(table.source->name, "USERS");
  EXPECT_EQ(table.schema.kind, SourceKind::kTable);
  EXPECT_EQ(table.schema.text(), "`U_USERID` STRING KEY, `U_LEVEL` STRING, `U_REGIONID` STRING");
  EXPECT_TRUE(prints(sink, "       > [ JOIN ] | LEFT U ON P.USERID = U.USERID | Schema: "));
  EXPECT_TRUE(prints(sink, "         > [ SOURCE ] | PAGEVIEWS AS P (topic p)"));
  EXPECT_TRUE(prints(sink, "         > [ SOURCE ] | USERS AS U (topic u)"));
}

TEST_F(LogicalPlanTest, PartitionByBeforeExplode) {
  const Node& sink = plan("SELECT region, EXPLODE(items) AS item FROM orders PARTITION BY region;");
  EXPECT_EQ(shape(sink), "Sink(Project(TableFunction(PartitionBy(Source))))");
  const Node& explode = sink.input().input();
  ASSERT_EQ(explode.calls.size(), 1u);
  EXPECT_EQ(format(*explode.calls[0]->parsed), "EXPLODE(ITEMS)");
  const Node& partition = explode.input();
  ASSERT_EQ(partition.keys.size(), 1u);
  EXPECT_EQ(partition.schema.text(),
            "`REGION` STRING KEY, `ID` INTEGER, `ITEMS` ARRAY<STRING>, `REGION` STRING");
  EXPECT_EQ(explode.schema.text(), partition.schema.text() + ", `KSQL_SYNTH_0` STRING");
  EXPECT_EQ(sink.input().schema.text(), "`REGION` STRING KEY, `ITEM` STRING");
  EXPECT_EQ(sink.schema.kind, SourceKind::kStream);
  EXPECT_TRUE(prints(sink, "     > [ FLAT MAP ] | EXPLODE(ITEMS) | Schema: "));
  EXPECT_TRUE(prints(sink, "       > [ REPARTITION ] | PARTITION BY REGION | Schema: "));
  // PARTITION BY NULL: no key at all.
  const Node& keyless = plan("SELECT id, region FROM orders PARTITION BY NULL;");
  EXPECT_EQ(shape(keyless), "Sink(Project(PartitionBy(Source)))");
  EXPECT_EQ(keyless.input().input().schema.text(),
            "`ID` INTEGER, `ITEMS` ARRAY<STRING>, `REGION` STRING");
}

// Every PARTITION BY re-keys in the plain tree, even by the key the rows have (the optimizer
// keeps that key and its window: optimizer_test.cpp).
TEST_F(LogicalPlanTest, PartitionByTheKeyReKeysUntilOptimized) {
  add("CREATE TABLE counts (page STRING PRIMARY KEY, n BIGINT) WITH (kafka_topic='c', "
      "value_format='json', window_type='tumbling', window_size='1 minute');");
  const Node& sink = plan("SELECT page, n FROM counts PARTITION BY page;");
  const Node& partition = sink.input().input();
  EXPECT_EQ(partition.kind, NodeKind::kPartitionBy);
  EXPECT_FALSE(partition.keeps_key);
  EXPECT_EQ(partition.schema.text(), "`PAGE` STRING KEY, `PAGE` STRING, `N` BIGINT");
  EXPECT_FALSE(partition.schema.window);
  EXPECT_FALSE(sink.schema.window);
}

TEST_F(LogicalPlanTest, NWayJoinNestsTheEarlierJoinsOnTheLeft) {
  const Node& sink = plan(
      "SELECT u.regionid, p.page, u.level, r.name FROM pageviews p JOIN users u ON p.userid = "
      "u.userid JOIN regions r ON u.regionid = r.regionid;");
  EXPECT_EQ(shape(sink), "Sink(Project(Join(Join(Source, Source), Source)))");
  const Node& outer = sink.input().input();
  EXPECT_EQ(outer.join->alias, "R");
  EXPECT_EQ(outer.input(1).source->name, "REGIONS");
  EXPECT_EQ(outer.schema.columns.front().name, "U_REGIONID");  // re-keyed by the ON column
  EXPECT_TRUE(outer.schema.columns.front().key);
  EXPECT_EQ(outer.schema.columns.size(), 8u);  // no column twice
  const Node& inner = outer.input(0);
  EXPECT_EQ(inner.join->alias, "U");
  EXPECT_EQ(inner.input(0).source->name, "PAGEVIEWS");
  EXPECT_EQ(inner.input(1).source->name, "USERS");
  EXPECT_EQ(inner.schema.columns.front().name, "P_USERID");  // neither side projected: the first
  // The join's key is the viable join column the projection selects.
  const Node& right_keyed =
      plan("SELECT u.userid, p.page FROM pageviews p JOIN users u ON p.userid = u.userid;");
  EXPECT_EQ(right_keyed.input().input().schema.columns.front().name, "U_USERID");
  EXPECT_EQ(sink.input().schema.text(),
            "`U_REGIONID` STRING KEY, `PAGE` STRING, `LEVEL` STRING, `NAME` STRING");
  EXPECT_TRUE(prints(sink, "     > [ JOIN ] | INNER R ON U.REGIONID = R.REGIONID"));
  EXPECT_TRUE(prints(sink, "       > [ JOIN ] | INNER U ON P.USERID = U.USERID"));
}

TEST_F(LogicalPlanTest, AFullJoinIsKeyedByTheSyntheticKey) {
  add("CREATE STREAM clicks (userid STRING KEY, page STRING) WITH (kafka_topic='c2', "
      "value_format='json', partitions=2);");
  const Node& sink = plan(
      "SELECT p.page, c.page AS clicked FROM pageviews p FULL OUTER JOIN clicks c WITHIN 1 MINUTE "
      "ON p.userid = c.userid WHERE p.viewtime > 1;",
      "");
  EXPECT_EQ(shape(sink), "Sink(Project(Filter(Join(Source, Source))))");
  EXPECT_EQ(sink.input().input().input().schema.columns.front().name, "ROWKEY");
  EXPECT_TRUE(prints(sink, " > [ SINK ] | (transient) | Schema: "));
}

}  // namespace
}  // namespace oxbow::sql::logical
