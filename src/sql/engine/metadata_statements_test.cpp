// SHOW STREAMS|TABLES|QUERIES [EXTENDED], DESCRIBE [EXTENDED] and EXPLAIN <id>: the fields of
// ksqlDB's SourceDescription, RunningQuery and QueryDescription the engine fills, the runtime
// statistics counted while a query runs (in the TopologyTestDriver), and the text ksqlDB's CLI
// prints of them.
#include <gtest/gtest.h>

#include "oxbow/streams/test_driver.h"
#include "sql/engine/description_output.h"
#include "sql/engine/engine.h"

namespace oxbow::sql {
namespace {

using streams::TopologyTestDriver;

const char* const kPageviews =
    "CREATE STREAM pageviews (userid STRING KEY, page STRING, viewtime BIGINT, tags "
    "ARRAY<STRING>, source BYTES HEADER('src')) WITH (kafka_topic='pageviews', "
    "value_format='json', partitions=3, timestamp='viewtime');";
const char* const kBusy = "CREATE STREAM busy AS SELECT userid, page FROM pageviews;";

// A windowed count of pageviews by page, and what a description of its query must say.
std::string per_page(const std::string& window) {
  return "CREATE TABLE per_page AS SELECT page, COUNT(*) AS views FROM pageviews WINDOW " + window +
         " GROUP BY page;";
}

void expect_per_page_query(const QueryDescription& d, const std::string& window,
                           const std::string& window_type) {
  EXPECT_EQ(d.id, "CTAS_PER_PAGE_1");
  EXPECT_EQ(d.statement_text, per_page(window));
  EXPECT_EQ(d.window_type, window_type);
  ASSERT_EQ(d.fields.size(), 2u);
  EXPECT_EQ(d.fields[0].name, "PAGE");
  EXPECT_EQ(d.fields[0].field_type, FieldInfo::FieldType::kKey);
  EXPECT_EQ(d.fields[1].name, "VIEWS");
  EXPECT_EQ(d.sources, std::vector<std::string>{"PAGEVIEWS"});
  EXPECT_EQ(d.sinks, std::vector<std::string>{"PER_PAGE"});
  EXPECT_NE(d.topology.find("Sub-topology: 0"), std::string::npos);
  // ksqlDB's executionPlan: the physical plan's steps, each with its logger.
  EXPECT_EQ(d.execution_plan.rfind(" > [ SINK ] | Schema: PAGE STRING KEY, VIEWS BIGINT | Logger: "
                                   "CTAS_PER_PAGE_1.PER_PAGE\n",
                                   0),
            0u)
      << d.execution_plan;
  EXPECT_NE(d.execution_plan.find(
                " > [ AGGREGATE ] | Schema: PAGE STRING KEY, KSQL_AGG_VARIABLE_0 BIGINT | Logger: "
                "CTAS_PER_PAGE_1.Aggregate.Aggregate\n"),
            std::string::npos)
      << d.execution_plan;
  EXPECT_EQ(d.query_type, "PERSISTENT");
  EXPECT_EQ(d.consumer_group_id, "_confluent-ksql-default_query_CTAS_PER_PAGE_1");
}

class FailingTopics : public TopicAccess {
 public:
  std::vector<TopicInfo> topics;
  bool fail = false;
  int listings = 0;
  std::vector<TopicInfo> list_topics(bool) override {
    ++listings;
    if (fail) throw std::runtime_error("Failed to list Kafka topics");
    return topics;
  }
  void read(const std::string&, bool, const std::function<bool(const ReadBatch&)>&) override {}
};

class MetadataStatementsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    engine_.execute(kPageviews);
    engine_.execute(kBusy);
  }
  StatementResult one(const std::string& statement) { return engine_.execute(statement).at(0); }
  SourceDescription described(const std::string& statement) {
    StatementResult r = one(statement);
    EXPECT_EQ(r.source_descriptions.size(), 1u);
    return r.source_descriptions.at(0);
  }

  Engine engine_;
};

