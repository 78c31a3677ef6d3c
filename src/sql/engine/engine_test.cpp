// Statements in, a persistent query out, run in Streams' TopologyTestDriver: records in on the
// source topic, the query's records read back from the sink's.
#include "sql/engine/engine.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>

#include "oxbow/streams/kstream.h"
#include "oxbow/streams/streams_builder.h"
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

  // The query's topology in a driver without a cache: every update, as ksqlDB's tests see them.
  TopologyTestDriver uncached(const std::string& query_id) {
    const PersistentQuery* q = engine_.query(query_id);
    auto config = q->streams_config;
    config["statestore.cache.max.bytes"] = "0";
    return TopologyTestDriver(q->topology, config);
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
            (std::vector<std::string>{R"(alice|{"PAGE":"HOME","DOUBLED":84,"MORE":2.50})",
                                      R"(carol|{"PAGE":null,"DOUBLED":22,"MORE":null})"}));
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
  EXPECT_EQ(q->counters->deserialization_errors.load(), 2);
  // Each in the processing log, in ksqlDB's entry format.
  auto log = std::dynamic_pointer_cast<MemoryProcessingLog>(engine_.processing_log());
  auto entries = log->entries();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].logger, "CSAS_S2_0.KsqlTopic.Source.deserializer");
  EXPECT_EQ(entries[0].target, "value");
  EXPECT_EQ(entries[0].topic, "pageviews");
  EXPECT_EQ(entries[0].message.rfind("Failed to deserialize value from topic: pageviews. ", 0), 0u);
  auto json = nlohmann::json::parse(processing_log_json(entries[1]));
  EXPECT_EQ(json["LEVEL"], "ERROR");
  EXPECT_EQ(json["MESSAGE"]["TYPE"], 0);
  EXPECT_EQ(json["MESSAGE"]["DESERIALIZATIONERROR"]["TARGET"], "value");
  EXPECT_EQ(json["MESSAGE"]["DESERIALIZATIONERROR"]["topic"], "pageviews");
  EXPECT_TRUE(json["MESSAGE"]["DESERIALIZATIONERROR"]["RECORDB64"].is_null());
  EXPECT_TRUE(json["MESSAGE"]["RECORDPROCESSINGERROR"].is_null());
}

TEST_F(EngineTest, ExpressionErrorsGiveNullAndAreCounted) {
  engine_.execute("CREATE STREAM s3 AS SELECT userid, viewtime / 0 AS broken FROM pageviews;");
  const PersistentQuery* q = engine_.query("CSAS_S3_0");
  TopologyTestDriver driver(q->topology, q->streams_config);
  driver.pipe("pageviews", "a", R"({"viewtime":3})", 1);
  EXPECT_EQ(drain(driver, "S3"), (std::vector<std::string>{R"(a|{"BROKEN":null})"}));
  EXPECT_EQ(q->counters->expression_errors.load(), 1);
  auto log = std::dynamic_pointer_cast<MemoryProcessingLog>(engine_.processing_log());
  ASSERT_EQ(log->entries().size(), 1u);
  auto json = nlohmann::json::parse(processing_log_json(log->entries()[0]));
  EXPECT_EQ(json["LOGGER"], "CSAS_S3_0.Project");
  EXPECT_EQ(json["MESSAGE"]["TYPE"], 1);
  EXPECT_EQ(json["MESSAGE"]["RECORDPROCESSINGERROR"]["ERRORMESSAGE"].get<std::string>().rfind(
                "Error computing expression for column BROKEN: ", 0),
            0u);
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
  try {
    engine_.execute("CREATE STREAM agg AS SELECT page, COUNT(*) FROM pageviews GROUP BY page;");
    ADD_FAILURE();
  } catch (const SqlError& e) {
    EXPECT_EQ(std::string(e.what()),
              "Invalid result type. Your SELECT query produces a TABLE. Please use CREATE TABLE "
              "AS SELECT statement instead.");
  }
}

