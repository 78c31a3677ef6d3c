#include "registry/json/schema.h"

#include <gtest/gtest.h>

#include "registry/json/diff.h"

namespace oxbow::registry::json {
namespace {

Schema must(const std::string& text, const std::vector<Reference>& refs = {}) {
  auto parsed = parse(text, refs);
  EXPECT_TRUE(parsed) << text << ": " << parsed.error;
  return parsed ? *parsed.schema : *parse("{}").schema;
}

std::string error_of(const std::string& text) {
  auto parsed = parse(text);
  EXPECT_FALSE(parsed) << text;
  return parsed.error;
}

TEST(JsonSchemaText, CanonicalIsCompactInWrittenOrder) {
  auto s = must(R"( { "type" : "object",
      "properties" : { "b" : { "type" : "string" }, "a" : { } },
      "required" : [ "b", "a" ], "x-unknown" : [ 1, true, null ] } )");
  EXPECT_EQ(s.canonical(),
            R"({"type":"object","properties":{"b":{"type":"string"},"a":{}},"required":["b","a"],)"
            R"("x-unknown":[1,true,null]})");
  // Keys sorted at every depth, arrays as written.
  EXPECT_EQ(s.normalized(),
            R"({"properties":{"a":{},"b":{"type":"string"}},"required":["b","a"],"type":"object",)"
            R"("x-unknown":[1,true,null]})");
}

TEST(JsonSchemaText, NumbersPrintAsJavasBigDecimal) {
  auto s = must(R"({"a":1.50,"b":1e3,"c":1.5E2,"d":0.0000001,"e":0.000001,"f":-0.0,"g":-0,)"
                R"("h":12345678901234567890123,"i":2.5e-3,"j":-12.0})");
  EXPECT_EQ(s.canonical(), R"({"a":1.50,"b":1E+3,"c":1.5E+2,"d":1E-7,"e":0.000001,"f":0.0,"g":0,)"
                           R"("h":12345678901234567890123,"i":0.0025,"j":-12.0})");
}

TEST(JsonSchemaText, StringsUseJacksonsEscapes) {
  auto s =
      must(R"({"description":"tab\t nl\n \u0001 \u001f slash\/ quote\" é \u00e9 \ud83d\ude00"})");
  EXPECT_EQ(s.canonical(),
            "{\"description\":\"tab\\t nl\\n \\u0001 \\u001F slash/ quote\\\" é é 😀\"}");
}

TEST(JsonSchemaText, RepeatedKeyKeepsLastValueInFirstPlace) {
  EXPECT_EQ(must(R"({"a":1,"b":2,"a":3})").canonical(), R"({"a":3,"b":2})");
}

TEST(JsonSchemaText, TextAfterTheRootIsIgnoredAsJacksonDoes) {
  EXPECT_EQ(must(R"({"type":"string"} trailing)").canonical(), R"({"type":"string"})");
}

TEST(JsonSchemaText, BooleanRootsAreSchemas) {
  EXPECT_EQ(must("true").canonical(), "true");
  EXPECT_EQ(must(" false ").canonical(), "false");
}

TEST(JsonSchemaText, NormalizeSortsInJavaStringOrder) {
  // U+FF5E sorts after U+1F600 in UTF-8 byte order but before it in UTF-16 (Java's order).
  auto s = must("{\"\xF0\x9F\x98\x80\":1,\"\xEF\xBD\x9E\":2,\"B\":3,\"a\":4}");
  EXPECT_EQ(s.normalized(), "{\"B\":3,\"a\":4,\"\xF0\x9F\x98\x80\":1,\"\xEF\xBD\x9E\":2}");
}

TEST(JsonSchemaParse, DraftComesFromSchemaKeyword) {
  auto draft = [](const std::string& url) {
    return must(R"({"$schema":")" + url + R"("})").draft();
  };
  EXPECT_EQ(draft("http://json-schema.org/draft-04/schema#"), Draft::k4);
  EXPECT_EQ(draft("https://json-schema.org/draft-04/schema"), Draft::k4);
  EXPECT_EQ(draft("http://json-schema.org/schema#"), Draft::k4);
  EXPECT_EQ(draft("http://json-schema.org/draft-06/schema#"), Draft::k6);
  EXPECT_EQ(draft("http://json-schema.org/draft-07/schema#"), Draft::k7);
  EXPECT_EQ(draft("https://json-schema.org/draft/2019-09/schema"), Draft::k2019_09);
  EXPECT_EQ(draft("https://json-schema.org/draft/2020-12/schema"), Draft::k2020_12);
  EXPECT_EQ(draft("https://example.com/my-meta"), Draft::k7);
  EXPECT_EQ(draft("http://json-schema.org/draft-07/schema##"), Draft::k7);
  EXPECT_EQ(must("{}").draft(), Draft::k7);
}

