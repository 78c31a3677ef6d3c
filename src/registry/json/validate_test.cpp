#include <gtest/gtest.h>

#include "registry/json/schema.h"

namespace oxbow::registry::json {
namespace {

using nlohmann::json;

Schema must(const std::string& text) {
  auto parsed = parse(text);
  EXPECT_TRUE(parsed) << text << ": " << parsed.error;
  return parsed ? *parsed.schema : *parse("{}").schema;
}

std::string check(const std::string& schema, const std::string& doc) {
  return must(schema).validate(json::parse(doc)).value_or("ok");
}

TEST(JsonValidate, ObjectsPropertiesAndRequired) {
  const std::string s = R"({"type":"object","properties":{"id":{"type":"integer"},
      "name":{"type":"string","minLength":1}},"required":["id"],"additionalProperties":false})";
  EXPECT_EQ(check(s, R"({"id":1,"name":"a"})"), "ok");
  EXPECT_EQ(check(s, R"({"name":"a"})"), "#: required key [id] not found");
  EXPECT_EQ(check(s, R"({"id":"1"})"), "#/id: expected type: Integer, found: String");
  EXPECT_EQ(check(s, R"({"id":1.5})"), "#/id: expected type: Integer, found: BigDecimal");
  EXPECT_EQ(check(s, R"({"id":2.0})"), "ok");
  EXPECT_EQ(check(s, R"({"id":1,"name":""})"), "#/name: expected minLength: 1, actual: 0");
  EXPECT_EQ(check(s, R"({"id":1,"x":0})"), "#: extraneous key [x] is not permitted");
  EXPECT_EQ(check(s, "[]"), "#: expected type: JSONObject, found: JSONArray");
}

TEST(JsonValidate, KeywordsWithoutTypeApplyOnlyToTheirKind) {
  EXPECT_EQ(check(R"({"minLength":2})", "5"), "ok");
  EXPECT_EQ(check(R"({"minLength":2})", R"("a")"), "#: expected minLength: 2, actual: 1");
  EXPECT_EQ(check(R"({"properties":{"a":{"type":"string"}}})", R"("x")"), "ok");
  EXPECT_EQ(check(R"({"minimum":2})", R"("x")"), "ok");
}

TEST(JsonValidate, StringsCountCodePointsAndMatchPatternsAnywhere) {
  EXPECT_EQ(check(R"({"type":"string","maxLength":2})", "\"\xC3\xA9\xF0\x9F\x98\x80\""), "ok");
  EXPECT_EQ(check(R"({"type":"string","pattern":"b+"})", R"("abba")"), "ok");
  EXPECT_EQ(check(R"({"type":"string","pattern":"^b+$"})", R"("abba")"),
            "#: string [abba] does not match pattern ^b+$");
}

TEST(JsonValidate, Numbers) {
  const std::string s = R"({"type":"number","minimum":1,"exclusiveMaximum":10,"multipleOf":0.5})";
  EXPECT_EQ(check(s, "1"), "ok");
  EXPECT_EQ(check(s, "9.5"), "ok");
  EXPECT_EQ(check(s, "0.5"), "#: 0.5 is not greater or equal to 1");
  EXPECT_EQ(check(s, "10"), "#: 10 is not less than 10");
  EXPECT_EQ(check(s, "1.25"), "#: 1.25 is not a multiple of 0.5");
  EXPECT_EQ(check(R"({"type":"number","multipleOf":0.1})", "0.3"), "ok");
  const std::string d4 = R"({"$schema":"http://json-schema.org/draft-04/schema#",
      "type":"number","minimum":1,"exclusiveMinimum":true})";
  EXPECT_EQ(check(d4, "1"), "#: 1 is not greater than 1");
  EXPECT_EQ(check(d4, "1.5"), "ok");
}

TEST(JsonValidate, EnumsAndConst) {
  EXPECT_EQ(check(R"({"enum":["a",1,null,{"x":[1]}]})", R"({"x":[1]})"), "ok");
  EXPECT_EQ(check(R"({"enum":["a",1]})", R"("b")"), "#: \"b\" is not a valid enum value");
  EXPECT_EQ(check(R"({"const":{"a":1}})", R"({"a":1})"), "ok");
  EXPECT_EQ(check(R"({"const":{"a":1}})", R"({"a":2})"), "#: value does not match the const");
  // Draft 4 has no const.
  EXPECT_EQ(check(R"({"$schema":"http://json-schema.org/draft-04/schema#","const":1})", "2"), "ok");
}

TEST(JsonValidate, Arrays) {
  const std::string s = R"({"type":"array","items":{"type":"integer"},"minItems":1,"maxItems":3,
      "uniqueItems":true})";
  EXPECT_EQ(check(s, "[1,2]"), "ok");
  EXPECT_EQ(check(s, "[]"), "#: expected minimum item count: 1, found: 0");
  EXPECT_EQ(check(s, "[1,2,3,4]"), "#: expected maximum item count: 3, found: 4");
  EXPECT_EQ(check(s, "[1,1]"), "#: array items are not unique");
  EXPECT_EQ(check(s, R"([1,"2"])"), "#/1: expected type: Integer, found: String");
  const std::string tuple = R"({"items":[{"type":"string"},{"type":"integer"}],
      "additionalItems":false})";
  EXPECT_EQ(check(tuple, R"(["a",1])"), "ok");
  EXPECT_EQ(check(tuple, R"(["a",1,2])"), "#: expected: [2] array items, found: [3]");
  EXPECT_EQ(check(R"({"contains":{"type":"string"}})", "[1,2]"),
            "#: expected at least one array item to match 'contains' schema");
  const std::string prefix = R"({"$schema":"https://json-schema.org/draft/2020-12/schema",
      "prefixItems":[{"type":"string"}],"items":{"type":"integer"}})";
  EXPECT_EQ(check(prefix, R"(["a",1,2])"), "ok");
  EXPECT_EQ(check(prefix, R"(["a","b"])"), "#/1: expected type: Integer, found: String");
}

