// Pull queries' planning (pull_query.h): ksqlDB's refusals, the key and window bounds read from
// WHERE, the store ranges a key type's byte order allows, and store rows made into result rows
// (through an aggregation's store filled by the test driver).
#include "sql/engine/pull_query.h"

#include <gtest/gtest.h>

#include <string>

#include "oxbow/streams/test_driver.h"
#include "sql/engine/engine.h"
#include "sql/parser/parser.h"
#include "sql/planner/query_planner.h"

namespace oxbow::sql {
namespace {

class PullQueryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    engine_.execute(
        "CREATE STREAM clicks (user STRING KEY, page STRING, n INT) WITH (kafka_topic='clicks', "
        "value_format='json', partitions=1);"
        "CREATE STREAM nums (id BIGINT KEY, v INT) WITH (kafka_topic='nums', "
        "value_format='json', partitions=1);"
        "CREATE TABLE users (id STRING PRIMARY KEY, name STRING) WITH (kafka_topic='users', "
        "value_format='json', partitions=1);"
        "CREATE TABLE per_user AS SELECT user, COUNT(*) AS clicks, SUM(n) AS total FROM clicks "
        "GROUP BY user HAVING COUNT(*) < 100;"
        "CREATE TABLE per_id AS SELECT id, COUNT(*) AS c FROM nums GROUP BY id;"
        "CREATE TABLE per_page AS SELECT page, COUNT(*) AS c FROM clicks GROUP BY page "
        "EMIT CHANGES;"
        "CREATE TABLE per_minute AS SELECT user, COUNT(*) AS c FROM clicks "
        "WINDOW TUMBLING (SIZE 60 SECONDS) GROUP BY user;"
        "CREATE TABLE named AS SELECT id, UCASE(name) AS upper FROM users WHERE name <> 'x';");
  }

  PullPlan plan(const std::string& text) {
    auto statements = parser::parse(text);
    const auto& query = std::get<std::unique_ptr<parser::Query>>(statements.front().body);
    return plan_pull_query(engine_, *query);
  }
  std::string refusal(const std::string& text) {
    try {
      plan(text);
      return "accepted";
    } catch (const std::exception& e) {
      std::string message = e.what();
      auto help = message.find(kPullQueryHelp);
      return help == std::string::npos ? message : message.substr(0, help);
    }
  }

  Engine engine_;
};

std::vector<std::string> texts(const std::vector<Value>& values) {
  std::vector<std::string> out;
  for (const auto& v : values) out.push_back(v.debug_string());
  return out;
}

TEST_F(PullQueryTest, KeyLookups) {
  auto p = plan("SELECT * FROM per_user WHERE user = 'alice';");
  EXPECT_EQ(p.materializing_query, "CTAS_PER_USER_0");
  EXPECT_EQ(p.store, kAggregateStore);
  EXPECT_EQ(p.store_kind, PullStoreKind::kKeyValue);
  ASSERT_EQ(p.bounds.keys.kind, KeyBounds::Kind::kLookup);
  EXPECT_EQ(texts(p.bounds.keys.keys).size(), 1u);
  EXPECT_EQ(p.bounds.keys.keys[0].text(), "alice");
  EXPECT_EQ(p.schema, "`USER` STRING KEY, `CLICKS` BIGINT, `TOTAL` INTEGER");
  EXPECT_TRUE(p.query_id.starts_with("query_"));

  p = plan("SELECT clicks FROM per_user WHERE 'bob' = user AND clicks > 2;");
  ASSERT_EQ(p.bounds.keys.kind, KeyBounds::Kind::kLookup);
  EXPECT_EQ(p.bounds.keys.keys[0].text(), "bob");
  EXPECT_EQ(p.column_names, std::vector<std::string>{"CLICKS"});

  p = plan("SELECT * FROM per_id WHERE id IN (3, -4, 5, 3);");
  ASSERT_EQ(p.bounds.keys.kind, KeyBounds::Kind::kLookup);
  ASSERT_EQ(p.bounds.keys.keys.size(), 3u);
  // INT literals looked up as the BIGINT keys they stand for.
  EXPECT_EQ(p.bounds.keys.keys[1].kind(), Value::Kind::kBigint);
  EXPECT_EQ(p.bounds.keys.keys[1].bigint(), -4);
}

