// The statements that make no topology: INSERT VALUES (its record driven through a query),
// TERMINATE, CREATE / DROP TYPE, SET / UNSET, DEFINE / UNDEFINE and ${var} substitution.
#include <gtest/gtest.h>

#include <algorithm>

#include "oxbow/streams/test_driver.h"
#include "sql/binder/sql_error.h"
#include "sql/engine/engine.h"
#include "sql/engine/variables.h"

namespace oxbow::sql {
namespace {

class StatementsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    engine_.execute(
        "CREATE STREAM riders (id INT KEY, name STRING, speed DOUBLE, since BIGINT) WITH "
        "(kafka_topic='riders', value_format='json', partitions=1);");
  }
  std::string refusal(const std::string& statement) {
    try {
      engine_.execute(statement);
    } catch (const std::exception& e) {
      return e.what();
    }
    return "accepted";
  }
  Engine engine_;
};

TEST_F(StatementsTest, InsertValuesMakesTheRecordAQueryReads) {
  engine_.execute("CREATE STREAM fast AS SELECT id, name FROM riders WHERE speed > 10;");
  auto results = engine_.execute(
      "INSERT INTO riders (id, name, speed, ROWTIME) VALUES (7, 'Ann', 12, 1000);"
      "INSERT INTO riders VALUES (8, 'Bob', 3.5, 20);");
  ASSERT_EQ(results.size(), 2u);
  ASSERT_EQ(results[0].inserted.size(), 1u);
  const InsertedRecord& ann = results[0].inserted[0];
  EXPECT_EQ(ann.topic, "riders");
  EXPECT_EQ(ann.key, std::optional<std::string>(std::string("\0\0\0\x07", 4)));
  EXPECT_EQ(ann.value, R"({"NAME":"Ann","SPEED":12.0,"SINCE":null})");
  EXPECT_EQ(ann.timestamp, 1000);
  const PersistentQuery* q = engine_.query("CSAS_FAST_0");
  streams::TopologyTestDriver driver(q->topology, q->streams_config);
  for (const auto& r : results)
    for (const auto& record : r.inserted)
      driver.pipe(record.topic, record.key, record.value, record.timestamp);
  auto out = driver.read("FAST");
  ASSERT_TRUE(out);
  EXPECT_EQ(out->value, std::optional<std::string>(R"({"NAME":"Ann"})"));
  EXPECT_EQ(out->timestamp, 1000);
  EXPECT_FALSE(driver.read("FAST"));
}

TEST_F(StatementsTest, InsertValuesRefusesWhatKsqlDbRefuses) {
  EXPECT_EQ(refusal("INSERT INTO nowhere VALUES (1);"),
            "Cannot insert values into an unknown stream/table: NOWHERE");
  EXPECT_EQ(refusal("INSERT INTO riders VALUES (1, 'x');"),
            "Expected a value for each column. Expected Columns: [ID, NAME, SPEED, SINCE]. Got "
            "[1, 'x']");
  EXPECT_EQ(refusal("INSERT INTO riders (id, name) VALUES (1, 2);"),
            "Expected type STRING for field NAME but got 2(INTEGER)");
  EXPECT_EQ(refusal("INSERT INTO riders (id, nope) VALUES (1, 2);"),
            "Column name `NOPE` does not exist.");
  EXPECT_EQ(refusal("INSERT INTO riders (id, ROWOFFSET) VALUES (1, 2);"),
            "Inserting into column `ROWOFFSET` is not allowed.");
}

TEST_F(StatementsTest, TerminateStopsAQueryAndUnknownIdsAreRefused) {
  engine_.execute("CREATE STREAM named AS SELECT id, name FROM riders;");
  EXPECT_EQ(refusal("DROP STREAM riders;").find("Cannot drop RIDERS."), 0u);
  EXPECT_EQ(refusal("TERMINATE CSAS_NOPE_9;"), "Unknown queryId: CSAS_NOPE_9");
  auto r = engine_.execute("TERMINATE CSAS_NAMED_0;");
  EXPECT_EQ(r[0].message, "Query terminated.");
  EXPECT_EQ(r[0].affected_queries, (std::vector<std::string>{"CSAS_NAMED_0"}));
  EXPECT_TRUE(engine_.queries().empty());
  EXPECT_EQ(engine_.execute("DROP STREAM named; DROP STREAM riders;").size(), 2u);
}