TEST(JsonSchemaParse, TitleIsTheName) {
  EXPECT_EQ(must(R"({"title":"Order","type":"object"})").title(), "Order");
  EXPECT_FALSE(must(R"({"type":"object"})").title());
}

TEST(JsonSchemaParse, NotJsonIsRefused) {
  EXPECT_EQ(error_of("").rfind("Invalid JSON schema: ", 0), 0u);
  EXPECT_EQ(error_of("{\"type\":").rfind("Invalid JSON schema: ", 0), 0u);
  EXPECT_EQ(error_of("nope").rfind("Invalid JSON schema: ", 0), 0u);
  EXPECT_EQ(error_of("{\"a\":NaN}").rfind("Invalid JSON schema: ", 0), 0u);
}

TEST(JsonSchemaParse, RootMustBeAnObjectOrBoolean) {
  EXPECT_EQ(error_of("[1]"),
            "Invalid JSON schema: expected an object or boolean at the root, found ARRAY");
  EXPECT_EQ(error_of("\"x\""),
            "Invalid JSON schema: expected an object or boolean at the root, found STRING");
  EXPECT_EQ(error_of("1"),
            "Invalid JSON schema: expected an object or boolean at the root, found NUMBER");
  EXPECT_EQ(error_of("null"),
            "Invalid JSON schema: expected an object or boolean at the root, found NULL");
}

TEST(JsonSchemaParse, KeywordsOfTheWrongTypeAreRefused) {
  EXPECT_EQ(error_of(R"({"type":5})"), "Invalid JSON: #: type: expected a string, found number");
  EXPECT_EQ(error_of(R"({"type":"text"})"), "Invalid JSON: #: unknown type: [text]");
  EXPECT_EQ(error_of(R"({"properties":{"a":{"minLength":"3"}}})"),
            "Invalid JSON: #/properties/a: minLength: expected an integer, found string");
  EXPECT_EQ(error_of(R"({"properties":[]})"),
            "Invalid JSON: #: properties: expected an object, found array");
  EXPECT_EQ(error_of(R"({"required":"a"})"),
            "Invalid JSON: #: required: expected an array, found string");
  EXPECT_EQ(error_of(R"({"items":[1]})"),
            "Invalid JSON: #/items/0: expected a schema (an object or a boolean), found number");
  EXPECT_EQ(error_of(R"({"pattern":"[a-"})"), "Invalid JSON: #: invalid regular expression: [a-");
  EXPECT_EQ(error_of(R"({"anyOf":{}})"), "Invalid JSON: #: anyOf: expected an array, found object");
  EXPECT_EQ(error_of(R"({"additionalProperties":1})"),
            "Invalid JSON: #: additionalProperties: expected an object, found number");
  EXPECT_EQ(error_of(R"({"title":1})"), "Invalid JSON: #: title: expected a string, found number");
  EXPECT_EQ(error_of(R"({"uniqueItems":"yes"})"),
            "Invalid JSON: #: uniqueItems: expected a boolean, found string");
  EXPECT_EQ(error_of(R"({"$ref":7})"), "Invalid JSON: #: $ref: expected a string, found number");
}

TEST(JsonSchemaParse, LookaroundPatternsAreKept) {
  // RE2 lacks them; Java has them, so Confluent accepts the schema.
  auto s = must(R"j({"type":"string","pattern":"^(?!x)"})j");
  EXPECT_TRUE(s.validate("abc") == std::nullopt);
  EXPECT_TRUE(s.validate("xbc").has_value());
}

TEST(JsonSchemaParse, NestingIsCapped) {
  std::string deep(100000, '[');
  EXPECT_EQ(error_of("{\"a\":" + deep), "Invalid JSON schema: nesting deeper than 256 levels");
  auto nots = [](int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += "{\"not\":";
    s += "{}";
    return s + std::string(n, '}');
  };
  EXPECT_TRUE(parse(nots(200)));
  EXPECT_EQ(error_of(nots(300)), "Invalid JSON schema: nesting deeper than 256 levels");
}

TEST(JsonSchemaRefs, LocalPointersResolve) {
  auto s = must(R"({"definitions":{"a b":{"type":"string"},"x/y":{"type":"integer"}},
      "$defs":{"n":{"type":"null"}},
      "properties":{"p":{"$ref":"#/definitions/a%20b"},"q":{"$ref":"#/definitions/x~1y"},
                    "r":{"$ref":"#/$defs/n"},"s":{"$ref":"#/properties/p"}}})");
  EXPECT_FALSE(s.validate({{"p", "x"}, {"q", 1}, {"r", nullptr}, {"s", "y"}}));
  EXPECT_TRUE(s.validate({{"q", "1"}}));
  EXPECT_TRUE(s.validate({{"s", 1}}));
}

