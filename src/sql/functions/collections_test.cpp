#include "sql/functions/function_test_util.h"

namespace oxbow::sql {
namespace {

using CollectionFunctions = FunctionTest;

TEST_F(CollectionFunctions, Arrays) {
  EXPECT_EQ(eval("ARRAY_LENGTH(arr)"), "4");
  EXPECT_EQ(eval("ARRAY_CONCAT(arr, ARRAY[9])"), "[3, 1, null, 2, 9]");
  EXPECT_EQ(eval("ARRAY_CONTAINS(arr, 2)"), "true");
  EXPECT_EQ(eval("ARRAY_CONTAINS(arr, ni)"), "true");
  EXPECT_EQ(eval("ARRAY_DISTINCT(sarr)"), "['a', 'b']");
  EXPECT_EQ(eval("ARRAY_EXCEPT(sarr, ARRAY['b'])"), "['a']");
  EXPECT_EQ(eval("ARRAY_INTERSECT(sarr, ARRAY['b', 'c'])"), "['b']");
  EXPECT_EQ(eval("ARRAY_UNION(sarr, ARRAY['c'])"), "['a', 'b', 'c']");
  EXPECT_EQ(eval("ARRAY_JOIN(arr)"), "'3,1,null,2'");
  EXPECT_EQ(eval("ARRAY_JOIN(sarr, '|')"), "'a|b|a'");
  EXPECT_EQ(eval("ARRAY_MAX(arr)"), "3");
  EXPECT_EQ(eval("ARRAY_MIN(arr)"), "1");
  EXPECT_EQ(eval("ARRAY_REMOVE(arr, 1)"), "[3, null, 2]");
  EXPECT_EQ(eval("ARRAY_SORT(arr)"), "[1, 2, 3, null]");
  EXPECT_EQ(eval("ARRAY_SORT(arr, 'desc')"), "[3, 2, 1, null]");
  EXPECT_EQ(eval("ARRAY_SORT(arr, 'up')"), "null");
  EXPECT_EQ(eval("SLICE(arr, 2, 3)"), "[1, null]");
  EXPECT_EQ(eval("SLICE(arr, ni, 2)"), "[3, 1]");
  EXPECT_EQ(eval("SLICE(arr, 2, 9)"), "null");
}

// The NULL rules of array-set-functions.json and arrayjoin.json.
TEST_F(CollectionFunctions, NullArrays) {
  EXPECT_EQ(eval("ARRAY_LENGTH(SPLIT(ns, ','))"), "null");
  EXPECT_EQ(eval("ARRAY_CONCAT(SPLIT(ns, ','), SPLIT(ns, ','))"), "null");
  EXPECT_EQ(eval("ARRAY_CONCAT(SPLIT(ns, ','), sarr)"), "['a', 'b', 'a']");
  EXPECT_EQ(eval("ARRAY_UNION(SPLIT(ns, ','), sarr)"), "null");
  EXPECT_EQ(eval("ARRAY_CONTAINS(SPLIT(ns, ','), 'a')"), "false");
  EXPECT_EQ(eval("ARRAY_JOIN(SPLIT(ns, ','))"), "null");
  EXPECT_EQ(eval("ARRAY_CONTAINS(arr, 'x')"),
            "REFUSED: Function 'ARRAY_CONTAINS' does not accept parameters (ARRAY<INTEGER>, "
            "STRING).");
}

TEST_F(CollectionFunctions, Maps) {
  EXPECT_EQ(eval("MAP_KEYS(m)"), "['b', 'a']");
  EXPECT_EQ(eval("MAP_VALUES(m)"), "[2, 1]");
  EXPECT_EQ(eval("MAP_UNION(m, MAP('a' := 5, 'c' := 6))"), "{'b'=2, 'a'=5, 'c'=6}");
  EXPECT_EQ(eval("AS_MAP(ARRAY['x', 'y'], ARRAY[1])"), "{'x'=1, 'y'=null}");
  EXPECT_EQ(eval("ENTRIES(m, true)"), "[Struct{'a', 1}, Struct{'b', 2}]");
  EXPECT_EQ(type_of("ENTRIES(m, true)"), "ARRAY<STRUCT<`K` STRING, `V` INTEGER>>");
  EXPECT_EQ(type_of("MAP_VALUES(m)"), "ARRAY<INTEGER>");
}

TEST_F(CollectionFunctions, NullFunctions) {
  EXPECT_EQ(eval("COALESCE(ni, i)"), "-7");
  EXPECT_EQ(eval("COALESCE(ni, ni)"), "null");
  EXPECT_EQ(eval("COALESCE(n, i)"), "10");
  EXPECT_EQ(eval("COALESCE(ni, n)"),
            "REFUSED: Function 'COALESCE' does not accept parameters (INTEGER, BIGINT).");
  EXPECT_EQ(eval("IFNULL(ns, 'x')"), "'x'");
  EXPECT_EQ(eval("NULLIF(i, -7)"), "null");
  EXPECT_EQ(eval("NULLIF(i, 1)"), "-7");
  EXPECT_EQ(eval("AS_VALUE(i)"), "-7");
  EXPECT_EQ(eval("COALESCE()"), "REFUSED: Function 'COALESCE' does not accept parameters ().");
}

}  // namespace
}  // namespace oxbow::sql
