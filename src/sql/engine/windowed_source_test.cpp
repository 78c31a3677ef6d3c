// Queries over windowed sources: the table a windowed aggregation made, read by the next query
// (its records piped from one test driver into the next, as the topic carries them), and a
// stream declared over windowed keys with WINDOW_TYPE. Their rows see WINDOWSTART and WINDOWEND,
// keep their windowed keys unless they re-key, and GROUP BY across windows re-keys them.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "oxbow/streams/test_driver.h"
#include "sql/binder/sql_error.h"
#include "sql/engine/engine.h"
#include "sql/serde/row_serde.h"

namespace oxbow::sql {
namespace {

using streams::ProducedRecord;
using streams::TopologyTestDriver;

class WindowedSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    engine_.execute(
        "CREATE STREAM clicks (user STRING KEY, page STRING) WITH (kafka_topic='clicks', "
        "value_format='json', partitions=1);"
        "CREATE TABLE per_window AS SELECT user, COUNT(*) AS n FROM clicks "
        "WINDOW TUMBLING (SIZE 10 SECONDS) GROUP BY user;");
  }

  // The records query `id` writes for `input` (records of its source's topic), without a cache.
  std::vector<ProducedRecord> run(const std::string& id, const std::string& out,
                                  const std::vector<ProducedRecord>& input) {
    const PersistentQuery* q = engine_.query(id);
    EXPECT_NE(q, nullptr) << id;
    auto config = q->streams_config;
    config["statestore.cache.max.bytes"] = "0";
    TopologyTestDriver driver(q->topology, config);
    for (const auto& r : input) driver.pipe(r.topic, r.key, r.value, r.timestamp);
    std::vector<ProducedRecord> records;
    while (auto r = driver.read(out)) records.push_back(*r);
    return records;
  }

  // The windowed counts of three users' clicks, as PER_WINDOW's topic holds them.
  std::vector<ProducedRecord> counts() {
    std::vector<ProducedRecord> clicks;
    for (auto [user, ts] : std::vector<std::pair<std::string, int64_t>>{
             {"ann", 1000}, {"ann", 2000}, {"bob", 3000}, {"ann", 12000}, {"ann", 4000}})
      clicks.push_back({"clicks", user, R"({"page":"p"})", ts, {}});
    auto records = run("CTAS_PER_WINDOW_0", "PER_WINDOW", clicks);
    for (auto& r : records) r.topic = "PER_WINDOW";
    return records;
  }

  // A sink's key bytes as "user@start-end".
  std::string key_text(const std::string& sink, const std::optional<std::string>& bytes) {
    const DataSource* s = engine_.catalog().find_source(sink);
    EXPECT_TRUE(s && s->window) << sink;
    Row key = source_key_serde(*s).deserialize(sink, *bytes);
    return key.at(0).text() + "@" + std::to_string(key.at(1).bigint()) + "-" +
           std::to_string(key.at(2).bigint());
  }

  // PER_WINDOW joined to a second windowed count, VIEWS_PER_WINDOW, by `join` (query 2); the
  // records of both counts' topics for `views` (VIEWS records), clicks' counts first.
  std::vector<ProducedRecord> join_view_counts(const std::string& join,
                                               const std::vector<ProducedRecord>& views) {
    engine_.execute(
        "CREATE STREAM views (user STRING KEY, page STRING) WITH (kafka_topic='views', "
        "value_format='json', partitions=1);"
        "CREATE TABLE views_per_window AS SELECT user, COUNT(*) AS m FROM views "
        "WINDOW TUMBLING (SIZE 10 SECONDS) GROUP BY user;" +
        join);
    auto view_counts = run("CTAS_VIEWS_PER_WINDOW_1", "VIEWS_PER_WINDOW", views);
    for (auto& r : view_counts) r.topic = "VIEWS_PER_WINDOW";
    std::vector<ProducedRecord> input = counts();
    input.insert(input.end(), view_counts.begin(), view_counts.end());
    return input;
  }

  Engine engine_;
};

