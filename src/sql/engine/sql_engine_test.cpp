// The public API of include/oxbow/sql/engine.h: what a statement did, the queries as topologies
// with their Streams properties (run here in the test driver), and errors with ksqlDB's message
// and place.
#include "oxbow/sql/engine.h"

#include <gtest/gtest.h>

#include "oxbow/streams/test_driver.h"

namespace oxbow::sql {
namespace {

const char* const kPageviews =
    "CREATE STREAM pageviews (userid STRING KEY, page STRING, viewtime BIGINT) "
    "WITH (kafka_topic='pageviews', value_format='json', partitions=1);";

TEST(SqlEngineTest, StatementsReportWhatTheyDidAndTheQueryRunsInTheDriver) {
  SqlEngine engine;
  auto results = engine.execute(std::string(kPageviews) +
                                "\nCREATE STREAM busy AS SELECT userid, UCASE(page) AS page FROM "
                                "pageviews WHERE viewtime > 10;");
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].message, "Stream created");
  EXPECT_EQ(results[0].query_id, "");
  EXPECT_EQ(results[1].message, "Created query with ID CSAS_BUSY_0");
  EXPECT_EQ(results[1].query_id, "CSAS_BUSY_0");
  EXPECT_TRUE(results[1].statement.starts_with("CREATE STREAM busy AS SELECT"));
  EXPECT_EQ(results[1].text, "");

  auto queries = engine.queries();
  ASSERT_EQ(queries.size(), 1u);
  const RunnableQuery& q = queries[0];
  EXPECT_EQ(q.id, "CSAS_BUSY_0");
  EXPECT_EQ(q.sink, "BUSY");
  EXPECT_EQ(q.statement, results[1].statement);
  EXPECT_EQ(q.streams_properties.at("application.id"), "_confluent-ksql-default_query_CSAS_BUSY_0");
  EXPECT_FALSE(q.paused);
  ASSERT_TRUE(q.processing_error_handler);

  streams::TopologyTestDriver driver(q.topology, q.streams_properties);
  driver.setProcessingExceptionHandler(q.processing_error_handler);
  driver.pipe("pageviews", "alice", R"({"page":"home","viewtime":42})", 1);
  driver.pipe("pageviews", "bob", R"({"page":"cart","viewtime":5})", 2);
  driver.pipe("pageviews", "carol", "not json", 3);
  std::vector<std::string> out;
  while (auto r = driver.read("BUSY")) out.push_back(*r->key + "|" + *r->value);
  EXPECT_EQ(out, (std::vector<std::string>{R"(alice|{"PAGE":"HOME"})"}));

  // PAUSE shows in the query handed out; TERMINATE removes it.
  engine.execute("PAUSE CSAS_BUSY_0;");
  EXPECT_TRUE(engine.queries().at(0).paused);
  engine.execute("TERMINATE CSAS_BUSY_0;");
  EXPECT_TRUE(engine.queries().empty());
}

TEST(SqlEngineTest, ListingStatementsCarryTheTextTheCliPrints) {
  SqlEngine engine;
  engine.execute(kPageviews);
  auto shown = engine.execute("SHOW STREAMS;");
  ASSERT_EQ(shown.size(), 1u);
  EXPECT_NE(shown[0].text.find("Stream Name"), std::string::npos) << shown[0].text;
  EXPECT_NE(shown[0].text.find("PAGEVIEWS"), std::string::npos) << shown[0].text;
  EXPECT_FALSE(shown[0].text.starts_with("\n"));
  auto described = engine.execute("DESCRIBE pageviews;");
  EXPECT_NE(described[0].text.find("VIEWTIME"), std::string::npos) << described[0].text;
}

// The error of execute(), which must throw one.
StatementError error_of(SqlEngine& engine, const std::string& statements) {
  try {
    engine.execute(statements);
  } catch (const StatementError& e) {
    return e;
  }
  ADD_FAILURE() << "no error from " << statements;
  return StatementError("", -1, -1);
}

TEST(SqlEngineTest, ErrorsCarryKsqlMessageAndPlace) {
  SqlEngine engine;
  // A statement that fails stops the text; the statements before it stay done.
  StatementError refused =
      error_of(engine, std::string(kPageviews) +
                           "\nINSERT INTO nowhere SELECT userid, page FROM pageviews;");
  EXPECT_STREQ(refused.what(), "Line: 2, Col: 13: Source `NOWHERE` does not exist.");
  EXPECT_EQ(refused.line(), 2);
  EXPECT_EQ(refused.column(), 13);
  EXPECT_NE(engine.execute("SHOW STREAMS;")[0].text.find("PAGEVIEWS"), std::string::npos);

  // ksqlDB gives this one no place.
  StatementError unplaced = error_of(engine, "CREATE STREAM s AS SELECT * FROM nowhere;");
  EXPECT_STREQ(unplaced.what(), "NOWHERE does not exist.");
  EXPECT_EQ(unplaced.line(), 0);
  EXPECT_EQ(unplaced.column(), 0);

  StatementError syntax = error_of(engine, "SHOW STREAMS;\n  SELEKT 1;");
  EXPECT_TRUE(std::string(syntax.what()).starts_with("line 2:3: Syntax Error")) << syntax.what();
  EXPECT_EQ(syntax.line(), 2);
  EXPECT_EQ(syntax.column(), 3);
}

TEST(SqlEngineTest, SettingsReachTheEngine) {
  // Without a default value format, a source WITH no VALUE_FORMAT is refused.
  EngineSettings settings;
  settings.default_value_format = "DELIMITED";
  SqlEngine engine(settings);
  engine.execute(
      "CREATE STREAM s (id STRING KEY, a BIGINT) WITH (kafka_topic='s', partitions=1);"
      "CREATE STREAM t AS SELECT id, a FROM s;");
  streams::TopologyTestDriver driver(engine.queries().at(0).topology,
                                     engine.queries().at(0).streams_properties);
  driver.pipe("s", "k", "7", 1);
  auto r = driver.read("T");
  ASSERT_TRUE(r);
  EXPECT_EQ(*r->value, "7");
}

}  // namespace
}  // namespace oxbow::sql