TEST_F(MetadataStatementsTest, DescribeFillsTheSourceDescriptionWithoutStatistics) {
  StatementResult r = one("DESCRIBE pageviews;");
  EXPECT_EQ(r.entity, StatementResult::Entity::kSourceDescription);
  ASSERT_EQ(r.source_descriptions.size(), 1u);
  const SourceDescription& d = r.source_descriptions[0];
  EXPECT_EQ(d.name, "PAGEVIEWS");
  EXPECT_EQ(d.type, "STREAM");
  EXPECT_FALSE(d.extended);
  EXPECT_FALSE(d.window_type);
  EXPECT_EQ(d.timestamp, "VIEWTIME");
  EXPECT_EQ(d.key_format, "KAFKA");
  EXPECT_EQ(d.value_format, "JSON");
  EXPECT_EQ(d.topic, "pageviews");
  EXPECT_EQ(d.partitions, 3);  // as declared: no cluster to ask
  EXPECT_EQ(d.replication, 1);
  EXPECT_EQ(d.statement, kPageviews);
  ASSERT_EQ(d.fields.size(), 5u);
  EXPECT_EQ(d.fields[0].name, "USERID");
  EXPECT_EQ(d.fields[0].field_type, FieldInfo::FieldType::kKey);
  EXPECT_EQ(d.fields[1].name, "PAGE");
  EXPECT_FALSE(d.fields[1].field_type);
  EXPECT_EQ(schema_type_text(*d.fields[3].schema), "ARRAY<VARCHAR(STRING)>");
  EXPECT_EQ(d.fields[4].field_type, FieldInfo::FieldType::kHeader);
  EXPECT_EQ(d.fields[4].header_key, "src");
  // ksqlDB lists the queries in the plain form too; only the statistics wait for EXTENDED.
  ASSERT_EQ(d.read_queries.size(), 1u);
  EXPECT_TRUE(d.write_queries.empty());
  const RunningQuery& q = d.read_queries[0];
  EXPECT_EQ(q.id, "CSAS_BUSY_0");
  EXPECT_EQ(q.query_string, kBusy);
  EXPECT_EQ(q.sinks, std::vector<std::string>{"BUSY"});
  EXPECT_EQ(q.sink_kafka_topics, std::vector<std::string>{"BUSY"});
  EXPECT_EQ(q.status_text(), "RUNNING:1");
  EXPECT_EQ(q.state(), "RUNNING");
  EXPECT_EQ(q.query_type, "PERSISTENT");
  EXPECT_EQ(d.statistics, "");
  EXPECT_TRUE(d.statistics_list.empty());

  SourceDescription sink = described("DESCRIBE busy;");
  EXPECT_EQ(sink.statement, kBusy);
  ASSERT_EQ(sink.write_queries.size(), 1u);
  EXPECT_EQ(sink.write_queries[0].id, "CSAS_BUSY_0");
  EXPECT_TRUE(sink.read_queries.empty());
}

TEST_F(MetadataStatementsTest, ExtendedStatisticsCountWhatTheQueriesReadWroteAndCouldNotRead) {
  SourceDescription idle = described("DESCRIBE pageviews EXTENDED;");
  EXPECT_TRUE(idle.extended);
  EXPECT_EQ(idle.statistics, "");  // ksqlDB's sensors come with the first record
  EXPECT_EQ(idle.error_stats, "");

  const PersistentQuery* q = engine_.query("CSAS_BUSY_0");
  TopologyTestDriver driver(q->topology, q->streams_config);
  driver.pipe("pageviews", "a", R"({"page":"home","viewtime":1})", 1);
  driver.pipe("pageviews", "b", "not json", 2);
  driver.pipe("pageviews", "c", R"({"page":"cart","viewtime":3})", 3);

  SourceDescription read = described("DESCRIBE pageviews EXTENDED;");
  ASSERT_EQ(read.statistics_list.size(), 1u);
  EXPECT_EQ(read.statistics_list[0].name, "consumer-total-messages");
  EXPECT_EQ(read.statistics_list[0].value, 3);
  EXPECT_GT(read.statistics_list[0].timestamp, 0);
  ASSERT_EQ(read.error_stats_list.size(), 1u);
  EXPECT_EQ(read.error_stats_list[0].name, "consumer-failed-messages");
  EXPECT_EQ(read.error_stats_list[0].value, 1);
  EXPECT_EQ(read.statistics.substr(0, 34), "consumer-total-messages:         3");
  EXPECT_NE(read.statistics.find("    last-message: 20"), std::string::npos);
  EXPECT_EQ(read.error_stats.substr(0, 35), "consumer-failed-messages:         1");
  EXPECT_NE(read.error_stats.find("     last-failed: 20"), std::string::npos);

  SourceDescription written = described("DESCRIBE busy EXTENDED;");
  ASSERT_EQ(written.statistics_list.size(), 1u);
  EXPECT_EQ(written.statistics_list[0].name, "total-messages");
  EXPECT_EQ(written.statistics_list[0].value, 2);
  EXPECT_TRUE(written.error_stats_list.empty());
}

