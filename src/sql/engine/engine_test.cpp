// Statements in, a persistent query out, run in Streams' TopologyTestDriver: records in on the
// source topic, the query's records read back from the sink's.
#include "sql/engine/engine.h"

#include <gtest/gtest.h>

#include "oxbow/streams/test_driver.h"
#include "sql/binder/sql_error.h"

namespace oxbow::sql {
namespace {

using streams::TopologyTestDriver;

class EngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    engine_.execute(
        "CREATE STREAM pageviews (userid STRING KEY, page STRING, viewtime BIGINT, "
        "amount DECIMAL(6, 2)) WITH (kafka_topic='pageviews', value_format='json', "
        "partitions=1);");
  }
  // The sink's records as "key|value".
  std::vector<std::string> drain(TopologyTestDriver& driver, const std::string& topic) {
    std::vector<std::string> out;
    while (auto r = driver.read(topic))
      out.push_back(r->key.value_or("<null>") + "|" + r->value.value_or("<null>"));
    return out;
  }

  Engine engine_;
};

TEST_F(EngineTest, CreateStreamAsSelectFiltersAndProjects) {
  auto results = engine_.execute(
      "CREATE STREAM busy AS SELECT userid, UCASE(page) AS page, viewtime * 2 AS doubled, "
      "amount + 1 AS more FROM pageviews WHERE viewtime > 10;");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].query_id, "CSAS_BUSY_0");
  EXPECT_EQ(results[0].message, "Created query with ID CSAS_BUSY_0");
  const DataSource* sink = engine_.catalog().find_source("BUSY");
  ASSERT_TRUE(sink);
  EXPECT_EQ(sink->topic, "BUSY");
  EXPECT_EQ(sink->schema_text(),
            "`USERID` STRING KEY, `PAGE` STRING, `DOUBLED` BIGINT, `MORE` DECIMAL(13, 2)");

  const PersistentQuery* q = engine_.query("CSAS_BUSY_0");
  TopologyTestDriver driver(q->topology, q->streams_config);
  driver.pipe("pageviews", "alice", R"({"page":"home","viewtime":42,"amount":1.5})", 1000);
  driver.pipe("pageviews", "bob", R"({"PAGE":"cart","VIEWTIME":5,"AMOUNT":2})", 1001);
  driver.pipe("pageviews", "carol", R"({"page":null,"viewtime":11})", 1002);
  EXPECT_EQ(drain(driver, "BUSY"),
            (std::vector<std::string>{R"(alice|{"DOUBLED":84,"MORE":2.5,"PAGE":"HOME"})",
                                      R"(carol|{"DOUBLED":22,"MORE":null,"PAGE":null})"}));
}

TEST_F(EngineTest, PoisonRecordsAreSkippedAndCountedAndTheQueryGoesOn) {
  engine_.execute("CREATE STREAM s2 AS SELECT userid, viewtime FROM pageviews;");
  const PersistentQuery* q = engine_.query("CSAS_S2_0");
  TopologyTestDriver driver(q->topology, q->streams_config);
  driver.pipe("pageviews", "a", "not json", 1);
  driver.pipe("pageviews", "b", R"({"viewtime":"not a number"})", 2);
  driver.pipe("pageviews", "c", R"({"viewtime":7})", 3);
  EXPECT_EQ(drain(driver, "S2"), (std::vector<std::string>{R"(c|{"VIEWTIME":7})"}));
  EXPECT_EQ(driver.skippedRecords(), 2);
}

TEST_F(EngineTest, ExpressionErrorsGiveNullAndAreCounted) {
  engine_.execute("CREATE STREAM s3 AS SELECT userid, viewtime / 0 AS broken FROM pageviews;");
  const PersistentQuery* q = engine_.query("CSAS_S3_0");
  TopologyTestDriver driver(q->topology, q->streams_config);
  driver.pipe("pageviews", "a", R"({"viewtime":3})", 1);
  EXPECT_EQ(drain(driver, "S3"), (std::vector<std::string>{R"(a|{"BROKEN":null})"}));
  EXPECT_EQ(q->counters->expression_errors.load(), 1);
}

TEST_F(EngineTest, CatalogStatementsAndTheirRefusals) {
  EXPECT_EQ(engine_
                .execute("CREATE STREAM IF NOT EXISTS pageviews (x INT) WITH "
                         "(kafka_topic='p', value_format='json');")[0]
                .warnings,
            (std::vector<std::string>{"A stream with the same name already exists."}));
  engine_.execute("CREATE STREAM s4 AS SELECT userid, page FROM pageviews;");
  try {
    engine_.execute("DROP STREAM pageviews;");
    ADD_FAILURE();
  } catch (const SqlError& e) {
    EXPECT_EQ(std::string(e.what()),
              "Cannot drop PAGEVIEWS.\nThe following queries read from this source: "
              "[CSAS_S4_0].\nThe following queries write into this source: [].\nYou need to "
              "terminate them before dropping PAGEVIEWS.");
  }
  try {
    engine_.execute("DROP STREAM nothing;");
    ADD_FAILURE();
  } catch (const SqlError& e) {
    EXPECT_EQ(std::string(e.what()), "Stream NOTHING does not exist.");
  }
  EXPECT_THROW(engine_.execute("CREATE STREAM agg AS SELECT page, COUNT(*) FROM pageviews "
                               "GROUP BY page;"),
               SqlError);
}

}  // namespace
}  // namespace oxbow::sql