TEST_F(StatementsTest, DropTerminatesTheQueryThatCreatedTheSourceAndIfExistsSaysSo) {
  engine_.execute("CREATE STREAM named AS SELECT id, name FROM riders;");
  engine_.execute("CREATE STREAM more AS SELECT id, name FROM riders;");
  engine_.execute("INSERT INTO named SELECT id, name FROM more;");
  // Another query writes into it: that one must go first.
  EXPECT_EQ(refusal("DROP STREAM named;"),
            "Cannot drop NAMED.\nThe following queries read from this source: [].\nThe following "
            "queries write into this source: [INSERTQUERY_2].\nYou need to terminate them before "
            "dropping NAMED.");
  engine_.execute("TERMINATE INSERTQUERY_2;");
  auto r = engine_.execute("DROP STREAM named;");
  EXPECT_EQ(r[0].message, "Source `NAMED` (topic: NAMED) was dropped.");
  EXPECT_EQ(r[0].affected_queries, (std::vector<std::string>{"CSAS_NAMED_0"}));
  ASSERT_EQ(engine_.queries().size(), 1u);
  EXPECT_EQ(engine_.queries()[0].id, "CSAS_MORE_1");
  r = engine_.execute("DROP STREAM IF EXISTS named;");
  EXPECT_EQ(r[0].message, "Source `NAMED` does not exist.");
  EXPECT_TRUE(r[0].affected_queries.empty());
}

TEST_F(StatementsTest, CustomTypesAreRegisteredUsedAndDropped) {
  auto r = engine_.execute("CREATE TYPE address AS STRUCT<street STRING, zip INT>;");
  EXPECT_EQ(r[0].message,
            "Registered custom type with name 'ADDRESS' and SQL type STRUCT<`STREET` STRING, "
            "`ZIP` INTEGER>");
  engine_.execute(
      "CREATE STREAM homes (id INT KEY, home ADDRESS) WITH (kafka_topic='homes', "
      "value_format='json', partitions=1);");
  EXPECT_EQ(engine_.catalog().find_source("HOMES")->schema_text(),
            "`ID` INTEGER KEY, `HOME` STRUCT<`STREET` STRING, `ZIP` INTEGER>");
  EXPECT_EQ(refusal("CREATE TYPE address AS INT;"),
            "Cannot register custom type 'ADDRESS' since it is already registered with type: "
            "STRUCT<`STREET` STRING, `ZIP` INTEGER>");
  EXPECT_TRUE(engine_.execute("CREATE TYPE IF NOT EXISTS address AS INT;")[0].message.empty());
  auto shown = engine_.execute("SHOW TYPES;")[0].settings;
  ASSERT_EQ(shown.size(), 1u);
  EXPECT_EQ(shown[0].first, "ADDRESS");
  EXPECT_EQ(engine_.execute("DROP TYPE address;")[0].message, "Dropped type 'ADDRESS'");
  EXPECT_EQ(refusal("DROP TYPE address;"), "Type ADDRESS does not exist.");
}

TEST_F(StatementsTest, VariablesAreSubstitutedInTheStatementsAfterTheirDefinition) {
  engine_.execute(
      "DEFINE topic_name = 'bikes'; DEFINE fmt = 'json';"
      "CREATE STREAM bikes (id INT KEY, color STRING) WITH (kafka_topic='${topic_name}', "
      "value_format='${FMT}', partitions=1);");
  EXPECT_EQ(engine_.catalog().find_source("BIKES")->topic, "bikes");
  // Names as written, ordered ignoring case, one variable however a later statement spells it
  // (ksqlDB's SessionProperties: a TreeMap with CASE_INSENSITIVE_ORDER of the names as parsed).
  engine_.execute("DEFINE Color = 'red'; DEFINE TOPIC_NAME = 'cars';");
  auto shown = engine_.execute("SHOW VARIABLES;")[0].settings;
  EXPECT_EQ(shown, (std::vector<std::pair<std::string, std::string>>{
                       {"Color", "red"}, {"fmt", "json"}, {"topic_name", "cars"}}));
  EXPECT_TRUE(engine_.execute("UNDEFINE Topic_Name;")[0].warnings.empty());
  EXPECT_EQ(
      engine_.execute("UNDEFINE topic_name;")[0].warnings,
      (std::vector<std::string>{"Cannot undefine variable 'topic_name' which was never defined"}));
  // Undefined, the reference stays as written and the statement fails where it stands.
  EXPECT_NE(refusal("CREATE STREAM ${topic_name} (id INT KEY) WITH (kafka_topic='x', "
                    "value_format='json');"),
            "accepted");
}

