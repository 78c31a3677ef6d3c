// CREATE OR REPLACE of aggregations and joins, by ksqlDB's rules (its query-upgrades tests:
// filters.sql, prohibited-upgrades.sql, projections.sql). An allowed change keeps the query, its
// application id and its internal topics and stores; the test driver cannot hand one topology's
// stores to the next, so the old query's repartition records are replayed into the new topology
// (a state that did not carry over would restart the counts) and the two topologies' changelog
// bytes are compared (what a store restored from the old changelog holds is what the new one
// writes). A refused change leaves the query as it was, with ksqlDB's message.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>
#include <vector>

#include "oxbow/streams/test_driver.h"
#include "sql/engine/engine.h"

namespace oxbow::sql {
namespace {

using streams::ProducedRecord;
using streams::TopologyTestDriver;

const std::string kApp = "_confluent-ksql-default_query_CTAS_BAR_0";

std::string int_key(int v) {
  std::string out(4, '\0');
  for (int i = 0; i < 4; ++i) out[3 - i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return out;
}

// The stores and the topics a topology names, from its description.
std::set<std::string> internal_names(const streams::Topology& topology) {
  std::string text = topology.describe().toString();
  std::set<std::string> names;
  std::regex listed(R"((stores|topics|topic): \[?([^\])\n]*))");
  for (std::sregex_iterator it(text.begin(), text.end(), listed), end; it != end; ++it)
    names.insert((*it)[2]);
  return names;
}

// What `statement` does: "accepted", or the message it is refused with.
std::string outcome(Engine& engine, const std::string& statement) try {
  engine.execute(statement);
  return "accepted";
} catch (const std::exception& e) {
  return e.what();
}

class ReplaceQueryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    engine_.execute(
        "CREATE STREAM foo (id INT KEY, col1 INT, col2 INT) WITH (kafka_topic='foo', "
        "value_format='json', partitions=1);"
        "CREATE STREAM foo2 (id INT KEY, col1 INT, col2 INT) WITH (kafka_topic='foo2', "
        "value_format='json', partitions=1);"
        "CREATE TABLE tab (id INT PRIMARY KEY, col1 INT) WITH (kafka_topic='tab', "
        "value_format='json', partitions=1);");
  }
  std::string refusal(const std::string& statement) { return outcome(engine_, statement); }
  // The refusal of `replacement` after `original`, and that the query stayed as it was.
  std::string refused_upgrade(const std::string& original, const std::string& replacement) {
    engine_.execute(original);
    const PersistentQuery& q = engine_.queries().back();
    std::string id = q.id, before = q.topology.describe().toString();
    std::string schema = engine_.catalog().find_source(q.sink)->schema_text();
    std::string why = refusal(replacement);
    const PersistentQuery* after = engine_.query(id);
    EXPECT_TRUE(after && after->statement == original && after->sink == q.sink);
    EXPECT_EQ(after->topology.describe().toString(), before);
    EXPECT_EQ(engine_.catalog().find_source(after->sink)->schema_text(), schema);
    return why;
  }
  TopologyTestDriver driver(const PersistentQuery& q) {
    auto config = q.streams_config;
    config["statestore.cache.max.bytes"] = "0";
    return TopologyTestDriver(q.topology, config);
  }
  static void pipe(TopologyTestDriver& d, int id, int col1, int64_t ts) {
    d.pipe("foo", int_key(id), R"({"COL1":)" + std::to_string(col1) + R"(,"COL2":0})", ts);
  }
  static std::vector<ProducedRecord> drain(TopologyTestDriver& d, const std::string& topic) {
    std::vector<ProducedRecord> out;
    while (auto r = d.read(topic)) out.push_back(*r);
    return out;
  }
  Engine engine_;
};

// ksqlDB's "change filter in StreamAggregate (StreamGroupBy)", with a value column added at the
// end: the counts go on from the old query's state.
TEST_F(ReplaceQueryTest, AGroupByKeepsItsStateWhenItsFilterChangesAndAColumnIsAdded) {
  engine_.execute(
      "CREATE TABLE bar AS SELECT col1, COUNT(*) AS count FROM foo WHERE col1 >= 0 GROUP BY col1;");
  PersistentQuery old = engine_.queries().back();
  auto old_driver = driver(old);
  pipe(*&old_driver, 1, 1, 1);
  pipe(old_driver, 2, 2, 2);
  pipe(old_driver, 3, 2, 3);
  auto repartitioned = drain(old_driver, kApp + "-Aggregate-GroupBy-repartition");
  auto old_changelog = drain(old_driver, kApp + "-Aggregate-Aggregate-Materialize-changelog");
  ASSERT_EQ(repartitioned.size(), 3u);
  ASSERT_EQ(old_changelog.size(), 3u);

  auto r = engine_.execute(
      "CREATE OR REPLACE TABLE bar AS SELECT col1, COUNT(*) AS count, AS_VALUE(col1) AS c1 "
      "FROM foo WHERE col1 > 1 GROUP BY col1;");
  EXPECT_EQ(r[0].affected_queries, (std::vector<std::string>{"CTAS_BAR_0"}));
  ASSERT_EQ(engine_.queries().size(), 1u);
  const PersistentQuery& now = engine_.queries().back();
  EXPECT_EQ(now.id, old.id);
  EXPECT_EQ(now.streams_config, old.streams_config);
  EXPECT_EQ(internal_names(now.topology), internal_names(old.topology));
  EXPECT_TRUE(internal_names(now.topology).count("Aggregate-Aggregate-Materialize"));
  EXPECT_EQ(engine_.catalog().find_source("BAR")->schema_text(),
            "`COL1` INTEGER PRIMARY KEY, `COUNT` BIGINT, `C1` INTEGER");

  auto new_driver = driver(now);
  for (const auto& rec : repartitioned)
    new_driver.pipe(rec.topic, rec.key, rec.value, rec.timestamp);
  auto new_changelog = drain(new_driver, kApp + "-Aggregate-Aggregate-Materialize-changelog");
  ASSERT_EQ(new_changelog.size(), old_changelog.size());
  for (size_t i = 0; i < old_changelog.size(); ++i) {
    EXPECT_EQ(new_changelog[i].key, old_changelog[i].key);
    EXPECT_EQ(new_changelog[i].value, old_changelog[i].value);  // the same state bytes
  }
  drain(new_driver, "BAR");
  pipe(new_driver, 4, 1, 4);  // the new filter drops it
  pipe(new_driver, 5, 2, 5);
  auto out = drain(new_driver, "BAR");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].key, int_key(2));
  EXPECT_EQ(out[0].value, std::optional<std::string>(R"({"COUNT":3,"C1":2})"));
}

