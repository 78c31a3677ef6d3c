#include "sql/functions/function_test_util.h"

namespace oxbow::sql {
namespace {

using MathFunctions = FunctionTest;

TEST_F(MathFunctions, AbsCeilFloorKeepTheType) {
  EXPECT_EQ(eval("ABS(i)"), "7");
  EXPECT_EQ(eval("ABS(dec)"), "1.50");
  EXPECT_EQ(eval("ABS(-2147483647 - 1)"), "-2147483648");  // Java's Math.abs
  EXPECT_EQ(eval("CEIL(d)"), "3");
  EXPECT_EQ(eval("FLOOR(d)"), "2");
  EXPECT_EQ(eval("CEIL(dec)"), "-1.00");
  EXPECT_EQ(eval("FLOOR(dec)"), "-2.00");
  EXPECT_EQ(type_of("CEIL(dec)"), "DECIMAL(4, 2)");
  EXPECT_EQ(eval("ABS(ni)"), "null");
}

TEST_F(MathFunctions, RoundAndTrunc) {
  EXPECT_EQ(type_of("ROUND(i)"), "BIGINT");
  EXPECT_EQ(eval("ROUND(d)"), "3");
  EXPECT_EQ(eval("ROUND(-2.5e0)"), "-2");  // ties toward positive infinity
  EXPECT_EQ(eval("ROUND(1.2345e0, 2)"), "1.23");
  EXPECT_EQ(eval("ROUND(1.235e0, 2)"), "1.24");
  EXPECT_EQ(eval("ROUND(1234.5e0, -2)"), "1200");
  EXPECT_EQ(eval("ROUND(dec)"), "-1");
  EXPECT_EQ(type_of("ROUND(dec)"), "DECIMAL(2, 0)");
  EXPECT_EQ(eval("ROUND(dec, 0)"), "-1.00");  // the scale stays the argument's
  EXPECT_EQ(eval("ROUND(1.55, 1)"), "1.60");
  EXPECT_EQ(eval("TRUNC(d)"), "2");
  EXPECT_EQ(eval("TRUNC(-1.99e0, 1)"), "-1.9");
  EXPECT_EQ(eval("TRUNC(dec)"), "-1");
  EXPECT_EQ(eval("ROUND(d, ni)"), "null");
}

TEST_F(MathFunctions, DoubleFunctions) {
  EXPECT_EQ(eval("SQRT(16)"), "4");
  EXPECT_EQ(eval("SQRT(6.25e0)"), "2.5");
  EXPECT_EQ(eval("EXP(0)"), "1");
  EXPECT_EQ(eval("LN(1)"), "0");
  EXPECT_EQ(eval("LOG(100e0) = LN(100)"), "true");
  EXPECT_EQ(eval("LOG(10, 1000) > 2.99"), "true");
  EXPECT_EQ(eval("LOG(1, 10)"), "nan");
  EXPECT_EQ(eval("POWER(2, 10)"), "1024");
  EXPECT_EQ(eval("POWER(10e0, 400e0)"), "inf");
  EXPECT_EQ(eval("ACOS(2)"), "nan");
  EXPECT_EQ(eval("DEGREES(PI())"), "180");
  EXPECT_EQ(eval("RADIANS(180) = PI()"), "true");
  EXPECT_EQ(eval("ATAN2(1, 1) * 4 = PI()"), "true");
  EXPECT_EQ(eval("SIGN(i)"), "-1");
  EXPECT_EQ(eval("SIGN(0e0)"), "0");
  EXPECT_EQ(eval("RANDOM() < 1"), "true");
  EXPECT_EQ(eval("ROUND(CBRT(27))"), "3");
}

// greatest.json: NULLs skipped; INT with BIGINT is ambiguous.
TEST_F(MathFunctions, GreatestLeastAndSeries) {
  EXPECT_EQ(eval("GREATEST(1, ni, 3, 2)"), "3");
  EXPECT_EQ(eval("LEAST('b', 'a', ns)"), "'a'");
  EXPECT_EQ(eval("GREATEST(ni, ni)"), "null");
  EXPECT_EQ(eval("GREATEST(i, n)"),
            "REFUSED: Function 'GREATEST' cannot be resolved due to ambiguous method parameters "
            "(INTEGER, BIGINT).");
  EXPECT_EQ(eval("GENERATE_SERIES(1, 3)"), "[1, 2, 3]");
  EXPECT_EQ(eval("GENERATE_SERIES(5, 1, -2)"), "[5, 3, 1]");
  EXPECT_EQ(eval("GENERATE_SERIES(1, 3, 0)"), "ERROR: GENERATE_SERIES step cannot be zero");
  EXPECT_EQ(eval("GENERATE_SERIES(1, 3, -1)"), "ERROR: GENERATE_SERIES step has wrong sign");
}

// geodistance.json: "geo distance with radius" (a NULL unit is KM) and "small distances in
// where", to 9 places: the last bits of sin and cos are the C library's, not Java's StrictMath.
TEST_F(MathFunctions, GeoDistance) {
  EXPECT_EQ(eval("ROUND(GEO_DISTANCE(37.4439e0, -122.1663e0, 51.5257e0, -0.1122e0, ns), 9)"),
            "8634.65979658");
  EXPECT_EQ(eval("ROUND(GEO_DISTANCE(37.4439e0, -122.1663e0, 51.5257e0, -0.1122e0, 'MI'), 9)"),
            "5365.659729188");
  EXPECT_EQ(eval("ROUND(GEO_DISTANCE(39.18660374e0, -76.73262144e0, 39.18660374e0, "
                 "-76.73222145e0), 9)"),
            "0.034473668");
  EXPECT_EQ(eval("GEO_DISTANCE(d, ni, d, d)"), "null");
  EXPECT_EQ(eval("GEO_DISTANCE(91e0, 0e0, 0e0, 0e0)"),
            "ERROR: valid latitude values for GeoDistance function are in the range of -90 to 90 "
            "decimal degrees, and longitude values are -180 to 180");
}

}  // namespace
}  // namespace oxbow::sql
