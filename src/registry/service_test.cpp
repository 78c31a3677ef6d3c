// The registry's operations over an in-memory log, against Confluent's documented behaviour and
// error texts (docs/registry/confluent.md).
#include "registry/service.h"

#include "registry/memory_log.h"

#include <gtest/gtest.h>

namespace oxbow::registry {
namespace {

const std::string kV1 = R"({"type":"record","name":"r","fields":[{"name":"a","type":"string"}]})";
const std::string kV2 = R"({"type":"record","name":"r","fields":[{"name":"a","type":"string"},
                           {"name":"b","type":"int","default":0}]})";
const std::string kBreaking =
    R"({"type":"record","name":"r","fields":[{"name":"a","type":"int"}]})";

struct RegistryServiceTest : ::testing::Test {
  MemoryLog log;
  RegistryService service{log, {}};
  int reg(const std::string& subject, const std::string& schema) {
    auto r = service.register_schema(subject, {schema, "", {}});
    EXPECT_TRUE(r) << (r.error ? r.error->message : "");
    return r ? *r.value : -1;
  }
  std::string error(const RegistryError& e) {
    return std::to_string(e.http_status) + " " + std::to_string(e.error_code) + " " + e.message;
  }
};

TEST_F(RegistryServiceTest, TheSameSchemaIsTheSameVersionInASubjectAndTheSameIdEverywhere) {
  EXPECT_EQ(reg("s", kV1), 1);
  EXPECT_EQ(reg("s", " " + kV1 + " "), 1);  // the same once parsed and printed again
  EXPECT_EQ(*service.versions("s", false, false).value, std::vector<int>{1});
  EXPECT_EQ(reg("other", kV1), 1);
  EXPECT_EQ(reg("s", kV2), 2);
  EXPECT_EQ(*service.versions("s", false, false).value, (std::vector<int>{1, 2}));
  auto latest = service.version("s", "latest", false);
  EXPECT_EQ(latest.value->version, 2);
  EXPECT_EQ(latest.value->schema,
            R"({"type":"record","name":"r","fields":[{"name":"a","type":"string"},)"
            R"({"name":"b","type":"int","default":0}]})");
  EXPECT_EQ(service.lookup("s", {kV1, "", {}}, false).value->version, 1);
  EXPECT_EQ(service.schema_by_id(2).value->schema, latest.value->schema);
  EXPECT_EQ(service.subjects(false, false), (std::vector<std::string>{"other", "s"}));
}

TEST_F(RegistryServiceTest, AnIncompatibleSchemaIsRefusedUnlessTheLevelAllowsIt) {
  reg("s", kV1);
  auto refused = service.register_schema("s", {kBreaking, "", {}});
  ASSERT_TRUE(refused.error);
  EXPECT_EQ(refused.error->http_status, 409);
  EXPECT_EQ(refused.error->message.rfind(
                "Schema being registered is incompatible with an earlier schema for subject \"s\", "
                "details: [{errorType:'TYPE_MISMATCH'",
                0),
            0u)
      << refused.error->message;
  EXPECT_EQ(*service.set_compatibility("s", "none").value, "NONE");
  EXPECT_EQ(reg("s", kBreaking), 2);
  EXPECT_EQ(*service.compatibility("s", false).value, "NONE");
  EXPECT_EQ(*service.compatibility(std::nullopt, false).value, "BACKWARD");
  EXPECT_EQ(error(*service.compatibility("other", false).error),
            "404 40408 Subject 'other' does not have subject-level compatibility configured");
  EXPECT_EQ(*service.compatibility("other", true).value, "BACKWARD");
  EXPECT_EQ(
      error(*service.set_compatibility(std::nullopt, "sideways").error),
      "422 42203 Invalid compatibility level. Valid values are none, backward, forward, full, "
      "backward_transitive, forward_transitive, and full_transitive");
}

