// Schema references that share a type: FirstLevel references SecondLevelA and SecondLevelB, both
// of which reference ThirdLevel (a diamond, as npm's @kafkajs/confluent-schema-registry registers
// it). Confluent resolves a schema's references depth first and each reference name once, so
// ThirdLevel is parsed once however many paths reach it (AbstractSchemaProvider); Avro's parser
// then refuses only a name that two of those parsed schemas both define.
#include "registry/memory_log.h"
#include "registry/service.h"

#include <gtest/gtest.h>

namespace oxbow::registry {
namespace {

using store::SchemaReference;

struct Diamond {
  std::string type, third, second_a, second_b, first;
  // The reference names each type gives: the type's full name for Avro, the URL its `$ref`s
  // use for JSON Schema, the import path for Protobuf.
  std::string third_name, a_name, b_name;
};

const Diamond kAvro{
    "AVRO",
    R"({"type":"record","name":"ThirdLevel","namespace":"test","fields":[{"name":"id","type":"int"}]})",
    R"({"type":"record","name":"SecondLevelA","namespace":"test","fields":[)"
    R"({"name":"thirdLevel","type":"test.ThirdLevel"}]})",
    R"({"type":"record","name":"SecondLevelB","namespace":"test","fields":[)"
    R"({"name":"thirdLevel","type":"test.ThirdLevel"}]})",
    R"({"type":"record","name":"FirstLevel","namespace":"test","fields":[{"name":"id","type":"int"},)"
    R"({"name":"secondLevelA","type":"test.SecondLevelA"},)"
    R"({"name":"secondLevelB","type":"test.SecondLevelB"}]})",
    "test.ThirdLevel",
    "test.SecondLevelA",
    "test.SecondLevelB"};

const Diamond kJson{"JSON",
                    R"({"$id":"https://example.com/third.json","type":"object",)"
                    R"("properties":{"id":{"type":"integer"}},"required":["id"]})",
                    R"({"$id":"https://example.com/a.json","type":"object",)"
                    R"("properties":{"thirdLevel":{"$ref":"https://example.com/third.json"}}})",
                    R"({"$id":"https://example.com/b.json","type":"object",)"
                    R"("properties":{"thirdLevel":{"$ref":"https://example.com/third.json"}}})",
                    R"({"type":"object","properties":{"id":{"type":"integer"},)"
                    R"("secondLevelA":{"$ref":"https://example.com/a.json"},)"
                    R"("secondLevelB":{"$ref":"https://example.com/b.json"}}})",
                    "https://example.com/third.json",
                    "https://example.com/a.json",
                    "https://example.com/b.json"};

const Diamond kProtobuf{
    "PROTOBUF",
    "syntax = \"proto3\";\npackage test;\n\nmessage ThirdLevel {\n  int32 id = 1;\n}\n",
    "syntax = \"proto3\";\npackage test;\n\nimport \"test/third.proto\";\n\n"
    "message SecondLevelA {\n  ThirdLevel third_level = 1;\n}\n",
    "syntax = \"proto3\";\npackage test;\n\nimport \"test/third.proto\";\n\n"
    "message SecondLevelB {\n  ThirdLevel third_level = 1;\n}\n",
    "syntax = \"proto3\";\npackage test;\n\nimport \"test/a.proto\";\nimport \"test/b.proto\";\n\n"
    "message FirstLevel {\n  int32 id = 1;\n  SecondLevelA second_level_a = 2;\n"
    "  SecondLevelB second_level_b = 3;\n}\n",
    "test/third.proto",
    "test/a.proto",
    "test/b.proto"};

struct ReferencesTest : ::testing::Test {
  MemoryLog log;
  RegistryService service{log, {}};

  // The id, or the refusal's code and message.
  std::string reg(const std::string& subject, const std::string& schema, const std::string& type,
                  const std::vector<SchemaReference>& refs = {}) {
    auto r = service.register_schema(subject, {schema, type, refs});
    if (!r) return std::to_string(r.error->error_code) + " " + r.error->message;
    return std::to_string(*r.value);
  }

