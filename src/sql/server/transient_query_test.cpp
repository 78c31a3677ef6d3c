// RowFeed (transient_query.h): the rows a push query's topology hands over, made JSON in the
// columns' order and passed on until the LIMIT or a refusal.
#include "sql/server/transient_query.h"

#include <gtest/gtest.h>

namespace oxbow::sql::server {
namespace {

using nlohmann::json;

Value text(const std::string& s) {
  Value v;
  v.set_string(s);
  return v;
}
Value number(int32_t n) {
  Value v;
  v.set_integer(n);
  return v;
}

struct Collected {
  std::vector<std::pair<json, bool>> rows;
  std::string refuse_after;  // "" to take every row
  RowSink sink() {
    RowSink s;
    s.row = [this](const json& row, bool tombstone) -> std::string {
      rows.emplace_back(row, tombstone);
      return rows.size() > 1 ? refuse_after : "";
    };
    return s;
  }
};

// Key column first in the result, then two value columns; key and value rows as the sink's.
std::shared_ptr<RowFeed> feed(std::optional<int64_t> limit) {
  return std::make_shared<RowFeed>(
      std::vector<RowFeed::Column>{
          {true, SqlType::string()}, {false, SqlType::integer()}, {false, SqlType::string()}},
      limit);
}

TEST(RowFeedTest, RowsAreTheColumnsInOrderAndTombstonesKeepTheirKeys) {
  Collected got;
  RowSink sink = got.sink();
  auto f = feed(std::nullopt);
  f->attach(&sink, nullptr);
  Row value{number(5), text("/a")};
  f->accept(Row{text("ann")}, &value);
  f->accept(Row{text("bo")}, nullptr);
  ASSERT_EQ(got.rows.size(), 2u);
  EXPECT_EQ(got.rows[0].first, json::parse(R"(["ann",5,"/a"])"));
  EXPECT_FALSE(got.rows[0].second);
  EXPECT_EQ(got.rows[1].first, json::parse(R"(["bo",null,null])"));
  EXPECT_TRUE(got.rows[1].second);
  std::string error;
  EXPECT_FALSE(f->done(error));
}

TEST(RowFeedTest, TheLimitAndARefusalEndIt) {
  Collected got;
  RowSink sink = got.sink();
  auto limited = feed(2);
  int told = 0;
  limited->attach(&sink, [&] { ++told; });
  Row value{number(1), text("x")};
  for (int i = 0; i < 4; ++i) limited->accept(Row{text("k")}, i == 1 ? nullptr : &value);
  std::string error;
  EXPECT_TRUE(limited->done(error));  // a tombstone counts towards the LIMIT, as in ksqlDB
  EXPECT_EQ(error, "");
  EXPECT_EQ(got.rows.size(), 2u);
  EXPECT_EQ(told, 1);

  Collected slow;
  slow.refuse_after = "the client reads too slowly";
  RowSink slow_sink = slow.sink();
  auto refused = feed(std::nullopt);
  refused->attach(&slow_sink, nullptr);
  for (int i = 0; i < 4; ++i) refused->accept(Row{text("k")}, &value);
  EXPECT_TRUE(refused->done(error));
  EXPECT_EQ(error, "the client reads too slowly");
  EXPECT_EQ(slow.rows.size(), 2u);
}

}  // namespace
}  // namespace oxbow::sql::server