TEST_F(PullQueryTest, RangesAreStoreRangesWhenTheBytesSortAsTheValues) {
  auto p = plan("SELECT * FROM per_user WHERE user > 'b' AND user <= 'd' AND user < 'x';");
  ASSERT_EQ(p.bounds.keys.kind, KeyBounds::Kind::kRange);
  ASSERT_EQ(p.ranges.size(), 1u);
  EXPECT_EQ(p.ranges[0].from.text(), "b");
  EXPECT_EQ(p.ranges[0].to.text(), "d");

  p = plan("SELECT * FROM per_user WHERE user >= 'm';");
  ASSERT_EQ(p.ranges.size(), 1u);
  EXPECT_EQ(p.ranges[0].to.text(), "\xff");

  // Signed big-endian: the negative part, then the rest.
  p = plan("SELECT * FROM per_id WHERE id BETWEEN -5 AND 7;");
  ASSERT_EQ(p.bounds.keys.kind, KeyBounds::Kind::kRange);
  ASSERT_EQ(p.ranges.size(), 2u);
  EXPECT_EQ(p.ranges[0].from.bigint(), -5);
  EXPECT_EQ(p.ranges[0].to.bigint(), -1);
  EXPECT_EQ(p.ranges[1].from.bigint(), 0);
  EXPECT_EQ(p.ranges[1].to.bigint(), 7);

  p = plan("SELECT * FROM per_id WHERE id > 10;");
  ASSERT_EQ(p.ranges.size(), 1u);
  EXPECT_EQ(p.ranges[0].from.bigint(), 10);
  EXPECT_EQ(p.ranges[0].to.bigint(), INT64_MAX);

  // An empty range reads nothing.
  p = plan("SELECT * FROM per_id WHERE id > 10 AND id < 3;");
  EXPECT_EQ(p.bounds.keys.kind, KeyBounds::Kind::kRange);
  EXPECT_TRUE(p.ranges.empty());
}

TEST_F(PullQueryTest, ScansWhatNoBoundNarrows) {
  EXPECT_EQ(plan("SELECT * FROM per_user;").bounds.keys.kind, KeyBounds::Kind::kScan);
  EXPECT_EQ(plan("SELECT * FROM per_user WHERE user = 'a' OR user = 'b';").bounds.keys.kind,
            KeyBounds::Kind::kScan);
  EXPECT_EQ(plan("SELECT * FROM per_user WHERE clicks > 3 LIMIT 2;").bounds.keys.kind,
            KeyBounds::Kind::kScan);
  EXPECT_EQ(plan("SELECT * FROM per_user WHERE user NOT IN ('a');").bounds.keys.kind,
            KeyBounds::Kind::kScan);
  EXPECT_EQ(plan("SELECT * FROM per_user LIMIT 2;").limit, 2);
}

TEST_F(PullQueryTest, StoreRangesOnlyWhereTheByteOrderIsTheTypesOrder) {
  KeyBounds bounds;
  bounds.kind = KeyBounds::Kind::kRange;
  bounds.lower.emplace();
  bounds.lower->set_double(-1.5);
  EXPECT_FALSE(store_ranges(bounds, "KAFKA", *SqlType::double_type()));
  bounds.lower->set_string("a");
  EXPECT_FALSE(store_ranges(bounds, "JSON", *SqlType::string()));
  EXPECT_TRUE(store_ranges(bounds, "KAFKA", *SqlType::string()));
  bounds.lower->set_integer(-3);
  auto ranges = store_ranges(bounds, "KAFKA", *SqlType::integer());
  ASSERT_TRUE(ranges);
  ASSERT_EQ(ranges->size(), 2u);
  EXPECT_EQ((*ranges)[1].to.integer(), INT32_MAX);
}

TEST_F(PullQueryTest, WindowBounds) {
  auto p = plan(
      "SELECT * FROM per_minute WHERE user = 'a' AND WINDOWSTART >= 60000 AND "
      "WINDOWEND < 240000;");
  EXPECT_EQ(p.store_kind, PullStoreKind::kWindow);
  EXPECT_EQ(p.window_size_ms, 60000);
  EXPECT_EQ(p.bounds.keys.kind, KeyBounds::Kind::kLookup);
  EXPECT_EQ(p.bounds.starts.from, 60000);
  EXPECT_EQ(p.bounds.starts.to, 240000 - 60000 - 1);
  p = plan("SELECT * FROM per_minute WHERE WINDOWSTART = 120000;");
  EXPECT_EQ(p.schema,
            "`USER` STRING KEY, `WINDOWSTART` BIGINT KEY, `WINDOWEND` BIGINT KEY, `C` BIGINT");
  EXPECT_EQ(p.bounds.starts.from, 120000);
  EXPECT_EQ(p.bounds.starts.to, 120000);
  EXPECT_EQ(p.bounds.keys.kind, KeyBounds::Kind::kScan);
  p = plan("SELECT user, WINDOWEND, c, ROWTIME FROM per_minute;");
  EXPECT_EQ(p.schema, "`USER` STRING KEY, `WINDOWEND` BIGINT KEY, `C` BIGINT, `ROWTIME` BIGINT");
}