  // Registers the four, each with its references, and returns FirstLevel's references.
  std::vector<SchemaReference> register_diamond(const Diamond& d) {
    EXPECT_EQ(reg("third", d.third, d.type), "1");
    const std::vector<SchemaReference> to_third{{d.third_name, "third", 1}};
    EXPECT_EQ(reg("second-a", d.second_a, d.type, to_third), "2");
    EXPECT_EQ(reg("second-b", d.second_b, d.type, to_third), "3");
    std::vector<SchemaReference> refs{{d.a_name, "second-a", 1}, {d.b_name, "second-b", 1}};
    EXPECT_EQ(reg("first", d.first, d.type, refs), "4");
    return refs;
  }
};

TEST_F(ReferencesTest, AnAvroTypeReachedThroughTwoReferencesIsDefinedOnce) {
  const auto refs = register_diamond(kAvro);
  // Looked up again, the same schema with the same references is the same version.
  auto found = service.lookup("first", {kAvro.first, "AVRO", refs}, false);
  ASSERT_TRUE(found) << found.error->message;
  EXPECT_EQ(found.value->id, 4);
  // The stored text names the referenced types; the resolved one writes each in place where it
  // first appears, ThirdLevel once.
  const auto found_first = service.version("first", "1", false);
  ASSERT_TRUE(found_first);
  const auto& v = *found_first.value;
  EXPECT_EQ(v.schema, R"({"type":"record","name":"FirstLevel","namespace":"test","fields":[)"
                      R"({"name":"id","type":"int"},{"name":"secondLevelA","type":"SecondLevelA"},)"
                      R"({"name":"secondLevelB","type":"SecondLevelB"}]})");
  EXPECT_EQ(service.formatted(v, "resolved"),
            R"({"type":"record","name":"FirstLevel","namespace":"test","fields":[)"
            R"({"name":"id","type":"int"},)"
            R"({"name":"secondLevelA","type":{"type":"record","name":"SecondLevelA","fields":[)"
            R"({"name":"thirdLevel","type":{"type":"record","name":"ThirdLevel","fields":[)"
            R"({"name":"id","type":"int"}]}}]}},)"
            R"({"name":"secondLevelB","type":{"type":"record","name":"SecondLevelB","fields":[)"
            R"({"name":"thirdLevel","type":"ThirdLevel"}]}}]})");
}

TEST_F(ReferencesTest, AnAvroDiamondIsCheckedForCompatibility) {
  const auto refs = register_diamond(kAvro);
  auto first = [&](const std::string& extra) {
    std::string s = kAvro.first;
    return SchemaRequest{s.insert(s.size() - 2, extra), "AVRO", refs};
  };
  const auto breaking = first(R"(,{"name":"note","type":"string"})");
  auto problems = service.test_compatibility("first", std::nullopt, breaking);
  ASSERT_TRUE(problems) << problems.error->message;
  EXPECT_FALSE(problems.value->empty());
  auto refused = service.register_schema("first", breaking);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error->error_code, 409);