TEST_F(EngineTest, PartitionByRekeysStraightToTheSink) {
  engine_.execute(
      "CREATE STREAM by_page AS SELECT page, userid, viewtime FROM pageviews "
      "PARTITION BY page;");
  const PersistentQuery* q = engine_.query("CSAS_BY_PAGE_0");
  EXPECT_EQ(engine_.catalog().find_source("BY_PAGE")->schema_text(),
            "`PAGE` STRING KEY, `USERID` STRING, `VIEWTIME` BIGINT");
  TopologyTestDriver driver(q->topology, q->streams_config);
  driver.pipe("pageviews", "alice", R"({"page":"home","viewtime":1})", 1);
  EXPECT_EQ(drain(driver, "BY_PAGE"),
            (std::vector<std::string>{R"(home|{"USERID":"alice","VIEWTIME":1})"}));
}

TEST_F(EngineTest, ExplainShowsThePlanAndTheTopology) {
  auto r = engine_.execute(
      "EXPLAIN SELECT page, COUNT(*) AS n FROM pageviews WHERE viewtime > 1 GROUP BY page "
      "EMIT CHANGES;");
  const std::string& text = r.at(0).explanation;
  // The logical plan's steps from the sink down, each with the schema of the rows it gives.
  EXPECT_NE(text.find("Logical plan:\n > [ SINK ] | (transient) | Schema: `PAGE` STRING KEY, "
                      "`N` BIGINT\n   > [ PROJECT ] | Schema: `PAGE` STRING KEY, `N` BIGINT\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("     > [ AGGREGATE ] | GROUP BY PAGE | Schema: `PAGE` STRING KEY, "
                      "`KSQL_AGG_VARIABLE_0` BIGINT\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("       > [ FILTER ] | WHERE (VIEWTIME > 1)"), std::string::npos) << text;
  EXPECT_NE(text.find("[ SOURCE ] | PAGEVIEWS (topic pageviews)"), std::string::npos) << text;
  // The physical plan as ksqlDB prints its execution plan (a transient query has no sink step).
  EXPECT_NE(text.find("Physical plan:\n > [ PROJECT ] | Schema: PAGE STRING KEY, N BIGINT | "
                      "Logger: transient_PAGEVIEWS.Aggregate.Project\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\n\t\t\t\t > [ GROUP_BY ] | Schema: "), std::string::npos) << text;
  EXPECT_LT(text.find("Logical plan:"), text.find("Physical plan:"));
  EXPECT_LT(text.find("Physical plan:"), text.find("Topology:"));
  EXPECT_NE(text.find("Aggregate-GroupBy-repartition"), std::string::npos) << text;
  EXPECT_NE(text.find("Aggregate-Aggregate-Materialize"), std::string::npos) << text;
  engine_.execute("CREATE STREAM s5 AS SELECT userid, page FROM pageviews;");
  std::string running = engine_.execute("EXPLAIN CSAS_S5_0;").at(0).explanation;
  EXPECT_NE(running.find("Sub-topology: 0"), std::string::npos);
  EXPECT_NE(running.find("Physical plan:\n > [ SINK ] | Schema: USERID STRING KEY, PAGE STRING | "
                         "Logger: CSAS_S5_0.S5\n"),
            std::string::npos)
      << running;
}

TEST_F(EngineTest, InsertIntoWritesAQueryIntoAnExistingStream) {
  engine_.execute(
      "CREATE STREAM all_views (userid STRING KEY, page STRING) WITH (kafka_topic='all', "
      "value_format='json');");
  auto r = engine_.execute("INSERT INTO all_views SELECT userid, page FROM pageviews;");
  EXPECT_EQ(r[0].query_id, "INSERTQUERY_0");
  const PersistentQuery* q = engine_.query("INSERTQUERY_0");
  TopologyTestDriver driver(q->topology, q->streams_config);
  driver.pipe("pageviews", "a", R"({"page":"x"})", 1);
  EXPECT_EQ(drain(driver, "all"), (std::vector<std::string>{R"(a|{"PAGE":"x"})"}));
  auto error = [&](const std::string& statement) {
    try {
      engine_.execute(statement);
    } catch (const SqlError& e) {
      return std::string(e.what());
    }
    return std::string("(ran)");
  };
  EXPECT_EQ(error("INSERT INTO all_views SELECT userid, viewtime FROM pageviews;"),
            "Incompatible schema between results and sink.\nResult schema is `USERID` STRING KEY, "
            "`VIEWTIME` BIGINT\nSink schema is `USERID` STRING KEY, `PAGE` STRING");
  EXPECT_EQ(error("INSERT INTO nowhere SELECT userid, page FROM pageviews;"),
            "Line: 1, Col: 13: Source `NOWHERE` does not exist.");
}

TEST_F(EngineTest, ShowAndDescribe) {
  engine_.execute(
      "CREATE TABLE users (id STRING PRIMARY KEY, level STRING) WITH (kafka_topic='u', "
      "value_format='json'); CREATE STREAM s6 AS SELECT userid, page FROM pageviews;");
  auto streams = engine_.execute("SHOW STREAMS;").at(0).sources;
  ASSERT_EQ(streams.size(), 2u);
  EXPECT_EQ(streams[0].name, "PAGEVIEWS");
  EXPECT_EQ(streams[1].name, "S6");
  EXPECT_EQ(engine_.execute("LIST TABLES;").at(0).sources.at(0).name, "USERS");
  auto queries = engine_.execute("SHOW QUERIES;").at(0).queries;
  ASSERT_EQ(queries.size(), 1u);
  EXPECT_EQ(queries[0].id, "CSAS_S6_0");
  EXPECT_EQ(queries[0].sinks, std::vector<std::string>{"S6"});
  auto users = engine_.execute("DESCRIBE users;").at(0).source_descriptions.at(0);
  EXPECT_EQ(users.name, "USERS");
  EXPECT_EQ(users.type, "TABLE");
  try {
    engine_.execute("DESCRIBE nothing;");
    ADD_FAILURE();
  } catch (const SqlError& e) {
    EXPECT_EQ(std::string(e.what()), "Could not find STREAM/TABLE 'NOTHING' in the Metastore");
  }
}

// The reference: per key, what each aggregate is after each of that key's records, in order.
TEST_F(EngineTest, GroupByAggregatesEveryUpdate) {
  auto r = engine_.execute(
      "CREATE TABLE per_page AS SELECT page, COUNT(*) AS views, SUM(viewtime) AS total, "
      "MAX(viewtime) AS longest, AVG(viewtime) AS mean, COLLECT_LIST(userid) AS who FROM "
      "pageviews WHERE viewtime >= 0 GROUP BY page;");
  EXPECT_EQ(r[0].query_id, "CTAS_PER_PAGE_0");
  const DataSource* sink = engine_.catalog().find_source("PER_PAGE");
  EXPECT_EQ(sink->kind, SourceKind::kTable);
  EXPECT_EQ(sink->schema_text(),
            "`PAGE` STRING PRIMARY KEY, `VIEWS` BIGINT, `TOTAL` BIGINT, `LONGEST` BIGINT, `MEAN` "
            "DOUBLE, `WHO` ARRAY<STRING>");
  TopologyTestDriver driver = uncached("CTAS_PER_PAGE_0");
  driver.pipe("pageviews", "a", R"({"page":"home","viewtime":10})", 1);
  driver.pipe("pageviews", "b", R"({"page":"cart","viewtime":5})", 2);
  driver.pipe("pageviews", "c", R"({"page":"home","viewtime":30})", 3);
  driver.pipe("pageviews", "d", R"({"page":"home","viewtime":-1})", 4);  // filtered out
  driver.pipe("pageviews", "e", R"({"page":null,"viewtime":1})", 5);     // no group: dropped
  EXPECT_EQ(drain(driver, "PER_PAGE"),
            (std::vector<std::string>{
                R"(home|{"VIEWS":1,"TOTAL":10,"LONGEST":10,"MEAN":10.0,"WHO":["a"]})",
                R"(cart|{"VIEWS":1,"TOTAL":5,"LONGEST":5,"MEAN":5.0,"WHO":["b"]})",
                R"(home|{"VIEWS":2,"TOTAL":40,"LONGEST":30,"MEAN":20.0,"WHO":["a","c"]})"}));
}

TEST_F(EngineTest, TumblingWindowWithHavingAndWindowBounds) {
  engine_.execute(
      "CREATE TABLE possible_fraud AS SELECT userid, WINDOWSTART AS ws, COUNT(*) AS n FROM "
      "pageviews WINDOW TUMBLING (SIZE 5 SECONDS, GRACE PERIOD 0 SECONDS) GROUP BY userid "
      "HAVING COUNT(*) > 1;");
  ASSERT_TRUE(engine_.query("CTAS_POSSIBLE_FRAUD_0"));
  TopologyTestDriver driver = uncached("CTAS_POSSIBLE_FRAUD_0");
  for (int64_t t : {1000, 2000, 3000, 6000, 7000})
    driver.pipe("pageviews", "card1", R"({"viewtime":1})", t);
  std::vector<std::string> got;
  while (auto r = driver.read("POSSIBLE_FRAUD")) {
    // The key: the KAFKA string, then the window's start as 8 bytes (Kafka's time-windowed key).
    std::string key = r->key.value_or("");
    int64_t start = 0;
    for (size_t i = key.size() - 8; i < key.size(); ++i)
      start = (start << 8) | static_cast<unsigned char>(key[i]);
    got.push_back(key.substr(0, key.size() - 8) + "@" + std::to_string(start) + "|" +
                  r->value.value_or("<null>"));
  }
  EXPECT_EQ(got, (std::vector<std::string>{R"(card1@0|{"WS":0,"N":2})", R"(card1@0|{"WS":0,"N":3})",
                                           R"(card1@5000|{"WS":5000,"N":2})"}));
}

TEST_F(EngineTest, AGroupThatStopsMatchingHavingIsDeleted) {
  engine_.execute(
      "CREATE TABLE big_spenders AS SELECT userid, SUM(viewtime) AS total FROM pageviews "
      "GROUP BY userid HAVING SUM(viewtime) > 10;");
  ASSERT_TRUE(engine_.query("CTAS_BIG_SPENDERS_0"));
  TopologyTestDriver driver = uncached("CTAS_BIG_SPENDERS_0");
  for (auto [t, v] :
       std::vector<std::pair<int64_t, int>>{{1, 4}, {2, 11}, {3, -10}, {4, 1}, {5, 20}})
    driver.pipe("pageviews", "ann", R"({"viewtime":)" + std::to_string(v) + "}", t);
  // 4 never matched: nothing; 15 matches; 5 stops matching: a tombstone; 6 still does not: nothing.
  EXPECT_EQ(drain(driver, "BIG_SPENDERS"),
            (std::vector<std::string>{R"(ann|{"TOTAL":15})", "ann|<null>", R"(ann|{"TOTAL":26})"}));
}

TEST_F(EngineTest, GroupingByTheSourcesKeyNeedsNoRepartitionButByAValueColumnDoes) {
  engine_.execute(
      "CREATE TABLE per_user AS SELECT userid, COUNT(*) AS n FROM pageviews GROUP BY userid;"
      "CREATE TABLE per_page AS SELECT page, COUNT(*) AS n FROM pageviews GROUP BY page;");
  auto repartitioned = [&](const std::string& id) {
    TopologyTestDriver driver = uncached(id);
    driver.pipe("pageviews", "ann", R"({"page":"home"})", 1);
    driver.pipe("pageviews", "ann", R"({"page":"cart"})", 2);
    auto topics = driver.producedTopicNames();
    std::string want = "_confluent-ksql-default_query_" + id + "-Aggregate-GroupBy-repartition";
    bool found = std::find(topics.begin(), topics.end(), want) != topics.end();
    EXPECT_EQ(drain(driver, id == "CTAS_PER_USER_0" ? "PER_USER" : "PER_PAGE").size(), 2u);
    return found;
  };
  EXPECT_FALSE(repartitioned("CTAS_PER_USER_0"));
  EXPECT_TRUE(repartitioned("CTAS_PER_PAGE_1"));
}

TEST_F(EngineTest, SessionWindowsMergeTheirAggregates) {
  engine_.execute(
      "CREATE TABLE sessions AS SELECT userid, COUNT(*) AS n, SUM(viewtime) AS t FROM pageviews "
      "WINDOW SESSION (20 SECONDS) GROUP BY userid;");
  TopologyTestDriver driver = uncached("CTAS_SESSIONS_0");
  driver.pipe("pageviews", "u", R"({"viewtime":1})", 0);
  driver.pipe("pageviews", "u", R"({"viewtime":2})", 30000);
  driver.pipe("pageviews", "u", R"({"viewtime":4})", 15000);  // bridges both sessions
  std::vector<std::string> values;
  while (auto r = driver.read("SESSIONS")) values.push_back(r->value.value_or("<tombstone>"));
  ASSERT_FALSE(values.empty());
  EXPECT_EQ(values.back(), R"({"N":3,"T":7})");
}

}  // namespace
}  // namespace oxbow::sql

