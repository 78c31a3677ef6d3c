#include "registry/json/diff.h"

#include <algorithm>

#include <gtest/gtest.h>

namespace oxbow::registry::json {
namespace {

Schema must(const std::string& text) {
  auto parsed = parse(text);
  EXPECT_TRUE(parsed) << text << ": " << parsed.error;
  return parsed ? *parsed.schema : *parse("{}").schema;
}

// The incompatible differences of compare(original, update), "TYPE path" sorted and joined by
// "; " (Confluent lists several property errors in Java's hash order, so the table ignores order).
std::string problems(const std::string& original, const std::string& update) {
  std::vector<std::string> out;
  for (const auto& d : compare(must(original), must(update)))
    if (!is_compatible(d.type)) out.push_back(std::string(type_name(d.type)) + " " + d.path);
  std::sort(out.begin(), out.end());
  std::string joined;
  for (const auto& s : out) joined += (joined.empty() ? "" : "; ") + s;
  return joined;
}

struct Row {
  const char* rule;
  const char* old_schema;
  const char* new_schema;
  const char* backward;  // compare(old, new): "" when Confluent accepts it
  const char* forward;   // compare(new, old)
};

#define OBJ(props) "{\"type\":\"object\",\"properties\":{" props "}}"
#define CLOSED(props, more) \
  "{\"type\":\"object\",\"properties\":{" props "},\"additionalProperties\":false" more "}"
#define PARTIAL(props, more)                    \
  "{\"type\":\"object\",\"properties\":{" props \
  "},\"additionalProperties\":{\"type\":\"string\"}" more "}"
#define S "{\"type\":\"string\"}"
#define I "{\"type\":\"integer\"}"

const Row kRows[] = {
    // Open content model (no additionalProperties): properties may go, typed ones may not come.
    {"open: adding a typed property is PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL", OBJ("\"f1\":" S),
     OBJ("\"f1\":" S ",\"f2\":" S), "PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL #/properties/f2", ""},
    {"open: a property with the empty schema may be added", OBJ("\"f1\":" S),
     OBJ("\"f1\":" S ",\"f2\":{}"), "", ""},
    {"open: a property with schema true may be added", OBJ("\"f1\":" S),
     OBJ("\"f1\":" S ",\"f2\":true"), "", ""},
    {"open: removing is PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL (compatible)",
     OBJ("\"f1\":" S ",\"f2\":" I), OBJ("\"f1\":" S), "",
     "PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL #/properties/f2"},
    {"open: two added properties, two items", OBJ("\"f1\":" S),
     OBJ("\"f1\":" S ",\"f2\":" S ",\"f3\":" I),
     "PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL #/properties/f2; "
     "PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL #/properties/f3",
     ""},
    // Closed content model (additionalProperties:false).
    {"closed: an optional property may be added; removing is PROPERTY_REMOVED_FROM_CLOSED",
     CLOSED("\"f1\":" S, ""), CLOSED("\"f1\":" S ",\"f2\":" S, ""), "",
     "PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL #/properties/f2"},
    {"closed: a required property without default is REQUIRED_PROPERTY_ADDED_TO_UNOPEN",
     CLOSED("\"f1\":" S, ""), CLOSED("\"f1\":" S ",\"f2\":" S, ",\"required\":[\"f2\"]"),
     "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/f2",
     "PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL #/properties/f2"},
    {"closed: a required property with a default may be added", CLOSED("\"f1\":" S, ""),
     CLOSED("\"f1\":" S ",\"f2\":{\"type\":\"string\",\"default\":\"x\"}",
            ",\"required\":[\"f2\"]"),
     "", "PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL #/properties/f2"},
    {"closed: a property whose schema is false may be removed",
     CLOSED("\"f1\":" S ",\"f2\":false", ""), CLOSED("\"f1\":" S, ""), "", ""},
    // Partially open: additionalProperties is a schema, or patternProperties.
    {"partial: an added property the cover accepts", PARTIAL("\"f1\":" S, ""),
     PARTIAL("\"f1\":" S ",\"f2\":" S, ""), "", ""},
    {"partial: an added property the cover rejects: the sub-difference, then NOT_COVERED",
     PARTIAL("\"f1\":" S, ""), PARTIAL("\"f1\":" S ",\"f2\":" I, ""),
     "PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/f2; "
     "TYPE_CHANGED #/properties/f2",
     "PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/f2; "
     "TYPE_CHANGED #/properties/f2"},
    {"partial: additionalProperties:{} is a cover, and {} to string is a TYPE_CHANGED",
     R"({"type":"object","additionalProperties":{}})",
     R"({"type":"object","properties":{"f":{"type":"string"}},"additionalProperties":{}})",
     "PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/f; "
     "TYPE_CHANGED #/properties/f",
     ""},
    {"partial: the first matching pattern covers",
     R"({"type":"object","patternProperties":{"^s_":{"type":"string"}},"additionalProperties":false})",
     R"({"type":"object","properties":{"s_a":{"type":"string"}},"patternProperties":{"^s_":{"type":"string"}},"additionalProperties":false})",
     "", ""},
    {"partial: a required added property is judged after its cover", PARTIAL("\"f1\":" S, ""),
     PARTIAL("\"f1\":" S ",\"f2\":" S, ",\"required\":[\"f2\"]"),
     "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/f2", ""},
    // required, on properties both sides have.
    {"required: becoming required is REQUIRED_ATTRIBUTE_ADDED", OBJ("\"f1\":" S),
     R"({"type":"object","properties":{"f1":{"type":"string"}},"required":["f1"]})",
     "REQUIRED_ATTRIBUTE_ADDED #/required/f1", ""},
    {"required: with a default it is compatible", OBJ("\"f1\":" S),
     R"({"type":"object","properties":{"f1":{"type":"string","default":"a"}},"required":["f1"]})",
     "", ""},
    // Types.
    {"type: string to integer is TYPE_CHANGED both ways", OBJ("\"f1\":" S), OBJ("\"f1\":" I),
     "TYPE_CHANGED #/properties/f1", "TYPE_CHANGED #/properties/f1"},
    {"type: integer to number is TYPE_EXTENDED; back is TYPE_NARROWED", I, R"({"type":"number"})",
     "", "TYPE_NARROWED #/"},
    {"type: object to array at the root", R"({"type":"object"})", R"({"type":"array"})",
     "TYPE_CHANGED #/", "TYPE_CHANGED #/"},
    {"type: a nested path", OBJ("\"a\":" OBJ("\"b\":" S)), OBJ("\"a\":" OBJ("\"b\":" I)),
     "TYPE_CHANGED #/properties/a/properties/b", "TYPE_CHANGED #/properties/a/properties/b"},
    {"type: a name with a slash is not escaped", OBJ("\"a/b\":" S), OBJ("\"a/b\":" I),
     "TYPE_CHANGED #/properties/a/b", "TYPE_CHANGED #/properties/a/b"},
    {"type: an old false schema accepts anything", OBJ("\"a\":false"), OBJ("\"a\":" S), "",
     "TYPE_CHANGED #/properties/a"},
    {"type: a new empty schema accepts anything", S, "{}", "", "TYPE_CHANGED #/"},
    {"type: connect.type bytes on both sides is no change",
     R"({"type":"string","connect.type":"bytes"})", R"({"type":"number","connect.type":"bytes"})",
     "", ""},
    {"annotations: title, description, $id and default changes are compatible",
     R"({"type":"string","title":"a","description":"x","default":"1"})",
     R"({"type":"string","title":"b","description":"y","default":"2","$id":"z"})", "", ""},
    // Strings.
    {"string: maxLength added", S, R"({"type":"string","maxLength":10})",
     "MAX_LENGTH_ADDED #/maxLength", ""},
    {"string: maxLength decreased", R"({"type":"string","maxLength":10})",
     R"({"type":"string","maxLength":5})", "MAX_LENGTH_DECREASED #/maxLength", ""},
    {"string: minLength increased", R"({"type":"string","minLength":1})",
     R"({"type":"string","minLength":3})", "MIN_LENGTH_INCREASED #/minLength", ""},
    {"string: pattern changed", R"({"type":"string","pattern":"^a"})",
     R"({"type":"string","pattern":"^b"})", "PATTERN_CHANGED #/pattern",
     "PATTERN_CHANGED #/pattern"},
    {"string: pattern removed", R"({"type":"string","pattern":"^a"})", S, "",
     "PATTERN_ADDED #/pattern"},
    // Numbers.
    {"number: maximum increased", R"({"type":"number","maximum":10})",
     R"({"type":"number","maximum":20})", "", "MAXIMUM_DECREASED #/maximum"},
    {"number: minimum added", R"({"type":"number"})", R"({"type":"number","minimum":0})",
     "MINIMUM_ADDED #/minimum", ""},
    {"number: 5 and 5.0 are the same limit", R"({"type":"number","minimum":5})",
     R"({"type":"number","minimum":5.0})", "", ""},
    {"number: exclusiveMinimum increased", R"({"type":"number","exclusiveMinimum":0})",
     R"({"type":"number","exclusiveMinimum":5})", "EXCLUSIVE_MINIMUM_INCREASED #/exclusiveMinimum",
     ""},
    {"number: a lower exclusiveMaximum is checked against the new maximum (Confluent's slip)",
     R"({"type":"number","exclusiveMaximum":20,"maximum":100})",
     R"({"type":"number","exclusiveMaximum":10,"maximum":100})", "", ""},
    {"number: multipleOf 2 to 4 is EXPANDED; 4 to 2 REDUCED",
     R"({"type":"integer","multipleOf":2})", R"({"type":"integer","multipleOf":4})",
     "MULTIPLE_OF_EXPANDED #/multipleOf", ""},
    {"number: multipleOf compared as decimals (0.3 is 3 times 0.1)",
     R"({"type":"number","multipleOf":0.1})", R"({"type":"number","multipleOf":0.3})",
     "MULTIPLE_OF_EXPANDED #/multipleOf", ""},
    {"number: multipleOf 2 to 3 is CHANGED", R"({"type":"integer","multipleOf":2})",
     R"({"type":"integer","multipleOf":3})", "MULTIPLE_OF_CHANGED #/multipleOf",
     "MULTIPLE_OF_CHANGED #/multipleOf"},
    {"number: draft 4's boolean exclusiveMinimum is not compared",
     R"({"$schema":"http://json-schema.org/draft-04/schema#","type":"number","minimum":5})",
     R"({"$schema":"http://json-schema.org/draft-04/schema#","type":"number","minimum":5,"exclusiveMinimum":true})",
     "", ""},
    // Enums and const.
    {"enum: extended", R"({"enum":["a","b"]})", R"({"enum":["a","b","c"]})", "",
     "ENUM_ARRAY_NARROWED #/enum"},
    {"enum: changed", R"({"enum":["a","b"]})", R"({"enum":["a","c"]})", "ENUM_ARRAY_CHANGED #/enum",
     "ENUM_ARRAY_CHANGED #/enum"},
    {"const: changed is ENUM_ARRAY_CHANGED", R"({"const":"a"})", R"({"const":"b"})",
     "ENUM_ARRAY_CHANGED #/const", "ENUM_ARRAY_CHANGED #/const"},
    {"enum with type: a synthetic allOf whose branches must all match",
     R"({"type":"string","enum":["a"]})", R"({"type":"string","enum":["a","b"]})", "",
     "COMBINED_TYPE_SUBSCHEMAS_CHANGED #/"},
    // Combined types.
    {"union: string to [string,null] is SUM_TYPE_EXTENDED; back is TYPE_CHANGED", S,
     R"({"type":["string","null"]})", "", "TYPE_CHANGED #/"},
    {"anyOf: a branch added is SUM_TYPE_EXTENDED; removed SUM_TYPE_NARROWED",
     R"({"anyOf":[{"type":"string"},{"type":"integer"}]})",
     R"({"anyOf":[{"type":"string"},{"type":"integer"},{"type":"null"}]})", "",
     "SUM_TYPE_NARROWED #/"},
    {"anyOf: a changed branch leaves the matching short",
     R"({"anyOf":[{"type":"string"},{"type":"integer"}]})",
     R"({"anyOf":[{"type":"string"},{"type":"boolean"}]})", "COMBINED_TYPE_SUBSCHEMAS_CHANGED #/",
     "COMBINED_TYPE_SUBSCHEMAS_CHANGED #/"},
    {"anyOf: duplicate branches count once, whatever their key order",
     R"({"anyOf":[{"type":"string","title":"t"},{"title":"t","type":"string"}]})",
     R"({"anyOf":[{"type":"string","title":"t"}]})", "", ""},
    {"oneOf to anyOf is COMBINED_TYPE_EXTENDED; back COMBINED_TYPE_CHANGED",
     R"({"oneOf":[{"type":"string"},{"type":"integer"}]})",
     R"({"anyOf":[{"type":"string"},{"type":"integer"}]})", "", "COMBINED_TYPE_CHANGED #/"},
    {"allOf: a branch added is PRODUCT_TYPE_EXTENDED",
     R"({"allOf":[{"type":"string"},{"maxLength":5}]})",
     R"({"allOf":[{"type":"string"},{"maxLength":5},{"minLength":1}]})", "PRODUCT_TYPE_EXTENDED #/",
     ""},
    {"allOf old, plain new: PRODUCT_TYPE_NARROWED when a branch matches",
     R"({"allOf":[{"type":"string"},{"maxLength":5}]})", S, "", "TYPE_CHANGED #/"},
    {"oneOf of one branch is unwrapped", R"({"oneOf":[{"type":"string"}]})", S, "", ""},
    {"not: the inner schemas are compared swapped", R"({"not":{"type":"string"}})",
     R"({"not":{"type":["string","integer"]}})", "NOT_TYPE_EXTENDED #/not", ""},
    {"if/then/else: only annotations are compared",
     R"({"if":{"type":"string"},"then":{"maxLength":3}})",
     R"({"if":{"type":"string"},"then":{"maxLength":1}})", "", ""},
    // Arrays.
    {"array: items type changed", R"({"type":"array","items":{"type":"string"}})",
     R"({"type":"array","items":{"type":"integer"}})", "TYPE_CHANGED #/items",
     "TYPE_CHANGED #/items"},
    {"array: items added is SCHEMA_ADDED", R"({"type":"array"})",
     R"({"type":"array","items":{"type":"string"}})", "SCHEMA_ADDED #/items", ""},
    {"tuple, open: an added item is ITEM_ADDED_TO_OPEN_CONTENT_MODEL",
     R"({"type":"array","items":[{"type":"string"}]})",
     R"({"type":"array","items":[{"type":"string"},{"type":"integer"}]})",
     "ITEM_ADDED_TO_OPEN_CONTENT_MODEL #/items/1", ""},
    {"tuple, closed: added is fine, removed is ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL",
     R"({"type":"array","items":[{"type":"string"}],"additionalItems":false})",
     R"({"type":"array","items":[{"type":"string"},{"type":"integer"}],"additionalItems":false})",
     "", "ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL #/items/1"},
    {"tuple, partial: additionalItems covers an added item",
     R"({"type":"array","items":[{"type":"string"}],"additionalItems":{"type":"integer"}})",
     R"({"type":"array","items":[{"type":"string"},{"type":"integer"}],"additionalItems":{"type":"integer"}})",
     "", ""},
    {"array: additionalItems false is ADDITIONAL_ITEMS_REMOVED",
     R"({"type":"array","items":[{"type":"string"}]})",
     R"({"type":"array","items":[{"type":"string"}],"additionalItems":false})",
     "ADDITIONAL_ITEMS_REMOVED #/additionalItems", ""},
    {"array: maxItems added, minItems raised, uniqueItems added",
     R"({"type":"array","minItems":1})",
     R"({"type":"array","minItems":2,"maxItems":5,"uniqueItems":true})",
     "MAX_ITEMS_ADDED #/maxItems; MIN_ITEMS_INCREASED #/minItems; UNIQUE_ITEMS_ADDED #/uniqueItems",
     ""},
    // Objects' other keywords.
    {"additionalProperties false to true is ADDED (compatible)",
     R"({"type":"object","additionalProperties":false})", R"({"type":"object"})", "",
     "ADDITIONAL_PROPERTIES_REMOVED #/additionalProperties"},
    {"additionalProperties schema added is NARROWED", R"({"type":"object"})",
     R"({"type":"object","additionalProperties":{"type":"string"}})",
     "ADDITIONAL_PROPERTIES_NARROWED #/additionalProperties", ""},
    {"dependencies: an array extended", R"({"type":"object","dependencies":{"a":["b"]}})",
     R"({"type":"object","dependencies":{"a":["b","c"]}})",
     "DEPENDENCY_ARRAY_EXTENDED #/dependencies/a", ""},
    {"dependencies: arrays and schemas added", R"({"type":"object"})",
     R"({"type":"object","dependencies":{"a":["b"],"c":{"required":["d"]}}})",
     "DEPENDENCY_ARRAY_ADDED #/dependencies/a; DEPENDENCY_SCHEMA_ADDED #/dependencies/c", ""},
    {"maxProperties decreased, minProperties added", R"({"type":"object","maxProperties":5})",
     R"({"type":"object","maxProperties":3,"minProperties":1})",
     "MAX_PROPERTIES_DECREASED #/maxProperties; MIN_PROPERTIES_ADDED #/minProperties", ""},
    // References.
    {"$ref: the definitions are compared",
     R"({"definitions":{"s":{"type":"string"}},"type":"object","properties":{"a":{"$ref":"#/definitions/s"}}})",
     R"({"definitions":{"s":{"type":"integer"}},"type":"object","properties":{"a":{"$ref":"#/definitions/s"}}})",
     "TYPE_CHANGED #/properties/a", "TYPE_CHANGED #/properties/a"},
    {"$ref: a reference and the same schema inline are equal",
     R"({"definitions":{"s":{"type":"string"}},"type":"object","properties":{"a":{"$ref":"#/definitions/s"}}})",
     OBJ("\"a\":" S), "", ""},
    {"$ref: a recursive schema against itself",
     R"({"type":"object","properties":{"v":{"type":"string"},"next":{"$ref":"#"}}})",
     R"({"type":"object","properties":{"v":{"type":"string"},"next":{"$ref":"#"}}})", "", ""},
    // The fixpoint pass (7.9 branch) feeds the incompatible pair back where the cycle re-enters
    // it, so the change is also reported one level down.
    {"$ref: a change in a recursive schema",
     R"({"type":"object","properties":{"v":{"type":"string"},"next":{"$ref":"#"}}})",
     R"({"type":"object","properties":{"v":{"type":"integer"},"next":{"$ref":"#"}}})",
     "TYPE_CHANGED #/properties/next/properties/v; TYPE_CHANGED #/properties/v",
     "TYPE_CHANGED #/properties/next/properties/v; TYPE_CHANGED #/properties/v"},
};

class JsonCompatibilityTable : public testing::TestWithParam<Row> {};

TEST_P(JsonCompatibilityTable, AnswersAsConfluent) {
  const Row& row = GetParam();
  EXPECT_EQ(problems(row.old_schema, row.new_schema), row.backward) << "BACKWARD: " << row.rule;
  EXPECT_EQ(problems(row.new_schema, row.old_schema), row.forward) << "FORWARD: " << row.rule;
}

INSTANTIATE_TEST_SUITE_P(JsonRules, JsonCompatibilityTable, testing::ValuesIn(kRows));

// What compatibility.cpp gets from reader_problems: BACKWARD asks the new schema, as reader, about
// the old one, which is compare(original = old, update = new) with "new" named first. (The same
// through parse_schema and compatibility_problems belongs in registry/compatibility_test.cpp:
// json/ may not include registry/.)
TEST(JsonCompatibility, TheWorkedExampleReadsAsConfluents) {
  auto v1 = must(R"({"type":"object","properties":{"f1":{"type":"string"}}})");
  auto v2 =
      must(R"({"type":"object", "properties":{"f1":{"type":"string"},"f2":{"type":"string"}}})");
  EXPECT_EQ(incompatibilities(v1, v2, "new", "old"),
            std::vector<std::string>{
                "{errorType:\"PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL\", description:\"The new schema "
                "has an open content model and has a property or item at path '#/properties/f2' "
                "which is missing in the old schema'}"});
  EXPECT_EQ(v1.canonical(), R"({"type":"object","properties":{"f1":{"type":"string"}}})");
  // FORWARD: the old schema reads the new one's data.
  EXPECT_TRUE(incompatibilities(v2, v1, "old", "new").empty());
}

TEST(JsonCompatibility, FullReportsBothDirections) {
  auto v1 = must(R"({"type":"object","properties":{"myField2":{"type":"number"}}})");
  auto v2 = must(R"({"type":"object","properties":{"myField2":{"type":"string"}}})");
  // FULL runs FORWARD's direction first (old reading new), then BACKWARD's.
  EXPECT_EQ(incompatibilities(v2, v1, "old", "new"),
            std::vector<std::string>{
                "{errorType:\"TYPE_CHANGED\", description:\"A type at path '#/properties/myField2' "
                "is different between the old schema and the new schema'}"});
  EXPECT_EQ(incompatibilities(v1, v2, "new", "old"),
            std::vector<std::string>{
                "{errorType:\"TYPE_CHANGED\", description:\"A type at path '#/properties/myField2' "
                "is different between the new schema and the old schema'}"});
}

TEST(JsonCompatibility, ClosedModelsReportTheirMissingWord) {
  // A new optional property on a closed model: the old schema, reading, cannot take it.
  auto v1 = must(CLOSED("\"a\":" S, "")), v2 = must(CLOSED("\"a\":" S ",\"b\":" S, ""));
  EXPECT_TRUE(incompatibilities(v1, v2, "new", "old").empty());
  EXPECT_EQ(incompatibilities(v2, v1, "old", "new"),
            std::vector<std::string>{
                "{errorType:\"PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL\", description:\"The old "
                "has a closed content model and is missing a property or item present at path "
                "'#/properties/b' in the new schema'}"});
}

TEST(JsonCompatibility, MessageTemplatesFillReaderThenWriter) {
  auto text = [](DifferenceType t) { return describe({t, "#/x"}, "new", "old"); };
  EXPECT_EQ(text(DifferenceType::MAX_LENGTH_ADDED),
            "{errorType:\"MAX_LENGTH_ADDED\", description:\"The keyword at path '#/x' in the new "
            "schema is not present in the old schema'}");
  EXPECT_EQ(text(DifferenceType::MULTIPLE_OF_EXPANDED),
            "{errorType:\"MULTIPLE_OF_EXPANDED\", description:\"The value at path '#/x' in the new "
            "schema is more than its value in the old schema'}");
  EXPECT_EQ(text(DifferenceType::PATTERN_CHANGED),
            "{errorType:\"PATTERN_CHANGED\", description:\"The value at path '#/x' is different "
            "between the new and old schema'}");
  EXPECT_EQ(text(DifferenceType::SUM_TYPE_NARROWED),
            "{errorType:\"SUM_TYPE_NARROWED\", description:\"An array or combined type at path "
            "'#/x' has fewer elements in the new schema than the old schema'}");
  EXPECT_EQ(text(DifferenceType::REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL),
            "{errorType:\"REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL\", description:\"The new "
            "schema has an unopen content model and has a required property at path '#/x' which "
            "is missing in the old schema'}");
  EXPECT_EQ(text(DifferenceType::ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL),
            "{errorType:\"ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL\", "
            "description:\"The new schema has a property or item at path '#/x' which is missing "
            "in the old schema and is not covered by its partially open content model'}");
  EXPECT_EQ(text(DifferenceType::SCHEMA_ADDED), "{errorType:\"SCHEMA_ADDED\", description:\"'}");
}

TEST(JsonCompatibility, FiftySevenTypesAreAccepted) {
  int compatible = 0, total = 0;
#define OXBOW_COUNT(name, c) ++total, compatible += is_compatible(DifferenceType::name);
  OXBOW_JSON_DIFFERENCES(OXBOW_COUNT)
#undef OXBOW_COUNT
  EXPECT_EQ(total, 113);
  EXPECT_EQ(compatible, 57);
}

TEST(JsonCompatibility, PropertiesComeInJavasHashSetOrder) {
  // With 16 buckets "zz" (hash 3904, bucket 0) comes before "a" (97, bucket 1) and "x" (bucket 8).
  auto diffs = compare(must(OBJ("\"x\":" S)), must(OBJ("\"x\":" S ",\"a\":" S ",\"zz\":" S)));
  std::vector<std::string> paths;
  for (const auto& d : diffs)
    if (d.type == DifferenceType::PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL) paths.push_back(d.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"#/properties/zz", "#/properties/a"}));
}

}  // namespace
}  // namespace oxbow::registry::json