TEST_F(MetadataStatementsTest, ListsAndExtendedListsOfSources) {
  engine_.execute(
      "CREATE TABLE users (id STRING PRIMARY KEY, level STRING) WITH (kafka_topic='u', "
      "value_format='json', partitions=1);");
  StatementResult tables = one("SHOW TABLES;");
  EXPECT_EQ(tables.entity, StatementResult::Entity::kTables);
  ASSERT_EQ(tables.sources.size(), 1u);
  EXPECT_TRUE(tables.source_descriptions.empty());

  StatementResult streams = one("SHOW STREAMS EXTENDED;");
  EXPECT_EQ(streams.entity, StatementResult::Entity::kSourceDescriptionList);
  EXPECT_TRUE(streams.sources.empty());
  ASSERT_EQ(streams.source_descriptions.size(), 2u);
  EXPECT_EQ(streams.source_descriptions[0].name, "BUSY");
  EXPECT_EQ(streams.source_descriptions[1].name, "PAGEVIEWS");
  EXPECT_TRUE(streams.source_descriptions[1].extended);

  StatementResult described_tables = one("DESCRIBE TABLES;");
  EXPECT_EQ(described_tables.entity, StatementResult::Entity::kSourceDescriptionList);
  ASSERT_EQ(described_tables.source_descriptions.size(), 1u);
  EXPECT_EQ(described_tables.source_descriptions[0].type, "TABLE");
  EXPECT_FALSE(described_tables.source_descriptions[0].extended);
  EXPECT_TRUE(one("DESCRIBE TABLES EXTENDED;").source_descriptions.at(0).extended);
}

TEST_F(MetadataStatementsTest, TopicsComeFromTheClusterWhenThereIsOne) {
  auto cluster = std::make_shared<FailingTopics>();
  cluster->topics.push_back({"pageviews", {2, 2, 2, 2}, 0, 0});
  engine_.set_topic_access(cluster);
  StatementResult r = one("SHOW STREAMS EXTENDED;");
  EXPECT_EQ(cluster->listings, 1);  // once for every source of the statement
  EXPECT_EQ(r.source_descriptions.at(1).partitions, 4);
  EXPECT_EQ(r.source_descriptions.at(1).replication, 2);
  // BUSY's topic is not made yet: what its CREATE gave it (the source's partition count).
  EXPECT_EQ(r.source_descriptions.at(0).partitions, 3);
  EXPECT_TRUE(r.warnings.empty());

  cluster->fail = true;
  r = one("SHOW STREAMS EXTENDED;");
  EXPECT_EQ(r.warnings, std::vector<std::string>{"Error from Kafka: Failed to list Kafka topics"});
  EXPECT_EQ(r.source_descriptions.at(1).partitions, 3);
}

TEST_F(MetadataStatementsTest, ShowQueriesAndTheirDescriptions) {
  engine_.execute("SET 'auto.offset.reset'='earliest';");
  engine_.execute(per_page("TUMBLING (SIZE 1 MINUTE)"));
  engine_.execute("PAUSE CSAS_BUSY_0;");
  StatementResult list = one("SHOW QUERIES;");
  ASSERT_EQ(list.queries.size(), 2u);
  EXPECT_EQ(list.queries[0].id, "CSAS_BUSY_0");
  EXPECT_EQ(list.queries[0].status_text(), "PAUSED:1");
  EXPECT_EQ(list.queries[0].state(), "RUNNING");  // ksqlDB's aggregate knows only ERROR
  EXPECT_EQ(list.queries[1].id, "CTAS_PER_PAGE_1");
  EXPECT_EQ(list.queries[1].sink_kafka_topics, std::vector<std::string>{"PER_PAGE"});
  EXPECT_TRUE(list.query_descriptions.empty());
  EXPECT_EQ(list.entity, StatementResult::Entity::kQueries);

  StatementResult extended = one("SHOW QUERIES EXTENDED;");
  EXPECT_TRUE(extended.queries.empty());
  EXPECT_EQ(extended.entity, StatementResult::Entity::kQueryDescriptionList);
  ASSERT_EQ(extended.query_descriptions.size(), 2u);
  const QueryDescription& busy = extended.query_descriptions[0];
  EXPECT_EQ(busy.id, "CSAS_BUSY_0");
  EXPECT_EQ(busy.status, "PAUSED");
  EXPECT_TRUE(busy.overridden_properties.empty());  // started before the SET
  const QueryDescription& d = extended.query_descriptions[1];
  expect_per_page_query(d, "TUMBLING (SIZE 1 MINUTE)", "TUMBLING");
  EXPECT_EQ(d.overridden_properties.at("auto.offset.reset"), "earliest");
  EXPECT_EQ(d.status, "RUNNING");

  StatementResult explained = one("EXPLAIN CTAS_PER_PAGE_1;");
  ASSERT_EQ(explained.query_descriptions.size(), 1u);
  EXPECT_EQ(explained.entity, StatementResult::Entity::kQueryDescription);
  EXPECT_EQ(explained.query_descriptions[0].id, "CTAS_PER_PAGE_1");
}

