// Reader/writer compatibility against pairs whose answers follow from Avro's resolution rules and
// Confluent's message templates (docs/registry/confluent.md, section 5).
#include "registry/avro/compatibility.h"

#include <gtest/gtest.h>

namespace oxbow::registry::avro {
namespace {

Schema parsed(const std::string& json) {
  auto result = parse(json);
  EXPECT_TRUE(result) << json << ": " << result.error;
  if (!result) std::abort();
  return std::move(*result.schema);
}

// The problems of reading `writer` data with `reader`, as Confluent prints them (reader new).
std::vector<std::string> problems(const std::string& reader, const std::string& writer) {
  std::vector<std::string> out;
  for (const auto& p : reader_writer_problems(parsed(reader), parsed(writer)))
    out.push_back(confluent_text(p, "new", "old"));
  return out;
}

std::string record(const std::string& fields, const std::string& name = "R") {
  return R"({"type":"record","name":")" + name + R"(","fields":[)" + fields + "]}";
}

using Texts = std::vector<std::string>;

TEST(AvroCompatibility, AFieldTheReaderAddsNeedsADefault) {
  std::string old_schema = record(R"({"name":"id","type":"int"})");
  EXPECT_EQ(
      problems(record(R"({"name":"id","type":"int"},{"name":"total","type":"long"})"), old_schema),
      Texts{"{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'total' "
            "at path '/fields/1' in the new schema has no default value and is missing in "
            "the old schema', additionalInfo:'total'}"});
  EXPECT_EQ(
      problems(record(R"({"name":"id","type":"int"},{"name":"total","type":"long","default":0})"),
               old_schema),
      Texts{});
  // A removed field is simply not read.
  EXPECT_EQ(problems(record(R"({"name":"x","type":"int","aliases":["id"]})"), old_schema), Texts{});
}

TEST(AvroCompatibility, PromotionsAreReadOthersAreTypeMismatches) {
  auto field = [](const std::string& type) {
    return record(R"({"name":"f","type":")" + type + "\"}");
  };
  struct Case {
    const char *reader, *writer;
    bool ok;
  };
  for (Case c :
       {Case{"long", "int", true}, Case{"float", "int", true}, Case{"float", "long", true},
        Case{"double", "int", true}, Case{"double", "long", true}, Case{"double", "float", true},
        Case{"string", "bytes", true}, Case{"bytes", "string", true}, Case{"int", "long", false},
        Case{"long", "double", false}, Case{"float", "double", false}, Case{"int", "string", false},
        Case{"boolean", "int", false}, Case{"null", "string", false}})
    EXPECT_EQ(problems(field(c.reader), field(c.writer)).empty(), c.ok)
        << c.reader << " <- " << c.writer;
  EXPECT_EQ(problems(field("int"), field("string")),
            Texts{"{errorType:'TYPE_MISMATCH', description:'The type (path '/fields/0/type') of a "
                  "field in the new schema does not match with the old schema', "
                  "additionalInfo:'reader type: INT not compatible with writer type: STRING'}"});
}

TEST(AvroCompatibility, EnumsNeedEveryWriterSymbolOrAReaderDefault) {
  auto e = [](const std::string& symbols, const std::string& extra = "") {
    return record(R"({"name":"e","type":{"type":"enum","name":"E","symbols":)" + symbols + extra +
                  "}}");
  };
  EXPECT_EQ(problems(e(R"(["A","B"])"), e(R"(["D","A","B","C"])")),
            Texts{"{errorType:'MISSING_ENUM_SYMBOLS', description:'The new schema is missing enum "
                  "symbols '[C, D]' at path '/fields/0/type/symbols' in the old schema', "
                  "additionalInfo:'[C, D]'}"});
  EXPECT_EQ(problems(e(R"(["A","B"])", R"(,"default":"A")"), e(R"(["A","B","C"])")), Texts{});
  EXPECT_EQ(problems(e(R"(["A","B","C"])"), e(R"(["A"])")), Texts{});
}

TEST(AvroCompatibility, NamedTypesMatchByShortNameOrReaderAlias) {
  std::string fixed8 = R"({"type":"fixed","name":"ns.H","size":8})";
  EXPECT_EQ(problems(R"({"type":"fixed","name":"other.H","size":8})", fixed8), Texts{});
  EXPECT_EQ(problems(R"({"type":"fixed","name":"ns.G","size":8})", fixed8),
            Texts{"{errorType:'NAME_MISMATCH', description:'The name of the schema has changed "
                  "(path '/name')', additionalInfo:'expected: ns.H'}"});
  EXPECT_EQ(problems(R"({"type":"fixed","name":"ns.G","size":8,"aliases":["ns.H"]})", fixed8),
            Texts{});
  EXPECT_EQ(problems(R"({"type":"fixed","name":"ns.H","size":16})", fixed8),
            Texts{"{errorType:'FIXED_SIZE_MISMATCH', description:'The size of FIXED type field at "
                  "path '/size' in the new schema does not match with the old schema', "
                  "additionalInfo:'expected: 8, found: 16'}"});
}

TEST(AvroCompatibility, UnionsReadEveryWriterBranchOrSayWhichIsMissing) {
  EXPECT_EQ(problems(R"(["null","string"])", R"(["null","string","int"])"),
            Texts{"{errorType:'MISSING_UNION_BRANCH', description:'The new schema is missing a "
                  "type inside a union field at path '/2' in the old schema', "
                  "additionalInfo:'reader union lacking writer type: INT'}"});
  EXPECT_EQ(problems(R"(["null","string"])", R"("int")"),
            Texts{"{errorType:'MISSING_UNION_BRANCH', description:'The new schema is missing a "
                  "type inside a union field at path '/' in the old schema', "
                  "additionalInfo:'reader union lacking writer type: INT'}"});
  EXPECT_EQ(problems(R"(["null","long"])", R"("int")"), Texts{});  // a branch promotes it
  // A writer union's branches are each read from the top: the path starts again.
  EXPECT_EQ(problems(R"("string")", R"(["null","string"])"),
            Texts{"{errorType:'TYPE_MISMATCH', description:'The type (path '/') of a field in the "
                  "new schema does not match with the old schema', additionalInfo:'reader type: "
                  "STRING not compatible with writer type: NULL'}"});
  EXPECT_EQ(problems(R"(["string","null"])", R"("string")"), Texts{});
}

TEST(AvroCompatibility, RecursiveTypesAndNestedContainersAreFollowed) {
  std::string list = R"({"type":"record","name":"L","fields":[{"name":"v","type":"int"},
                         {"name":"next","type":["null","L"]}]})";
  EXPECT_EQ(problems(list, list), Texts{});
  std::string list_long = R"({"type":"record","name":"L","fields":[{"name":"v","type":"long"},
                              {"name":"next","type":["null","L"]}]})";
  EXPECT_EQ(problems(list_long, list), Texts{});
  EXPECT_EQ(problems(list, list_long).size(), 1u);
  EXPECT_EQ(problems(R"({"type":"map","values":{"type":"array","items":"int"}})",
                     R"({"type":"map","values":{"type":"array","items":"string"}})"),
            Texts{"{errorType:'TYPE_MISMATCH', description:'The type (path '/values/items') of a "
                  "field in the new schema does not match with the old schema', "
                  "additionalInfo:'reader type: INT not compatible with writer type: STRING'}"});
}

}  // namespace
}  // namespace oxbow::registry::avro