TEST_F(RegistryServiceTest, VersionsAndSubjectsThatDoNotExistAnswerAsConfluents) {
  reg("s", kV1);
  for (const char* bad : {"a", "0", "-2", "2147483648"})
    EXPECT_EQ(error(*service.version("s", bad, false).error),
              std::string("422 42202 The specified version '") + bad +
                  "' is not a valid version id. Allowed values are between [1, 2^31-1] and the "
                  "string \"latest\"");
  EXPECT_EQ(error(*service.version("nope", "1", false).error),
            "404 40401 Subject 'nope' not found.");
  EXPECT_EQ(error(*service.version("s", "7", false).error), "404 40402 Version 7 not found.");
  EXPECT_EQ(error(*service.lookup("s", {kV2, "", {}}, false).error), "404 40403 Schema not found");
  EXPECT_EQ(error(*service.schema_by_id(9).error), "404 40403 Schema 9 not found");
  EXPECT_EQ(error(*service.register_schema("__GLOBAL", {kV1, "", {}}).error),
            "422 42208 The specified subject '__GLOBAL' is not a valid.");
  auto invalid = service.register_schema("s", {R"({"type":"record","name":"r"})", "", {}});
  EXPECT_EQ(
      error(*invalid.error),
      R"(422 42201 Invalid schema {subject=s,version=null,id=null,schemaType=AVRO,references=[],)"
      R"(metadata=null,ruleSet=null,schema={"type":"record","name":"r"},schemaTags=null} with )"
      R"(refs [] of type AVRO, details: Record has no fields: {"type":"record","name":"r"})");
  EXPECT_EQ(error(*service.register_schema("s", {"\"int\"", "XML", {}}).error),
            "422 42201 Invalid schema type XML");
}

TEST_F(RegistryServiceTest, SoftDeletedVersionsKeepTheirIdsAndComeBackAsNewVersions) {
  reg("s", kV1);
  reg("s", kV2);
  EXPECT_EQ(*service.delete_version("s", "1", false).value, 1);
  EXPECT_EQ(error(*service.version("s", "1", false).error), "404 40402 Version 1 not found.");
  EXPECT_TRUE(service.version("s", "1", true));
  EXPECT_EQ(service.schema_by_id(1).value->id, 1);  // still resolvable
  EXPECT_EQ(error(*service.delete_version("s", "1", false).error),
            "404 40406 Subject 's' Version 1 was soft deleted.Set permanent=true to delete "
            "permanently");
  EXPECT_EQ(
      error(*service.delete_version("s", "2", true).error),
      "404 40407 Subject 's' Version 2 was not deleted first before being permanently deleted");
  // Registered again: the old id, a new version; the soft-deleted one is tombstoned first.
  log.written_keys.clear();
  EXPECT_EQ(reg("s", kV1), 1);
  EXPECT_EQ(*service.versions("s", true, false).value, (std::vector<int>{2, 3}));
  EXPECT_EQ(log.written_keys, (std::vector<std::string>{
                                  R"({"keytype":"SCHEMA","subject":"s","version":1,"magic":1})",
                                  R"({"keytype":"SCHEMA","subject":"s","version":3,"magic":1})"}));
}

TEST_F(RegistryServiceTest, SubjectsAreSoftDeletedThenHardDeletedWithTheirSettings) {
  reg("s", kV1);
  reg("s", kV2);
  service.set_compatibility("s", "FULL");
  EXPECT_EQ(error(*service.delete_subject("s", true).error),
            "404 40405 Subject 's' was not deleted first before being permanently deleted");
  EXPECT_EQ(*service.delete_subject("s", false).value, (std::vector<int>{1, 2}));
  EXPECT_EQ(service.subjects(false, false), std::vector<std::string>{});
  EXPECT_EQ(service.subjects(true, false), std::vector<std::string>{"s"});
  EXPECT_EQ(error(*service.delete_subject("s", false).error),
            "404 40404 Subject 's' was soft deleted.Set permanent=true to delete permanently");
  EXPECT_EQ(*service.delete_subject("s", true).value, (std::vector<int>{1, 2}));
  EXPECT_EQ(service.subjects(true, false), std::vector<std::string>{});
  EXPECT_EQ(error(*service.compatibility("s", false).error),
            "404 40408 Subject 's' does not have subject-level compatibility configured");
  EXPECT_EQ(error(*service.delete_subject("s", true).error), "404 40401 Subject 's' not found.");
  // Ids are never issued twice, even after a hard delete.
  EXPECT_EQ(reg("t", kBreaking), 3);
}

TEST_F(RegistryServiceTest, AWriteTheStoreRefusesIsAStoreError) {
  log.fail_writes = true;
  EXPECT_EQ(error(*service.register_schema("s", {kV1, "", {}}).error),
            "500 50001 Register schema operation failed while writing to the Kafka store");
}

