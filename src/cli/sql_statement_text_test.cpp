#include "cli/sql_statement_text.h"

#include <gtest/gtest.h>

namespace oxbow::cli {
namespace {

TEST(SqlStatementText, QueriesAndPrintsAreKnownByTheirFirstWordAfterAnyComments) {
  EXPECT_TRUE(is_query("-- mine\nselect * from t;"));
  EXPECT_TRUE(is_query("SELECT\n*"));
  EXPECT_FALSE(is_query("SELECTED;"));
  EXPECT_FALSE(is_query("CREATE STREAM s AS SELECT * FROM t;"));
  EXPECT_TRUE(is_print("-- mine\nprint 'words' FROM BEGINNING;"));
  EXPECT_FALSE(is_print("PRINTS;"));
  EXPECT_FALSE(is_query("PRINT words;"));
}

TEST(SqlStatementText, SetAndUnsetTakeQuotedNames) {
  auto set = local_property("SET 'auto.offset.reset' = 'it''s';");
  ASSERT_TRUE(set);
  EXPECT_EQ(set->name, "auto.offset.reset");
  EXPECT_EQ(set->value, "it's");
  auto unset = local_property("unset 'a.b';");
  ASSERT_TRUE(unset);
  EXPECT_EQ(unset->name, "a.b");
  EXPECT_FALSE(unset->value);
  EXPECT_FALSE(local_property("SET 'a' = 'b' 'c';"));  // the server's to refuse
  EXPECT_FALSE(local_property("SETTINGS;"));
}

TEST(SqlStatementText, DefineUndefineAndShowVariables) {
  auto define = variable_statement("DEFINE topic_1 = 'pageviews';");
  ASSERT_TRUE(define);
  EXPECT_EQ(define->name, "topic_1");
  EXPECT_EQ(define->value, "pageviews");
  auto undefine = variable_statement("undefine topic_1;");
  ASSERT_TRUE(undefine);
  EXPECT_EQ(undefine->name, "topic_1");
  EXPECT_FALSE(undefine->value);
  auto show = variable_statement("LIST  variables ;");
  ASSERT_TRUE(show);
  EXPECT_TRUE(show->name.empty());
  EXPECT_FALSE(variable_statement("DEFINE 1x = 'v';"));
  EXPECT_FALSE(variable_statement("DEFINE x 'v';"));
  EXPECT_FALSE(variable_statement("SHOW STREAMS;"));
}

TEST(SqlStatementText, RunScriptPathsAndLineWords) {
  EXPECT_EQ(script_path("RUN SCRIPT '/tmp/a b.sql';"), "/tmp/a b.sql");
  EXPECT_FALSE(script_path("RUN '/tmp/a.sql';"));
  EXPECT_EQ(line_words("  spool  off ;; "), (std::vector<std::string>{"spool", "off"}));
}

}  // namespace
}  // namespace oxbow::cli