TEST_F(StatementsTest, CreateOrReplaceKeepsTheQueryIdForChangesKsqlDbAllows) {
  engine_.execute("CREATE STREAM fast AS SELECT id, name FROM riders WHERE speed > 10;");
  auto r = engine_.execute(
      "CREATE OR REPLACE STREAM fast AS SELECT id, name, speed FROM riders WHERE speed > 20;");
  EXPECT_EQ(r[0].message, "Created query with ID CSAS_FAST_0");
  EXPECT_EQ(r[0].affected_queries, (std::vector<std::string>{"CSAS_FAST_0"}));
  ASSERT_EQ(engine_.queries().size(), 1u);
  EXPECT_EQ(engine_.catalog().find_source("FAST")->schema_text(),
            "`ID` INTEGER KEY, `NAME` STRING, `SPEED` DOUBLE");
  const PersistentQuery* q = engine_.query("CSAS_FAST_0");
  streams::TopologyTestDriver driver(q->topology, q->streams_config);
  driver.pipe("riders", std::string("\0\0\0\x01", 4), R"({"name":"Ann","speed":15})", 1);
  driver.pipe("riders", std::string("\0\0\0\x02", 4), R"({"name":"Bob","speed":25})", 2);
  auto out = driver.read("FAST");
  ASSERT_TRUE(out);
  EXPECT_EQ(out->value, std::optional<std::string>(R"({"NAME":"Bob","SPEED":25.0})"));
  EXPECT_FALSE(driver.read("FAST"));
  EXPECT_EQ(refusal("CREATE OR REPLACE STREAM fast AS SELECT id, speed FROM riders;"),
            "Cannot upgrade data source: DataSource '`FAST`' has schema = `ID` INTEGER KEY, "
            "`NAME` STRING, `SPEED` DOUBLE which is not upgradeable to `ID` INTEGER KEY, "
            "`SPEED` DOUBLE. (The following columns are changed, missing or reordered: [`NAME` "
            "STRING, `SPEED` DOUBLE])");
  EXPECT_EQ(refusal("CREATE STREAM fast AS SELECT id, name FROM riders;"),
            "Cannot add stream 'FAST': A stream with the same name already exists");
}

TEST(Variables, SubstitutionEscapesAndSplitting) {
  std::map<std::string, std::string> vars = {{"Name", "t1"}};
  EXPECT_EQ(substitute_variables("SELECT * FROM ${name} WHERE x = '$${name}';", vars),
            "SELECT * FROM t1 WHERE x = '${name}';");
  EXPECT_EQ(substitute_variables("${missing} ${name", vars), "${missing} ${name");
  EXPECT_EQ(split_statements("DEFINE a = 'x;y'; -- c;\nSELECT `b;c` FROM t;  "),
            (std::vector<std::string>{"DEFINE a = 'x;y';", " -- c;\nSELECT `b;c` FROM t;"}));
}

TEST_F(StatementsTest, ShowFunctionsListsThemAndDescribeFunctionGivesTheVariants) {
  auto listed = engine_.execute("SHOW FUNCTIONS;")[0].functions;
  ASSERT_GT(listed.size(), 50u);
  EXPECT_TRUE(std::is_sorted(listed.begin(), listed.end(),
                             [](const auto& a, const auto& b) { return a.name < b.name; }));
  auto count =
      std::find_if(listed.begin(), listed.end(), [](auto& f) { return f.name == "COUNT"; });
  ASSERT_NE(count, listed.end());
  EXPECT_EQ(count->type, "AGGREGATE");
  auto described = engine_.execute("DESCRIBE FUNCTION substring;")[0].functions;
  ASSERT_EQ(described.size(), 1u);
  EXPECT_EQ(described[0].name, "SUBSTRING");
  EXPECT_EQ(described[0].type, "SCALAR");
  ASSERT_GE(described[0].variants.size(), 2u);
  EXPECT_EQ(described[0].variants[0].signature.rfind("SUBSTRING(", 0), 0u);
  // SUBSTRING(str VARCHAR, pos INT): each parameter by name and type.
  const auto& first = described[0].variants[0].arguments;
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].name, "str");
  EXPECT_EQ(first[0].type, "VARCHAR");
  EXPECT_EQ(first[1].type, "INT");
  EXPECT_FALSE(first[0].variadic || first[1].variadic);
  auto concat = engine_.execute("DESCRIBE FUNCTION concat;")[0].functions.at(0).variants;
  ASSERT_FALSE(concat.empty());
  EXPECT_TRUE(std::any_of(concat.begin(), concat.end(), [](const auto& v) {
    return v.arguments.size() == 1 && v.arguments[0].variadic;
  }));
  EXPECT_EQ(refusal("DESCRIBE FUNCTION wont_find_me;"),
            "Can't find any functions with the name 'WONT_FIND_ME'");
}

TEST_F(StatementsTest, SetAndUnsetKeepTheSessionsProperties) {
  EXPECT_EQ(engine_.execute("SET 'auto.offset.reset'='earliest';")[0].message,
            "Successfully changed local property 'auto.offset.reset' to 'earliest'.");
  EXPECT_EQ(engine_.execute("SHOW PROPERTIES;")[0].settings,
            (std::vector<std::pair<std::string, std::string>>{{"auto.offset.reset", "earliest"}}));
  engine_.execute("UNSET 'auto.offset.reset';");
  EXPECT_TRUE(engine_.execute("SHOW PROPERTIES;")[0].settings.empty());
}

}  // namespace
}  // namespace oxbow::sql