TEST_F(PullQueryTest, KsqlDbsRefusals) {
  EXPECT_EQ(refusal("SELECT * FROM users WHERE id = 'a';"),
            "The `USERS` table isn't queryable. To derive a queryable table, you can do "
            "'CREATE TABLE QUERYABLE_USERS AS SELECT * FROM USERS'.");
  EXPECT_EQ(refusal("SELECT user, COUNT(*) FROM clicks GROUP BY user;"),
            "Pull queries don't support GROUP BY clauses.");
  EXPECT_EQ(refusal("SELECT * FROM per_user p JOIN users u ON p.user = u.id;"),
            "Pull queries don't support JOIN clauses.");
  EXPECT_EQ(refusal("SELECT * FROM per_user WINDOW TUMBLING (SIZE 1 SECOND);"),
            "Pull queries don't support WINDOW clauses.");
  EXPECT_EQ(refusal("SELECT ROWPARTITION AS p FROM per_user;"),
            "Pull queries don't support the following columns in SELECT clauses: ROWPARTITION\n");
  EXPECT_EQ(refusal("SELECT * FROM per_user WHERE ROWOFFSET > 1;"),
            "Pull queries don't support the following columns in WHERE clauses: ROWOFFSET\n");
  EXPECT_NE(refusal("SELECT * FROM nowhere;"), "accepted");
}

TEST_F(PullQueryTest, StreamsAreScansOfTheirTopic) {
  auto p = plan("SELECT user, n * 2 AS d FROM clicks WHERE n > 1 LIMIT 5;");
  ASSERT_TRUE(p.stream);
  EXPECT_EQ(p.stream->topic, "clicks");
  EXPECT_TRUE(p.materializing_query.empty());
  EXPECT_EQ(p.schema, "`USER` STRING KEY, `D` INTEGER");
  Row key(1), value(2);
  key[0].set_string("alice");
  value[0].set_string("/a");
  value[1].set_integer(3);
  auto row = p.rows->row(key, nullptr, value, 7);
  ASSERT_TRUE(row);
  EXPECT_EQ((*row)[0].text(), "alice");
  EXPECT_EQ((*row)[1].as_int64(), 6);
  value[1].set_integer(1);
  EXPECT_FALSE(p.rows->row(key, nullptr, value, 7));
}

// The rows of a store the test driver filled, through the plan: the aggregation's projection and
// HAVING, then the pull query's WHERE and projection.
TEST_F(PullQueryTest, StoreRowsBecomeResultRows) {
  const PersistentQuery* query = engine_.query("CTAS_PER_USER_0");
  ASSERT_TRUE(query);
  streams::TopologyTestDriver driver(query->topology, query->streams_config);
  driver.pipe("clicks", "alice", R"({"PAGE":"a","N":2})", 1000);
  driver.pipe("clicks", "alice", R"({"PAGE":"b","N":3})", 2000);
  driver.pipe("clicks", "bob", R"({"PAGE":"a","N":7})", 3000);
  auto p = plan("SELECT user, total * 10 AS t, clicks FROM per_user WHERE total > 5;");
  auto store = driver.getKeyValueStore<Row, Row>(kAggregateStore);
  std::vector<std::string> rows;
  for (auto it = store.all(); it.hasNext();) {
    auto entry = it.next();
    if (auto row = p.rows->row(entry.key, nullptr, entry.value, 0))
      rows.push_back((*row)[0].text() + "," + std::to_string((*row)[1].as_int64()) + "," +
                     std::to_string((*row)[2].as_int64()));
  }
  EXPECT_EQ(rows, std::vector<std::string>{"bob,70,1"});
}

// A table query without GROUP BY keeps its result rows in a store of its own: the pull query
// reads them as they are, through its own WHERE and projection; a row the query's WHERE drops
// (or a tombstone) leaves the store.
TEST_F(PullQueryTest, TableQueriesWithoutGroupByAreQueryableThroughTheirResultStore) {
  const PersistentQuery* query = engine_.query("CTAS_NAMED_4");
  ASSERT_TRUE(query);
  auto p = plan("SELECT upper, id FROM named WHERE id = 'a';");
  EXPECT_EQ(p.materializing_query, "CTAS_NAMED_4");
  EXPECT_EQ(p.store, kTableQueryStore);
  EXPECT_EQ(p.bounds.keys.kind, KeyBounds::Kind::kLookup);
  EXPECT_EQ(p.schema, "`ID` STRING KEY, `UPPER` STRING");
  streams::TopologyTestDriver driver(query->topology, query->streams_config);
  driver.pipe("users", "a", R"({"NAME":"ann"})", 1000);
  driver.pipe("users", "b", R"({"NAME":"bo"})", 1000);
  driver.pipe("users", "c", R"({"NAME":"cy"})", 1000);
  driver.pipe("users", "b", R"({"NAME":"x"})", 2000);  // now filtered out
  driver.pipe("users", "c", std::nullopt, 2000);       // deleted
  auto store = driver.getKeyValueStore<Row, Row>(kTableQueryStore);
  auto scan = plan("SELECT * FROM named;");
  std::vector<std::string> rows;
  for (auto it = store.all(); it.hasNext();) {
    auto entry = it.next();
    if (auto row = scan.rows->row(entry.key, nullptr, entry.value, 0))
      rows.push_back((*row)[0].text() + "," + (*row)[1].text());
  }
  EXPECT_EQ(rows, std::vector<std::string>{"a,ANN"});
}

}  // namespace
}  // namespace oxbow::sql
