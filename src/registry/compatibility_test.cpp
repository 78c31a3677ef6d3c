#include "registry/compatibility.h"

#include <gtest/gtest.h>

namespace oxbow::registry {
namespace {

std::unique_ptr<ParsedSchema> avro(const std::string& text) {
  auto parsed = parse_schema("", text, {}, true);
  EXPECT_TRUE(parsed.schema) << parsed.error;
  return std::move(parsed.schema);
}

const char* kV1 = R"({"type":"record","name":"myrecord","fields":[{"name":"f1","type":"string"}]})";
const char* kV2 = R"({"type":"record","name":"myrecord","fields":[{"name":"f1","type":"string"},
                     {"name":"f2","type":"string"}]})";
const char* kV2Default = R"({"type":"record","name":"myrecord","fields":[
                     {"name":"f1","type":"string"},{"name":"f2","type":"string","default":"x"}]})";

TEST(Compatibility, TheRefusalReadsAsConfluentsForBackward) {
  auto v1 = avro(kV1), v2 = avro(kV2);
  auto problems = compatibility_problems(CompatibilityLevel::kBackward, *v2, {{1, v1.get()}});
  EXPECT_EQ(
      incompatible_message("test", problems),
      "Schema being registered is incompatible with an earlier schema for subject \"test\", "
      "details: [{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'f2' at "
      "path '/fields/1' in the new schema has no default value and is missing in the old schema', "
      "additionalInfo:'f2'}, {oldSchemaVersion: 1}, {oldSchema: "
      "'{\"type\":\"record\",\"name\":\"myrecord\",\"fields\":[{\"name\":\"f1\",\"type\":"
      "\"string\"}]}'}, {validateFields: 'false', compatibility: 'BACKWARD'}]");
  EXPECT_TRUE(compatibility_problems(CompatibilityLevel::kNone, *v2, {{1, v1.get()}}).empty());
  // Adding a field is forward compatible: old readers ignore it.
  EXPECT_TRUE(compatibility_problems(CompatibilityLevel::kForward, *v2, {{1, v1.get()}}).empty());
  // Removing one without a default is not.
  auto back = compatibility_problems(CompatibilityLevel::kForward, *v1, {{2, v2.get()}});
  ASSERT_EQ(back.size(), 4u);
  EXPECT_EQ(back[0],
            "{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'f2' at path "
            "'/fields/1' in the old schema has no default value and is missing in the new schema', "
            "additionalInfo:'f2'}");
  EXPECT_EQ(back[3], "{validateFields: 'false', compatibility: 'FORWARD'}");
}

TEST(Compatibility, TransitiveLevelsCheckEveryVersionNewestFirst) {
  // v1 has no f2; v2 added it with a default; the candidate needs f2 without one.
  auto v1 = avro(kV1), v2 = avro(kV2Default), candidate = avro(kV2);
  std::vector<RegisteredVersion> versions{{2, v2.get()}, {1, v1.get()}};
  EXPECT_TRUE(compatibility_problems(CompatibilityLevel::kBackward, *candidate, versions).empty());
  auto problems =
      compatibility_problems(CompatibilityLevel::kBackwardTransitive, *candidate, versions);
  ASSERT_EQ(problems.size(), 4u);
  EXPECT_EQ(problems[1], "{oldSchemaVersion: 1}");
  EXPECT_EQ(problems[3], "{validateFields: 'false', compatibility: 'BACKWARD_TRANSITIVE'}");
}

TEST(Compatibility, FullChecksBothDirectionsOldReaderFirst) {
  // The candidate changes f1 from string to int: neither side reads the other.
  auto v1 = avro(kV1);
  auto candidate =
      avro(R"({"type":"record","name":"myrecord","fields":[{"name":"f1","type":"int"}]})");
  auto problems = compatibility_problems(CompatibilityLevel::kFull, *candidate, {{1, v1.get()}});
  ASSERT_EQ(problems.size(), 5u);
  EXPECT_NE(problems[0].find("in the old schema does not match with the new schema"),
            std::string::npos)
      << problems[0];
  EXPECT_NE(problems[0].find("reader type: STRING not compatible with writer type: INT"),
            std::string::npos);
  EXPECT_NE(problems[1].find("reader type: INT not compatible with writer type: STRING"),
            std::string::npos);
  EXPECT_EQ(problems[4], "{validateFields: 'false', compatibility: 'FULL'}");
}

TEST(Compatibility, LevelNamesAreTakenInAnyCase) {
  EXPECT_EQ(compatibility_level("full_transitive"), CompatibilityLevel::kFullTransitive);
  EXPECT_EQ(compatibility_level("Backward"), CompatibilityLevel::kBackward);
  EXPECT_FALSE(compatibility_level("SIDEWAYS"));
  EXPECT_STREQ(level_name(CompatibilityLevel::kForwardTransitive), "FORWARD_TRANSITIVE");
}

TEST(Compatibility, UnknownSchemaTypesAndBadSchemasAreRefused) {
  EXPECT_EQ(parse_schema("XML", "<a/>", {}, true).error, "Invalid schema type XML");
  EXPECT_EQ(parse_schema("AVRO", R"("Nope")", {}, true).error, "Undefined name: \"Nope\"");
}

TEST(Compatibility, JsonWorkedExample) {
  auto v1 =
      parse_schema("JSON", R"({"type":"object","properties":{"f1":{"type":"string"}}})", {}, true);
  auto v2 = parse_schema(
      "JSON", R"({"type":"object", "properties":{"f1":{"type":"string"},"f2":{"type":"string"}}})",
      {}, true);
  ASSERT_TRUE(v1.schema && v2.schema);
  auto p =
      compatibility_problems(CompatibilityLevel::kBackward, *v2.schema, {{1, v1.schema.get()}});
  EXPECT_EQ(incompatible_message("t-value", p),
            "Schema being registered is incompatible with an earlier schema for subject "
            "\"t-value\", details: [{errorType:\"PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL\", "
            "description:\"The new schema has an open content model and has a property or item "
            "at path '#/properties/f2' which is missing in the old schema'}, {oldSchemaVersion: "
            "1}, {oldSchema: '{\"type\":\"object\",\"properties\":{\"f1\":{\"type\":"
            "\"string\"}}}'}, {validateFields: 'false', compatibility: 'BACKWARD'}]");
}

}  // namespace
}  // namespace oxbow::registry
