#include "sql/types/sql_type.h"

#include <gtest/gtest.h>

namespace oxbow::sql {
namespace {

TEST(SqlType, PrintsAsKsqlDb) {
  EXPECT_EQ(SqlType::integer()->to_string(), "INTEGER");
  EXPECT_EQ(SqlType::decimal(4, 2)->to_string(), "DECIMAL(4, 2)");
  EXPECT_EQ(SqlType::map(SqlType::string(), SqlType::array(SqlType::bigint()))->to_string(),
            "MAP<STRING, ARRAY<BIGINT>>");
  EXPECT_EQ(
      SqlType::structure({{"F0", SqlType::string()}, {"f1", SqlType::integer()}})->to_string(),
      "STRUCT<`F0` STRING, `f1` INTEGER>");
}

TEST(SqlType, DecimalBoundsWithKsqlDbsMessages) {
  auto message = [](int p, int s) {
    try {
      SqlType::decimal(p, s);
    } catch (const SqlTypeError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(message(0, 0), "DECIMAL precision must be >= 1: DECIMAL(0,0)");
  EXPECT_EQ(message(2, -1), "DECIMAL scale must be >= 0: DECIMAL(2,-1)");
  EXPECT_EQ(message(2, 3), "DECIMAL precision must be >= scale: DECIMAL(2,3)");
  EXPECT_EQ(message(1, 1), "(accepted)");
}

TEST(SqlType, ImplicitCastsWidenNumbersAndStringsToTimes) {
  auto cast = [](const SqlTypePtr& from, const SqlTypePtr& to) {
    return can_implicitly_cast(*from, *to);
  };
  EXPECT_TRUE(cast(SqlType::integer(), SqlType::bigint()));
  EXPECT_TRUE(cast(SqlType::integer(), SqlType::double_type()));
  EXPECT_TRUE(cast(SqlType::bigint(), SqlType::decimal(19, 0)));
  EXPECT_FALSE(cast(SqlType::bigint(), SqlType::decimal(18, 0)));
  EXPECT_TRUE(cast(SqlType::decimal(4, 2), SqlType::decimal(6, 3)));
  EXPECT_FALSE(cast(SqlType::decimal(4, 2), SqlType::decimal(4, 1)));
  EXPECT_TRUE(cast(SqlType::decimal(4, 2), SqlType::double_type()));
  EXPECT_FALSE(cast(SqlType::double_type(), SqlType::bigint()));
  EXPECT_FALSE(cast(SqlType::bigint(), SqlType::integer()));
  EXPECT_TRUE(cast(SqlType::string(), SqlType::of(SqlBaseType::kTimestamp)));
  EXPECT_FALSE(cast(SqlType::string(), SqlType::integer()));
  EXPECT_FALSE(cast(SqlType::boolean(), SqlType::string()));
  EXPECT_TRUE(cast(SqlType::array(SqlType::integer()), SqlType::array(SqlType::bigint())));
  EXPECT_FALSE(cast(SqlType::array(SqlType::bigint()), SqlType::array(SqlType::integer())));
}

TEST(SqlType, ArithmeticResultTypes) {
  auto result = [](char op, const SqlTypePtr& l, const SqlTypePtr& r) {
    return arithmetic_result(op, *l, *r)->to_string();
  };
  EXPECT_EQ(result('+', SqlType::integer(), SqlType::integer()), "INTEGER");
  EXPECT_EQ(result('+', SqlType::integer(), SqlType::bigint()), "BIGINT");
  EXPECT_EQ(result('*', SqlType::decimal(4, 2), SqlType::double_type()), "DOUBLE");
  EXPECT_EQ(result('+', SqlType::string(), SqlType::string()), "STRING");
  // ksqlDB's DECIMAL rules (docs/sql/ksqldb-facts.md §2.3).
  EXPECT_EQ(result('+', SqlType::decimal(4, 2), SqlType::decimal(3, 1)), "DECIMAL(5, 2)");
  EXPECT_EQ(result('-', SqlType::integer(), SqlType::decimal(3, 1)), "DECIMAL(12, 1)");
  EXPECT_EQ(result('*', SqlType::decimal(4, 2), SqlType::decimal(3, 1)), "DECIMAL(8, 3)");
  EXPECT_EQ(result('/', SqlType::decimal(4, 2), SqlType::decimal(3, 1)), "DECIMAL(9, 6)");
  EXPECT_EQ(result('%', SqlType::decimal(4, 2), SqlType::decimal(3, 1)), "DECIMAL(4, 2)");
  try {
    result('+', SqlType::boolean(), SqlType::decimal(2, 1));
    ADD_FAILURE();
  } catch (const SqlTypeError& e) {
    EXPECT_STREQ(e.what(), "Unsupported arithmetic types. BOOLEAN DECIMAL");
  }
}

}  // namespace
}  // namespace oxbow::sql
