// ksqlDB's messages where users and tools match on them (docs/sql/ksqldb-facts.md §6.1).
#include <gtest/gtest.h>

#include <string>

#include "sql/parser/parser.h"

namespace oxbow::sql::parser {
namespace {

std::string error_of(std::string_view text) {
  try {
    parse(text);
  } catch (const ParseError& e) {
    return e.what();
  }
  return "(parsed)";
}

TEST(ParserErrors, ReservedWordAsAName) {
  EXPECT_EQ(error_of("CREATE STREAM ORDERS (c1 VARCHAR, size INTEGER) WITH (kafka_topic='o');"),
            "line 1:35: Syntax Error\n\"size\" is a reserved keyword and it can't be used as an "
            "identifier. You can use it as an identifier by escaping it as 'size' ");
  EXPECT_EQ(error_of("CREATE STREAM o (`size` INTEGER) WITH (kafka_topic='o');"), "(parsed)");
}

TEST(ParserErrors, UnknownStatementSuggestsTheNearest) {
  EXPECT_EQ(error_of("SELEKT * FROM s;"),
            "line 1:1: Syntax Error\nUnknown statement 'SELEKT'\nDid you mean 'SELECT'?");
  EXPECT_EQ(
      error_of("RUN SCRIPT 'x';").rfind("line 1:1: Syntax Error\nUnknown statement 'RUN'\n", 0),
      0u);
}

TEST(ParserErrors, MissingClosingBracket) {
  EXPECT_EQ(error_of("SELECT * FROM s WHERE (a = 1;"),
            "line 1:29: Syntax Error\nSyntax error at or near \";\"\n'}', ']', or ')' is "
            "missing");
}

TEST(ParserErrors, PositionsOnLaterLines) {
  std::string e = error_of("SELECT a,\n  FROM s;");
  EXPECT_EQ(e.rfind("line 2:3: Syntax Error\n", 0), 0u) << e;
}

TEST(ParserErrors, MissingSemicolon) {
  EXPECT_EQ(error_of("SHOW STREAMS").rfind("line 1:13: Syntax Error\n", 0), 0u);
}

TEST(ParserErrors, EmptyPartitionBy) {
  EXPECT_EQ(error_of("SELECT * FROM s PARTITION BY ();"),
            "line 1:30: Syntax Error\nPARTITION BY requires at least one expression");
}

TEST(ParserErrors, NestingIsBounded) {
  std::string deep(5000, '(');
  EXPECT_NE(error_of("SELECT " + deep + "1 FROM s;").find("nested too deeply"), std::string::npos);
  std::string chain = "SELECT 1";
  for (int i = 0; i < 5000; ++i) chain += " + 1";
  EXPECT_NE(error_of(chain + " FROM s;").find("nested too deeply"), std::string::npos);
  std::string nots = "SELECT * FROM s WHERE ";
  for (int i = 0; i < 5000; ++i) nots += "NOT ";
  EXPECT_NE(error_of(nots + "a;").find("nested too deeply"), std::string::npos);
}

TEST(ParserErrors, WrongInputIsNeverACrash) {
  for (const char* text :
       {"", ";", "SELECT", "SELECT * FROM", "CREATE", "CREATE STREAM", "CREATE STREAM s (",
        "INSERT INTO", "SELECT CAST(a AS) FROM s;", "SELECT a[ FROM s;", "SELECT MAP(1) FROM s;",
        "SELECT * FROM s WINDOW TUMBLING (SIZE x);",
        "SELECT 99999999999999999999 FROM s LIMIT "
        "99999999999999999999;",
        "DROP;", "SHOW;", "EXPLAIN;", "SELECT CASE END FROM s;"}) {
    try {
      parse(text);
    } catch (const ParseError&) {
    }
  }
}

}  // namespace
}  // namespace oxbow::sql::parser
