#include "sql/physical/physical_plan.h"

#include <gtest/gtest.h>

#include <deque>

#include "sql/binder/ddl_binder.h"
#include "sql/binder/sql_error.h"
#include "sql/optimizer/optimizer.h"
#include "sql/parser/parser.h"

namespace oxbow::sql::physical {
namespace {

class PhysicalPlanTest : public ::testing::Test {
 protected:
  PhysicalPlanTest() {
    add("CREATE STREAM pageviews (userid STRING KEY, page STRING, viewtime BIGINT) WITH "
        "(kafka_topic='p', value_format='json', partitions=2);");
    add("CREATE STREAM clicks (userid STRING KEY, page STRING, viewtime BIGINT) WITH "
        "(kafka_topic='c', value_format='json', partitions=2);");
    add("CREATE TABLE users (userid STRING PRIMARY KEY, level STRING) WITH "
        "(kafka_topic='u', value_format='json', partitions=2);");
    add("CREATE STREAM orders (id INT KEY, items ARRAY<STRING>, region STRING) WITH "
        "(kafka_topic='o', key_format='json', value_format='delimited', partitions=2);");
  }
  void add(const std::string& ddl) {
    auto statements = parser::parse(ddl);
    catalog_.put_source(
        bind_create_source(std::get<parser::CreateSource>(statements.at(0).body), catalog_, {})
            .source);
  }
  // The physical plan of `select` into OUTPUT (the sink in the source's formats).
  StepPtr plan(const std::string& select) {
    statements_.push_back(parser::parse(select));
    auto& query = *std::get<std::unique_ptr<parser::Query>>(statements_.back().at(0).body);
    bound_.push_back(bind_query(query, catalog_, functions_, QueryContext{"OUTPUT"}));
    const BoundQuery& q = bound_.back();
    auto logical = logical::build_logical_plan(q, "OUTPUT");
    optimizer::optimize(*logical, q);
    DataSource sink;
    sink.name = sink.topic = "OUTPUT";
    sink.kind = q.result_kind;
    sink.formats = q.from->formats;
    return build_physical_plan(*logical, q, sink);
  }
  // The steps from the top down: "StreamSink(StreamSelect(StreamSource))".
  static std::string shape(const Step& s) {
    std::string out = s.type;
    if (s.sources.empty()) return out;
    out += "(";
    for (size_t i = 0; i < s.sources.size(); ++i) out += (i ? ", " : "") + shape(*s.sources[i]);
    return out + ")";
  }
  static const Step& below(const Step& s, size_t i = 0) { return *s.sources.at(i); }
  // What the upgrade validation of `replacement` over `old` says ("accepted" or its refusal).
  static std::string upgrade(const Step& old, const Step& replacement) try {
    validate_upgrade(old, replacement);
    return "accepted";
  } catch (const SqlError& e) {
    return e.what();
  }

