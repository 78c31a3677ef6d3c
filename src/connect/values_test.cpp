// SimpleHeaderConverter and the Values text form it reads and writes.
#include <gtest/gtest.h>

#include "connect/values.h"
#include "oxbow/connect/errors.h"
#include "oxbow/connect/header_converters.h"
#include "oxbow/connect/logical.h"
#include "oxbow/connect/struct.h"

namespace oxbow::connect {
namespace {

SchemaAndValue parsed(std::string_view text) {
  return values::parseString(text);
}

TEST(ValuesParseString, Scalars) {
  EXPECT_EQ(parsed(""), (SchemaAndValue{Schema::STRING_SCHEMA, ""}));
  EXPECT_EQ(parsed("true"), (SchemaAndValue{Schema::BOOLEAN_SCHEMA, true}));
  EXPECT_EQ(parsed("false"), (SchemaAndValue{Schema::BOOLEAN_SCHEMA, false}));
  EXPECT_EQ(parsed("null"), SchemaAndValue{});
  EXPECT_EQ(parsed("true}"), (SchemaAndValue{Schema::STRING_SCHEMA, "true}"}));
  EXPECT_EQ(parsed("12"), (SchemaAndValue{Schema::INT8_SCHEMA, int8_t{12}}));
  EXPECT_EQ(parsed("-300"), (SchemaAndValue{Schema::INT16_SCHEMA, int16_t{-300}}));
  EXPECT_EQ(parsed("70000"), (SchemaAndValue{Schema::INT32_SCHEMA, int32_t{70000}}));
  EXPECT_EQ(parsed("5000000000"), (SchemaAndValue{Schema::INT64_SCHEMA, int64_t{5000000000}}));
  EXPECT_EQ(parsed("1.5"), (SchemaAndValue{Schema::FLOAT32_SCHEMA, 1.5f}));
  EXPECT_EQ(parsed("1e300").schema->type(), Type::FLOAT64);
  EXPECT_EQ(parsed("hello world"), (SchemaAndValue{Schema::STRING_SCHEMA, "hello world"}));
  EXPECT_EQ(parsed("-x"), (SchemaAndValue{Schema::STRING_SCHEMA, "-x"}));
  EXPECT_EQ(parsed("99999999999999999999"),
            (SchemaAndValue{Decimal::schema(0), DecimalValue::parse("99999999999999999999")}));
}

TEST(ValuesParseString, DatesAndTimes) {
  EXPECT_EQ(parsed("2024-02-29"), (SchemaAndValue{Date::SCHEMA, DateTime{19782LL * 86400000}}));
  EXPECT_EQ(parsed("01:02:03.004Z"), (SchemaAndValue{Time::SCHEMA, DateTime{3723004}}));
  EXPECT_EQ(parsed("2024-02-29T01:02:03.004Z"),
            (SchemaAndValue{Timestamp::SCHEMA, DateTime{19782LL * 86400000 + 3723004}}));
}

TEST(ValuesParseString, ListsAndMaps) {
  SchemaAndValue list = parsed("[1, 2, 300]");
  EXPECT_EQ(*list.schema, *SchemaBuilder::array(Schema::INT16_SCHEMA).build());
  EXPECT_EQ(list.value, Value(ValueList{int16_t{1}, int16_t{2}, int16_t{300}}));
  SchemaAndValue strings = parsed(R"(["a,b", "c"])");
  EXPECT_EQ(strings.value, Value(ValueList{"a,b", "c"}));
  SchemaAndValue map = parsed(R"({"k":1,"l":2.5})");
  EXPECT_EQ(*map.schema,
            *SchemaBuilder::map(Schema::STRING_SCHEMA, Schema::FLOAT32_SCHEMA).build());
  EXPECT_EQ(map.value, Value(ValueMap{{"k", 1.0f}, {"l", 2.5f}}));
  SchemaAndValue mixed = parsed("[1, true]");
  EXPECT_EQ(mixed.schema->type(), Type::ARRAY);
  EXPECT_EQ(mixed.value, Value(ValueList{int8_t{1}, true}));
  // Not a list after all: the text stays a string.
  EXPECT_EQ(parsed("[1, 2"), (SchemaAndValue{Schema::STRING_SCHEMA, "[1, 2"}));
  EXPECT_EQ(parsed("{a}"), (SchemaAndValue{Schema::STRING_SCHEMA, "{a}"}));
}

TEST(ValuesConvertToString, TheTextParseStringReads) {
  EXPECT_EQ(values::convertToString(Schema::INT32_SCHEMA, int32_t{42}), "42");
  EXPECT_EQ(values::convertToString(Schema::FLOAT64_SCHEMA, 1.0), "1.0");
  EXPECT_EQ(values::convertToString(Schema::STRING_SCHEMA, "a \"b\""), "a \"b\"");
  EXPECT_EQ(values::convertToString(Schema::BYTES_SCHEMA, Bytes{"hi"}), "aGk=");
  EXPECT_EQ(values::convertToString(Date::SCHEMA, DateTime{86400000}), "1970-01-02");
  EXPECT_EQ(values::convertToString(Time::SCHEMA, DateTime{1000}), "00:00:01.000Z");
  EXPECT_EQ(values::convertToString(Timestamp::SCHEMA, DateTime{86400001}),
            "1970-01-02T00:00:00.001Z");
  EXPECT_EQ(values::convertToString(nullptr, ValueList{"x", int8_t{1}}), R"(["x",1])");
  EXPECT_EQ(values::convertToString(nullptr, ValueMap{{"k", "v\\"}}), R"({"k":"v\\"})");
  SchemaPtr schema = SchemaBuilder::struct_().field("a", Schema::INT32_SCHEMA);
  Struct s(schema);
  s.put("a", int32_t{1});
  EXPECT_EQ(values::convertToString(schema, Value(s)), R"({"a":1})");
}

TEST(SimpleHeaderConverterTest, RoundTripsThroughText) {
  auto converter = ConverterRegistry::instance().create(SimpleHeaderConverter::CLASS_NAME);
  converter->configure({}, false);
  for (const SchemaAndValue& header : std::vector<SchemaAndValue>{
           {Schema::STRING_SCHEMA, "text"},
           {Schema::BOOLEAN_SCHEMA, true},
           {Schema::INT8_SCHEMA, int8_t{-5}},
           {Schema::INT64_SCHEMA, int64_t{1} << 40},
           {SchemaBuilder::array(Schema::STRING_SCHEMA).build(), ValueList{"a", "b c"}},
           {Timestamp::SCHEMA, DateTime{1700000000123}}}) {
    std::string bytes;
    ASSERT_TRUE(converter->fromConnectHeader("t", "h", header.schema, header.value, bytes));
    SchemaAndValue back = converter->toConnectHeader("t", "h", bytes);
    EXPECT_EQ(back.value, header.value) << bytes;
    EXPECT_EQ(back.schema->type(), header.schema->type()) << bytes;
  }
  EXPECT_EQ(converter->toConnectHeader("t", "h", std::nullopt), SchemaAndValue{});
}

TEST(SimpleHeaderConverterTest, IsOnlyAHeaderConverter) {
  const ConverterRegistry& registry = ConverterRegistry::instance();
  const auto converters = registry.classNames();
  EXPECT_EQ(std::count(converters.begin(), converters.end(), SimpleHeaderConverter::CLASS_NAME), 0);
  const auto headers = registry.headerConverterClassNames();
  EXPECT_EQ(std::count(headers.begin(), headers.end(), SimpleHeaderConverter::CLASS_NAME), 1);
  EXPECT_EQ(std::count(headers.begin(), headers.end(), "io.confluent.connect.avro.AvroConverter"),
            0);
  EXPECT_THROW(
      registry.configured({{"key.converter", "SimpleHeaderConverter"}}, "key.converter", true),
      ConnectException);
  EXPECT_TRUE(
      registry.configured({{"header.converter", "SimpleHeader"}}, "header.converter", false));
  EXPECT_EQ(registry.fullClassName("SimpleHeader"), SimpleHeaderConverter::CLASS_NAME);
}

}  // namespace
}  // namespace oxbow::connect