  const auto evolved = first(R"(,{"name":"note","type":"string","default":""})");
  problems = service.test_compatibility("first", std::nullopt, evolved);
  ASSERT_TRUE(problems) << problems.error->message;
  EXPECT_TRUE(problems.value->empty());
  auto registered = service.register_schema("first", evolved);
  ASSERT_TRUE(registered) << registered.error->message;
  EXPECT_EQ(*registered.value, 5);
}

TEST_F(ReferencesTest, AnAvroNameTwoReferencesBothDefineIsRefused) {
  register_diamond(kAvro);
  // Another subject's ThirdLevel, defined differently, reached under another reference name:
  // both are parsed, and Avro's parser refuses the second definition.
  EXPECT_EQ(reg("third-v2",
                R"({"type":"record","name":"ThirdLevel","namespace":"test",)"
                R"("fields":[{"name":"id","type":"long"}]})",
                "AVRO"),
            "5");
  const std::string second_c =
      R"({"type":"record","name":"SecondLevelC","namespace":"test","fields":[)"
      R"({"name":"thirdLevel","type":"test.ThirdLevel"}]})";
  EXPECT_EQ(reg("second-c", second_c, "AVRO", {{"test.ThirdLevel.v2", "third-v2", 1}}), "6");
  const std::string top =
      R"({"type":"record","name":"Top","namespace":"test","fields":[)"
      R"({"name":"a","type":"test.SecondLevelA"},{"name":"c","type":"test.SecondLevelC"}]})";
  const std::string refused = reg(
      "top", top, "AVRO", {{"test.SecondLevelA", "second-a", 1}, {"SecondLevelC", "second-c", 1}});
  EXPECT_EQ(refused.substr(0, 6), "42201 ") << refused;
  EXPECT_NE(refused.find("Can't redefine: test.ThirdLevel"), std::string::npos) << refused;
  // So is the same definition under two reference names: CP 7.x's Avro (1.11) parser refuses any
  // second definition of a name, equal or not.
  EXPECT_EQ(reg("third-copy", kAvro.third, "AVRO"), "1");
  EXPECT_EQ(reg("second-d",
                R"({"type":"record","name":"SecondLevelD","namespace":"test",)"
                R"("fields":[{"name":"thirdLevel","type":"test.ThirdLevel"}]})",
                "AVRO", {{"ThirdLevelCopy", "third-copy", 1}}),
            "7");
  const std::string twice =
      reg("top",
          R"({"type":"record","name":"Top","namespace":"test","fields":[)"
          R"({"name":"a","type":"test.SecondLevelA"},{"name":"d","type":"test.SecondLevelD"}]})",
          "AVRO", {{"test.SecondLevelA", "second-a", 1}, {"SecondLevelD", "second-d", 1}});
  EXPECT_NE(twice.find("Can't redefine: test.ThirdLevel"), std::string::npos) << twice;
}

TEST_F(ReferencesTest, AReferenceNameIsResolvedOnceWhateverItPointsTo) {
  // As Confluent does, a reference name already resolved is not resolved again: SecondLevelC's
  // test.ThirdLevel is the one SecondLevelA's reference brought in (test.ThirdLevel.id an int
  // here, where third-v2's is a long).
  register_diamond(kAvro);
  EXPECT_EQ(reg("third-v2",
                R"({"type":"record","name":"ThirdLevel","namespace":"test",)"
                R"("fields":[{"name":"id","type":"long"}]})",
                "AVRO"),
            "5");
  const std::string second_c =
      R"({"type":"record","name":"SecondLevelC","namespace":"test","fields":[)"
      R"({"name":"thirdLevel","type":"test.ThirdLevel"}]})";
  EXPECT_EQ(reg("second-c", second_c, "AVRO", {{"test.ThirdLevel", "third-v2", 1}}), "6");
  const std::vector<SchemaReference> refs{{"test.SecondLevelA", "second-a", 1},
                                          {"test.SecondLevelC", "second-c", 1}};
  const std::string top =
      R"({"type":"record","name":"Top","namespace":"test","fields":[)"
      R"({"name":"a","type":"test.SecondLevelA"},{"name":"c","type":"test.SecondLevelC"}]})";
  EXPECT_EQ(reg("top", top, "AVRO", refs), "7");
  const auto found_top = service.version("top", "1", false);
  ASSERT_TRUE(found_top);
  const auto& v = *found_top.value;
  EXPECT_NE(service.formatted(v, "resolved").find(R"({"name":"id","type":"int"})"),
            std::string::npos);
  // A reference that names no registered version is refused, even under a name already resolved.
  const auto missing =
      reg("top2", top, "AVRO",
          {{"test.SecondLevelA", "second-a", 1}, {"test.SecondLevelA", "nope", 1}});
  EXPECT_NE(missing.find("Invalid reference test.SecondLevelA: subject nope version 1 not found"),
            std::string::npos)
      << missing;
}

TEST_F(ReferencesTest, AJsonSchemaDiamondRegisters) {
  const auto refs = register_diamond(kJson);
  auto found = service.lookup("first", {kJson.first, "JSON", refs}, false);
  ASSERT_TRUE(found) << found.error->message;
  EXPECT_EQ(found.value->id, 4);
  const std::string evolved = R"({"description":"v2",)" + kJson.first.substr(1);
  EXPECT_EQ(reg("first", evolved, "JSON", refs), "5");
}

TEST_F(ReferencesTest, AProtobufDiamondRegisters) {
  const auto refs = register_diamond(kProtobuf);
  auto found = service.lookup("first", {kProtobuf.first, "PROTOBUF", refs}, false);
  ASSERT_TRUE(found) << found.error->message;
  EXPECT_EQ(found.value->id, 4);
  std::string evolved = kProtobuf.first;
  evolved.insert(evolved.size() - 2, "  string note = 4;\n");
  EXPECT_EQ(reg("first", evolved, "PROTOBUF", refs), "5");
}

}  // namespace
}  // namespace oxbow::registry