TEST_F(RegistryServiceTest, ImportKeepsIdsAndVersionsOnlyInImportMode) {
  SchemaRequest imported{kV1, "", {}};
  imported.id = 42;
  imported.version = 7;
  EXPECT_EQ(error(*service.register_schema("s", imported).error),
            "422 42205 Subject s is not in import or forward mode");
  ASSERT_TRUE(service.set_mode(std::nullopt, "IMPORT", false));
  EXPECT_EQ(error(*service.register_schema("s", {kV1, "", {}}).error),
            "422 42205 Subject s in context  is not in read-write mode");
  EXPECT_EQ(*service.register_schema("s", imported).value, 42);
  EXPECT_EQ(*service.register_schema("s", imported).value, 42);  // again: the same
  SchemaRequest other_id = imported;
  other_id.id = 41;
  EXPECT_EQ(error(*service.register_schema("s", other_id).error),
            "422 42207 Schema already registered with id 42 instead of input id 41");
  EXPECT_EQ(service.version("s", "7", false).value->id, 42);
  // Imports skip the compatibility check, but an id names one schema only.
  SchemaRequest breaking{kBreaking, "", {}};
  breaking.id = 43;
  EXPECT_EQ(*service.register_schema("s", breaking).value, 43);
  EXPECT_EQ(service.version("s", "latest", false).value->version, 8);
  breaking.id = 42;
  EXPECT_EQ(error(*service.register_schema("t", breaking).error),
            "422 42205 Overwrite new schema with id 42 in context  is not permitted.");
  // Back in READWRITE, new ids go on after the largest imported one.
  ASSERT_TRUE(service.set_mode(std::nullopt, "READWRITE", false));
  ASSERT_TRUE(service.set_compatibility(std::nullopt, "NONE"));
  EXPECT_EQ(reg("u", kV2), 44);
}

TEST_F(RegistryServiceTest, AnExplicitVersionOutsideImportMustBeTheNextOne) {
  SchemaRequest request{kV1, "", {}};
  request.version = 2;
  EXPECT_EQ(error(*service.register_schema("s", request).error),
            "422 42201 Version is not one more than previous version");
  request.version = 1;
  EXPECT_EQ(*service.register_schema("s", request).value, 1);
}

TEST_F(RegistryServiceTest, NormalizeMakesSchemasThatDifferInOrderTheSame) {
  const std::string a =
      R"({"type":"record","name":"r","b":1,"a":2,"aliases":["z","y"],"fields":[{"name":"f","type":"int"}]})";
  const std::string b =
      R"({"type":"record","name":"r","a":2,"b":1,"aliases":["y","z"],"fields":[{"name":"f","type":"int"}]})";
  SchemaRequest first{a, "", {}}, second{b, "", {}};
  first.normalize = second.normalize = true;
  EXPECT_EQ(*service.register_schema("s", first).value, 1);
  EXPECT_EQ(*service.register_schema("s", second).value, 1);
  EXPECT_EQ(service.version("s", "1", false).value->schema,
            R"({"type":"record","name":"r","fields":[{"name":"f","type":"int"}],"a":2,"b":1,)"
            R"("aliases":["y","z"]})");
  // Without normalize `a` is a schema of its own; `b`, already in normal order, is the first.
  ASSERT_TRUE(service.set_compatibility("t", "NONE"));
  EXPECT_EQ(reg("t", a), 2);
  EXPECT_EQ(reg("t", b), 1);
  EXPECT_EQ(service.lookup("s", second, false).value->version, 1);
  // "normalize": true in a subject's config normalizes what is registered there.
  ASSERT_TRUE(service.set_compatibility("u", std::nullopt, true));
  EXPECT_EQ(service.normalize_setting("u", false), true);
  EXPECT_EQ(service.normalize_setting("v", true), std::nullopt);
  EXPECT_EQ(reg("u", a), 1);
}

TEST_F(RegistryServiceTest, SchemasWithReferencesAreCheckedAgainstEachOther) {
  // The compatibility check walks into the referenced type's nodes, which the referenced schema
  // owns: they must outlive the parse (they once did not).
  EXPECT_EQ(reg("inner", R"({"type":"record","name":"In","fields":[{"name":"x","type":"int"}]})"),
            1);
  const std::vector<store::SchemaReference> refs{{"In", "inner", 1}};
  auto outer = [&](const std::string& extra) {
    return SchemaRequest{
        R"({"type":"record","name":"Out","fields":[{"name":"in","type":"In"})" + extra + "]}", "",
        refs};
  };
  EXPECT_EQ(*service.register_schema("outer", outer("")).value, 2);
  EXPECT_EQ(
      *service.register_schema("outer", outer(R"(,{"name":"n","type":"int","default":0})")).value,
      3);
  auto refused = service.register_schema("outer", outer(R"(,{"name":"m","type":"int"})"));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error->error_code, 409);
}

TEST(VersionIds, LatestAndPositiveIntegersOnly) {
  EXPECT_EQ(parse_version("latest"), -1);
  EXPECT_EQ(parse_version(" LaTeSt "), -1);
  EXPECT_EQ(parse_version("-1"), -1);
  EXPECT_EQ(parse_version("2147483647"), 2147483647);
  for (const char* bad : {"", "0", "-2", "1.5", "x", "2147483648", "1a"})
    EXPECT_FALSE(parse_version(bad)) << bad;
}

}  // namespace
}  // namespace oxbow::registry