TEST(JsonSchemaRefs, AnchorsResolve) {
  auto s = must(R"({"definitions":{"a":{"$id":"#num","type":"number"}},"items":{"$ref":"#num"}})");
  EXPECT_FALSE(s.validate(nlohmann::json::array({1, 2})));
  EXPECT_TRUE(s.validate(nlohmann::json::array({"1"})));
}

TEST(JsonSchemaRefs, UnresolvedRefsAreRefused) {
  EXPECT_EQ(error_of(R"({"$ref":"#/definitions/missing"})"),
            "Invalid JSON: #: could not resolve $ref '#/definitions/missing'");
  EXPECT_EQ(
      error_of(R"({"properties":{"a":{"$ref":"other.json"}}})"),
      "Invalid JSON: #: could not resolve $ref 'other.json': no reference named 'other.json'");
}

TEST(JsonSchemaRefs, NamedReferencesResolveWithFragments) {
  auto address = must(R"({"type":"object","properties":{"city":{"type":"string"}},
      "definitions":{"zip":{"type":"string","pattern":"^[0-9]{5}$"}}})");
  auto customer = must(R"({"type":"object","properties":{
      "home":{"$ref":"address.json"},"zip":{"$ref":"address.json#/definitions/zip"}}})",
                       {{"address.json", &address}});
  EXPECT_FALSE(customer.validate({{"home", {{"city", "Oslo"}}}, {"zip", "12345"}}));
  EXPECT_EQ(customer.validate({{"home", {{"city", 1}}}}),
            "#/home/city: expected type: String, found: Integer");
  EXPECT_TRUE(customer.validate({{"zip", "1234"}}));
}

TEST(JsonSchemaRefs, RelativeRefsResolveAgainstTheRootId) {
  auto address = must(R"({"type":"string"})");
  auto s = must(R"({"$id":"https://example.com/schemas/customer.json",
      "properties":{"a":{"$ref":"address.json"}}})",
                {{"https://example.com/schemas/address.json", &address}});
  EXPECT_TRUE(s.validate({{"a", 1}}));
}

TEST(JsonSchemaRefs, ReferencedSchemasMayBeDropped) {
  std::optional<Schema> s;
  {
    auto other = must(R"({"type":"integer"})");
    s = must(R"({"$ref":"other.json"})", {{"other.json", &other}});
  }
  EXPECT_FALSE(s->validate(3));
  EXPECT_TRUE(s->validate("3"));
}

TEST(JsonSchemaRefs, LongReferenceChainsNeitherOverflowNorHang) {
  // 5000 definitions, each an object whose one property refers to the next.
  std::string defs;
  for (int i = 0; i < 5000; ++i)
    defs += (i ? "," : "") + std::string("\"d") + std::to_string(i) +
            "\":{\"type\":\"object\",\"properties\":{\"x\":{\"$ref\":\"#/definitions/d" +
            std::to_string(i + 1) + "\"}}}";
  defs += ",\"d5000\":{\"type\":\"string\"}";
  auto a = must("{\"definitions\":{" + defs + "},\"$ref\":\"#/definitions/d0\"}");
  auto b = must("{\"definitions\":{" + defs + "},\"$ref\":\"#/definitions/d0\",\"title\":\"t\"}");
  auto diffs = compare(a, b);
  ASSERT_EQ(diffs.size(), 1u);  // compared to the depth cap, then reported as a change
  EXPECT_EQ(diffs[0].type, DifferenceType::TYPE_CHANGED);
  nlohmann::json doc = "end";
  for (int i = 0; i < 600; ++i) doc = {{"x", doc}};
  // Each level is a $ref and an object: 1200 steps, past the cap of 512.
  EXPECT_NE(a.validate(doc).value_or("").find("nested too deeply"), std::string::npos);
}

TEST(JsonSchemaRefs, SelfReferenceCyclesEndCleanly) {
  auto s = must(R"({"$ref":"#"})");
  EXPECT_EQ(s.validate(1), "#: schema or document nested too deeply to validate");
  auto t = must(R"({"anyOf":[{"$ref":"#"}]})");
  EXPECT_TRUE(compare(s, t).size() < 10);
}

}  // namespace
}  // namespace oxbow::registry::json
