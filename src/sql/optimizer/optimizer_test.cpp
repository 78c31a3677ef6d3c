#include "sql/optimizer/optimizer.h"

#include <gtest/gtest.h>

#include <deque>

#include "sql/binder/ddl_binder.h"
#include "sql/logical/logical_plan_testing.h"
#include "sql/parser/parser.h"

namespace oxbow::sql::optimizer {
namespace {

using logical::Node;
using logical::NodeKind;
using logical::predicates;
using logical::shape;

// Each test builds the plain tree of a bound query, checks what the builder left to the pass, runs
// the pass alone and checks what it decided.
class OptimizerTest : public ::testing::Test {
 protected:
  OptimizerTest() {
    for (const char* ddl : {
             "CREATE STREAM pageviews (userid STRING KEY, page STRING, viewtime BIGINT) WITH "
             "(kafka_topic='p', value_format='json', partitions=2);",
             "CREATE STREAM clicks (userid STRING KEY, page STRING, viewtime BIGINT) WITH "
             "(kafka_topic='c', value_format='json', partitions=2);",
             "CREATE TABLE users (userid STRING PRIMARY KEY, level STRING, regionid STRING) WITH "
             "(kafka_topic='u', value_format='json', partitions=2);",
             "CREATE TABLE regions (regionid STRING PRIMARY KEY, name STRING) WITH "
             "(kafka_topic='r', value_format='json', partitions=2);",
             "CREATE STREAM orders (id INT KEY, items ARRAY<STRING>, region STRING) WITH "
             "(kafka_topic='o', value_format='json', partitions=2);",
             "CREATE TABLE counts (page STRING PRIMARY KEY, n BIGINT) WITH (kafka_topic='n', "
             "value_format='json', window_type='tumbling', window_size='1 minute');",
         }) {
      auto statements = parser::parse(ddl);
      catalog_.put_source(
          bind_create_source(std::get<parser::CreateSource>(statements.at(0).body), catalog_, {})
              .source);
    }
  }
  // The plain (unoptimized) tree of `select` into OUTPUT, or transient for an empty `sink`.
  Node& plain(const std::string& select, const std::string& sink = "OUTPUT") {
    statements_.push_back(parser::parse(select));
    auto& query = *std::get<std::unique_ptr<parser::Query>>(statements_.back().at(0).body);
    bound_.push_back(bind_query(query, catalog_, functions_,
                                QueryContext{sink.empty() ? std::nullopt : std::optional(sink)}));
    plans_.push_back(logical::build_logical_plan(bound_.back(), sink));
    return *plans_.back();
  }
  const BoundQuery& query() const { return bound_.back(); }
  // The plain tree of `select` (transient unless `sink` is given), its sources' columns pruned.
  Node& pruned(const std::string& select, const std::string& sink = "") {
    Node& root = plain(select, sink);
    prune_projections(root, query());
    return root;
  }

  // The first node of `kind` from the top, along the left inputs.
  static const Node& first(const Node& root, NodeKind kind) {
    const Node* at = &root;
    while (at->kind != kind && !at->inputs.empty()) at = at->inputs.front().get();
    EXPECT_EQ(at->kind, kind);
    return *at;
  }
  // The source `alias`'s columns_read as "ALIAS.NAME" texts.
  std::string read_by(const Node& root, const std::string& alias) const {
    if (root.kind == NodeKind::kSource && root.alias == alias) {
      std::string out;
      for (int i : root.columns_read) {
        const ScopeColumn& c = query().scope.columns.at(static_cast<size_t>(i));
        out += (out.empty() ? "" : ", ") + c.source + "." + c.name;
      }
      return out;
    }
    for (const auto& input : root.inputs)
      if (std::string found = read_by(*input, alias); found != "(no source)") return found;
    return "(no source)";
  }

