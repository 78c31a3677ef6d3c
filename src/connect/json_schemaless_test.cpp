// JsonConverter with schemas.enable=false: plain JSON to schemaless maps, lists and primitives,
// and back.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "oxbow/connect/errors.h"
#include "oxbow/connect/json_converter.h"
#include "oxbow/connect/struct.h"

namespace oxbow::connect {
namespace {

class SchemalessJsonTest : public ::testing::Test {
 protected:
  void SetUp() override { converter.configure({{"schemas.enable", "false"}}, true); }
  Value read(std::string_view json) {
    SchemaAndValue result = converter.toConnectData("topic", json);
    EXPECT_EQ(result.schema, nullptr);
    return result.value;
  }
  std::string write(const Value& value) {
    return *converter.fromConnectData("topic", nullptr, value);
  }

  JsonConverter converter;
};

TEST_F(SchemalessJsonTest, PlainJsonToConnect) {
  EXPECT_EQ(read("true"), Value(true));
  EXPECT_EQ(read("12"), Value(int64_t{12}));
  EXPECT_EQ(read("12.5"), Value(12.5));
  EXPECT_EQ(read("\"s\""), Value("s"));
  EXPECT_EQ(read(R"({ "a": "", "b": null})"),
            Value(ValueMap{{Value("a"), Value("")}, {Value("b"), Value()}}));
  EXPECT_EQ(read(R"([1, "2", [true], {"x": {}}])"),
            Value(ValueList{Value(int64_t{1}), Value("2"), Value(ValueList{Value(true)}),
                            Value(ValueMap{{Value("x"), Value(ValueMap{})}})}));
  // Empty bytes read as null, as Connect's JSON deserializer reads them.
  EXPECT_TRUE(converter.toConnectData("topic", std::string_view()).value.isNull());
  EXPECT_TRUE(read("null").isNull());
}

TEST_F(SchemalessJsonTest, ConnectToPlainJson) {
  EXPECT_EQ(write(true), "true");
  EXPECT_EQ(write(ValueList{Value(1), Value("string"), Value(true)}), R"([1,"string",true])");
  EXPECT_EQ(write(ValueMap{{Value("key1"), Value(12)}, {Value("key2"), Value("string")}}),
            R"({"key1":12,"key2":"string"})");
  // Keys that are not all strings make an array of pairs.
  EXPECT_EQ(
      write(ValueMap{
          {Value("string"), Value(12)}, {Value(52), Value("string")}, {Value(false), Value(true)}}),
      R"([["string",12],[52,"string"],[false,true]])");
  EXPECT_EQ(write(Bytes{"hi"}), R"("aGk=")");
  EXPECT_EQ(write(1.0f), "1.0");
  EXPECT_FALSE(converter.fromConnectData("topic", nullptr, Value()));
}

TEST_F(SchemalessJsonTest, SchemasAreStillUsedWhenGivenButNotWritten) {
  SchemaPtr schema = SchemaBuilder::struct_().field("a", Schema::INT32_SCHEMA).build();
  Struct value(schema);
  value.put("a", 1);
  EXPECT_EQ(*converter.fromConnectData("topic", schema, value), R"({"a":1})");
  EXPECT_THROW(converter.fromConnectData("topic", Schema::STRING_SCHEMA, 1), DataException);
  // A struct needs its schema.
  EXPECT_THROW(write(value), DataException);
}

TEST_F(SchemalessJsonTest, RoundTripsJsonDocuments) {
  for (std::string_view json : {R"({"name":"x","n":[1,2.5,null,{"deep":[[]]}],"ok":false})",
                                R"([])", R"("é\u0001")", R"(-9223372036854775808)", R"(1e+300)"}) {
    Value value = read(json);
    EXPECT_EQ(nlohmann::json::parse(write(value)), nlohmann::json::parse(json)) << json;
  }
}

TEST_F(SchemalessJsonTest, BadInput) {
  EXPECT_THROW(read("{\"a\":"), DataException);
  EXPECT_THROW(read("tru"), DataException);
  EXPECT_THROW(read("\"\xff\""), DataException);              // not UTF-8
  EXPECT_THROW(read("18446744073709551615"), DataException);  // past INT64
  EXPECT_THROW(read("[1] [2]"), DataException);
  EXPECT_THROW(read("0012"), DataException);  // leading zeros, which Connect's reader allows
}

TEST_F(SchemalessJsonTest, NumbersPastADoublesRange) {
  // nlohmann's parser refuses numbers past a double's range (Java's reads them as infinities).
  EXPECT_THROW(read("1e400"), DataException);
  EXPECT_THROW(read("-1e400"), DataException);
  EXPECT_EQ(read("1e-400"), Value(0.0));
  EXPECT_EQ(read("1.5e3"), Value(1500.0));
}

}  // namespace
}  // namespace oxbow::connect