// ksqlDB's "change filter in StreamAggregate (StreamGroupByKey)" and a changed HAVING: no
// repartition topic, the same store, the same state bytes for the same records.
TEST_F(ReplaceQueryTest, AGroupByKeyAndItsHavingMayChange) {
  engine_.execute(
      "CREATE TABLE bar AS SELECT id, COUNT(*) AS count FROM foo WHERE col1 >= 0 GROUP BY id "
      "HAVING COUNT(*) > 0;");
  PersistentQuery old = engine_.queries().back();
  auto r = engine_.execute(
      "CREATE OR REPLACE TABLE bar AS SELECT id, COUNT(*) AS count FROM foo WHERE col1 > 0 "
      "GROUP BY id HAVING COUNT(*) > 1;");
  EXPECT_EQ(r[0].affected_queries, (std::vector<std::string>{"CTAS_BAR_0"}));
  const PersistentQuery& now = engine_.queries().back();
  EXPECT_EQ(internal_names(now.topology), internal_names(old.topology));
  auto old_driver = driver(old), new_driver = driver(now);
  for (auto* d : {&old_driver, &new_driver}) {
    pipe(*d, 1, 5, 1);
    pipe(*d, 1, 6, 2);
  }
  const std::string changelog = kApp + "-Aggregate-Aggregate-Materialize-changelog";
  auto a = drain(old_driver, changelog), b = drain(new_driver, changelog);
  ASSERT_EQ(a.size(), 2u);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(a[1].value, b[1].value);
  pipe(new_driver, 1, 0, 3);  // the new WHERE drops it
  auto out = drain(new_driver, "BAR");
  ASSERT_FALSE(out.empty());
  EXPECT_EQ(out.back().value, std::optional<std::string>(R"({"COUNT":2})"));
}

