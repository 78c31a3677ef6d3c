// A push query's topology ending in a callback (plan_query with a RowCallback), run in Streams'
// TopologyTestDriver: the rows the callback gets for a stream, a table's deletions and a windowed
// aggregation's keys, and nothing written to any topic.
#include <gtest/gtest.h>

#include "oxbow/streams/test_driver.h"
#include "sql/engine/engine.h"
#include "sql/parser/parser.h"

namespace oxbow::sql {
namespace {

using streams::TopologyTestDriver;
using Lines = std::vector<std::string>;

std::string text(const Row& row) {
  std::string out = "[";
  for (const auto& v : row) out += (out.size() > 1 ? "," : "") + v.debug_string();
  return out + "]";
}

class RowCallbackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    engine_.execute(
        "CREATE STREAM pv (viewer STRING KEY, secs INT) WITH (kafka_topic='pv', "
        "value_format='json', partitions=1);");
    engine_.execute(
        "CREATE TABLE users (id STRING PRIMARY KEY, name STRING) WITH (kafka_topic='users', "
        "value_format='json', partitions=1);");
  }

  // `select` planned as a push query whose rows are written to `rows_` as "key|value".
  std::unique_ptr<TopologyTestDriver> start(const std::string& select) {
    static const FunctionRegistry functions;
    auto statements = parser::parse(select);
    const auto& query = std::get<std::unique_ptr<parser::Query>>(statements.front().body);
    bound_ = bind_query(*query, engine_.catalog(), functions, QueryContext{});
    sink_.name = "RESULT";
    sink_.kind = bound_.result_kind;
    sink_.formats.key_format = "JSON";
    sink_.formats.value_format = "JSON";
    for (const auto& c : bound_.columns)
      sink_.columns.push_back(
          {c.name, c.type, c.key ? ColumnNamespace::kKey : ColumnNamespace::kValue, ""});
    auto topology =
        plan_query(*physical_plan(bound_, sink_), bound_, sink_, std::make_shared<QueryCounters>(),
                   [this](const Row& key, const Row* value) {
                     rows_.push_back(text(key) + "|" + (value ? text(*value) : "null"));
                   });
    return std::make_unique<TopologyTestDriver>(
        topology, std::map<std::string, std::string>{{"application.id", "push"},
                                                     {"statestore.cache.max.bytes", "0"}});
  }

  Engine engine_;
  BoundQuery bound_;
  DataSource sink_;
  Lines rows_;
};

TEST_F(RowCallbackTest, AStreamsRowsReachTheCallbackAndNoTopic) {
  auto driver = start("SELECT viewer, secs * 2 AS d FROM pv WHERE secs > 1 EMIT CHANGES;");
  driver->pipe("pv", "ann", R"({"SECS":5})", 1000);
  driver->pipe("pv", "bo", R"({"SECS":1})", 1000);
  driver->pipe("pv", "cy", R"({"SECS":2})", 1000);
  EXPECT_EQ(rows_, (Lines{"['ann']|[10]", "['cy']|[4]"}));
  EXPECT_FALSE(driver->read("RESULT"));
}

TEST_F(RowCallbackTest, ATablesDeletedAndFilteredOutRowsAreTombstones) {
  auto driver = start("SELECT id, name FROM users WHERE name <> 'x' EMIT CHANGES;");
  driver->pipe("users", "u1", R"({"NAME":"ann"})", 1000);
  driver->pipe("users", "u1", std::nullopt, 1000);
  driver->pipe("users", "u2", R"({"NAME":"x"})", 1000);
  EXPECT_EQ(rows_, (Lines{"['u1']|['ann']", "['u1']|null", "['u2']|null"}));
}

// ksqlDB emits such rows (an empty row is not a null one); only a deletion is a tombstone.
TEST_F(RowCallbackTest, ATablesRowsOfOnlyTheirKeyAreRowsNotTombstones) {
  auto driver = start("SELECT id FROM users EMIT CHANGES;");
  driver->pipe("users", "u1", R"({"NAME":"ann"})", 1000);
  driver->pipe("users", "u1", R"({"NAME":"bo"})", 1000);
  driver->pipe("users", "u1", std::nullopt, 1000);
  EXPECT_EQ(rows_, (Lines{"['u1']|[null]", "['u1']|[null]", "['u1']|null"}));

  driver.reset();
  rows_.clear();
  auto grouped = start("SELECT viewer FROM pv GROUP BY viewer HAVING COUNT(*) > 0 EMIT CHANGES;");
  grouped->pipe("pv", "ann", R"({"SECS":5})", 1000);
  grouped->pipe("pv", "ann", R"({"SECS":6})", 1000);
  EXPECT_EQ(rows_, (Lines{"['ann',null]|[null]", "['ann',null]|[null]"}));
}

TEST_F(RowCallbackTest, AWindowedAggregationsKeysCarryTheirWindow) {
  auto driver = start(
      "SELECT viewer, COUNT(*) AS n FROM pv WINDOW TUMBLING (SIZE 1 MINUTE) GROUP BY viewer "
      "EMIT CHANGES;");
  driver->pipe("pv", "ann", R"({"SECS":5})", 61'000);
  driver->pipe("pv", "ann", R"({"SECS":6})", 62'000);
  EXPECT_EQ(rows_, (Lines{"['ann',60000,120000]|[1]", "['ann',60000,120000]|[2]"}));
}

}  // namespace
}  // namespace oxbow::sql