TEST_F(WindowedSourceTest, ATableQueryKeepsTheWindowedKeysAndSeesTheBounds) {
  engine_.execute(
      "CREATE TABLE busy AS SELECT user, n, WINDOWSTART AS ws, WINDOWEND AS we FROM per_window "
      "WHERE n > 1;");
  auto out = run("CTAS_BUSY_1", "BUSY", counts());
  std::vector<std::string> seen;
  for (const auto& r : out)
    seen.push_back(key_text("BUSY", r.key) + " " + r.value.value_or("<tombstone>"));
  // ann's first window counts 1, 2, 3 (the first filtered out: no row yet, a tombstone as ksqlDB
  // writes for a table row that does not match); bob's one click never passes; ann's second
  // window has one click.
  EXPECT_EQ(seen, (std::vector<std::string>{
                      "ann@0-10000 <tombstone>",
                      "ann@0-10000 {\"N\":2,\"WS\":0,\"WE\":10000}",
                      "bob@0-10000 <tombstone>",
                      "ann@10000-20000 <tombstone>",
                      "ann@0-10000 {\"N\":3,\"WS\":0,\"WE\":10000}",
                  }));
  const DataSource* busy = engine_.catalog().find_source("BUSY");
  ASSERT_TRUE(busy->window);
  EXPECT_EQ(busy->window->type, SourceWindowType::kTumbling);
  EXPECT_EQ(busy->window->size_ms, 10000);
}

TEST_F(WindowedSourceTest, GroupByAcrossWindowsRekeysAndRetractsEachWindowsOldCount) {
  engine_.execute(
      "CREATE TABLE totals AS SELECT user, SUM(n) AS clicks FROM per_window GROUP BY user;");
  ASSERT_FALSE(engine_.catalog().find_source("TOTALS")->window);
  std::map<std::string, std::string> latest;
  for (const auto& r : run("CTAS_TOTALS_1", "TOTALS", counts()))
    latest[*r.key] = r.value.value_or("<tombstone>");
  // ann: 3 clicks in [0, 10000) and 1 in [10000, 20000); each window's update replaces its old
  // count rather than adding to it.
  EXPECT_EQ(latest, (std::map<std::string, std::string>{{"ann", "{\"CLICKS\":4}"},
                                                        {"bob", "{\"CLICKS\":1}"}}));
}

TEST_F(WindowedSourceTest, AStreamOverWindowedKeysFiltersOnTheWindow) {
  engine_.execute(
      "CREATE STREAM window_counts (user STRING KEY, n BIGINT) WITH (kafka_topic='PER_WINDOW', "
      "value_format='json', window_type='TUMBLING', window_size='10 SECONDS');"
      "CREATE STREAM late_windows AS SELECT user, n FROM window_counts "
      "WHERE WINDOWSTART >= 10000;");
  auto out = run("CSAS_LATE_WINDOWS_1", "LATE_WINDOWS", counts());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(key_text("LATE_WINDOWS", out[0].key), "ann@10000-20000");
  EXPECT_EQ(out[0].value, "{\"N\":1}");
}

TEST_F(WindowedSourceTest, WindowedTablesJoinOnTheirKeysAndWindows) {
  std::vector<ProducedRecord> views;
  for (auto [user, ts] : std::vector<std::pair<std::string, int64_t>>{
           {"ann", 500}, {"bob", 15000}, {"ann", 11000}, {"ann", 13000}})
    views.push_back({"views", user, R"({"page":"p"})", ts, {}});
  std::vector<ProducedRecord> input = join_view_counts(
      "CREATE TABLE both_counts AS SELECT c.user AS user, n, m, c.WINDOWSTART AS ws "
      "FROM per_window c JOIN views_per_window v ON c.user = v.user;",
      views);
  std::map<std::string, std::string> latest;
  for (const auto& r : run("CTAS_BOTH_COUNTS_2", "BOTH_COUNTS", input))
    latest[key_text("BOTH_COUNTS", r.key)] = r.value.value_or("<tombstone>");
  // Only a user's window that both sides have joins: ann's two windows (bob's clicks and views
  // fall in different windows).
  EXPECT_EQ(latest, (std::map<std::string, std::string>{
                        {"ann@0-10000", R"({"N":3,"M":1,"WS":0})"},
                        {"ann@10000-20000", R"({"N":1,"M":2,"WS":10000})"}}));
  EXPECT_TRUE(engine_.catalog().find_source("BOTH_COUNTS")->window);
}

