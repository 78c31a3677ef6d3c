// Avro pairs under Confluent's levels: for each, whether the registry takes the new schema after
// the old one under BACKWARD (the new reads the old's data), FORWARD (the old reads the new's) and
// FULL (both), worked out from Avro's schema resolution rules as Confluent's registry applies them
// (docs/registry/confluent.md section 5). Then the transitive levels over three versions.
#include <gtest/gtest.h>

#include <algorithm>

#include "registry/compatibility.h"
#include "registry/parsed_schema.h"

namespace oxbow::registry {
namespace {

struct Row {
  const char* rule;
  const char* old_schema;
  const char* new_schema;
  bool backward, forward;
};

// Records R with the fields given.
#define REC(fields) R"({"type":"record","name":"R","fields":[)" fields "]}"
#define F(name, type) R"({"name":")" name R"(","type":)" type "}"
#define FD(name, type, def) R"({"name":")" name R"(","type":)" type R"(,"default":)" def "}"

const Row kRows[] = {
    {"the same schema", REC(F("a", "\"int\"")), REC(F("a", "\"int\"")), true, true},
    {"a field added with a default: old data gets it, new data's extra is skipped",
     REC(F("a", "\"int\"")), REC(F("a", "\"int\"") "," FD("b", "\"string\"", "\"x\"")), true, true},
    {"a field added without a default: old data has none to give", REC(F("a", "\"int\"")),
     REC(F("a", "\"int\"") "," F("b", "\"string\"")), false, true},
    {"a field removed that had a default: the old reader fills it in",
     REC(F("a", "\"int\"") "," FD("b", "\"string\"", "\"x\"")), REC(F("a", "\"int\"")), true, true},
    {"a field removed without a default: the old reader has nothing for it",
     REC(F("a", "\"int\"") "," F("b", "\"string\"")), REC(F("a", "\"int\"")), true, false},
    {"int widened to long", REC(F("a", "\"int\"")), REC(F("a", "\"long\"")), true, false},
    {"int widened to float", REC(F("a", "\"int\"")), REC(F("a", "\"float\"")), true, false},
    {"int widened to double", REC(F("a", "\"int\"")), REC(F("a", "\"double\"")), true, false},
    {"long widened to float", REC(F("a", "\"long\"")), REC(F("a", "\"float\"")), true, false},
    {"long widened to double", REC(F("a", "\"long\"")), REC(F("a", "\"double\"")), true, false},
    {"float widened to double", REC(F("a", "\"float\"")), REC(F("a", "\"double\"")), true, false},
    {"long narrowed to int", REC(F("a", "\"long\"")), REC(F("a", "\"int\"")), false, true},
    {"string and bytes read each other", REC(F("a", "\"string\"")), REC(F("a", "\"bytes\"")), true,
     true},
    {"int to string: no promotion", REC(F("a", "\"int\"")), REC(F("a", "\"string\"")), false,
     false},
    {"boolean to int: no promotion", REC(F("a", "\"boolean\"")), REC(F("a", "\"int\"")), false,
     false},
    {"a type made nullable: the union reads the int, a null cannot be read as an int",
     REC(F("a", "\"int\"")), REC(FD("a", R"(["null","int"])", "null")), true, false},
    {"a union narrowed to its int branch", REC(FD("a", R"(["null","int"])", "null")),
     REC(F("a", "\"int\"")), false, true},
    {"a union branch added", REC(F("a", R"(["null","int"])")),
     REC(F("a", R"(["null","int","string"])")), true, false},
    {"union branches reordered", REC(F("a", R"(["null","int","string"])")),
     REC(F("a", R"(["string","null","int"])")), true, true},
    {"a union branch promoted", REC(F("a", R"(["null","int"])")), REC(F("a", R"(["null","long"])")),
     true, false},
    {"an enum symbol added: old readers meet a symbol they lack",
     REC(F("e", R"({"type":"enum","name":"E","symbols":["A","B"]})")),
     REC(F("e", R"({"type":"enum","name":"E","symbols":["A","B","C"]})")), true, false},
    {"an enum symbol removed", REC(F("e", R"({"type":"enum","name":"E","symbols":["A","B","C"]})")),
     REC(F("e", R"({"type":"enum","name":"E","symbols":["A","B"]})")), false, true},
    {"an enum symbol added, with an enum default for readers that lack it",
     REC(F("e", R"({"type":"enum","name":"E","symbols":["A","B"],"default":"A"})")),
     REC(F("e", R"({"type":"enum","name":"E","symbols":["A","B","C"],"default":"A"})")), true,
     true},
    {"an enum renamed", REC(F("e", R"({"type":"enum","name":"E","symbols":["A"]})")),
     REC(F("e", R"({"type":"enum","name":"E2","symbols":["A"]})")), false, false},
    {"an enum renamed with the old name as an alias of the new",
     REC(F("e", R"({"type":"enum","name":"E","symbols":["A"]})")),
     REC(F("e", R"({"type":"enum","name":"E2","aliases":["E"],"symbols":["A"]})")), true, false},
    {"a fixed size changed", REC(F("f", R"({"type":"fixed","name":"X","size":4})")),
     REC(F("f", R"({"type":"fixed","name":"X","size":8})")), false, false},
    {"a fixed renamed", REC(F("f", R"({"type":"fixed","name":"X","size":4})")),
     REC(F("f", R"({"type":"fixed","name":"Y","size":4})")), false, false},
    {"the record renamed", REC(F("a", "\"int\"")),
     R"({"type":"record","name":"S","fields":[{"name":"a","type":"int"}]})", false, false},
    {"the record renamed with the old name as an alias", REC(F("a", "\"int\"")),
     R"({"type":"record","name":"S","aliases":["R"],"fields":[{"name":"a","type":"int"}]})", true,
     false},
    {"a field renamed, the old name an alias, with no default either way", REC(F("a", "\"int\"")),
     REC(R"({"name":"b","aliases":["a"],"type":"int"})"), true, false},
    {"a namespace added to the record: Avro's check compares names without their namespaces",
     REC(F("a", "\"int\"")),
     R"({"type":"record","name":"R","namespace":"n","fields":[{"name":"a","type":"int"}]})", true,
     true},
    {"array items widened", REC(F("xs", R"({"type":"array","items":"int"})")),
     REC(F("xs", R"({"type":"array","items":"long"})")), true, false},
    {"array items changed to string", REC(F("xs", R"({"type":"array","items":"int"})")),
     REC(F("xs", R"({"type":"array","items":"string"})")), false, false},
    {"map values widened", REC(F("m", R"({"type":"map","values":"float"})")),
     REC(F("m", R"({"type":"map","values":"double"})")), true, false},
    {"an array became a map", REC(F("xs", R"({"type":"array","items":"int"})")),
     REC(F("xs", R"({"type":"map","values":"int"})")), false, false},
    {"a nested record's field added with a default",
     REC(F("n", R"({"type":"record","name":"N","fields":[{"name":"x","type":"int"}]})")),
     REC(F("n", R"({"type":"record","name":"N","fields":[{"name":"x","type":"int"},)"
                R"({"name":"y","type":"int","default":0}]})")),
     true, true},
    {"a nested record's field added without a default",
     REC(F("n", R"({"type":"record","name":"N","fields":[{"name":"x","type":"int"}]})")),
     REC(F("n", R"({"type":"record","name":"N","fields":[{"name":"x","type":"int"},)"
                R"({"name":"y","type":"int"}]})")),
     false, true},
    {"docs, orders and custom properties do not matter to reading", REC(F("a", "\"int\"")),
     R"({"type":"record","name":"R","doc":"d","x-owner":"me","fields":[)"
     R"({"name":"a","type":"int","doc":"the a","order":"descending"}]})",
     true, true},
    {"a logical type added over the same physical type", REC(F("t", "\"long\"")),
     REC(F("t", R"({"type":"long","logicalType":"timestamp-millis"})")), true, true},
    {"a decimal's scale changed: the bytes still read",
     REC(F("d", R"({"type":"bytes","logicalType":"decimal","precision":9,"scale":2})")),
     REC(F("d", R"({"type":"bytes","logicalType":"decimal","precision":9,"scale":3})")), true,
     true},
    {"a primitive schema widened", "\"int\"", "\"long\"", true, false},
    {"a primitive schema changed type", "\"string\"", "\"int\"", false, false},
    {"a record replaced by a union holding it", REC(F("a", "\"int\"")),
     R"(["null",{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}])", true, false},
    {"two fields swapped in order", REC(F("a", "\"int\"") "," F("b", "\"string\"")),
     REC(F("b", "\"string\"") "," F("a", "\"int\"")), true, true},
    {"a recursive list gaining a defaulted field",
     R"({"type":"record","name":"L","fields":[{"name":"v","type":"int"},)"
     R"({"name":"next","type":["null","L"]}]})",
     R"({"type":"record","name":"L","fields":[{"name":"v","type":"int"},)"
     R"({"name":"next","type":["null","L"]},{"name":"w","type":"int","default":1}]})",
     true, true},
};

std::unique_ptr<ParsedSchema> parsed(const char* text) {
  auto result = parse_schema("AVRO", text, {}, true);
  EXPECT_TRUE(result.schema) << text << ": " << result.error;
  return std::move(result.schema);
}

bool accepted(CompatibilityLevel level, const char* old_text, const char* new_text) {
  auto old_schema = parsed(old_text), new_schema = parsed(new_text);
  if (!old_schema || !new_schema) return false;
  return compatibility_problems(level, *new_schema, {{1, old_schema.get()}}).empty();
}

class AvroCompatibilityTable : public testing::TestWithParam<Row> {};

TEST_P(AvroCompatibilityTable, AnswersAsConfluent) {
  const Row& row = GetParam();
  EXPECT_EQ(accepted(CompatibilityLevel::kBackward, row.old_schema, row.new_schema), row.backward)
      << "BACKWARD: " << row.rule;
  EXPECT_EQ(accepted(CompatibilityLevel::kForward, row.old_schema, row.new_schema), row.forward)
      << "FORWARD: " << row.rule;
  EXPECT_EQ(accepted(CompatibilityLevel::kFull, row.old_schema, row.new_schema),
            row.backward && row.forward)
      << "FULL: " << row.rule;
  EXPECT_TRUE(accepted(CompatibilityLevel::kNone, row.old_schema, row.new_schema)) << row.rule;
}

INSTANTIATE_TEST_SUITE_P(AvroRules, AvroCompatibilityTable, testing::ValuesIn(kRows));

// v1 {a}, v2 {a, b with a default}, then v3 {a, b without a default}: v3 reads v2's data (b is
// there) but not v1's, so only the transitive levels, which check v1 too, refuse it.
TEST(AvroCompatibilityTransitive, OnlyTheTransitiveLevelsLookPastTheLatest) {
  auto v1 = parsed(REC(F("a", "\"int\"")));
  auto v2 = parsed(REC(F("a", "\"int\"") "," FD("b", "\"int\"", "0")));
  auto v3 = parsed(REC(F("a", "\"int\"") "," F("b", "\"int\"")));
  std::vector<RegisteredVersion> newest_first{{2, v2.get()}, {1, v1.get()}};
  EXPECT_TRUE(compatibility_problems(CompatibilityLevel::kBackward, *v3, newest_first).empty());
  auto refused = compatibility_problems(CompatibilityLevel::kBackwardTransitive, *v3, newest_first);
  ASSERT_FALSE(refused.empty());
  EXPECT_NE(std::find(refused.begin(), refused.end(), "{oldSchemaVersion: 1}"), refused.end());
  // v2 reads v3's data as well (b is there), so FULL holds; FULL_TRANSITIVE fails on v1.
  EXPECT_TRUE(compatibility_problems(CompatibilityLevel::kFull, *v3, newest_first).empty());
  EXPECT_FALSE(
      compatibility_problems(CompatibilityLevel::kFullTransitive, *v3, newest_first).empty());
}

TEST(AvroCompatibilityTransitive, ForwardTransitiveChecksEveryOldReader) {
  // v1 {a, b}, v2 {a, b with a default}, v3 {a}: v2 reads v3's data (b defaulted), v1 does not.
  auto v1 = parsed(REC(F("a", "\"int\"") "," F("b", "\"int\"")));
  auto v2 = parsed(REC(F("a", "\"int\"") "," FD("b", "\"int\"", "0")));
  auto v3 = parsed(REC(F("a", "\"int\"")));
  std::vector<RegisteredVersion> newest_first{{2, v2.get()}, {1, v1.get()}};
  EXPECT_TRUE(compatibility_problems(CompatibilityLevel::kForward, *v3, newest_first).empty());
  EXPECT_FALSE(
      compatibility_problems(CompatibilityLevel::kForwardTransitive, *v3, newest_first).empty());
  EXPECT_FALSE(
      compatibility_problems(CompatibilityLevel::kFullTransitive, *v3, newest_first).empty());
}

}  // namespace
}  // namespace oxbow::registry