// ksqlDB's filters.sql cases of a StreamAggregate whose filter changes over columns it reads
// anyway.
TEST_F(ReplaceQueryTest, AnAggregationsFilterMayUseTheColumnsItReads) {
  const std::string agg = "SELECT id, COUNT(col1) AS count FROM foo ";
  engine_.execute("CREATE TABLE c1 AS " + agg + "GROUP BY id;" + "CREATE TABLE c2 AS " + agg +
                  "WHERE col1 > 0 GROUP BY id;" + "CREATE TABLE c3 AS " + agg +
                  "WHERE col1 >= 0 GROUP BY id;");
  for (const std::string& replacement :
       {"CREATE OR REPLACE TABLE c1 AS " + agg + "WHERE col1 > 0 GROUP BY id;",
        "CREATE OR REPLACE TABLE c2 AS " + agg + "GROUP BY id;",
        "CREATE OR REPLACE TABLE c3 AS " + agg + "WHERE id > 1 GROUP BY id;"})
    EXPECT_EQ(refusal(replacement), "accepted") << replacement;
  const PersistentQuery* c3 = engine_.query("CTAS_C3_2");
  ASSERT_NE(c3, nullptr);
  EXPECT_EQ(c3->statement, "CREATE OR REPLACE TABLE c3 AS " + agg + "WHERE id > 1 GROUP BY id;");
  EXPECT_EQ(engine_.queries().size(), 3u);
}

// ksqlDB's filters.sql cases around tables, PARTITION BY and a table over an aggregation.
TEST_F(ReplaceQueryTest, FiltersOverTablesAndPartitionByStillUpgrade) {
  engine_.execute(
      "CREATE TABLE t1 AS SELECT * FROM tab;"
      "CREATE STREAM p1 AS SELECT * FROM foo PARTITION BY col1;"
      "CREATE TABLE bar AS SELECT id, COUNT(col1) AS count FROM foo WHERE col1 >= 0 GROUP BY id;"
      "CREATE TABLE baz AS SELECT * FROM bar;");
  std::set<std::string> t1 = internal_names(engine_.query("CTAS_T1_0")->topology);
  for (const char* replacement :
       {"CREATE OR REPLACE TABLE t1 AS SELECT * FROM tab WHERE col1 > 0;",
        "CREATE OR REPLACE STREAM p1 AS SELECT * FROM foo WHERE col1 > 0 PARTITION BY col1;",
        // PARTITION BY the key it has is no step of ksqlDB's plan: the same query as without.
        "CREATE OR REPLACE TABLE t1 AS SELECT * FROM tab WHERE col1 > 1 PARTITION BY id;",
        "CREATE OR REPLACE TABLE baz AS SELECT * FROM bar WHERE count > 2;"})
    EXPECT_EQ(engine_.execute(replacement)[0].affected_queries.size(), 1u) << replacement;
  EXPECT_EQ(internal_names(engine_.query("CTAS_T1_0")->topology), t1);
  EXPECT_EQ(engine_.queries().size(), 4u);
}

TEST_F(ReplaceQueryTest, JoinsWindowsAndTableAggregationsAreNotUpgraded) {
  EXPECT_EQ(refused_upgrade(
                "CREATE STREAM j AS SELECT foo.id, foo.col1, tab.col1 AS t1 FROM foo JOIN tab ON "
                "foo.id = tab.id;",
                "CREATE OR REPLACE STREAM j AS SELECT foo.id, foo.col1, tab.col1 AS t1 FROM foo "
                "JOIN tab ON foo.id = tab.id WHERE foo.col1 > 0;"),
            "Upgrades not yet supported for StreamTableJoin");
  EXPECT_EQ(refused_upgrade("CREATE TABLE w AS SELECT id, COUNT(*) AS n FROM foo WINDOW TUMBLING "
                            "(SIZE 30 SECONDS) GROUP BY id;",
                            "CREATE OR REPLACE TABLE w AS SELECT id, COUNT(*) AS n FROM foo WINDOW "
                            "TUMBLING (SIZE 30 SECONDS) WHERE col1 > 0 GROUP BY id;"),
            "Upgrades not yet supported for StreamWindowedAggregate");
  EXPECT_EQ(refused_upgrade("CREATE TABLE g AS SELECT col1, COUNT(*) AS n FROM tab GROUP BY col1;",
                            "CREATE OR REPLACE TABLE g AS SELECT col1, COUNT(*) AS n FROM tab "
                            "WHERE col1 > 0 GROUP BY col1;"),
            "Upgrades not yet supported for TableAggregate");
  EXPECT_EQ(refused_upgrade("CREATE TABLE ws AS SELECT * FROM w;",
                            "CREATE OR REPLACE TABLE ws AS SELECT * FROM w WHERE n > 1;"),
            "Upgrades not yet supported for WindowedTableSource");
}