  Catalog catalog_;
  FunctionRegistry functions_;
  std::deque<std::vector<parser::Statement>> statements_;
  std::deque<BoundQuery> bound_;
  std::vector<std::unique_ptr<Node>> plans_;
};

TEST_F(OptimizerTest, PushesConjunctsOverTheFromStreamBelowAnInnerOrLeftFirstJoin) {
  Node& sink = plain(
      "SELECT p.userid, p.page, u.level FROM pageviews p LEFT JOIN users u ON p.userid = "
      "u.userid WHERE p.viewtime > 1 AND u.level = 'Platinum' AND p.rowtime > 0;");
  EXPECT_EQ(shape(sink), "Sink(Project(Filter(Join(Source, Source))))");
  push_down_predicates(sink, query());
  EXPECT_EQ(shape(sink), "Sink(Project(Filter(Join(Filter(Source), Source))))");
  const Node& where = first(sink, NodeKind::kFilter);  // WHERE stays whole above the join
  EXPECT_FALSE(where.pushed_down);
  EXPECT_EQ(predicates(where),
            "(((P.VIEWTIME > 1) AND (U.LEVEL = 'Platinum')) AND (P.ROWTIME > 0))");
  const Node& join = where.input();
  const Node& pushed = join.input(0);
  EXPECT_TRUE(pushed.pushed_down);
  EXPECT_EQ(predicates(pushed), "(P.VIEWTIME > 1) AND (P.ROWTIME > 0)");
  EXPECT_EQ(pushed.schema.text(), pushed.input().schema.text());
  EXPECT_EQ(pushed.input().alias, "P");
  EXPECT_NE(logical::logical_plan_text(sink).find(
                "\n         > [ FILTER ] | WHERE (P.VIEWTIME > 1) AND (P.ROWTIME > 0) (pushed "
                "down) | Schema: `P_USERID` STRING KEY"),
            std::string::npos)
      << logical::logical_plan_text(sink);

  // In an n-way join, below the first join, the innermost.
  Node& nway = plain(
      "SELECT u.regionid, p.page, r.name FROM pageviews p JOIN users u ON p.userid = u.userid "
      "JOIN regions r ON u.regionid = r.regionid WHERE p.page = 'home';");
  push_down_predicates(nway, query());
  EXPECT_EQ(shape(nway), "Sink(Project(Filter(Join(Join(Filter(Source), Source), Source))))");
  // A stream-stream INNER join too.
  Node& streams = plain(
      "SELECT p.userid, p.page, c.page AS clicked FROM pageviews p JOIN clicks c WITHIN 1 MINUTE "
      "ON p.userid = c.userid WHERE p.page = 'home';");
  push_down_predicates(streams, query());
  EXPECT_EQ(shape(streams), "Sink(Project(Filter(Join(Filter(Source), Source))))");
}

TEST_F(OptimizerTest, PushesNothingPastARightOrFullJoinFromATableOrReadingTheRightSide) {
  for (const char* select : {
           // The left side's columns may be NULL after these joins.
           "SELECT c.userid, p.page FROM pageviews p RIGHT JOIN clicks c WITHIN 1 MINUTE ON "
           "p.userid = c.userid WHERE p.viewtime > 1;",
           "SELECT p.page, c.page AS clicked FROM pageviews p FULL OUTER JOIN clicks c WITHIN 1 "
           "MINUTE ON p.userid = c.userid WHERE p.viewtime > 1;",
           // A table's rows are updates.
           "SELECT u.userid, r.name FROM users u JOIN regions r ON u.regionid = r.regionid WHERE "
           "u.level = 'Platinum';",
           // The conjunct reads the right side.
           "SELECT p.userid, u.level FROM pageviews p JOIN users u ON p.userid = u.userid WHERE "
           "u.level = 'Platinum';",
           "SELECT p.userid, u.level FROM pageviews p JOIN users u ON p.userid = u.userid WHERE "
           "p.page = u.level;",
       }) {
    Node& sink = plain(select, "");
    std::string before = shape(sink);
    EXPECT_EQ(before, "Sink(Project(Filter(Join(Source, Source))))") << select;
    push_down_predicates(sink, query());
    EXPECT_EQ(shape(sink), before) << select;
  }
}

TEST_F(OptimizerTest, PartitionByTheKeyTheRowsHaveKeepsThem) {
  Node& sink = plain("SELECT userid, page FROM pageviews PARTITION BY userid;");
  const Node& partition = first(sink, NodeKind::kPartitionBy);
  EXPECT_FALSE(partition.keeps_key);  // the plain tree re-keys
  EXPECT_EQ(partition.schema.text(),
            "`USERID` STRING KEY, `USERID` STRING, `PAGE` STRING, `VIEWTIME` BIGINT");
  eliminate_repartitions(sink, query());
  EXPECT_TRUE(partition.keeps_key);
  EXPECT_EQ(partition.schema.text(), "`USERID` STRING KEY, `PAGE` STRING, `VIEWTIME` BIGINT");

  // By another column: a re-key.
  Node& other = plain("SELECT region, id FROM orders PARTITION BY region;");
  std::string rekeyed = first(other, NodeKind::kPartitionBy).schema.text();
  eliminate_repartitions(other, query());
  EXPECT_FALSE(first(other, NodeKind::kPartitionBy).keeps_key);
  EXPECT_EQ(first(other, NodeKind::kPartitionBy).schema.text(), rekeyed);

  // A windowed key stays windowed up to the sink; the table functions above see the rows' own
  // columns.
  Node& windowed = plain("SELECT page, n FROM counts PARTITION BY page;");
  EXPECT_FALSE(windowed.schema.window);
  eliminate_repartitions(windowed, query());
  EXPECT_TRUE(first(windowed, NodeKind::kPartitionBy).keeps_key);
  ASSERT_TRUE(windowed.schema.window);
  EXPECT_EQ(windowed.schema.window->size_ms, 60000);
  EXPECT_EQ(windowed.schema.text(), "`PAGE` STRING KEY, `N` BIGINT");
  Node& exploded = plain("SELECT id, EXPLODE(items) AS item FROM orders PARTITION BY id;");
  eliminate_repartitions(exploded, query());
  EXPECT_EQ(first(exploded, NodeKind::kTableFunction).schema.text(),
            "`ID` INTEGER KEY, `ITEMS` ARRAY<STRING>, `REGION` STRING, `KSQL_SYNTH_0` STRING");

  // After a join, by the column the join's rows are keyed by.
  Node& joined = plain(
      "SELECT p.userid, u.level FROM pageviews p JOIN users u ON p.userid = u.userid PARTITION "
      "BY p.userid;");
  eliminate_repartitions(joined, query());
  EXPECT_TRUE(first(joined, NodeKind::kPartitionBy).keeps_key);
}

TEST_F(OptimizerTest, GroupByTheSourcesKeyNeedsNoRepartition) {
  struct Case {
    const char* select;
    bool by_key;
  };
  for (const Case& c : {
           Case{"SELECT userid, COUNT(*) AS n FROM pageviews GROUP BY userid;", true},
           Case{"SELECT page, COUNT(*) AS n FROM pageviews GROUP BY page;", false},
           Case{"SELECT userid, page, COUNT(*) AS n FROM pageviews GROUP BY userid, page;", false},
           Case{"SELECT p.userid, COUNT(*) AS n FROM pageviews p JOIN users u ON p.userid = "
                "u.userid GROUP BY p.userid;",
                false},
       }) {
    Node& sink = plain(c.select);
    EXPECT_FALSE(first(sink, NodeKind::kAggregate).groups_by_key);
    eliminate_repartitions(sink, query());
    EXPECT_EQ(first(sink, NodeKind::kAggregate).groups_by_key, c.by_key) << c.select;
  }
}

TEST_F(OptimizerTest, JoinSidesAreReKeyedUnlessKeyedByTheirJoinExpression) {
  struct Case {
    const char* select;
    bool left, right;
  };
  for (const Case& c : {
           Case{"SELECT p.userid, c.page AS clicked FROM pageviews p JOIN clicks c WITHIN 1 "
                "MINUTE ON p.userid = c.userid;",
                false, false},
           Case{"SELECT p.page, c.userid AS clicker FROM pageviews p JOIN clicks c WITHIN 1 "
                "MINUTE ON p.page = c.page;",
                true, true},
           Case{"SELECT p.userid, c.page AS clicked FROM pageviews p JOIN clicks c WITHIN 1 "
                "MINUTE ON p.userid = c.page;",
                false, true},
           // A table side never.
           Case{"SELECT p.page, u.level FROM pageviews p JOIN users u ON p.page = u.userid;", true,
                false},
           Case{"SELECT p.userid, u.level FROM pageviews p JOIN users u ON p.userid = u.userid;",
                false, false},
       }) {
    Node& sink = plain(c.select);
    eliminate_repartitions(sink, query());
    const Node& join = first(sink, NodeKind::kJoin);
    EXPECT_EQ(join.rekey_left, c.left) << c.select;
    EXPECT_EQ(join.rekey_right, c.right) << c.select;
  }

  // A nested join's rows are keyed by the key column of its schema.
  Node& nested = plain(
      "SELECT c.userid, p.page, u.level FROM pageviews p JOIN clicks c WITHIN 1 MINUTE ON "
      "p.userid = c.userid JOIN users u ON c.userid = u.userid;");
  eliminate_repartitions(nested, query());
  const Node& outer = first(nested, NodeKind::kJoin);
  EXPECT_EQ(outer.input(0).schema.columns.front().name, "C_USERID");
  EXPECT_FALSE(outer.rekey_left);
  // Or by any column equal to that key: no re-key on C.USERID of rows keyed by P_USERID.
  Node& equivalent = plain(
      "SELECT p.userid, p.page, u.level FROM pageviews p JOIN clicks c WITHIN 1 MINUTE ON "
      "p.userid = c.userid JOIN users u ON c.userid = u.userid;");
  eliminate_repartitions(equivalent, query());
  EXPECT_EQ(first(equivalent, NodeKind::kJoin).input(0).schema.columns.front().name, "P_USERID");
  EXPECT_FALSE(first(equivalent, NodeKind::kJoin).rekey_left);
  // After a FULL join the key is either side's: no column is equal to it.
  Node& full = plain(
      "SELECT p.page, u.level FROM pageviews p FULL OUTER JOIN clicks c WITHIN 1 MINUTE ON "
      "p.userid = c.userid JOIN users u ON c.userid = u.userid;",
      "");
  eliminate_repartitions(full, query());
  EXPECT_TRUE(first(full, NodeKind::kJoin).rekey_left);
  Node& other_key = plain(
      "SELECT u.regionid, p.page, r.name FROM pageviews p JOIN users u ON p.userid = u.userid "
      "JOIN regions r ON u.regionid = r.regionid;");
  eliminate_repartitions(other_key, query());
  EXPECT_TRUE(first(other_key, NodeKind::kJoin).rekey_left);
  EXPECT_FALSE(first(other_key, NodeKind::kJoin).rekey_right);
  EXPECT_FALSE(first(other_key, NodeKind::kJoin).input(0).rekey_left);

  // Neither side of a foreign-key join.
  Node& foreign =
      plain("SELECT u.userid, r.name FROM users u JOIN regions r ON u.regionid = r.regionid;");
  eliminate_repartitions(foreign, query());
  EXPECT_FALSE(first(foreign, NodeKind::kJoin).rekey_left);
  EXPECT_FALSE(first(foreign, NodeKind::kJoin).rekey_right);
}

TEST_F(OptimizerTest, SourcesReadTheirKeysAndWhatTheOperatorsAboveRead) {
  // The projection alone; the key even when not selected.
  EXPECT_EQ(read_by(plain("SELECT page FROM pageviews;", ""), "PAGEVIEWS"), "");
  EXPECT_EQ(read_by(pruned("SELECT page FROM pageviews;"), "PAGEVIEWS"),
            "PAGEVIEWS.USERID, PAGEVIEWS.PAGE");
  // WHERE's columns and pseudo columns too; a windowed source's window bounds.
  EXPECT_EQ(read_by(pruned("SELECT page FROM pageviews WHERE rowtime > 0;"), "PAGEVIEWS"),
            "PAGEVIEWS.USERID, PAGEVIEWS.PAGE, PAGEVIEWS.ROWTIME");
  EXPECT_EQ(read_by(pruned("SELECT page, WINDOWEND AS we FROM counts;"), "COUNTS"),
            "COUNTS.PAGE, COUNTS.WINDOWEND");
  // Table functions' arguments.
  EXPECT_EQ(read_by(pruned("SELECT EXPLODE(items) AS item FROM orders;"), "ORDERS"),
            "ORDERS.ID, ORDERS.ITEMS");
}

TEST_F(OptimizerTest, JoinSidesReadTheirJoinKeys) {
  Node& sink = pruned(
      "SELECT p.userid, u.level FROM pageviews p JOIN users u ON p.page = u.userid WHERE "
      "p.rowoffset > 3;");
  EXPECT_EQ(read_by(sink, "P"), "P.USERID, P.PAGE, P.ROWOFFSET");
  EXPECT_EQ(read_by(sink, "U"), "U.USERID, U.LEVEL");
  // A nested join's key from the earlier right side.
  Node& nway = pruned(
      "SELECT p.userid, r.name FROM pageviews p JOIN users u ON p.userid = u.userid JOIN "
      "regions r ON u.regionid = r.regionid;");
  EXPECT_EQ(read_by(nway, "P"), "P.USERID");
  EXPECT_EQ(read_by(nway, "U"), "U.USERID, U.REGIONID");
  EXPECT_EQ(read_by(nway, "R"), "R.REGIONID, R.NAME");
}

TEST_F(OptimizerTest, AnAggregationsSourceReadsItsGroupingCallsAndHaving) {
  // HAVING's call alone reads VIEWTIME; a windowed aggregation's bounds are not the source's.
  EXPECT_EQ(read_by(pruned("SELECT page, WINDOWSTART AS ws, COUNT(*) AS n FROM pageviews WINDOW "
                           "TUMBLING (SIZE 5 SECONDS) GROUP BY page HAVING MAX(viewtime) > 3;",
                           "OUTPUT"),
                    "PAGEVIEWS"),
            "PAGEVIEWS.USERID, PAGEVIEWS.PAGE, PAGEVIEWS.VIEWTIME");
  EXPECT_EQ(read_by(pruned("SELECT region, COUNT(*) AS n FROM orders GROUP BY region;", "OUTPUT"),
                    "ORDERS"),
            "ORDERS.ID, ORDERS.REGION");
  EXPECT_EQ(
      read_by(pruned("SELECT id, region FROM orders PARTITION BY region;", "OUTPUT"), "ORDERS"),
      "ORDERS.ID, ORDERS.REGION");
}

TEST_F(OptimizerTest, OptimizeRunsEveryPass) {
  Node& sink = plain(
      "SELECT p.page, u.level, COUNT(*) AS n FROM pageviews p JOIN users u ON p.page = u.userid "
      "WHERE p.viewtime > 1 GROUP BY p.page, u.level;");
  optimize(sink, query());
  const Node& join = first(sink, NodeKind::kJoin);
  EXPECT_TRUE(join.input(0).pushed_down);
  EXPECT_TRUE(join.rekey_left);
  EXPECT_EQ(read_by(sink, "U"), "U.USERID, U.LEVEL");
  // The pushed-down filter sits over the source whose columns pruning marks.
  EXPECT_EQ(read_by(sink, "P"), "P.USERID, P.PAGE, P.VIEWTIME");
}

}  // namespace
}  // namespace oxbow::sql::optimizer
