// Queries over tables and joins, run in Streams' TopologyTestDriver: each case's records in on
// the sources' topics, the result read back from the sink's as "key|value".
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "oxbow/streams/test_driver.h"
#include "sql/binder/sql_error.h"
#include "sql/engine/engine.h"
#include "sql/execution/value.h"

namespace oxbow::sql {
namespace {

using streams::TopologyTestDriver;
using Lines = std::vector<std::string>;

class JoinTest : public ::testing::Test {
 protected:
  void SetUp() override {
    engine_.execute(
        "CREATE STREAM clickstream (userid STRING KEY, page STRING, action STRING) WITH "
        "(kafka_topic='clicks', value_format='json', partitions=1);");
    engine_.execute(
        "CREATE TABLE users (userid STRING PRIMARY KEY, level STRING, name STRING) WITH "
        "(kafka_topic='users', value_format='json', partitions=1);");
  }
  TopologyTestDriver start(const std::string& statement, const std::string& query_id) {
    engine_.execute(statement);
    const PersistentQuery* q = engine_.query(query_id);
    EXPECT_TRUE(q) << query_id;
    auto config = q->streams_config;
    config["statestore.cache.max.bytes"] = "0";  // every update, as ksqlDB's tests see them
    return TopologyTestDriver(q->topology, config);
  }
  static Lines drain(TopologyTestDriver& driver, const std::string& topic) {
    Lines out;
    while (auto r = driver.read(topic))
      out.push_back(r->key.value_or("<null>") + "|" + r->value.value_or("<null>"));
    return out;
  }
  std::string refusal(const std::string& statement) {
    try {
      engine_.execute(statement);
    } catch (const SqlError& e) {
      return e.what();
    }
    return "accepted";
  }
  Engine engine_;
};

TEST_F(JoinTest, ATableQueryFiltersProjectsAndDeletesRowsThatStopMatching) {
  auto driver = start(
      "CREATE TABLE platinum AS SELECT userid, name, ROWTIME AS since FROM users "
      "WHERE level = 'Platinum';",
      "CTAS_PLATINUM_0");
  EXPECT_EQ(engine_.catalog().find_source("PLATINUM")->schema_text(),
            "`USERID` STRING PRIMARY KEY, `NAME` STRING, `SINCE` BIGINT");
  driver.pipe("users", "u1", R"({"level":"Platinum","name":"Ann"})", 10);
  driver.pipe("users", "u2", R"({"level":"Gold","name":"Bob"})", 20);
  driver.pipe("users", "u1", R"({"level":"Gold","name":"Ann"})", 30);
  driver.pipe("users", "u2", R"({"level":"Platinum","name":"Bob"})", 40);
  driver.pipe("users", "u2", std::nullopt, 50);
  // As Kafka's table filter without old values (and ksqlDB's results): an update that does not
  // match is a tombstone, whether or not the row matched before.
  EXPECT_EQ(drain(driver, "PLATINUM"),
            (Lines{R"(u1|{"NAME":"Ann","SINCE":10})", "u2|<null>", "u1|<null>",
                   R"(u2|{"NAME":"Bob","SINCE":40})", "u2|<null>"}));
}

// The second query of issue 42, qualified as today's dialect wants it.
// Projection pruning: the rows a join keeps in its stores and repartition topics carry only the
// columns the query reads (here the users' NAME, not their LEVEL), with the keys and pseudo
// columns.
TEST_F(JoinTest, AJoinsStoredRowsCarryOnlyTheColumnsTheQueryReads) {
  auto driver = start(
      "CREATE STREAM named AS SELECT c.userid, c.page, u.name FROM clickstream c "
      "LEFT JOIN users u ON c.userid = u.userid;",
      "CSAS_NAMED_0");
  driver.pipe("users", "u1", R"({"level":"Platinum","name":"Ann"})", 10);
  driver.pipe("clicks", "u1", R"({"page":"home","action":"view"})", 20);
  EXPECT_EQ(drain(driver, "NAMED"), Lines{R"(u1|{"PAGE":"home","NAME":"Ann"})"});
  std::vector<Row> stored;
  for (auto& kv : driver.getKeyValueStore<Row, Row>("KafkaTopic_Right-Reduce").all())
    stored.push_back(kv.value);
  ASSERT_EQ(stored.size(), 1u);
  ASSERT_EQ(stored[0].size(), 5u);  // USERID, NAME, ROWTIME, ROWPARTITION, ROWOFFSET
  EXPECT_EQ(stored[0][0].text(), "u1");
  EXPECT_EQ(stored[0][1].text(), "Ann");
  EXPECT_EQ(stored[0][2].bigint(), 10);
}

TEST_F(JoinTest, StreamTableLeftJoinSeesEachUsersLevelAtTheTimeOfTheClick) {
  EXPECT_EQ(refusal("CREATE STREAM vip AS SELECT userid, page, action FROM clickstream c "
                    "LEFT JOIN users u ON c.userid = u.userid WHERE u.level = 'Platinum';"),
            "Line: 1, Col: 29: Column 'USERID' is ambiguous. Could be C.USERID or U.USERID.");
  auto driver = start(
      "CREATE STREAM vip_actions AS SELECT c.userid, page, action, u.name AS who FROM "
      "clickstream c LEFT JOIN users u ON c.userid = u.userid WHERE u.level = 'Platinum';",
      "CSAS_VIP_ACTIONS_0");
  EXPECT_EQ(engine_.catalog().find_source("VIP_ACTIONS")->schema_text(),
            "`C_USERID` STRING KEY, `PAGE` STRING, `ACTION` STRING, `WHO` STRING");
  driver.pipe("users", "u1", R"({"level":"Platinum","name":"Ann"})", 1);
  driver.pipe("users", "u2", R"({"level":"Gold","name":"Bob"})", 2);
  driver.pipe("clicks", "u1", R"({"page":"home","action":"view"})", 3);
  driver.pipe("clicks", "u2", R"({"page":"cart","action":"add"})", 4);
  driver.pipe("clicks", "u3", R"({"page":"home","action":"view"})", 5);   // no such user
  driver.pipe("users", "u2", R"({"level":"Platinum","name":"Bob"})", 6);  // promoted
  driver.pipe("clicks", "u2", R"({"page":"cart","action":"buy"})", 7);
  driver.pipe("users", "u1", std::nullopt, 8);  // gone
  driver.pipe("clicks", "u1", R"({"page":"home","action":"view"})", 9);
  EXPECT_EQ(drain(driver, "VIP_ACTIONS"),
            (Lines{R"(u1|{"PAGE":"home","ACTION":"view","WHO":"Ann"})",
                   R"(u2|{"PAGE":"cart","ACTION":"buy","WHO":"Bob"})"}));
}

TEST_F(JoinTest, ALeftJoinKeepsUnmatchedRecordsWithNullsAndAnInnerJoinDropsThem) {
  auto left = start(
      "CREATE STREAM enriched AS SELECT c.userid, page, level FROM clickstream c "
      "LEFT JOIN users u ON c.userid = u.userid;",
      "CSAS_ENRICHED_0");
  auto inner = start(
      "CREATE STREAM matched AS SELECT c.userid, page, level FROM clickstream c "
      "JOIN users u ON c.userid = u.userid;",
      "CSAS_MATCHED_1");
  for (auto* d : {&left, &inner}) {
    d->pipe("users", "u1", R"({"level":"Gold"})", 1);
    d->pipe("clicks", "u1", R"({"page":"a"})", 2);
    d->pipe("clicks", "u9", R"({"page":"b"})", 3);
  }
  EXPECT_EQ(drain(left, "ENRICHED"),
            (Lines{R"(u1|{"PAGE":"a","LEVEL":"Gold"})", R"(u9|{"PAGE":"b","LEVEL":null})"}));
  EXPECT_EQ(drain(inner, "MATCHED"), (Lines{R"(u1|{"PAGE":"a","LEVEL":"Gold"})"}));
}

TEST_F(JoinTest, AStreamJoinedOnAValueColumnIsRepartitionedByIt) {
  engine_.execute(
      "CREATE STREAM orders (orderid INT KEY, userid STRING, total INT) WITH "
      "(kafka_topic='orders', value_format='json', partitions=1);");
  auto driver = start(
      "CREATE STREAM orders_by_level AS SELECT o.userid, orderid, total, level FROM orders o "
      "JOIN users u ON o.userid = u.userid;",
      "CSAS_ORDERS_BY_LEVEL_0");
  EXPECT_EQ(engine_.catalog().find_source("ORDERS_BY_LEVEL")->schema_text(),
            "`O_USERID` STRING KEY, `ORDERID` INTEGER, `TOTAL` INTEGER, `LEVEL` STRING");
  driver.pipe("users", "u1", R"({"level":"Gold"})", 1);
  driver.pipe("orders", std::string("\0\0\0\x07", 4), R"({"userid":"u1","total":30})", 2);
  driver.pipe("orders", std::string("\0\0\0\x08", 4), R"({"userid":null,"total":1})", 3);
  EXPECT_EQ(drain(driver, "ORDERS_BY_LEVEL"),
            (Lines{R"(u1|{"ORDERID":7,"TOTAL":30,"LEVEL":"Gold"})"}));
  auto topics = driver.producedTopicNames();
  EXPECT_NE(std::find(topics.begin(), topics.end(),
                      "_confluent-ksql-default_query_CSAS_ORDERS_BY_LEVEL_0-Join-repartition"),
            topics.end());
}

TEST_F(JoinTest, StreamStreamJoinMatchesWithinTheWindowAndALeftJoinWaitsForItToClose) {
  engine_.execute(
      "CREATE STREAM orders (id INT KEY, item STRING) WITH (kafka_topic='orders', "
      "value_format='json', partitions=1);");
  engine_.execute(
      "CREATE STREAM shipments (id STRING KEY, order_id INT, warehouse STRING) WITH "
      "(kafka_topic='shipments', value_format='json', partitions=1);");
  EXPECT_EQ(refusal("CREATE STREAM x AS SELECT o.id, item FROM orders o JOIN shipments s "
                    "ON o.id = s.order_id;"),
            "Stream-Stream joins must have a WITHIN clause specified. None was provided. To "
            "learn about how to specify a WITHIN clause with a stream-stream join, please visit: "
            "https://docs.confluent.io/current/ksql/docs/syntax-reference.html"
            "#create-stream-as-select");
  auto driver = start(
      "CREATE STREAM shipped AS SELECT o.id, item, warehouse FROM orders o LEFT JOIN "
      "shipments s WITHIN 10 SECONDS GRACE PERIOD 0 SECONDS ON o.id = s.order_id;",
      "CSAS_SHIPPED_0");
  auto id = [](char n) { return std::string("\0\0\0", 3) + n; };
  driver.pipe("orders", id(1), R"({"item":"book"})", 1000);
  driver.pipe("orders", id(2), R"({"item":"pen"})", 2000);
  driver.pipe("shipments", "s1", R"({"order_id":1,"warehouse":"north"})", 5000);
  driver.pipe("shipments", "s2", R"({"order_id":2,"warehouse":"south"})", 30000);  // too late
  EXPECT_EQ(drain(driver, "SHIPPED"), (Lines{id(1) + R"(|{"ITEM":"book","WAREHOUSE":"north"})",
                                             id(2) + R"(|{"ITEM":"pen","WAREHOUSE":null})"}));
}

TEST_F(JoinTest, TableTableJoinsFollowBothSidesUpdatesAndDeletes) {
  engine_.execute(
      "CREATE TABLE accounts (userid STRING PRIMARY KEY, balance INT) WITH "
      "(kafka_topic='accounts', value_format='json', partitions=1);");
  auto driver = start(
      "CREATE TABLE statements AS SELECT u.userid, name, balance FROM users u "
      "LEFT JOIN accounts a ON u.userid = a.userid;",
      "CTAS_STATEMENTS_0");
  driver.pipe("users", "u1", R"({"name":"Ann"})", 1);
  driver.pipe("accounts", "u1", R"({"balance":5})", 2);
  driver.pipe("accounts", "u2", R"({"balance":9})", 3);  // no such user: nothing
  driver.pipe("accounts", "u1", std::nullopt, 4);
  driver.pipe("users", "u1", std::nullopt, 5);
  EXPECT_EQ(drain(driver, "STATEMENTS"),
            (Lines{R"(u1|{"NAME":"Ann","BALANCE":null})", R"(u1|{"NAME":"Ann","BALANCE":5})",
                   R"(u1|{"NAME":"Ann","BALANCE":null})", "u1|<null>"}));
}

TEST_F(JoinTest, AThreeWayJoinOnTheSameKeyNeedsNoRepartition) {
  engine_.execute(
      "CREATE TABLE accounts (userid STRING PRIMARY KEY, balance INT) WITH "
      "(kafka_topic='accounts', value_format='json', partitions=1);");
  auto driver = start(
      "CREATE STREAM rich_clicks AS SELECT c.userid, page, name, balance FROM clickstream c "
      "JOIN users u ON c.userid = u.userid LEFT JOIN accounts a ON u.userid = a.userid "
      "WHERE balance IS NULL OR balance > 100;",
      "CSAS_RICH_CLICKS_0");
  driver.pipe("users", "u1", R"({"name":"Ann"})", 1);
  driver.pipe("users", "u2", R"({"name":"Bob"})", 2);
  driver.pipe("accounts", "u1", R"({"balance":500})", 3);
  driver.pipe("accounts", "u2", R"({"balance":5})", 4);
  driver.pipe("clicks", "u1", R"({"page":"a"})", 5);
  driver.pipe("clicks", "u2", R"({"page":"b"})", 6);
  driver.pipe("accounts", "u2", std::nullopt, 7);
  driver.pipe("clicks", "u2", R"({"page":"c"})", 8);
  EXPECT_EQ(drain(driver, "RICH_CLICKS"),
            (Lines{R"(u1|{"PAGE":"a","NAME":"Ann","BALANCE":500})",
                   R"(u2|{"PAGE":"c","NAME":"Bob","BALANCE":null})"}));
  for (const auto& topic : driver.producedTopicNames())
    EXPECT_EQ(topic.find("repartition"), std::string::npos) << topic;
}

// As ksqlDB's QTT joins.json "... key-to-key - key format mismatch": the left side's key format
// is kept and the right side re-keyed into it, a table too (ksqlDB's RightSourceKeyed steps),
// whose rows are then kept in the re-keyed table's store only.
TEST_F(JoinTest, SidesInDifferentKeyFormatsJoinInTheLeftOnes) {
  engine_.execute(
      "CREATE TABLE t (id INT PRIMARY KEY, val STRING) WITH (kafka_topic='t', "
      "key_format='KAFKA', value_format='JSON', partitions=1);"
      "CREATE TABLE t2 (id INT PRIMARY KEY, foo INT) WITH (kafka_topic='t2', "
      "key_format='DELIMITED', value_format='JSON', partitions=1);"
      "CREATE STREAM s (id INT KEY, foo INT) WITH (kafka_topic='s', key_format='DELIMITED', "
      "value_format='JSON', partitions=1);"
      "CREATE STREAM s2 (id INT KEY, val STRING) WITH (kafka_topic='s2', key_format='KAFKA', "
      "value_format='JSON', partitions=1);");
  const std::string ten("\0\0\0\x0a", 4);  // 10 as KAFKA's INT
  auto internal_topics = [](TopologyTestDriver& driver) {
    std::vector<std::string> names;
    for (const auto& topic : driver.producedTopicNames())
      if (size_t query = topic.find("query_"); query != std::string::npos)
        names.push_back(topic.substr(topic.find('-', query) + 1));  // after the query id
    std::sort(names.begin(), names.end());
    return names;
  };

  auto stream_table =
      start("CREATE STREAM st AS SELECT s.id, val FROM s JOIN t ON s.id = t.id;", "CSAS_ST_0");
  stream_table.pipe("t", ten, R"({"VAL":"hello"})", 1);
  stream_table.pipe("s", "10", R"({"FOO":22})", 2);
  EXPECT_EQ(drain(stream_table, "ST"), (Lines{R"(10|{"VAL":"hello"})"}));
  EXPECT_EQ(internal_topics(stream_table), (Lines{"RightSourceKeyed-Materialize-changelog",
                                                  "RightSourceKeyed-SelectKey-repartition"}));

  auto table_table =
      start("CREATE TABLE tt AS SELECT * FROM t JOIN t2 ON t.id = t2.id;", "CTAS_TT_1");
  table_table.pipe("t", ten, R"({"VAL":"hello"})", 1);
  table_table.pipe("t2", "10", R"({"FOO":1})", 2);
  table_table.pipe("t2", "10", std::nullopt, 3);
  EXPECT_EQ(drain(table_table, "TT"),
            (Lines{ten + R"(|{"T_VAL":"hello","T2_ID":10,"T2_FOO":1})", ten + "|<null>"}));
  EXPECT_EQ(engine_.catalog().find_source("TT")->formats.key_format, "KAFKA");
  // ksqlDB's topics, and the store of the result for pull queries (kTableQueryStore).
  EXPECT_EQ(
      internal_topics(table_table),
      (Lines{"KafkaTopic_Left-Reduce-changelog", "Project-Materialize-changelog",
             "RightSourceKeyed-Materialize-changelog", "RightSourceKeyed-SelectKey-repartition"}));

  auto stream_stream = start(
      "CREATE STREAM ss AS SELECT s.id, val FROM s JOIN s2 WITHIN 10 SECONDS ON s.id = s2.id;",
      "CSAS_SS_2");
  stream_stream.pipe("s2", ten, R"({"VAL":"hello"})", 1);
  stream_stream.pipe("s", "10", R"({"FOO":22})", 2);
  EXPECT_EQ(drain(stream_stream, "SS"), (Lines{R"(10|{"VAL":"hello"})"}));
  Lines topics = internal_topics(stream_stream);
  EXPECT_NE(std::find(topics.begin(), topics.end(), "Join-right-repartition"), topics.end());
  EXPECT_EQ(std::find(topics.begin(), topics.end(), "Join-left-repartition"), topics.end());
}

// Randomized: users come, change level and go while clicks arrive; each click must be joined with
// the user's row as it was when the click was processed (a model kept beside the driver).
TEST_F(JoinTest, StreamTableJoinsMatchAModelOverRandomUpdatesAndDeletes) {
  auto left = start(
      "CREATE STREAM l AS SELECT c.userid, page, level FROM clickstream c "
      "LEFT JOIN users u ON c.userid = u.userid;",
      "CSAS_L_0");
  auto inner = start(
      "CREATE STREAM i AS SELECT c.userid, page, level FROM clickstream c "
      "JOIN users u ON c.userid = u.userid WHERE level <> 'Bronze';",
      "CSAS_I_1");
  std::mt19937 random(42);
  std::map<std::string, std::string> levels;  // the model: each user's level now
  Lines want_left, want_inner;
  const char* names[] = {"Bronze", "Gold", "Platinum"};
  for (int n = 0; n < 400; ++n) {
    std::string user = "u" + std::to_string(random() % 6);
    int64_t time = 1000 + static_cast<int64_t>(random() % 100);  // out of order: ignored here
    int what = static_cast<int>(random() % 4);
    for (auto* d : {&left, &inner}) {
      if (what == 0) {
        d->pipe("users", user, std::nullopt, time);
      } else if (what == 1) {
        d->pipe("users", user, std::string(R"({"level":")") + names[n % 3] + "\"}", time);
      } else {
        d->pipe("clicks", user, R"({"page":"p)" + std::to_string(n) + "\"}", time);
      }
    }
    if (what == 0) {
      levels.erase(user);
    } else if (what == 1) {
      levels[user] = names[n % 3];
    } else {
      auto it = levels.find(user);
      std::string level = it == levels.end() ? "null" : "\"" + it->second + "\"";
      std::string line =
          user + R"(|{"PAGE":"p)" + std::to_string(n) + R"(","LEVEL":)" + level + "}";
      want_left.push_back(line);
      if (it != levels.end() && it->second != "Bronze") want_inner.push_back(line);
    }
  }
  EXPECT_EQ(drain(left, "L"), want_left);
  EXPECT_EQ(drain(inner, "I"), want_inner);
}

TEST_F(JoinTest, AForeignKeyJoinFollowsTheLeftRowsForeignKeyAndTheRightRowsChanges) {
  engine_.execute(
      "CREATE TABLE levels (level STRING PRIMARY KEY, discount INT) WITH "
      "(kafka_topic='levels', value_format='json', partitions=1);");
  auto inner = start(
      "CREATE TABLE discounts AS SELECT u.userid, name, discount FROM users u "
      "JOIN levels l ON u.level = l.level;",
      "CTAS_DISCOUNTS_0");
  auto left = start(
      "CREATE TABLE maybe_discounts AS SELECT u.userid, name, discount FROM users u "
      "LEFT JOIN levels l ON u.level = l.level;",
      "CTAS_MAYBE_DISCOUNTS_1");
  for (auto* d : {&inner, &left}) {
    d->pipe("levels", "Gold", R"({"discount":10})", 1);
    d->pipe("users", "u1", R"({"level":"Gold","name":"Ann"})", 2);
    d->pipe("users", "u2", R"({"level":"Tin","name":"Bob"})", 3);  // no such level
    d->pipe("levels", "Gold", R"({"discount":15})", 4);            // u1's row follows
    d->pipe("users", "u1", R"({"level":"Tin","name":"Ann"})", 5);  // u1 leaves Gold
  }
  EXPECT_EQ(drain(inner, "DISCOUNTS"), (Lines{R"(u1|{"NAME":"Ann","DISCOUNT":10})",
                                              R"(u1|{"NAME":"Ann","DISCOUNT":15})", "u1|<null>"}));
  EXPECT_EQ(drain(left, "MAYBE_DISCOUNTS"),
            (Lines{R"(u1|{"NAME":"Ann","DISCOUNT":10})", R"(u2|{"NAME":"Bob","DISCOUNT":null})",
                   R"(u1|{"NAME":"Ann","DISCOUNT":15})", R"(u1|{"NAME":"Ann","DISCOUNT":null})"}));
}

TEST_F(JoinTest, AJoinsRowsCanBeAggregated) {
  auto driver = start(
      "CREATE TABLE clicks_per_level AS SELECT level, COUNT(*) AS clicks, "
      "COLLECT_LIST(page) AS pages FROM clickstream c JOIN users u ON c.userid = u.userid "
      "GROUP BY level;",
      "CTAS_CLICKS_PER_LEVEL_0");
  driver.pipe("users", "u1", R"({"level":"Gold"})", 1);
  driver.pipe("users", "u2", R"({"level":"Gold"})", 2);
  driver.pipe("clicks", "u1", R"({"page":"a"})", 3);
  driver.pipe("clicks", "u2", R"({"page":"b"})", 4);
  driver.pipe("clicks", "u3", R"({"page":"c"})", 5);  // no user: no row to count
  driver.pipe("users", "u1", R"({"level":"Silver"})", 6);
  driver.pipe("clicks", "u1", R"({"page":"d"})", 7);
  EXPECT_EQ(drain(driver, "CLICKS_PER_LEVEL"),
            (Lines{R"(Gold|{"CLICKS":1,"PAGES":["a"]})", R"(Gold|{"CLICKS":2,"PAGES":["a","b"]})",
                   R"(Silver|{"CLICKS":1,"PAGES":["d"]})"}));
}

TEST_F(JoinTest, ATableTableJoinsRowsCanBeAggregated) {
  engine_.execute(
      "CREATE TABLE accounts (userid STRING PRIMARY KEY, balance INT) WITH "
      "(kafka_topic='accounts', value_format='json', partitions=1);");
  auto driver = start(
      "CREATE TABLE balance_per_level AS SELECT level, SUM(balance) AS total FROM users u "
      "JOIN accounts a ON u.userid = a.userid GROUP BY level;",
      "CTAS_BALANCE_PER_LEVEL_0");
  driver.pipe("users", "u1", R"({"level":"Gold"})", 1);
  driver.pipe("accounts", "u1", R"({"balance":10})", 2);
  driver.pipe("users", "u2", R"({"level":"Gold"})", 3);
  driver.pipe("accounts", "u2", R"({"balance":5})", 4);
  driver.pipe("accounts", "u1", R"({"balance":7})", 5);  // u1's row changes: 10 out, 7 in
  driver.pipe("users", "u2", R"({"level":"Tin"})", 6);   // u2 moves group
  EXPECT_EQ(drain(driver, "BALANCE_PER_LEVEL"),
            (Lines{R"(Gold|{"TOTAL":10})", R"(Gold|{"TOTAL":15})", R"(Gold|{"TOTAL":12})",
                   R"(Gold|{"TOTAL":7})", R"(Tin|{"TOTAL":5})"}));
}

}  // namespace
}  // namespace oxbow::sql
