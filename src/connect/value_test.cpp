// The data model: values, decimals, schemas, builders, structs and their validation messages.
#include <gtest/gtest.h>

#include "common/allocation_counter.h"
#include "oxbow/connect/errors.h"
#include "oxbow/connect/logical.h"
#include "oxbow/connect/record.h"
#include "oxbow/connect/struct.h"

namespace oxbow::connect {
namespace {

TEST(ConnectValue, PrimitivesAreHeldWithoutAllocating) {
  oxbow::testing::start_counting_allocations();
  Value a = int32_t{12};
  Value b = a;
  Value c = 4.5;
  Value d = true;
  Value e = int64_t{1} << 40;
  EXPECT_EQ(oxbow::testing::stop_counting_allocations(), 0);
  EXPECT_EQ(b.asInt32(), 12);
  EXPECT_EQ(c.kind(), Value::Kind::Float64);
  EXPECT_TRUE(d.asBoolean());
  EXPECT_EQ(e.asInt64(), int64_t{1} << 40);
}

TEST(ConnectValue, KindsAreDistinctAndReadsOfAnotherKindThrow) {
  EXPECT_EQ(Value(int8_t{1}).kind(), Value::Kind::Int8);
  EXPECT_EQ(Value(int16_t{1}).kind(), Value::Kind::Int16);
  EXPECT_EQ(Value(1).kind(), Value::Kind::Int32);
  EXPECT_EQ(Value(1.0f).kind(), Value::Kind::Float32);
  EXPECT_EQ(Value("x").kind(), Value::Kind::String);
  EXPECT_EQ(Value(Bytes{"x"}).kind(), Value::Kind::Bytes);
  EXPECT_TRUE(Value().isNull());
  EXPECT_TRUE(Value(std::shared_ptr<Struct>()).isNull());
  EXPECT_FALSE(Value(1) == Value(int64_t{1}));  // Integer 1 is not Long 1, as in Java
  EXPECT_THROW(Value("x").asInt32(), DataException);
}

TEST(ConnectValue, MapsCompareWithoutOrder) {
  ValueMap a{{Value("k1"), Value(1)}, {Value("k2"), Value(2)}};
  ValueMap b{{Value("k2"), Value(2)}, {Value("k1"), Value(1)}};
  EXPECT_EQ(Value(a), Value(b));
  b[0].second = 3;
  EXPECT_FALSE(Value(a) == Value(b));
  EXPECT_EQ(Value(a).mapGet(Value("k2"))->asInt32(), 2);
  EXPECT_EQ(Value(a).toString(), "{k1=1, k2=2}");
}

TEST(ConnectDecimal, BytesAreTwosComplementAsBigIntegerWritesThem) {
  // 156 is 0x009c: the sign needs the leading zero byte.
  EXPECT_EQ(DecimalValue(156, 2).unscaledBytes(), std::string("\x00\x9c", 2));
  EXPECT_EQ(DecimalValue(-156, 2).unscaledBytes(), std::string("\xff\x64", 2));
  EXPECT_EQ(DecimalValue(-128, 0).unscaledBytes(), std::string("\x80", 1));
  EXPECT_EQ(DecimalValue(-129, 0).unscaledBytes(), std::string("\xff\x7f", 2));
  EXPECT_EQ(DecimalValue(0, 3).unscaledBytes(), std::string("\x00", 1));
  EXPECT_EQ(DecimalValue::fromUnscaledBytes(std::string("\x00\x9c", 2), 2), DecimalValue(156, 2));
  EXPECT_EQ(DecimalValue::fromUnscaledBytes(std::string("\xff\xff\x64", 3), 2),
            DecimalValue(-156, 2));
}

TEST(ConnectDecimal, TextAsBigDecimal) {
  EXPECT_EQ(DecimalValue::parse("1.56"), DecimalValue(156, 2));
  EXPECT_EQ(DecimalValue::parse("-1.5600"), DecimalValue(-15600, 4));
  EXPECT_EQ(DecimalValue::parse("1.5E+3"), DecimalValue(15, -2));
  EXPECT_EQ(DecimalValue(156, 2).toString(), "1.56");
  EXPECT_EQ(DecimalValue(-5, 3).toString(), "-0.005");
  EXPECT_EQ(DecimalValue(15, -2).toString(), "1.5E+3");
  EXPECT_EQ(DecimalValue(1, 10).toString(), "1E-10");
  DecimalValue big = DecimalValue::parse("123456789012345678901234567890.12345");
  EXPECT_EQ(big.toString(), "123456789012345678901234567890.12345");
  EXPECT_EQ(big.scale(), 5);
  EXPECT_EQ(DecimalValue::parse("-123456789012345678901234567890").unscaledDigits(),
            "-123456789012345678901234567890");
  EXPECT_THROW(DecimalValue::parse("1.2.3"), DataException);
  EXPECT_THROW(DecimalValue::parse(""), DataException);
  EXPECT_THROW(DecimalValue::parse("abc"), DataException);
}

TEST(ConnectDecimal, Rescaling) {
  EXPECT_EQ(DecimalValue(156, 2).withScale(4), DecimalValue(15600, 4));
  EXPECT_EQ(DecimalValue(15600, 4).withScale(2), DecimalValue(156, 2));
  EXPECT_THROW(DecimalValue(156, 2).withScale(1), DataException);
  EXPECT_EQ(DecimalValue(0, 2).withScale(0), DecimalValue(0, 0));
}

TEST(ConnectSchema, BuilderMakesConnectsSchemas) {
  SchemaPtr schema = SchemaBuilder::bool_()
                         .required()
                         .name("bool")
                         .version(2)
                         .doc("the documentation")
                         .parameter("foo", "bar")
                         .build();
  EXPECT_EQ(schema->type(), Type::BOOLEAN);
  EXPECT_FALSE(schema->isOptional());
  EXPECT_EQ(*schema->name(), "bool");
  EXPECT_EQ(*schema->version(), 2);
  EXPECT_EQ(*schema->doc(), "the documentation");
  EXPECT_EQ(*schema->parameter("foo"), "bar");
  EXPECT_EQ(schema->toString(), "Schema{bool:BOOLEAN}");
  EXPECT_EQ(*SchemaBuilder::int32().build(), *Schema::INT32_SCHEMA);
  EXPECT_EQ(*SchemaBuilder::int32().optional().build(), *Schema::OPTIONAL_INT32_SCHEMA);
  EXPECT_FALSE(*SchemaBuilder::int32().build() == *Schema::OPTIONAL_INT32_SCHEMA);
}

TEST(ConnectSchema, BuilderRefusesWhatConnectRefuses) {
  try {
    SchemaBuilder::int32().name("a").name("b");
    FAIL();
  } catch (const SchemaBuilderException& e) {
    EXPECT_STREQ(e.what(), "Invalid SchemaBuilder call: name has already been set.");
  }
  EXPECT_THROW(SchemaBuilder::int32().optional().required(), SchemaBuilderException);
  EXPECT_THROW(SchemaBuilder::int32().defaultValue("x"), SchemaBuilderException);
  EXPECT_THROW(SchemaBuilder::int32().field("f", Schema::INT32_SCHEMA), SchemaBuilderException);
  EXPECT_THROW(
      SchemaBuilder::struct_().field("f", Schema::INT32_SCHEMA).field("f", Schema::STRING_SCHEMA),
      SchemaBuilderException);
  EXPECT_THROW(SchemaBuilder::array(nullptr), SchemaBuilderException);
  EXPECT_THROW(Schema::INT32_SCHEMA->fields(), DataException);
  EXPECT_THROW(Schema::INT32_SCHEMA->valueSchema(), DataException);
  EXPECT_THROW(SchemaBuilder::array(Schema::INT32_SCHEMA).build()->keySchema(), DataException);
}

SchemaPtr personSchema() {
  return SchemaBuilder::struct_()
      .name("Person")
      .field("name", Schema::STRING_SCHEMA)
      .field("age", Schema::OPTIONAL_INT32_SCHEMA)
      .field("country", SchemaBuilder::string().defaultValue("NL"))
      .field("tags", SchemaBuilder::array(Schema::STRING_SCHEMA).optional())
      .build();
}

TEST(ConnectStruct, PutValidatesAndGetFallsBackToDefaults) {
  Struct person(personSchema());
  person.put("name", "Ada").put("tags", ValueList{Value("x")});
  EXPECT_EQ(person.getString("name"), "Ada");
  EXPECT_FALSE(person.getInt32("age").has_value());
  EXPECT_EQ(person.get("country").asString(), "NL");
  EXPECT_TRUE(person.getWithoutDefault("country").isNull());
  EXPECT_EQ(person.getArray("tags")->size(), 1u);
  EXPECT_NO_THROW(person.validate());
  EXPECT_EQ(person.toString(), "Struct{name=Ada,tags=[x]}");
}

TEST(ConnectStruct, ConnectsMessagesForBadValues) {
  Struct person(personSchema());
  auto message = [&](auto action) {
    try {
      action();
    } catch (const DataException& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  EXPECT_EQ(message([&] { person.put("age", "old"); }),
            "Invalid Java object for schema with type INT32: class java.lang.String for field: "
            "\"age\"");
  EXPECT_EQ(message([&] { person.put("name", Value()); }),
            "Invalid value: null used for required field: \"name\", schema type: STRING");
  EXPECT_EQ(message([&] { person.put("nope", 1); }), "nope is not a valid field name");
  EXPECT_EQ(message([&] { person.getInt64("age"); }), "Field 'age' is not of type INT64");
  EXPECT_EQ(message([&] { person.put("tags", ValueList{Value(1)}); }),
            "Invalid Java object for schema with type STRING: class java.lang.Integer for element "
            "of array field: \"tags\"");
  EXPECT_EQ(message([&] { person.validate(); }),
            "Invalid value: null used for required field: \"name\", schema type: STRING");
  EXPECT_EQ(message([&] { Struct s(Schema::INT32_SCHEMA); }), "Not a struct schema: Schema{INT32}");
  EXPECT_EQ(message([&] { Schema::validateValue(Decimal::schema(2), Value(1.5)); }),
            "Invalid Java object for schema \"org.apache.kafka.connect.data.Decimal\" with type "
            "BYTES: class java.lang.Double for value");
  Struct other(SchemaBuilder::struct_().field("x", Schema::INT32_SCHEMA).build());
  other.put("x", 1);
  SchemaPtr outer = SchemaBuilder::struct_().field("inner", personSchema()).build();
  EXPECT_EQ(message([&] { Struct(outer).put("inner", other); }), "Struct schemas do not match.");
}

TEST(ConnectStruct, EqualityIsDeep) {
  Struct a(personSchema()), b(personSchema());
  a.put("name", "Ada");
  b.put("name", "Ada");
  EXPECT_EQ(a, b);
  EXPECT_EQ(Value(a), Value(b));
  b.put("age", 36);
  EXPECT_FALSE(a == b);
}

TEST(ConnectLogical, SchemasAndConversions) {
  SchemaPtr decimal = Decimal::schema(2);
  EXPECT_EQ(decimal->type(), Type::BYTES);
  EXPECT_EQ(*decimal->name(), "org.apache.kafka.connect.data.Decimal");
  EXPECT_EQ(*decimal->parameter("scale"), "2");
  EXPECT_EQ(*decimal->version(), 1);
  EXPECT_EQ(Decimal::fromLogical(decimal, DecimalValue(156, 2)).data, std::string("\x00\x9c", 2));
  EXPECT_THROW(Decimal::fromLogical(decimal, DecimalValue(156, 3)), DataException);
  EXPECT_EQ(*Date::SCHEMA->name(), "org.apache.kafka.connect.data.Date");
  EXPECT_EQ(Date::fromLogical(Date::SCHEMA, DateTime{10000LL * 86400000}), 10000);
  EXPECT_THROW(Date::fromLogical(Date::SCHEMA, DateTime{1}), DataException);
  EXPECT_THROW(Date::fromLogical(Time::SCHEMA, DateTime{0}), DataException);
  EXPECT_EQ(Time::fromLogical(Time::SCHEMA, DateTime{14400000}), 14400000);
  EXPECT_THROW(Time::toLogical(Time::SCHEMA, -1), DataException);
  EXPECT_EQ(Timestamp::toLogical(Timestamp::SCHEMA, 4000000000).epochMillis, 4000000000);
  EXPECT_EQ(Timestamp::SCHEMA->type(), Type::INT64);
  EXPECT_NO_THROW(Schema::validateValue(Timestamp::SCHEMA, DateTime{5}));
  EXPECT_THROW(Schema::validateValue(Timestamp::SCHEMA, int64_t{5}), DataException);
}

TEST(ConnectRecord, RecordsCarryTheirPartsAndHeaders) {
  Headers headers;
  headers.add("h", Schema::STRING_SCHEMA, "v1").add("h", Schema::STRING_SCHEMA, "v2");
  SourceRecord source({{Value("filename"), Value("a.txt")}},
                      {{Value("position"), Value(int64_t{7})}}, "topic", std::nullopt,
                      Schema::STRING_SCHEMA, "k", Schema::INT32_SCHEMA, 1, int64_t{42}, headers);
  EXPECT_EQ(source.topic(), "topic");
  EXPECT_FALSE(source.kafkaPartition());
  EXPECT_EQ(source.sourceOffset()[0].second.asInt64(), 7);
  EXPECT_EQ(source.headers().lastWithName("h")->value.asString(), "v2");
  EXPECT_EQ(source.headers().allWithName("h").size(), 2u);
  SinkRecord sink("topic", 3, nullptr, Value(), Schema::INT32_SCHEMA, 1, 99, int64_t{5},
                  TimestampType::CREATE_TIME);
  EXPECT_EQ(sink.kafkaOffset(), 99);
  EXPECT_EQ(*sink.kafkaPartition(), 3);
  SinkRecord copy = sink;
  EXPECT_EQ(copy, sink);
  copy.headers().add("x", SchemaAndValue{});
  EXPECT_FALSE(copy == sink);
  copy.headers().remove("x");
  EXPECT_EQ(copy, sink);
}

}  // namespace
}  // namespace oxbow::connect