namespace oxbow::sql {
namespace {

// A node that throws on a record (a bug, a store that fails) is the processing-exception
// handler's: the engine's logs the record's error and counts it, and the query goes on.
TEST(ProcessingErrors, ANodeThatThrowsIsLoggedCountedAndSkipped) {
  Engine engine;
  engine.execute(
      "CREATE STREAM s (id STRING KEY, a BIGINT) WITH (kafka_topic='s', value_format='json', "
      "partitions=1);"
      "CREATE STREAM o AS SELECT id, a FROM s;");
  const PersistentQuery* q = engine.query("CSAS_O_0");
  ASSERT_TRUE(q && q->processing_errors);
  // The query's handler, installed on a topology with a node that fails on one record.
  streams::StreamsBuilder builder;
  builder.stream<std::string, std::string>("in")
      .mapValues<std::string>([](const std::string& v) {
        if (v == "bad") throw std::runtime_error("cannot process " + v);
        return v;
      })
      .to("out");
  TopologyTestDriver driver(builder.build(), {{"application.id", "errors"}});
  driver.setProcessingExceptionHandler(q->processing_errors);
  driver.pipe("in", "k", "good", 1);
  driver.pipe("in", "k", "bad", 2);
  driver.pipe("in", "k", "fine", 3);
  std::vector<std::string> out;
  while (auto r = driver.read("out")) out.push_back(*r->value);
  EXPECT_EQ(out, (std::vector<std::string>{"good", "fine"}));
  EXPECT_EQ(q->counters->processing_errors.load(), 1);
  auto log = std::dynamic_pointer_cast<MemoryProcessingLog>(engine.processing_log());
  ASSERT_EQ(log->entries().size(), 1u);
  const ProcessingLogEntry entry = log->entries()[0];
  EXPECT_EQ(entry.type, ProcessingLogEntry::Type::kRecordProcessingError);
  EXPECT_EQ(entry.logger, "CSAS_O_0.KSTREAM-MAPVALUES-0000000001");
  EXPECT_EQ(entry.message,
            "Error processing record in KSTREAM-MAPVALUES-0000000001 (task 0_0): cannot process "
            "bad");
  // And the query itself runs with it as its fallback, by name, where no handler is installed.
  EXPECT_EQ(q->streams_config.at("processing.exception.handler"),
            "org.apache.kafka.streams.errors.LogAndContinueProcessingExceptionHandler");
}

}  // namespace
}  // namespace oxbow::sql