TEST_F(MetadataStatementsTest, ExplainOfAStatementDescribesTheQueryItWouldStart) {
  StatementResult r = one("EXPLAIN " + per_page("SESSION (5 MINUTES)"));
  EXPECT_EQ(r.entity, StatementResult::Entity::kQueryDescription);
  ASSERT_EQ(r.query_descriptions.size(), 1u);
  const QueryDescription& d = r.query_descriptions[0];
  // The query the statement would start, with the id it would take.
  expect_per_page_query(d, "SESSION (5 MINUTES)", "SESSION");
  EXPECT_EQ(d.status, "");                         // it runs on no host
  EXPECT_FALSE(engine_.query("CTAS_PER_PAGE_1"));  // nothing started

  const QueryDescription select =
      one("EXPLAIN SELECT page FROM pageviews EMIT CHANGES;").query_descriptions.at(0);
  EXPECT_EQ(select.query_type, "PUSH");
  EXPECT_TRUE(select.sinks.empty());
  EXPECT_EQ(select.sources, std::vector<std::string>{"PAGEVIEWS"});
  EXPECT_EQ(select.fields.size(), 1u);
}

// The CLI's text, as ksqlDB's Console prints the same entities.
TEST(DescriptionOutputTest, PlainDescribeIsTheNameAndTheFields) {
  Engine engine;
  engine.execute(
      "CREATE TABLE counts (k STRING PRIMARY KEY, n BIGINT, m MAP<STRING, DECIMAL(4, 2)>) WITH "
      "(kafka_topic='counts', value_format='json', partitions=1, window_type='hopping', "
      "window_size='1 minute');");
  SourceDescription d = engine.execute("DESCRIBE counts;").at(0).source_descriptions.at(0);
  EXPECT_EQ(source_description_text(d),
            "Name                 : COUNTS\n"
            " Field | Type                                                  \n"
            "---------------------------------------------------------------\n"
            " K     | VARCHAR(STRING)  (primary key) (Window type: HOPPING) \n"
            " N     | BIGINT                                                \n"
            " M     | MAP<STRING, DECIMAL(4, 2)>                            \n"
            "---------------------------------------------------------------\n"
            "For runtime statistics and query details run: DESCRIBE <Stream,Table> EXTENDED;\n");
}

TEST(DescriptionOutputTest, ExtendedDescribeListsQueriesAndStatistics) {
  SourceDescription d;
  d.name = "PAGEVIEWS";
  d.type = "STREAM";
  d.extended = true;
  d.key_format = "KAFKA";
  d.value_format = "JSON";
  d.topic = "pageviews";
  d.partitions = 3;
  d.replication = 1;
  d.statement = "CREATE STREAM pageviews ...;";
  d.fields = {{"USERID", SqlType::string(), FieldInfo::FieldType::kKey, std::nullopt},
              {"SRC", SqlType::bytes(), FieldInfo::FieldType::kHeader, "src"}};
  RunningQuery q;
  q.id = "CSAS_BUSY_0";
  q.query_string = "CREATE STREAM busy AS\nSELECT * FROM pageviews;";
  q.status_count["RUNNING"] = 1;
  d.read_queries = {q};
  d.statistics_list = {{"consumer-total-messages", 3, 1596644936314}};
  d.statistics = statistics_text(d.statistics_list, "last-message");
  EXPECT_EQ(d.statistics,
            "consumer-total-messages:         3     last-message: 2020-08-05T16:28:56.314Z");
  EXPECT_EQ(source_description_text(d),
            "Name                 : PAGEVIEWS\n"
            "Type                 : STREAM\n"
            "Timestamp field      : Not set - using <ROWTIME>\n"
            "Key format           : KAFKA\n"
            "Value format         : JSON\n"
            "Kafka topic          : pageviews (partitions: 3, replication: 1)\n"
            "Statement            : CREATE STREAM pageviews ...;\n"
            "\n"
            " Field  | Type                             \n"
            "-------------------------------------------\n"
            " USERID | VARCHAR(STRING)  (key)           \n"
            " SRC    | BYTES            (header('src')) \n"
            "-------------------------------------------\n"
            "\n"
            "Queries that read from this STREAM\n"
            "-----------------------------------\n"
            "CSAS_BUSY_0 (RUNNING) : CREATE STREAM busy AS SELECT * FROM pageviews;\n"
            "\n"
            "For query topology and execution plan please run: EXPLAIN <QueryId>\n"
            "\n"
            "Local runtime statistics\n"
            "------------------------\n"
            "consumer-total-messages:         3     last-message: 2020-08-05T16:28:56.314Z\n"
            "\n"
            "(Statistics of the local KSQL server interaction with the Kafka topic pageviews)\n");
}

