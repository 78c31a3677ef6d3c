#include "sql/parser/parser.h"

#include <gtest/gtest.h>

namespace oxbow::sql::parser {
namespace {

Statement one(std::string_view text) {
  auto statements = parse(text);
  EXPECT_EQ(statements.size(), 1u) << text;
  return std::move(statements.at(0));
}

template <class T>
T& body(Statement& s) {
  return std::get<T>(s.body);
}

std::string expr(std::string_view text) {
  return format(*parse_expression(text));
}

TEST(Parser, CreateStreamWithKeyHeadersAndProperties) {
  auto s =
      one("CREATE STREAM IF NOT EXISTS pageviews (viewtime BIGINT, userid VARCHAR KEY, "
          "`pageId` STRING, h BYTES HEADER('trace'), hs ARRAY<STRUCT<key STRING, value BYTES>> "
          "HEADERS) WITH (kafka_topic='pageviews', value_format='JSON', partitions=3);");
  auto& c = body<CreateSource>(s);
  EXPECT_FALSE(c.table);
  EXPECT_TRUE(c.if_not_exists);
  EXPECT_EQ(c.name.text, "PAGEVIEWS");
  ASSERT_EQ(c.columns.size(), 5u);
  EXPECT_EQ(c.columns[0].name.text, "VIEWTIME");
  EXPECT_EQ(format(c.columns[0].type), "BIGINT");
  EXPECT_EQ(c.columns[1].constraint, ColumnConstraint::kKey);
  EXPECT_EQ(format(c.columns[1].type), "STRING");
  EXPECT_EQ(c.columns[2].name.text, "pageId");
  EXPECT_TRUE(c.columns[2].name.quoted);
  EXPECT_EQ(c.columns[3].constraint, ColumnConstraint::kHeader);
  EXPECT_EQ(c.columns[3].header_key, "trace");
  EXPECT_EQ(c.columns[4].constraint, ColumnConstraint::kHeaders);
  EXPECT_EQ(format(c.columns[4].type), "ARRAY<STRUCT<`KEY` STRING, `VALUE` BYTES>>");
  ASSERT_EQ(c.properties.size(), 3u);
  EXPECT_EQ(c.properties[0].name, "KAFKA_TOPIC");
  EXPECT_EQ(c.properties[0].value->text, "pageviews");
  EXPECT_EQ(c.properties[2].value->kind, ExprKind::kInteger);
  EXPECT_EQ(s.text.back(), ';');
}

TEST(Parser, CreateTableAsSelectWithWindowAndHaving) {
  auto s =
      one("CREATE TABLE possible_fraud AS SELECT card_number, COUNT(*) FROM authorization_attempts "
          "WINDOW TUMBLING (SIZE 5 SECONDS, GRACE PERIOD 1 MINUTE) GROUP BY card_number "
          "HAVING COUNT(*) > 3 EMIT CHANGES;");
  auto& c = body<CreateSource>(s);
  EXPECT_TRUE(c.table);
  ASSERT_TRUE(c.query);
  const Query& q = *c.query;
  ASSERT_EQ(q.select.size(), 2u);
  EXPECT_EQ(format(*q.select[1].expr), "COUNT(*)");
  EXPECT_EQ(q.from.source.text, "AUTHORIZATION_ATTEMPTS");
  ASSERT_TRUE(q.window);
  EXPECT_EQ(q.window->type, WindowType::kTumbling);
  EXPECT_EQ(q.window->size_ms, 5000);
  EXPECT_EQ(q.window->grace_ms, 60000);
  ASSERT_EQ(q.group_by.size(), 1u);
  EXPECT_EQ(format(*q.having), "(COUNT(*) > 3)");
  EXPECT_EQ(q.emit, EmitType::kChanges);
}

TEST(Parser, StreamTableJoinWithAliasesAndWhere) {
  auto s =
      one("CREATE STREAM vip_actions AS SELECT userid, page, action FROM clickstream c LEFT JOIN "
          "users u ON c.userid = u.userid WHERE u.level = 'Platinum';");
  const Query& q = *body<CreateSource>(s).query;
  EXPECT_EQ(q.from.alias->text, "C");
  ASSERT_EQ(q.joins.size(), 1u);
  EXPECT_EQ(q.joins[0].type, JoinType::kLeft);
  EXPECT_EQ(q.joins[0].right.alias->text, "U");
  EXPECT_EQ(format(*q.joins[0].on), "(C.USERID = U.USERID)");
  EXPECT_EQ(format(*q.where), "(U.LEVEL = 'Platinum')");
}

TEST(Parser, StreamStreamJoinWithinAndGrace) {
  auto s =
      one("SELECT * FROM a FULL OUTER JOIN b WITHIN (1 HOUR, 2 MINUTES) GRACE PERIOD 30 SECONDS "
          "ON a.id = b.id EMIT CHANGES LIMIT 10;");
  const Query& q = *body<std::unique_ptr<Query>>(s);
  EXPECT_EQ(q.select[0].expr->kind, ExprKind::kStar);
  EXPECT_EQ(q.joins[0].type, JoinType::kFull);
  EXPECT_EQ(q.joins[0].within->before_ms, 3'600'000);
  EXPECT_EQ(q.joins[0].within->after_ms, 120'000);
  EXPECT_EQ(q.joins[0].within->grace_ms, 30'000);
  EXPECT_EQ(q.limit, 10);
}

TEST(Parser, HoppingAndSessionWindows) {
  auto hopping =
      one("SELECT k, COUNT(*) FROM s WINDOW HOPPING (SIZE 1 HOUR, ADVANCE BY 10 "
          "MINUTES, RETENTION 2 DAYS) GROUP BY k EMIT FINAL;");
  const Query& h = *body<std::unique_ptr<Query>>(hopping);
  EXPECT_EQ(h.window->type, WindowType::kHopping);
  EXPECT_EQ(h.window->advance_ms, 600'000);
  EXPECT_EQ(h.window->retention_ms, 2 * 86'400'000LL);
  EXPECT_EQ(h.emit, EmitType::kFinal);
  auto session = one("SELECT k, COUNT(*) FROM s WINDOW SESSION (30 SECONDS) GROUP BY k;");
  EXPECT_EQ(body<std::unique_ptr<Query>>(session)->window->size_ms, 30'000);
}

TEST(Parser, GroupAndPartitionByLists) {
  auto s = one("SELECT * FROM s PARTITION BY (a, b + 1);");
  EXPECT_EQ(body<std::unique_ptr<Query>>(s)->partition_by.size(), 2u);
  auto t = one("SELECT a, COUNT(*) FROM s GROUP BY (a + 1) * 2, b;");
  const Query& q = *body<std::unique_ptr<Query>>(t);
  ASSERT_EQ(q.group_by.size(), 2u);
  EXPECT_EQ(format(*q.group_by[0]), "((A + 1) * 2)");
}

TEST(Parser, SelectItemsWithAliasesAndSourceStars) {
  auto s = one("SELECT s.*, a AS x, b y, `c` FROM s;");
  const Query& q = *body<std::unique_ptr<Query>>(s);
  EXPECT_EQ(q.select[0].expr->qualifier, "S");
  EXPECT_EQ(q.select[1].alias->text, "X");
  EXPECT_EQ(q.select[2].alias->text, "Y");
  EXPECT_FALSE(q.select[3].alias);
  EXPECT_EQ(format(*q.select[3].expr), "`c`");
}

TEST(Parser, ExpressionPrecedenceAndAssociativity) {
  EXPECT_EQ(expr("1 + 2 * 3 - 4"), "((1 + (2 * 3)) - 4)");
  EXPECT_EQ(expr("a OR b AND NOT c"), "(A OR (B AND (NOT C)))");
  EXPECT_EQ(expr("a || b = 'xy'"), "((A || B) = 'xy')");
  EXPECT_EQ(expr("-a * b"), "(-A * B)");
  EXPECT_EQ(expr("a != b"), "(A <> B)");
}

TEST(Parser, Predicates) {
  EXPECT_EQ(expr("a NOT BETWEEN 1 AND 2"), "(A NOT BETWEEN 1 AND 2)");
  EXPECT_EQ(expr("a IN (1, 2, 3)"), "(A IN (1, 2, 3))");
  EXPECT_EQ(expr("a NOT LIKE 'x%' ESCAPE '!'"), "(A NOT LIKE 'x%' ESCAPE '!')");
  EXPECT_EQ(expr("a IS NOT NULL"), "(A IS NOT NULL)");
  EXPECT_EQ(expr("a IS DISTINCT FROM b"), "(A IS DISTINCT FROM B)");
}

TEST(Parser, ConstructorsCastsCasesAndAccessors) {
  EXPECT_EQ(expr("CAST(a AS DECIMAL(4, 2))"), "CAST(A AS DECIMAL(4, 2))");
  EXPECT_EQ(expr("CAST(m AS MAP<VARCHAR, INT>)"), "CAST(M AS MAP<STRING, INTEGER>)");
  EXPECT_EQ(expr("CASE WHEN a > 1 THEN 'x' ELSE 'y' END"),
            "(CASE WHEN (A > 1) THEN 'x' ELSE 'y' END)");
  EXPECT_EQ(expr("CASE a WHEN 1 THEN 2 END"), "(CASE A WHEN 1 THEN 2 END)");
  EXPECT_EQ(expr("ARRAY[1, 2][1]"), "ARRAY[1, 2][1]");
  EXPECT_EQ(expr("MAP('k' := 1)['k']"), "MAP('k':=1)['k']");
  EXPECT_EQ(expr("STRUCT(f := 1)->f"), "STRUCT(F:=1)->F");
  EXPECT_EQ(expr("TRANSFORM(arr, x => x + 1)"), "TRANSFORM(ARR, (X) => (X + 1))");
  EXPECT_EQ(expr("REDUCE(arr, 0, (s, x) => s + x)"), "REDUCE(ARR, 0, (S, X) => (S + X))");
  EXPECT_EQ(expr("DATE '2024-01-01'"), "DATE '2024-01-01'");
  EXPECT_EQ(expr("ts AT TIME ZONE 'UTC'"), "TS AT TIME ZONE 'UTC'");
  EXPECT_EQ(expr("NULL"), "null");
  EXPECT_EQ(expr("TRUE AND false"), "(true AND false)");
}

TEST(Parser, InsertValuesAndInsertSelect) {
  auto v = one("INSERT INTO s (id, name) VALUES (1, 'a');");
  auto& values = body<InsertValues>(v);
  EXPECT_EQ(values.columns.size(), 2u);
  EXPECT_EQ(values.values.size(), 2u);
  auto i = one("INSERT INTO t WITH (query_id='q1') SELECT * FROM s;");
  EXPECT_EQ(body<InsertInto>(i).properties[0].name, "QUERY_ID");
}

TEST(Parser, OtherStatements) {
  auto all = parse(
      "DROP TABLE IF EXISTS t DELETE TOPIC; DROP TYPE IF EXISTS addr; CREATE TYPE addr AS "
      "STRUCT<street STRING, n INT>; SHOW STREAMS EXTENDED; LIST ALL TOPICS; DESCRIBE s "
      "EXTENDED; DESCRIBE FUNCTION abs; PRINT 'my-topic' FROM BEGINNING LIMIT 3; TERMINATE "
      "ALL; PAUSE q1; SET 'auto.offset.reset'='earliest'; UNSET 'x'; DEFINE v = 'x'; "
      "UNDEFINE v; EXPLAIN SELECT * FROM s EMIT CHANGES; EXPLAIN CSAS_X_1; ALTER STREAM s ADD "
      "COLUMN c INT, ADD d STRING; CREATE SOURCE TABLE r (id INT PRIMARY KEY) WITH "
      "(kafka_topic='r', format='json');");
  ASSERT_EQ(all.size(), 18u);
  EXPECT_TRUE(body<DropSource>(all[0]).delete_topic);
  EXPECT_EQ(format(body<CreateType>(all[2]).type), "STRUCT<`STREET` STRING, `N` INTEGER>");
  EXPECT_TRUE(body<ShowList>(all[3]).extended);
  EXPECT_TRUE(body<ShowList>(all[4]).all);
  EXPECT_EQ(body<Describe>(all[6]).what, "FUNCTION");
  EXPECT_EQ(body<Print>(all[7]).topic.text, "my-topic");
  EXPECT_EQ(body<Print>(all[7]).limit, 3);
  EXPECT_TRUE(body<QueryControl>(all[8]).all);
  EXPECT_EQ(body<SetProperty>(all[10]).value, "earliest");
  EXPECT_TRUE(body<DefineVariable>(all[13]).undefine);
  EXPECT_TRUE(body<Explain>(all[14]).statement);
  EXPECT_EQ(body<Explain>(all[15]).query_id, "CSAS_X_1");
  EXPECT_EQ(body<AlterSource>(all[16]).columns.size(), 2u);
  EXPECT_TRUE(body<CreateSource>(all[17]).source);
  EXPECT_EQ(body<CreateSource>(all[17]).columns[0].constraint, ColumnConstraint::kPrimaryKey);
}

TEST(Parser, NonReservedKeywordsAreNames) {
  auto s = one("SELECT key, value, type, session FROM topic_data;");
  EXPECT_EQ(body<std::unique_ptr<Query>>(s)->select.size(), 4u);
}

TEST(Parser, StatementTextsAreEachStatementsOwn) {
  auto all = parse("SHOW TABLES;\n  SELECT * FROM s EMIT CHANGES;");
  EXPECT_EQ(all[0].text, "SHOW TABLES;");
  EXPECT_EQ(all[1].text, "SELECT * FROM s EMIT CHANGES;");
  EXPECT_EQ(all[1].position.line, 2);
}

}  // namespace
}  // namespace oxbow::sql::parser
