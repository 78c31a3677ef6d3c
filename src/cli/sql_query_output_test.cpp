#include "cli/sql_query_output.h"

#include <gtest/gtest.h>

namespace oxbow::cli {
namespace {

using nlohmann::json;

TEST(JsonArrayElements, ElementsComeOutWhateverWhereThePiecesAreCut) {
  const std::string stream =
      "[{\"header\":{\"queryId\":\"q\",\"schema\":\"`A` STRING\"}},\n"
      "{\"row\":{\"columns\":[\"a}],{\\\"b\"]}},\n{\"finalMessage\":\"Limit Reached\"}]";
  for (size_t cut = 1; cut < stream.size(); ++cut) {
    std::vector<json> elements;
    JsonArrayElements parser([&](const json& element) { elements.push_back(element); });
    parser.feed(std::string_view(stream).substr(0, cut));
    parser.feed(std::string_view(stream).substr(cut));
    ASSERT_EQ(elements.size(), 3u) << cut;
    EXPECT_EQ(elements[1]["row"]["columns"][0], "a}],{\"b");
    EXPECT_EQ(elements[2]["finalMessage"], "Limit Reached");
  }
}

TEST(SchemaColumnNames, TopLevelNamesOnlyAndDoubledBackticks) {
  EXPECT_EQ(schema_column_names("`A` STRING, `B``C` DECIMAL(10, 2), "
                                "`S` STRUCT<`X` INTEGER, `Y` MAP<STRING, INTEGER>>, `W` BIGINT"),
            (std::vector<std::string>{"A", "B`C", "S", "W"}));
  EXPECT_TRUE(schema_column_names("").empty());
}

TEST(CellText, AsJavasToStringOfTheDecodedJson) {
  EXPECT_EQ(cell_text(json("text")), "text");
  EXPECT_EQ(cell_text(json(nullptr)), "null");
  EXPECT_EQ(cell_text(json(12)), "12");
  EXPECT_EQ(cell_text(json::parse("[1,\"a\",[2]]")), "[1, a, [2]]");
  EXPECT_EQ(cell_text(json::parse("{\"k\":1,\"l\":\"v\"}")), "{k=1, l=v}");
}

TEST(TabularRow, CellsShareTheWidthAndWrap) {
  EXPECT_EQ(tabular_row({"ID", "NAME"}, 20, true),
            "+--------+--------+\n|ID      |NAME    |\n+--------+--------+");
  EXPECT_EQ(tabular_row({"1", "abcdefghij"}, 20, false),
            "|1       |abcdefgh|\n|        |ij      |");
  // Never narrower than five characters a cell.
  EXPECT_EQ(tabular_row({"a", "b", "c"}, 9, false), "|a    |b    |c    |");
}

TEST(QueryOutput, ErrorAndFinalMessagesEndTheStream) {
  QueryOutput output(40, false);
  EXPECT_TRUE(output.print(json::parse("{\"row\":{\"columns\":[1]}}")));
  EXPECT_FALSE(output.print(json::parse("{\"finalMessage\":\"Limit Reached\"}")));
  EXPECT_FALSE(output.failed());
  EXPECT_FALSE(output.print(json::parse("{\"errorMessage\":{\"message\":\"boom\"}}")));
  EXPECT_TRUE(output.failed());
}

}  // namespace
}  // namespace oxbow::cli