  Catalog catalog_;
  FunctionRegistry functions_;
  std::deque<std::vector<parser::Statement>> statements_;
  std::deque<BoundQuery> bound_;
};

TEST_F(PhysicalPlanTest, FilterThenProjection) {
  StepPtr sink = plan("SELECT userid, page FROM pageviews WHERE viewtime > 1;");
  EXPECT_EQ(shape(*sink), "StreamSink(StreamSelect(StreamFilter(StreamSource)))");
  const Step& project = below(*sink);
  const Step& filter = below(project);
  const Step& source = below(filter);
  EXPECT_EQ(sink->context, "OUTPUT");
  EXPECT_EQ(project.context, "Project");
  EXPECT_EQ(filter.context, "WhereFilter");
  EXPECT_EQ(source.context, "KsqlTopic/Source");
  // How ksqlDB's upgrade validation treats each.
  EXPECT_EQ(sink->check, Check::kMatch);
  EXPECT_TRUE(sink->enforcing);
  EXPECT_EQ(project.check, Check::kPassive);
  EXPECT_EQ(filter.check, Check::kPassive);
  EXPECT_EQ(source.check, Check::kSource);
  EXPECT_EQ(source.compared, (decltype(source.compared){{"topicName", "p"}}));
  EXPECT_EQ(source.key_format, "KAFKA");
  EXPECT_EQ(source.value_format, "JSON");
  EXPECT_EQ(source.schema.text(), "`USERID` STRING KEY, `PAGE` STRING, `VIEWTIME` BIGINT");
  EXPECT_EQ(project.schema.text(), "`USERID` STRING KEY, `PAGE` STRING");
  EXPECT_EQ(physical_plan_text(*sink, "CSAS_OUTPUT_0"),
            " > [ SINK ] | Schema: USERID STRING KEY, PAGE STRING | Logger: CSAS_OUTPUT_0.OUTPUT\n"
            "\t\t > [ PROJECT ] | Schema: USERID STRING KEY, PAGE STRING | Logger: "
            "CSAS_OUTPUT_0.Project\n"
            "\t\t\t\t > [ FILTER ] | Schema: USERID STRING KEY, PAGE STRING, VIEWTIME BIGINT | "
            "Logger: CSAS_OUTPUT_0.WhereFilter\n"
            "\t\t\t\t\t\t > [ SOURCE ] | Schema: USERID STRING KEY, PAGE STRING, VIEWTIME BIGINT "
            "| Logger: CSAS_OUTPUT_0.KsqlTopic.Source\n");
  // Filters and projections may change; the source may not.
  EXPECT_EQ(upgrade(*sink, *plan("SELECT userid, page, viewtime FROM pageviews;")), "accepted");
  EXPECT_EQ(upgrade(*sink, *plan("SELECT userid, page FROM clicks WHERE viewtime > 1;")),
            "Query is not upgradeable. Plan step of type StreamSource must have matching "
            "topicName. Values differ: p vs. c");
}

TEST_F(PhysicalPlanTest, WindowedAggregation) {
  StepPtr sink = plan(
      "SELECT page, COUNT(*) AS n FROM pageviews WINDOW TUMBLING (SIZE 1 MINUTE) "
      "WHERE viewtime > 0 GROUP BY page HAVING COUNT(*) > 1;");
  EXPECT_EQ(shape(*sink),
            "TableSink(TableSelect(TableFilter(StreamWindowedAggregate(StreamGroupBy(StreamSelect("
            "StreamFilter(StreamSource)))))))");
  const Step& project = below(*sink);
  const Step& having = below(project);
  const Step& aggregate = below(having);
  const Step& group = below(aggregate);
  const Step& prepare = below(group);
  EXPECT_FALSE(sink->enforcing);
  EXPECT_EQ(project.context, "Aggregate/Project");
  EXPECT_EQ(having.context, "Aggregate/HavingFilter");
  EXPECT_EQ(aggregate.context, "Aggregate/Aggregate");
  EXPECT_EQ(group.context, "Aggregate/GroupBy");
  EXPECT_EQ(prepare.context, "Aggregate/Prepare");
  EXPECT_EQ(aggregate.check, Check::kUnsupported);
  EXPECT_EQ(aggregate.schema.text(), "`PAGE` STRING KEY, `KSQL_AGG_VARIABLE_0` BIGINT");
  ASSERT_TRUE(aggregate.schema.window);
  EXPECT_EQ(aggregate.schema.window->type, SourceWindowType::kTumbling);
  EXPECT_EQ(aggregate.key_format, "KAFKA");
  EXPECT_EQ(group.check, Check::kMatch);
  EXPECT_EQ(group.compared, (decltype(group.compared){{"group by clause", "[PAGE]"}}));
  EXPECT_NE(physical_plan_text(*sink, "CTAS_OUTPUT_3")
                .find("\t\t\t\t\t\t > [ AGGREGATE ] | Schema: PAGE STRING KEY, "
                      "KSQL_AGG_VARIABLE_0 BIGINT | Logger: CTAS_OUTPUT_3.Aggregate.Aggregate\n"),
            std::string::npos);
  EXPECT_EQ(upgrade(*sink, *sink), "Upgrades not yet supported for StreamWindowedAggregate");

  // Unwindowed, the aggregation compares what it reads and computes, and grouping by the key
  // needs no repartition.
  StepPtr counts = plan("SELECT userid, COUNT(page) AS n FROM pageviews GROUP BY userid;");
  EXPECT_EQ(
      shape(*counts),
      "TableSink(TableSelect(StreamAggregate(StreamGroupByKey(StreamSelect(StreamSource)))))");
  const Step& stream_aggregate = below(below(*counts));
  EXPECT_EQ(stream_aggregate.check, Check::kMatch);
  EXPECT_EQ(stream_aggregate.compared, (decltype(stream_aggregate.compared){
                                           {"columns not part of aggregate", "[`USERID`, `PAGE`]"},
                                           {"aggregate functions", "[COUNT(PAGE)]"},
                                           {"aggregate argument types", "[COUNT(STRING)]"}}));
  EXPECT_EQ(upgrade(*counts, *plan("SELECT userid, COUNT(page) AS n FROM pageviews "
                                   "WHERE page = 'a' GROUP BY userid;")),
            "accepted");
  EXPECT_EQ(upgrade(*counts, *plan("SELECT userid, COUNT(viewtime) AS n FROM pageviews "
                                   "GROUP BY userid;")),
            "Query is not upgradeable. Plan step of type StreamAggregate must have matching "
            "columns not part of aggregate. Values differ: [`USERID`, `PAGE`] vs. [`USERID`, "
            "`VIEWTIME`]");
}

TEST_F(PhysicalPlanTest, StreamTableJoinReKeysTheStream) {
  StepPtr sink = plan(
      "SELECT p.page AS page, u.level AS level FROM pageviews p JOIN users u ON p.page = "
      "u.userid WHERE p.viewtime > 1;");
  EXPECT_EQ(shape(*sink),
            "StreamSink(StreamSelect(StreamFilter(StreamTableJoin(StreamSelect(StreamSelectKey("
            "StreamFilter(StreamSource))), TableSelect(TableSource)))))");
  const Step& join = below(below(below(*sink)));
  EXPECT_EQ(join.context, "Join");
  EXPECT_EQ(join.check, Check::kUnsupported);
  EXPECT_EQ(join.schema.text(),
            "`P_PAGE` STRING KEY, `P_USERID` STRING, `P_VIEWTIME` BIGINT, `U_USERID` STRING, "
            "`U_LEVEL` STRING");
  const Step& left = below(join, 0);
  const Step& rekey = below(left);
  const Step& pushed = below(rekey);
  EXPECT_EQ(left.context, "PrependAliasLeft");
  EXPECT_EQ(rekey.context, "LeftSourceKeyed");
  EXPECT_EQ(rekey.check, Check::kMatch);
  EXPECT_EQ(rekey.compared, (decltype(rekey.compared){{"keyExpressions", "[PAGE]"}}));
  EXPECT_EQ(pushed.check, Check::kPassive);
  EXPECT_EQ(below(pushed).context, "KafkaTopic_Left/Source");
  const Step& right = below(join, 1);
  EXPECT_EQ(right.context, "PrependAliasRight");
  EXPECT_EQ(below(right).context, "KafkaTopic_Right/Source");
  EXPECT_EQ(below(right).check, Check::kSource);
  EXPECT_FALSE(below(right).enforcing);
  // A stream joined on its key is not re-keyed.
  StepPtr on_key = plan(
      "SELECT p.userid AS userid, u.level AS level FROM pageviews p JOIN users u ON p.userid = "
      "u.userid;");
  EXPECT_EQ(shape(*on_key),
            "StreamSink(StreamSelect(StreamTableJoin(StreamSelect(StreamSource), "
            "TableSelect(TableSource))))");
  EXPECT_EQ(upgrade(*on_key, *on_key), "Upgrades not yet supported for StreamTableJoin");
  EXPECT_EQ(upgrade(*plan("SELECT userid, page FROM pageviews;"), *on_key),
            "Query is not upgradeable. Cannot change a non-join source into a join source.");
}

TEST_F(PhysicalPlanTest, PartitionByBeforeExplode) {
  StepPtr sink = plan("SELECT region, EXPLODE(items) AS item FROM orders PARTITION BY region;");
  EXPECT_EQ(shape(*sink), "StreamSink(StreamSelect(StreamFlatMap(StreamSelectKey(StreamSource))))");
  const Step& flat_map = below(below(*sink));
  const Step& rekey = below(flat_map);
  EXPECT_EQ(flat_map.context, "FlatMap");
  EXPECT_EQ(flat_map.check, Check::kUnsupported);
  EXPECT_EQ(flat_map.schema.text().find("`KSQL_SYNTH_0` STRING") != std::string::npos, true)
      << flat_map.schema.text();
  EXPECT_EQ(rekey.context, "PartitionBy");
  EXPECT_EQ(rekey.check, Check::kMatch);
  EXPECT_EQ(rekey.compared, (decltype(rekey.compared){{"keyExpressions", "[REGION]"}}));
  EXPECT_EQ(rekey.key_format, "JSON");
  EXPECT_EQ(rekey.value_format, "DELIMITED");
  EXPECT_EQ(rekey.schema.text(),
            "`REGION` STRING KEY, `ID` INTEGER, `ITEMS` ARRAY<STRING>, "
            "`REGION` STRING");
  EXPECT_EQ(below(*sink).check, Check::kPassive);
  EXPECT_NE(physical_plan_text(*sink, "Q").find("\t\t\t\t > [ FLAT_MAP ] |"), std::string::npos);
  EXPECT_NE(physical_plan_text(*sink, "Q").find(" > [ REKEY ] |"), std::string::npos);
  EXPECT_EQ(upgrade(*sink, *sink), "Upgrades not yet supported for StreamFlatMap");
  // PARTITION BY NULL re-keys by nothing.
  StepPtr keyless = plan("SELECT * FROM orders PARTITION BY NULL;");
  EXPECT_EQ(below(below(*keyless)).compared,
            (decltype(rekey.compared){{"keyExpressions", "[null]"}}));
}

}  // namespace
}  // namespace oxbow::sql::physical