TEST(DescriptionOutputTest, StatisticsTextAsKsqlDbFormatsIt) {
  EXPECT_EQ(statistics_text({}, "last-message"), "");
  EXPECT_EQ(
      statistics_text({{"total-messages", 12, 0}, {"messages-per-sec", 0.5, 0}}, "last-message"),
      "  total-messages:        12 messages-per-sec:      0.50     last-message:       n/a");
  EXPECT_EQ(statistics_text({{"consumer-failed-messages", 1, 1596644936000}}, "last-failed"),
            "consumer-failed-messages:         1      last-failed: 2020-08-05T16:28:56Z");
  EXPECT_EQ(statistics_text({{"x", 1, 1596644936300}}, "last"),
            "               x:         1 "
            "            last: "
            "2020-08-05T16:28:56.3Z");
}

TEST(DescriptionOutputTest, ListsAndQueryDescriptions) {
  DataSource a, b;
  a.name = "B_STREAM";
  a.topic = "b";
  a.formats.value_format = "JSON";
  b.name = "A_STREAM";
  b.topic = "a";
  b.formats.value_format = "AVRO";
  b.window = SourceWindow{};
  EXPECT_EQ(sources_table({a, b}, SourceKind::kStream),
            " Stream Name | Kafka Topic | Key Format | Value Format | Windowed \n"
            "------------------------------------------------------------------\n"
            " A_STREAM    | a           | KAFKA      | AVRO         | true     \n"
            " B_STREAM    | b           | KAFKA      | JSON         | false    \n"
            "------------------------------------------------------------------\n");

  RunningQuery q;
  q.id = "CSAS_S_0";
  q.query_string = "CREATE STREAM s AS SELECT * FROM t;";
  q.sinks = {"S"};
  q.sink_kafka_topics = {"s_topic"};
  q.status_count = {{"PAUSED", 1}, {"RUNNING", 2}};
  EXPECT_EQ(queries_table({q}),
            " Query ID | Query Type | Status             | Sink Name | Sink Kafka Topic | Query "
            "String                        \n"
            "------------------------------------------------------------------------------------"
            "-----------------------------\n"
            " CSAS_S_0 | PERSISTENT | RUNNING:2,PAUSED:1 | S         | s_topic          | CREATE "
            "STREAM s AS SELECT * FROM t; \n"
            "------------------------------------------------------------------------------------"
            "-----------------------------\n"
            "For detailed information on a Query run: EXPLAIN <Query ID>;\n");

  QueryDescription d;
  d.id = "CSAS_S_0";
  d.statement_text = q.query_string;
  d.fields = {{"ID", SqlType::integer(), FieldInfo::FieldType::kKey, std::nullopt}};
  d.sources = {"T"};
  d.sinks = {"S"};
  d.execution_plan = " > [ SINK ] | S\n";
  d.topology = "Topologies:\n";
  d.overridden_properties = {{"auto.offset.reset", "earliest"}};
  EXPECT_EQ(query_description_text(d),
            "ID                   : CSAS_S_0\n"
            "Query Type           : PERSISTENT\n"
            "SQL                  : CREATE STREAM s AS SELECT * FROM t;\n"
            "\n"
            " Field | Type                   \n"
            "--------------------------------\n"
            " ID    | INTEGER          (key) \n"
            "--------------------------------\n"
            "\n"
            "Sources that this query reads from: \n"
            "-----------------------------------\n"
            "T\n"
            "\n"
            "For source description please run: DESCRIBE [EXTENDED] <SourceId>\n"
            "\n"
            "Sinks that this query writes to: \n"
            "-----------------------------------\n"
            "S\n"
            "\n"
            "For sink description please run: DESCRIBE [EXTENDED] <SinkId>\n"
            "\n"
            "Execution plan      \n"
            "--------------      \n"
            " > [ SINK ] | S\n"
            "\n"
            "\n"
            "Processing topology \n"
            "------------------- \n"
            "Topologies:\n"
            "\n"
            "\n"
            "Overridden Properties\n"
            "---------------------\n"
            " Property          | Value    \n"
            "------------------------------\n"
            " auto.offset.reset | earliest \n"
            "------------------------------\n"
            "\n");
}

}  // namespace
}  // namespace oxbow::sql
