#include "sql/functions/function_test_util.h"

namespace oxbow::sql {
namespace {

using JsonFunctions = FunctionTest;
using UrlFunctions = FunctionTest;

TEST_F(JsonFunctions, ShapesOfJsonText) {
  // is_json_string.json "filter rows that contain valid JSON".
  EXPECT_EQ(eval("IS_JSON_STRING('[1, 2, 3]')"), "true");
  EXPECT_EQ(eval("IS_JSON_STRING('abc')"), "false");
  EXPECT_EQ(eval("IS_JSON_STRING(ns)"), "false");
  EXPECT_EQ(eval("JSON_ARRAY_LENGTH('[1, [2], 3]')"), "3");
  EXPECT_EQ(eval("JSON_ARRAY_LENGTH('{}')"), "null");
  EXPECT_EQ(eval("JSON_KEYS('{\"b\": 1, \"a\": 2}')"), "['b', 'a']");
  EXPECT_EQ(eval("JSON_KEYS('[1]')"), "null");
  // json_records.json "extract records from a json object".
  EXPECT_EQ(eval("JSON_RECORDS('{\"Red\": 3, \"Green\": {\"x\": 5}}')"),
            "{'Red'='3', 'Green'='{\"x\":5}'}");
  EXPECT_EQ(eval("JSON_ITEMS('[{\"a\": 1}, \"b\"]')"), "['{\"a\":1}', '\"b\"']");
  EXPECT_EQ(eval("JSON_ITEMS('[]')"), "[]");
}

// ksqlDB's JSON UDFs read their text with Jackson (UdfJsonMapper): text that is not JSON throws
// "Invalid JSON format:<text>", which fails the whole expression; blank text is Jackson's missing
// node, and JSON of another shape, for which they return NULL without an error.
TEST_F(JsonFunctions, TextThatIsNotJsonFailsTheExpression) {
  EXPECT_EQ(eval("COALESCE(JSON_ARRAY_LENGTH('abc'), -1)"), "ERROR: Invalid JSON format:abc");
  EXPECT_EQ(eval("JSON_KEYS('abc') IS NULL"), "ERROR: Invalid JSON format:abc");
  EXPECT_EQ(eval("JSON_RECORDS('{')"), "ERROR: Invalid JSON format:{");
  EXPECT_EQ(eval("EXTRACTJSONFIELD('this is NOT a JSON doc', '$.thing1')"),
            "ERROR: Invalid JSON format:this is NOT a JSON doc");
  EXPECT_EQ(eval("JSON_CONCAT('{}', 'x')"), "ERROR: Invalid JSON format:x");
  // JSON_ITEMS reads a list: any other JSON, blank text too, throws.
  EXPECT_EQ(eval("JSON_ITEMS('not json')"), "ERROR: Invalid JSON format:not json");
  EXPECT_EQ(eval("JSON_ITEMS('{}')"), "ERROR: Invalid JSON format:{}");
  EXPECT_EQ(eval("JSON_ITEMS('')"), "ERROR: Invalid JSON format:");
  // NULL, silently.
  EXPECT_EQ(eval("COALESCE(JSON_ARRAY_LENGTH(''), -1)"), "-1");
  EXPECT_EQ(eval("JSON_ARRAY_LENGTH('\"abc\"')"), "null");
  EXPECT_EQ(eval("JSON_KEYS(' ')"), "null");
  EXPECT_EQ(eval("JSON_RECORDS('[1]')"), "null");
  EXPECT_EQ(eval("EXTRACTJSONFIELD('', '$.a')"), "null");
  EXPECT_EQ(eval("JSON_CONCAT('{}', '')"), "null");
  // These catch Jackson's errors themselves.
  EXPECT_EQ(eval("IS_JSON_STRING('abc')"), "false");
  EXPECT_EQ(eval("JSON_ARRAY_CONTAINS('abc', 1)"), "false");
}

// json_concat.json "concat 2 JSON arguments" and "concat 3 JSON arguments".
TEST_F(JsonFunctions, Concat) {
  EXPECT_EQ(eval("JSON_CONCAT('{\"a\": 1}', '{\"b\": 2}')"), "'{\"a\":1,\"b\":2}'");
  EXPECT_EQ(
      eval("JSON_CONCAT('{\"a\": {\"5\": 6}}', '{\"a\": {\"3\": 4}}', '{\"a\": {\"7\": 8}}')"),
      "'{\"a\":{\"7\":8}}'");
  EXPECT_EQ(eval("JSON_CONCAT('[1]', '2', '[3]')"), "'[1,2,3]'");
  EXPECT_EQ(eval("JSON_CONCAT('1', '2')"), "'[1,2]'");
  EXPECT_EQ(eval("JSON_CONCAT('[1]', ns)"), "null");
}

// to_json_string.json: primitives, NULL as null, structs by their fields.
TEST_F(JsonFunctions, ToJsonStringAndContains) {
  EXPECT_EQ(eval("TO_JSON_STRING(1)"), "'1'");
  EXPECT_EQ(eval("TO_JSON_STRING(ns)"), "'null'");
  EXPECT_EQ(eval("TO_JSON_STRING(s)"), "'\"Hello World\"'");
  EXPECT_EQ(eval("TO_JSON_STRING(st)"), "'{\"A\":\"x\",\"B\":1}'");
  EXPECT_EQ(eval("TO_JSON_STRING(m)"), "'{\"b\":2,\"a\":1}'");
  EXPECT_EQ(eval("TO_JSON_STRING(arr)"), "'[3,1,null,2]'");
  EXPECT_EQ(eval("TO_JSON_STRING(dec)"), "'-1.5'");  // ksqlDB keeps the scale: -1.50
  EXPECT_EQ(eval("JSON_ARRAY_CONTAINS('[1, \"a\", 2.0]', 2)"), "true");
  EXPECT_EQ(eval("JSON_ARRAY_CONTAINS('[1, \"a\"]', 'a')"), "true");
  EXPECT_EQ(eval("JSON_ARRAY_CONTAINS('{\"a\": 1}', 1)"), "false");
}

// extract-json-field.json "concat two extracted fields" and "array bounds".
TEST_F(JsonFunctions, ExtractJsonField) {
  EXPECT_EQ(eval("EXTRACTJSONFIELD('{\"name\": \"cdc\", \"@type\": \"UDF\"}', '$.name')"), "'cdc'");
  EXPECT_EQ(eval("EXTRACTJSONFIELD('{\"name\": \"cdc\", \"@type\": \"UDF\"}', '$.@type')"),
            "'UDF'");
  EXPECT_EQ(eval("EXTRACTJSONFIELD('{\"array\": [1, 2, 3]}', '$.array[-1]')"), "null");
  EXPECT_EQ(eval("EXTRACTJSONFIELD('{\"array\": [1, 2, 3]}', '$.array[1]')"), "'2'");
  EXPECT_EQ(eval("EXTRACTJSONFIELD('{\"a\": {\"b\": [true]}}', '$.a')"), "'{\"b\":[true]}'");
  EXPECT_EQ(eval("EXTRACTJSONFIELD('{\"a\": 1}', '$[''a'']')"), "'1'");
  EXPECT_EQ(eval("EXTRACTJSONFIELD('{\"a\": 1}', '$.b')"), "null");
  EXPECT_EQ(eval("EXTRACTJSONFIELD('{oops', '$.a')"), "ERROR: Invalid JSON format:{oops");
}

// url.json: every "extract a ... from a URL" case and the parameter encodings.
TEST_F(UrlFunctions, PartsOfUrls) {
  EXPECT_EQ(eval("URL_EXTRACT_FRAGMENT('http://www.test.com/?query#fragment')"), "'fragment'");
  EXPECT_EQ(eval("URL_EXTRACT_FRAGMENT('http://www.nofragment.com')"), "null");
  EXPECT_EQ(eval("URL_EXTRACT_HOST('http://test@confluent.io:8080')"), "'confluent.io'");
  EXPECT_EQ(eval("URL_EXTRACT_PARAMETER('http://www.test.com/?one=a&two=b&three', 'two')"), "'b'");
  EXPECT_EQ(eval("URL_EXTRACT_PARAMETER('http://www.test.com/?one=a&two=b&three', 'three')"), "''");
  EXPECT_EQ(eval("URL_EXTRACT_PARAMETER('http://www.test.com/?one=a', 'four')"), "null");
  EXPECT_EQ(eval("URL_EXTRACT_PATH('http://www.test.com?query#fragment')"), "''");
  EXPECT_EQ(eval("URL_EXTRACT_PATH('http://test@confluent.io:8080/nested/path?query&jobs')"),
            "'/nested/path'");
  EXPECT_EQ(eval("URL_EXTRACT_PORT('http://test@confluent.io')"), "null");
  EXPECT_EQ(eval("URL_EXTRACT_PORT('http://test@confluent.io:8080/nested/path?query&jobs')"),
            "8080");
  EXPECT_EQ(eval("URL_EXTRACT_PROTOCOL('https://test@confluent.io:8080/nested')"), "'https'");
  EXPECT_EQ(eval("URL_EXTRACT_PROTOCOL('www.confluent.io')"), "null");
  EXPECT_EQ(eval("URL_EXTRACT_QUERY('http://www.test.com/path?q1&q2')"), "'q1&q2'");
  EXPECT_EQ(eval("URL_EXTRACT_HOST('http://bad host')"),
            "ERROR: URL input has invalid syntax: http://bad host");
  EXPECT_EQ(eval("URL_ENCODE_PARAM('?foo $bar')"), "'%3Ffoo+%24bar'");
  EXPECT_EQ(eval("URL_DECODE_PARAM('%3Ffoo+%24bar')"), "'?foo $bar'");
  EXPECT_EQ(eval("URL_DECODE_PARAM(URL_EXTRACT_PARAMETER('http://x.com/?two=url%20encoded', "
                 "'two'))"),
            "'url encoded'");
  EXPECT_EQ(eval("URL_DECODE_PARAM('%G1')"),
            "ERROR: url_decode udf encountered an encoding exception while decoding: %G1");
}

}  // namespace
}  // namespace oxbow::sql