TEST_F(ReplaceQueryTest, AnAggregationKeepsItsInputColumnsAndFunctions) {
  EXPECT_EQ(refused_upgrade("CREATE TABLE a1 AS SELECT id, COUNT(*) AS n FROM foo WHERE col1 > 0 "
                            "GROUP BY id;",
                            "CREATE OR REPLACE TABLE a1 AS SELECT id, COUNT(*) AS n FROM foo "
                            "GROUP BY id;"),
            "Query is not upgradeable. Plan step of type StreamAggregate must have matching "
            "columns not part of aggregate. Values differ: [`ID`, `ROWTIME`, `COL1`] vs. "
            "[`ID`, `ROWTIME`]");
  EXPECT_EQ(refused_upgrade("CREATE TABLE a2 AS SELECT id, COUNT(*) AS n FROM foo GROUP BY id;",
                            "CREATE OR REPLACE TABLE a2 AS SELECT id, COUNT(col1) AS n FROM foo "
                            "WHERE col1 > 0 GROUP BY id;"),
            "Query is not upgradeable. Plan step of type StreamAggregate must have matching "
            "columns not part of aggregate. Values differ: [`ID`, `ROWTIME`] vs. [`ID`, `COL1`]");
  EXPECT_EQ(refused_upgrade("CREATE TABLE a3 AS SELECT id, MAX(col1) AS m FROM foo GROUP BY id;",
                            "CREATE OR REPLACE TABLE a3 AS SELECT id, MIN(col1) AS m FROM foo "
                            "GROUP BY id;"),
            "Query is not upgradeable. Plan step of type StreamAggregate must have matching "
            "aggregate functions. Values differ: [MAX(COL1)] vs. [MIN(COL1)]");
  EXPECT_EQ(refused_upgrade("CREATE TABLE a5 AS SELECT COUNT(*) AS n, id FROM foo GROUP BY id;",
                            "CREATE OR REPLACE TABLE a5 AS SELECT id, COUNT(*) AS n FROM foo "
                            "GROUP BY id;"),
            "Query is not upgradeable. Plan step of type StreamAggregate must have matching "
            "columns not part of aggregate. Values differ: [`ROWTIME`, `ID`] vs. [`ID`, "
            "`ROWTIME`]");
  // ksqlDB compares the calls over the internal columns their arguments are computed into, so an
  // argument's expression may change; here only while its type stays (the state's layout).
  engine_.execute(
      "CREATE TABLE a4 AS SELECT id, SUM(col1 + 1) AS s FROM foo GROUP BY id "
      "HAVING SUM(col2 + 1) > 0;");
  EXPECT_EQ(refusal("CREATE OR REPLACE TABLE a4 AS SELECT id, SUM(col1 + 2) AS s FROM foo "
                    "GROUP BY id HAVING SUM(col2 + 1) > 0;"),
            "accepted");
  EXPECT_EQ(refusal("CREATE OR REPLACE TABLE a4 AS SELECT id, SUM(col1 + 2) AS s FROM foo "
                    "GROUP BY id HAVING SUM(col2 * 1.5) > 0;"),
            "Query is not upgradeable. Plan step of type StreamAggregate must have matching "
            "aggregate argument types. Values differ: [SUM(INTEGER), SUM(INTEGER)] vs. "
            "[SUM(INTEGER), SUM(DECIMAL(13, 1))]");
}

TEST_F(ReplaceQueryTest, GroupingAndKeysMustStay) {
  EXPECT_EQ(refused_upgrade("CREATE TABLE b1 WITH (key_format='json') AS SELECT col1, col2, "
                            "COUNT(*) AS n FROM foo GROUP BY col1, col2;",
                            "CREATE OR REPLACE TABLE b1 WITH (key_format='json') AS SELECT col1, "
                            "col2, COUNT(*) AS n FROM foo GROUP BY col2, col1;"),
            "Query is not upgradeable. Plan step of type StreamGroupBy must have matching group "
            "by clause. Values differ: [COL1, COL2] vs. [COL2, COL1]");
  EXPECT_EQ(refused_upgrade("CREATE TABLE b2 AS SELECT col1, COUNT(*) AS n FROM foo GROUP BY col1;",
                            "CREATE OR REPLACE TABLE b2 AS SELECT col2, COUNT(*) AS n FROM foo "
                            "GROUP BY col2;"),
            "Cannot upgrade data source: DataSource '`B2`' has schema = `COL1` INTEGER KEY, `N` "
            "BIGINT which is not upgradeable to `COL2` INTEGER KEY, `N` BIGINT. (Key columns "
            "must be identical. The following key columns are changed, missing or reordered: "
            "[`COL1` INTEGER KEY])");
  EXPECT_EQ(refused_upgrade("CREATE TABLE b3 AS SELECT id, COUNT(*) AS n FROM foo GROUP BY id;",
                            "CREATE OR REPLACE TABLE b3 AS SELECT id, COUNT(*) AS n, SUM(col1) AS "
                            "s FROM foo GROUP BY id;"),
            "Query is not upgradeable. Plan step of type StreamAggregate must have matching "
            "columns not part of aggregate. Values differ: [`ID`, `ROWTIME`] vs. [`ID`, "
            "`ROWTIME`, `COL1`]");
  EXPECT_EQ(refused_upgrade("CREATE STREAM p AS SELECT * FROM foo PARTITION BY col1;",
                            "CREATE OR REPLACE STREAM p AS SELECT * FROM foo PARTITION BY col2;"),
            "Cannot upgrade data source: DataSource '`P`' has schema = `COL1` INTEGER KEY, `ID` "
            "INTEGER, `COL2` INTEGER which is not upgradeable to `COL2` INTEGER KEY, `ID` INTEGER, "
            "`COL1` INTEGER. (Key columns must be identical. The following key columns are "
            "changed, missing or reordered: [`COL1` INTEGER KEY])");
}