// As ksqlDB's QTT joins.json "matching time-windowed - SR-enabled key format": SELECT * over a
// join gives each windowed source's window bounds after its key (never its ROWTIME).
TEST_F(WindowedSourceTest, SelectStarOverAWindowedJoinGivesEachSidesWindowBounds) {
  std::vector<ProducedRecord> input = join_view_counts(
      "CREATE TABLE both_counts AS SELECT * FROM per_window c JOIN views_per_window v "
      "ON c.user = v.user;",
      {{"views", "bob", R"({"page":"p"})", 3500, {}}});
  EXPECT_EQ(engine_.catalog().find_source("BOTH_COUNTS")->schema_text(),
            "`C_USER` STRING PRIMARY KEY, `C_WINDOWSTART` BIGINT, `C_WINDOWEND` BIGINT, "
            "`C_N` BIGINT, `V_USER` STRING, `V_WINDOWSTART` BIGINT, `V_WINDOWEND` BIGINT, "
            "`V_M` BIGINT");
  std::map<std::string, std::string> latest;
  for (const auto& r : run("CTAS_BOTH_COUNTS_2", "BOTH_COUNTS", input))
    latest[key_text("BOTH_COUNTS", r.key)] = r.value.value_or("<tombstone>");
  EXPECT_EQ(latest, (std::map<std::string, std::string>{
                        {"bob@0-10000", R"({"C_WINDOWSTART":0,"C_WINDOWEND":10000,"C_N":1,)"
                                        R"("V_USER":"bob","V_WINDOWSTART":0,"V_WINDOWEND":10000,)"
                                        R"("V_M":1})"}}));
}

TEST_F(WindowedSourceTest, SessionWindowedKeysCarryBothBounds) {
  engine_.execute(
      "CREATE TABLE sessions AS SELECT user, COUNT(*) AS n FROM clicks "
      "WINDOW SESSION (5 SECONDS) GROUP BY user;"
      "CREATE TABLE long_sessions AS SELECT user, n, WINDOWEND - WINDOWSTART AS span "
      "FROM sessions WHERE WINDOWEND - WINDOWSTART >= 1000;");
  auto sessions = run("CTAS_SESSIONS_1", "SESSIONS",
                      {{"clicks", "ann", "{}", 1000, {}},
                       {"clicks", "ann", "{}", 3000, {}},
                       {"clicks", "bob", "{}", 3000, {}}});
  for (auto& r : sessions) r.topic = "SESSIONS";
  std::map<std::string, std::string> latest;
  for (const auto& r : run("CTAS_LONG_SESSIONS_2", "LONG_SESSIONS", sessions))
    latest[key_text("LONG_SESSIONS", r.key)] = r.value.value_or("<tombstone>");
  // ann's first one-record session [1000, 1000] was merged away (its tombstone), then
  // [1000, 3000] spans 2 seconds; bob's session is a single instant.
  EXPECT_EQ(latest, (std::map<std::string, std::string>{{"ann@1000-1000", "<tombstone>"},
                                                        {"ann@1000-3000", R"({"N":2,"SPAN":2000})"},
                                                        {"bob@3000-3000", "<tombstone>"}}));
}

TEST_F(WindowedSourceTest, JoinsOfWindowedSourcesAreRefusedAsKsqlDbRefusesThem) {
  engine_.execute(
      "CREATE TABLE users (user STRING PRIMARY KEY, level STRING) WITH (kafka_topic='users', "
      "value_format='json', partitions=1);");
  try {
    engine_.execute(
        "CREATE TABLE j AS SELECT p.user, n, level FROM per_window p JOIN users u "
        "ON p.user = u.user;");
    FAIL() << "joined";
  } catch (const SqlError& e) {
    EXPECT_EQ(std::string(e.what()),
              "Can not join windowed source to non-windowed source.\n`P` is TUMBLING windowed\n"
              "`U` is not windowed");
  }
}

}  // namespace
}  // namespace oxbow::sql