TEST(JsonValidate, Combinations) {
  const std::string nullable = R"({"type":["string","null"]})";
  EXPECT_EQ(check(nullable, "null"), "ok");
  EXPECT_EQ(check(nullable, "1").rfind("#: no subschema matched out of the total 2 subschemas", 0),
            0u);
  const std::string one = R"({"oneOf":[{"type":"integer"},{"type":"number"}]})";
  EXPECT_EQ(check(one, "1.5"), "ok");
  EXPECT_EQ(check(one, "1"), "#: 2 subschemas matched instead of one");
  EXPECT_EQ(check(R"({"allOf":[{"type":"string"},{"maxLength":1}]})", R"("ab")"),
            "#: expected maxLength: 1, actual: 2");
  EXPECT_EQ(check(R"({"not":{"type":"string"}})", R"("a")"),
            "#: subject must not be valid against schema");
  const std::string cond = R"({"if":{"properties":{"k":{"const":"a"}}},
      "then":{"required":["a"]},"else":{"required":["b"]}})";
  EXPECT_EQ(check(cond, R"({"k":"a","a":1})"), "ok");
  EXPECT_EQ(check(cond, R"({"k":"b","a":1})"), "#: required key [b] not found");
  EXPECT_EQ(check("false", "1"), "#: false schema always fails");
  EXPECT_EQ(check("true", "1"), "ok");
}

TEST(JsonValidate, ObjectKeywords) {
  const std::string s = R"({"patternProperties":{"^n_":{"type":"number"}},
      "additionalProperties":{"type":"string"},"propertyNames":{"maxLength":3},
      "dependencies":{"a":["b"],"c":{"required":["d"]}},"minProperties":1,"maxProperties":3})";
  EXPECT_EQ(check(s, R"({"n_1":1,"x":"s"})"), "ok");
  EXPECT_EQ(check(s, R"({"n_1":"1"})"), "#/n_1: expected type: Number, found: String");
  EXPECT_EQ(check(s, R"({"x":1})"), "#/x: expected type: String, found: Integer");
  EXPECT_EQ(check(s, R"({"long":"s"})"), "#/long: expected maxLength: 3, actual: 4");
  EXPECT_EQ(check(s, R"({"a":"1"})"), "#: property [b] is required");
  EXPECT_EQ(check(s, R"({"c":"1"})"), "#: required key [d] not found");
  EXPECT_EQ(check(s, "{}"), "#: minimum size: [1], found: [0]");
  EXPECT_EQ(check(s, R"({"a":"","b":"","x":"","y":""})"), "#: maximum size: [3], found: [4]");
  const std::string modern = R"({"$schema":"https://json-schema.org/draft/2019-09/schema",
      "dependentRequired":{"a":["b"]}})";
  EXPECT_EQ(check(modern, R"({"a":1})"), "#: property [b] is required");
}

TEST(JsonValidate, RecursiveSchemas) {
  const std::string list = R"({"type":"object","properties":{"v":{"type":"integer"},
      "next":{"$ref":"#"}},"required":["v"]})";
  EXPECT_EQ(check(list, R"({"v":1,"next":{"v":2,"next":{"v":3}}})"), "ok");
  EXPECT_EQ(check(list, R"({"v":1,"next":{"v":2,"next":{"v":"3"}}})"),
            "#/next/next/v: expected type: Integer, found: String");
}

TEST(JsonValidate, DeepDocumentsStopAtTheCap) {
  json doc = 1;
  for (int i = 0; i < 2000; ++i) doc = json::array({doc});
  auto s = must(R"({"type":"array","items":{"$ref":"#/definitions/any"},
      "definitions":{"any":{"anyOf":[{"type":"integer"},{"type":"array","items":{"$ref":"#/definitions/any"}}]}}})");
  EXPECT_NE(s.validate(doc).value_or("").find("nested too deeply"), std::string::npos);
}

}  // namespace
}  // namespace oxbow::registry::json