TEST_F(ReplaceQueryTest, TheSinksTopicAndFormatsMustStay) {
  EXPECT_EQ(refused_upgrade("CREATE STREAM f1 AS SELECT * FROM foo;",
                            "CREATE OR REPLACE STREAM f1 WITH (value_format='delimited') AS SELECT "
                            "* FROM foo;"),
            "Cannot upgrade data source: DataSource '`F1`' has topic = "
            "KsqlTopic{kafkaTopicName='F1', keyFormat=KeyFormat{format=FormatInfo{format=KAFKA, "
            "properties={}}, features=[], window=Optional.empty}, "
            "valueFormat=ValueFormat{format=FormatInfo{format=JSON, properties={}}, "
            "features=[]}} which is not upgradeable to KsqlTopic{kafkaTopicName='F1', "
            "keyFormat=KeyFormat{format=FormatInfo{format=KAFKA, properties={}}, features=[], "
            "window=Optional.empty}, valueFormat=ValueFormat{format=FormatInfo{format=DELIMITED, "
            "properties={}}, features=[]}}");
  std::string windowed = refused_upgrade(
      "CREATE TABLE f2 AS SELECT id, COUNT(*) AS n FROM foo GROUP BY id;",
      "CREATE OR REPLACE TABLE f2 AS SELECT id, COUNT(*) AS n FROM foo WINDOW TUMBLING (SIZE 30 "
      "SECONDS) GROUP BY id;");
  EXPECT_EQ(
      windowed,
      "Cannot upgrade data source: DataSource '`F2`' has topic = "
      "KsqlTopic{kafkaTopicName='F2', keyFormat=KeyFormat{format=FormatInfo{format=KAFKA, "
      "properties={}}, features=[], window=Optional.empty}, "
      "valueFormat=ValueFormat{format=FormatInfo{format=JSON, properties={}}, "
      "features=[]}} which is not upgradeable to KsqlTopic{kafkaTopicName='F2', "
      "keyFormat=KeyFormat{format=FormatInfo{format=KAFKA, properties={}}, features=[], "
      "window=Optional[WindowInfo{type=TUMBLING, size=Optional[30000], "
      "emitStrategy=Optional.empty}]}, valueFormat=ValueFormat{format=FormatInfo{format=JSON, "
      "properties={}}, features=[]}}");
}

TEST_F(ReplaceQueryTest, TheSourceMustStay) {
  EXPECT_EQ(refused_upgrade("CREATE STREAM s1 AS SELECT * FROM foo WHERE col1 > 0;",
                            "CREATE OR REPLACE STREAM s1 AS SELECT * FROM foo2 WHERE col1 > 0;"),
            "Query is not upgradeable. Plan step of type StreamSource must have matching "
            "topicName. Values differ: foo vs. foo2");
  EXPECT_EQ(refused_upgrade("CREATE STREAM s2 AS SELECT id, col1 FROM foo;",
                            "CREATE OR REPLACE STREAM s2 AS SELECT foo.id AS id, foo.col1 AS col1 "
                            "FROM foo JOIN tab ON foo.id = tab.id;"),
            "Query is not upgradeable. Cannot change a non-join source into a join source.");
}

}  // namespace
}  // namespace oxbow::sql
