#include "sql/parser/lexer.h"

#include <gtest/gtest.h>

#include "sql/parser/parse_error.h"

namespace oxbow::sql::parser {
namespace {

std::vector<std::string> kinds_and_texts(std::string_view text) {
  std::vector<std::string> out;
  for (const auto& t : tokenize(text)) {
    switch (t.kind) {
      case TokenKind::kWord:
        out.push_back("W:" + t.upper);
        break;
      case TokenKind::kQuotedName:
        out.push_back("Q:" + t.text);
        break;
      case TokenKind::kString:
        out.push_back("S:" + t.text);
        break;
      case TokenKind::kInteger:
        out.push_back("I:" + t.text);
        break;
      case TokenKind::kDecimal:
        out.push_back("D:" + t.text);
        break;
      case TokenKind::kFloat:
        out.push_back("F:" + t.text);
        break;
      case TokenKind::kVariable:
        out.push_back("V:" + t.text);
        break;
      case TokenKind::kSymbol:
        out.push_back(t.text);
        break;
      case TokenKind::kEnd:
        out.push_back("END");
        break;
    }
  }
  return out;
}

TEST(Lexer, WordsAreUpperCasedAndQuotedNamesKeepTheirCase) {
  EXPECT_EQ(kinds_and_texts("select `MixedCase`, \"other\" from s1"),
            (std::vector<std::string>{"W:SELECT", "Q:MixedCase", ",", "Q:other", "W:FROM", "W:S1",
                                      "END"}));
}

TEST(Lexer, DoubledQuotesStandForThemselves) {
  EXPECT_EQ(kinds_and_texts("'it''s' `a``b` \"c\"\"d\""),
            (std::vector<std::string>{"S:it's", "Q:a`b", "Q:c\"d", "END"}));
}

TEST(Lexer, NumbersAndWordsStartingWithDigits) {
  EXPECT_EQ(kinds_and_texts("12 1.5 .5 1e3 2.5E-2 1st 7_up"),
            (std::vector<std::string>{"I:12", "D:1.5", "D:.5", "F:1e3", "F:2.5E-2", "W:1ST",
                                      "W:7_UP", "END"}));
}

TEST(Lexer, LongestSymbolsFirst) {
  EXPECT_EQ(kinds_and_texts("a<=b<>c!=d||e->f=>g:=h>=i"),
            (std::vector<std::string>{"W:A", "<=", "W:B", "<>", "W:C", "!=", "W:D", "||", "W:E",
                                      "->", "W:F", "=>", "W:G", ":=", "W:H", ">=", "W:I", "END"}));
}

TEST(Lexer, CommentsAndVariables) {
  EXPECT_EQ(kinds_and_texts("a -- to the end\n/* a\nblock */ ${var} b"),
            (std::vector<std::string>{"W:A", "V:var", "W:B", "END"}));
}

TEST(Lexer, PositionsAreOneBasedLinesAndColumns) {
  auto tokens = tokenize("SELECT a\n  FROM  b;");
  ASSERT_EQ(tokens.size(), 6u);
  EXPECT_EQ(tokens[1].position.line, 1);
  EXPECT_EQ(tokens[1].position.column, 8);
  EXPECT_EQ(tokens[2].position.line, 2);
  EXPECT_EQ(tokens[2].position.column, 3);
  EXPECT_EQ(tokens[3].position.column, 9);
}

TEST(Lexer, UnterminatedTextsAreErrorsAtTheirStart) {
  for (const char* text : {"a 'open", "a `open", "a /* open", "a ${open"}) {
    try {
      tokenize(text);
      ADD_FAILURE() << text;
    } catch (const ParseError& e) {
      EXPECT_EQ(e.position().column, 3) << text;
    }
  }
  EXPECT_THROW(tokenize("a # b"), ParseError);
}

}  // namespace
}  // namespace oxbow::sql::parser
