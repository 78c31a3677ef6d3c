// JsonConverter with schemas: Connect's envelope, the JSON form of every schema type, logical
// types in both decimal formats, defaults, and errors on bad input. The expectations are
// Connect's documented behaviour and the facts its JsonConverterTest asserts.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "oxbow/connect/errors.h"
#include "oxbow/connect/json_converter.h"
#include "oxbow/connect/logical.h"
#include "oxbow/connect/struct.h"

namespace oxbow::connect {
namespace {

class JsonConverterTest : public ::testing::Test {
 protected:
  void SetUp() override { converter.configure({}, false); }

  SchemaAndValue read(std::string_view json) { return converter.toConnectData("topic", json); }
  std::string write(const SchemaPtr& schema, const Value& value) {
    return *converter.fromConnectData("topic", schema, value);
  }
  std::string errorOf(std::string_view json) {
    try {
      read(json);
    } catch (const DataException& e) {
      return e.what();
    }
    return "no exception";
  }
  void expectRoundTrip(const SchemaPtr& schema, const Value& value) {
    SchemaAndValue back = read(write(schema, value));
    EXPECT_TRUE(schemasEqual(back.schema, schema)) << write(schema, value);
    EXPECT_EQ(back.value, value) << write(schema, value);
  }

  JsonConverter converter;
};

TEST_F(JsonConverterTest, SchemaMetadataToConnect) {
  EXPECT_EQ(read(R"({ "schema": { "type": "boolean" }, "payload": true })"),
            (SchemaAndValue{Schema::BOOLEAN_SCHEMA, true}));
  EXPECT_EQ(read(R"({ "schema": { "type": "boolean", "optional": true }, "payload": null })"),
            (SchemaAndValue{Schema::OPTIONAL_BOOLEAN_SCHEMA, Value()}));
  EXPECT_EQ(read(R"({ "schema": { "type": "boolean", "default": true }, "payload": null })"),
            (SchemaAndValue{SchemaBuilder::bool_().defaultValue(true).build(), true}));
  EXPECT_EQ(read(R"({ "schema": { "type": "boolean", "optional": false, "name": "bool",
                "version": 2, "doc": "the documentation", "parameters": { "foo": "bar" }},
                "payload": true })"),
            (SchemaAndValue{SchemaBuilder::bool_()
                                .required()
                                .name("bool")
                                .version(2)
                                .doc("the documentation")
                                .parameter("foo", "bar")
                                .build(),
                            true}));
}

TEST_F(JsonConverterTest, PrimitivesToConnect) {
  EXPECT_EQ(read(R"({"schema":{"type":"int8"},"payload":12})").value, Value(int8_t{12}));
  EXPECT_EQ(read(R"({"schema":{"type":"int16"},"payload":12})").value, Value(int16_t{12}));
  EXPECT_EQ(read(R"({"schema":{"type":"int32"},"payload":12})").value, Value(12));
  EXPECT_EQ(read(R"({"schema":{"type":"int64"},"payload":4398046511104})").value,
            Value(int64_t{4398046511104}));
  EXPECT_EQ(read(R"({"schema":{"type":"float"},"payload":12.34})").value, Value(12.34f));
  EXPECT_EQ(read(R"({"schema":{"type":"double"},"payload":12.34})").value, Value(12.34));
  EXPECT_EQ(read(R"({"schema":{"type":"bytes"},"payload":"dGVzdC1zdHJpbmc="})").value,
            Value(Bytes{"test-string"}));
  EXPECT_EQ(read(R"({"schema":{"type":"string"},"payload":"foo-bar-baz"})").value,
            Value("foo-bar-baz"));
}

TEST_F(JsonConverterTest, ContainersToConnect) {
  EXPECT_EQ(read(R"({"schema":{"type":"array","items":{"type":"int32"}},"payload":[1,2,3]})"),
            (SchemaAndValue{SchemaBuilder::array(Schema::INT32_SCHEMA).build(),
                            ValueList{Value(1), Value(2), Value(3)}}));
  EXPECT_EQ(read(R"({"schema":{"type":"map","keys":{"type":"string"},"values":{"type":"int32"}},
                     "payload":{"key1":12,"key2":15}})"),
            (SchemaAndValue{SchemaBuilder::map(Schema::STRING_SCHEMA, Schema::INT32_SCHEMA).build(),
                            ValueMap{{Value("key2"), Value(15)}, {Value("key1"), Value(12)}}}));
  EXPECT_EQ(read(R"({"schema":{"type":"map","keys":{"type":"int32"},"values":{"type":"int32"}},
                     "payload":[[1,12],[2,15]]})")
                .value,
            Value(ValueMap{{Value(1), Value(12)}, {Value(2), Value(15)}}));
  SchemaPtr structSchema = SchemaBuilder::struct_()
                               .field("field1", Schema::BOOLEAN_SCHEMA)
                               .field("field2", Schema::STRING_SCHEMA)
                               .build();
  Struct expected(structSchema);
  expected.put("field1", true).put("field2", "string");
  EXPECT_EQ(read(R"({"schema":{"type":"struct","fields":[{"field":"field1","type":"boolean"},
                     {"field":"field2","type":"string"}]},
                     "payload":{"field1":true,"field2":"string"}})"),
            (SchemaAndValue{structSchema, expected}));
  // An optional field may be absent.
  SchemaAndValue withOptional = read(
      R"({"schema":{"type":"struct","fields":[{"field":"optional","type":"string","optional":true},
          {"field":"required","type":"string"}]},"payload":{"required":"required"}})");
  EXPECT_EQ(withOptional.value.asStruct().getString("required"), "required");
  EXPECT_TRUE(withOptional.value.asStruct().get("optional").isNull());
}

TEST_F(JsonConverterTest, NullsAndTombstones) {
  EXPECT_EQ(converter.toConnectData("topic", std::nullopt), SchemaAndValue{});
  EXPECT_EQ(read(R"({"schema":null,"payload":null})"), SchemaAndValue{});
  EXPECT_EQ(read(R"({"schema":null,"payload":12})"), (SchemaAndValue{nullptr, int64_t{12}}));
  EXPECT_EQ(read(R"({"schema":null,"payload":12.24})"), (SchemaAndValue{nullptr, 12.24}));
  EXPECT_EQ(read(R"({"schema":null,"payload":[1,"2",3]})").value,
            Value(ValueList{Value(int64_t{1}), Value("2"), Value(int64_t{3})}));
  EXPECT_FALSE(converter.fromConnectData("topic", nullptr, Value()));
  EXPECT_EQ(write(nullptr, true), R"({"schema":null,"payload":true})");
}

TEST_F(JsonConverterTest, SchemasAsConnectWritesThem) {
  EXPECT_EQ(write(Schema::BOOLEAN_SCHEMA, true),
            R"({"schema":{"type":"boolean","optional":false},"payload":true})");
  EXPECT_EQ(write(Schema::OPTIONAL_BOOLEAN_SCHEMA, Value()),
            R"({"schema":{"type":"boolean","optional":true},"payload":null})");
  EXPECT_EQ(write(SchemaBuilder::bool_().defaultValue(true), true),
            R"({"schema":{"type":"boolean","optional":false,"default":true},"payload":true})");
  EXPECT_EQ(write(SchemaBuilder::bool_()
                      .required()
                      .name("bool")
                      .version(3)
                      .doc("the "
                           "documentation")
                      .parameter("foo", "bar"),
                  true),
            R"({"schema":{"type":"boolean","optional":false,"name":"bool","version":3,)"
            R"("doc":"the documentation","parameters":{"foo":"bar"}},"payload":true})");
  EXPECT_EQ(write(SchemaBuilder::array(Schema::INT32_SCHEMA), ValueList{Value(1), Value(2)}),
            R"({"schema":{"type":"array","items":{"type":"int32","optional":false},)"
            R"("optional":false},"payload":[1,2]})");
  EXPECT_EQ(write(SchemaBuilder::map(Schema::STRING_SCHEMA, Schema::INT32_SCHEMA),
                  ValueMap{{Value("key1"), Value(12)}}),
            R"({"schema":{"type":"map","keys":{"type":"string","optional":false},)"
            R"("values":{"type":"int32","optional":false},"optional":false},)"
            R"("payload":{"key1":12}})");
  EXPECT_EQ(write(SchemaBuilder::map(Schema::INT32_SCHEMA, Schema::INT32_SCHEMA),
                  ValueMap{{Value(1), Value(12)}, {Value(2), Value(15)}}),
            R"({"schema":{"type":"map","keys":{"type":"int32","optional":false},)"
            R"("values":{"type":"int32","optional":false},"optional":false},)"
            R"("payload":[[1,12],[2,15]]})");
  SchemaPtr schema = SchemaBuilder::struct_()
                         .field("field1", Schema::BOOLEAN_SCHEMA)
                         .field("field2", Schema::STRING_SCHEMA)
                         .build();
  Struct input(schema);
  input.put("field1", true).put("field2", "string2");
  EXPECT_EQ(write(schema, input),
            R"({"schema":{"type":"struct","fields":[)"
            R"({"type":"boolean","optional":false,"field":"field1"},)"
            R"({"type":"string","optional":false,"field":"field2"}],"optional":false},)"
            R"("payload":{"field1":true,"field2":"string2"}})");
}

TEST_F(JsonConverterTest, PrimitivePayloads) {
  EXPECT_EQ(write(Schema::INT8_SCHEMA, int8_t{-12}),
            R"({"schema":{"type":"int8","optional":false},"payload":-12})");
  EXPECT_EQ(write(Schema::FLOAT32_SCHEMA, 12.34f),
            R"({"schema":{"type":"float","optional":false},"payload":12.34})");
  EXPECT_EQ(write(Schema::FLOAT64_SCHEMA, 100.0),
            R"({"schema":{"type":"double","optional":false},"payload":100.0})");
  EXPECT_EQ(write(Schema::BYTES_SCHEMA, Bytes{"test-string"}),
            R"({"schema":{"type":"bytes","optional":false},"payload":"dGVzdC1zdHJpbmc="})");
  EXPECT_EQ(write(Schema::STRING_SCHEMA, "quote \" and \\ and \n and \x01"),
            R"({"schema":{"type":"string","optional":false},)"
            R"("payload":"quote \" and \\ and \n and \u0001"})");
}

TEST_F(JsonConverterTest, LogicalTypes) {
  SchemaPtr decimal = Decimal::schema(2);
  std::string decimalSchema =
      R"({"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal",)"
      R"("version":1,"parameters":{"scale":"2"}})";
  // Base64 of {0, -100}: the two's complement bytes of 156.
  EXPECT_EQ(write(decimal, DecimalValue(156, 2)),
            R"({"schema":)" + decimalSchema + R"(,"payload":"AJw="})");
  EXPECT_EQ(read(R"({"schema":)" + decimalSchema + R"(,"payload":"AJw="})"),
            (SchemaAndValue{decimal, DecimalValue(156, 2)}));
  EXPECT_EQ(read(R"({"schema":)" + decimalSchema + R"(,"payload":1.56})").value,
            Value(DecimalValue(156, 2)));
  EXPECT_EQ(
      write(Date::SCHEMA, DateTime{10000LL * 86400000}),
      R"({"schema":{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Date",)"
      R"("version":1},"payload":10000})");
  EXPECT_EQ(read(R"({"schema":{"type":"int32","name":"org.apache.kafka.connect.data.Time",
                     "version":1},"payload":14400000})"),
            (SchemaAndValue{Time::SCHEMA, DateTime{14400000}}));
  EXPECT_EQ(read(R"({"schema":{"type":"int64","name":"org.apache.kafka.connect.data.Timestamp",
                     "version":1},"payload":4000000000})"),
            (SchemaAndValue{Timestamp::SCHEMA, DateTime{4000000000}}));
  // Defaults are logical values too.
  EXPECT_EQ(
      read(R"({"schema":{"type":"int64","name":"org.apache.kafka.connect.data.Timestamp",
                     "version":1,"default":42},"payload":null})"),
      (SchemaAndValue{Timestamp::builder().defaultValue(DateTime{42}).build(), DateTime{42}}));
  EXPECT_EQ(read(R"({"schema":{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal",
                     "version":1,"optional":true,"default":"AJw=","parameters":{"scale":"2"}},
                     "payload":null})")
                .value,
            Value(DecimalValue(156, 2)));
}

TEST_F(JsonConverterTest, NumericDecimals) {
  converter.configure({{"decimal.format", "numeric"}}, false);
  SchemaPtr decimal = Decimal::schema(4);
  EXPECT_EQ(
      write(decimal, DecimalValue(15600, 4)),
      R"({"schema":{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal",)"
      R"("version":1,"parameters":{"scale":"4"}},"payload":1.5600})");
  // Read back at the schema's scale.
  EXPECT_EQ(read(write(decimal, DecimalValue(15600, 4))).value, Value(DecimalValue(15600, 4)));
  EXPECT_EQ(read(write(decimal, DecimalValue(-1, 4))).value, Value(DecimalValue(-1, 4)));
}

TEST_F(JsonConverterTest, NumericDecimalsReadExactly) {
  auto decimalSchema = [](int scale) {
    return R"({"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","version":1,)"
           R"("parameters":{"scale":")" +
           std::to_string(scale) + R"("}})";
  };
  // More digits than a double holds.
  EXPECT_EQ(read(R"({"schema":)" + decimalSchema(17) + R"(,"payload":1.23456789123456789})").value,
            Value(DecimalValue::parse("1.23456789123456789")));
  EXPECT_EQ(read(R"({"schema":)" + decimalSchema(4) + R"(,"payload":1.5600})").value,
            Value(DecimalValue(15600, 4)));
  EXPECT_EQ(
      read(R"({"schema":)" + decimalSchema(2) + R"(,"payload":-123456789012345678901234567890.12})")
          .value,
      Value(DecimalValue::parse("-123456789012345678901234567890.12")));
  // Integers and shorter fractions are set to the schema's scale.
  EXPECT_EQ(read(R"({"schema":)" + decimalSchema(2) + R"(,"payload":156})").value,
            Value(DecimalValue(15600, 2)));
  EXPECT_EQ(read(R"({"schema":)" + decimalSchema(2) + R"(,"payload":1.5})").value,
            Value(DecimalValue(150, 2)));
  // A default in NUMERIC form is exact too.
  EXPECT_EQ(read(R"({"schema":{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal",
                     "optional":true,"default":0.10000000000000000001,"parameters":{"scale":"20"}},
                     "payload":null})")
                .value,
            Value(DecimalValue::parse("0.10000000000000000001")));
}

TEST_F(JsonConverterTest, ReplaceNullWithDefault) {
  SchemaPtr schema = SchemaBuilder::string().optional().defaultValue("default").build();
  SchemaPtr structSchema = SchemaBuilder::struct_().field("field1", schema).build();
  EXPECT_EQ(
      write(schema, Value()),
      R"({"schema":{"type":"string","optional":true,"default":"default"},"payload":"default"})");
  EXPECT_EQ(write(structSchema, Struct(structSchema)),
            R"({"schema":{"type":"struct","fields":[{"type":"string","optional":true,)"
            R"("default":"default","field":"field1"}],"optional":false},)"
            R"("payload":{"field1":"default"}})");
  std::string json =
      R"({"schema":{"type":"string","optional":true,"default":"default"},"payload":null})";
  EXPECT_EQ(read(json).value, Value("default"));

  converter.configure({{"replace.null.with.default", "false"}}, false);
  EXPECT_EQ(write(schema, Value()),
            R"({"schema":{"type":"string","optional":true,"default":"default"},"payload":null})");
  EXPECT_EQ(write(structSchema, Struct(structSchema)),
            R"({"schema":{"type":"struct","fields":[{"type":"string","optional":true,)"
            R"("default":"default","field":"field1"}],"optional":false},)"
            R"("payload":{"field1":null}})");
  EXPECT_TRUE(read(json).value.isNull());
}

TEST_F(JsonConverterTest, EveryTypeRoundTrips) {
  SchemaPtr inner = SchemaBuilder::struct_().name("Inner").field("x", Schema::INT32_SCHEMA).build();
  Struct innerValue(inner);
  innerValue.put("x", 7);
  SchemaPtr schema =
      SchemaBuilder::struct_()
          .name("com.example.Everything")
          .version(4)
          .doc("all of it")
          .field("i8", Schema::INT8_SCHEMA)
          .field("i16", Schema::INT16_SCHEMA)
          .field("i32", Schema::INT32_SCHEMA)
          .field("i64", Schema::INT64_SCHEMA)
          .field("f32", Schema::FLOAT32_SCHEMA)
          .field("f64", Schema::FLOAT64_SCHEMA)
          .field("bool", Schema::BOOLEAN_SCHEMA)
          .field("string", Schema::STRING_SCHEMA)
          .field("bytes", Schema::BYTES_SCHEMA)
          .field("optional", Schema::OPTIONAL_STRING_SCHEMA)
          .field("array", SchemaBuilder::array(Schema::OPTIONAL_INT64_SCHEMA))
          .field("map", SchemaBuilder::map(Schema::STRING_SCHEMA, Schema::FLOAT64_SCHEMA))
          .field("intMap", SchemaBuilder::map(Schema::INT16_SCHEMA, inner))
          .field("struct", inner)
          .field("decimal", Decimal::schema(3))
          .field("date", Date::SCHEMA)
          .field("time", Time::SCHEMA)
          .field("timestamp", Timestamp::SCHEMA)
          .field("withDefault", SchemaBuilder::int32().defaultValue(5))
          .build();
  Struct value(schema);
  value.put("i8", int8_t{-128})
      .put("i16", int16_t{32767})
      .put("i32", int32_t{-2147483647 - 1})
      .put("i64", int64_t{9223372036854775807})
      .put("f32", 1.5e-7f)
      .put("f64", -2.5e300)
      .put("bool", false)
      .put("string", "ünïcödé ✓")
      .put("bytes", Bytes{std::string("\0\xff\x10", 3)})
      .put("array", ValueList{Value(int64_t{1}), Value(), Value(int64_t{-3})})
      .put("map", ValueMap{{Value("a"), Value(1.0)}, {Value("b"), Value(0.5)}})
      .put("intMap", ValueMap{{Value(int16_t{3}), Value(innerValue)}})
      .put("struct", innerValue)
      .put("decimal", DecimalValue::parse("-12345678901234567890.123"))
      .put("date", DateTime{-86400000})
      .put("time", DateTime{86399999})
      .put("timestamp", DateTime{-1})
      .put("withDefault", 9);
  expectRoundTrip(schema, value);
  expectRoundTrip(SchemaBuilder::array(SchemaBuilder::array(Schema::STRING_SCHEMA)),
                  ValueList{Value(ValueList{Value("a")}), Value(ValueList{})});
  expectRoundTrip(Schema::OPTIONAL_FLOAT64_SCHEMA, Value());
}

TEST_F(JsonConverterTest, SchemaCaches) {
  EXPECT_EQ(converter.sizeOfToConnectSchemaCache(), 0u);
  read(R"({"schema":{"type":"boolean"},"payload":true})");
  read(R"({"schema":{"type":"boolean"},"payload":true})");
  EXPECT_EQ(converter.sizeOfToConnectSchemaCache(), 1u);
  read(R"({"schema":{"type":"boolean","optional":true},"payload":true})");
  read(R"({"schema":{"type":"boolean","optional":false},"payload":true})");
  EXPECT_EQ(converter.sizeOfToConnectSchemaCache(), 3u);

  EXPECT_EQ(converter.sizeOfFromConnectSchemaCache(), 0u);
  write(SchemaBuilder::bool_().build(), true);
  write(SchemaBuilder::bool_().build(), true);  // another object, the same schema
  EXPECT_EQ(converter.sizeOfFromConnectSchemaCache(), 1u);
  write(SchemaBuilder::bool_().optional().build(), true);
  EXPECT_EQ(converter.sizeOfFromConnectSchemaCache(), 2u);
}

TEST_F(JsonConverterTest, BadInputIsADataException) {
  EXPECT_EQ(
      errorOf("{not json")
          .rfind("Converting byte[] to Kafka Connect data failed due to serialization error: ", 0),
      0u);
  std::string envelope =
      "JsonConverter with schemas.enable requires \"schema\" and \"payload\" fields and may not "
      "contain additional fields. If you are trying to deserialize plain JSON data, set "
      "schemas.enable=false in your converter configuration.";
  EXPECT_EQ(errorOf(R"({"a":1})"), envelope);
  EXPECT_EQ(errorOf(R"({"schema":null})"), envelope);
  EXPECT_EQ(errorOf(R"({"schema":null,"payload":1,"extra":2})"), envelope);
  EXPECT_EQ(errorOf("[1,2]"), envelope);
  EXPECT_EQ(errorOf(R"({"schema":{},"payload":1})"), "Schema must contain 'type' field");
  EXPECT_EQ(errorOf(R"({"schema":{"type":"uint8"},"payload":1})"), "Unknown schema type: uint8");
  EXPECT_EQ(errorOf(R"({"schema":{"type":"array"},"payload":[]})"),
            "Array schema did not specify the element type");
  EXPECT_EQ(errorOf(R"({"schema":{"type":"map","values":{"type":"int8"}},"payload":{}})"),
            "Map schema did not specify the key type");
  EXPECT_EQ(errorOf(R"({"schema":{"type":"struct","fields":{}},"payload":{}})"),
            "Struct schema's \"fields\" argument is not an array.");
  EXPECT_EQ(errorOf(R"({"schema":{"type":"struct","fields":[{"type":"int8"}]},"payload":{}})"),
            "Struct schema's field name not specified properly");
  EXPECT_EQ(errorOf(R"({"schema":{"type":"int8","parameters":{"a":1}},"payload":1})"),
            "Schema parameters must have string values.");
  EXPECT_EQ(errorOf(R"({"schema":{"type":"int32"},"payload":null})"),
            "Invalid null value for required INT32 field");
  EXPECT_EQ(errorOf(R"({"schema":{"type":"struct","fields":[{"field":"a","type":"string"}]},
                        "payload":{}})"),
            "Invalid null value for required STRING field");
  EXPECT_EQ(errorOf(R"({"schema":{"type":"struct","fields":[]},"payload":[]})"),
            "Structs should be encoded as JSON objects, but found ARRAY");
  EXPECT_EQ(errorOf(R"({"schema":{"type":"map","keys":{"type":"string"},"values":{"type":"int8"}},
                        "payload":[]})"),
            "Maps with string fields should be encoded as JSON objects, but found ARRAY");
  EXPECT_EQ(errorOf(R"({"schema":{"type":"map","keys":{"type":"int8"},"values":{"type":"int8"}},
                        "payload":[[1]]})"),
            "Found invalid map entry, expected length 2 but found :1");
  EXPECT_EQ(errorOf(R"({"schema":{"type":"map","keys":{"type":"int8"},"values":{"type":"int8"}},
                        "payload":[1]})"),
            "Found invalid map entry instead of array tuple: NUMBER");
  EXPECT_EQ(errorOf(R"({"schema":{"type":"int32","name":"org.apache.kafka.connect.data.Date"},
                        "payload":"x"})"),
            "Invalid type for Date, underlying representation should be integer but was STRING");
  EXPECT_EQ(errorOf(R"({"schema":{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal",
                        "parameters":{"scale":"2"}},"payload":true})"),
            "Invalid type for Decimal, underlying representation should be numeric or bytes but "
            "was BOOLEAN");
  // Stricter than Connect, which reads these as 0, null or false.
  EXPECT_EQ(errorOf(R"({"schema":{"type":"int32"},"payload":"12"})"),
            "Invalid value for INT32: expected a JSON integer but found STRING");
  EXPECT_EQ(errorOf(R"({"schema":{"type":"int8"},"payload":300})"),
            "Invalid value for INT8: 300 is out of range");
  EXPECT_EQ(errorOf(R"({"schema":{"type":"string"},"payload":1})"),
            "Invalid value for STRING: expected a JSON string but found NUMBER");
  EXPECT_EQ(errorOf(R"({"schema":{"type":"bytes"},"payload":"not base64!"})"),
            "Invalid bytes field");
  EXPECT_EQ(errorOf(std::string(5000, '[') + std::string(5000, ']')),
            "JSON nesting is deeper than 1000");
}

TEST_F(JsonConverterTest, EnvelopesReadTheSameByEitherPath) {
  // Whitespace anywhere, members in either order.
  EXPECT_EQ(read(" \n{ \"payload\" : [ 1 , 2 ] ,\n \"schema\" : { \"type\" : \"array\", "
                 "\"items\" : { \"type\" : \"int8\" } } }\t "),
            (SchemaAndValue{SchemaBuilder::array(Schema::INT8_SCHEMA).build(),
                            ValueList{Value(int8_t{1}), Value(int8_t{2})}}));
  EXPECT_EQ(read(R"({"schema":{"type":"string"},"payload":"a \" b"})").value, Value("a \" b"));
  // What the envelope's fast path does not parse is still refused.
  EXPECT_NE(errorOf(R"({"schema":{"type":"int32"},"payload":1} trailing)"), "no exception");
  EXPECT_NE(errorOf(R"({"schema":{"type":"int32",},"payload":1})"), "no exception");
  EXPECT_NE(errorOf(R"({"schema":{"type":"int32"},"payload":1x})"), "no exception");
  EXPECT_NE(errorOf(R"({"schema":{"type":"int32"},"payload":[1,]})"), "no exception");
  EXPECT_NE(errorOf(R"({"schema":{"type":"int32"},"schema":{"type":"int32"}})"), "no exception");
  EXPECT_EQ(
      errorOf(R"({"schema":{"type":"int32"},"payload":1,})")
          .rfind("Converting byte[] to Kafka Connect data failed due to serialization error: ", 0),
      0u);
  // The same schema written with other whitespace reads as an equal schema.
  EXPECT_TRUE(schemasEqual(read(R"({"schema":{"type":"int32"},"payload":1})").schema,
                           read(R"({"schema":{ "type" : "int32" },"payload":2})").schema));
}

// Found by fuzz_plugin_codec: a malformed schema member followed by a member other than
// "payload" made the fast path's search for "payload" wrap around to the object's start and read
// through a null pointer (SIGSEGV), on 33 bytes anyone able to write a sink's topic could send.
TEST_F(JsonConverterTest, AMalformedEnvelopeMemberIsRefusedNotACrash) {
  EXPECT_NE(errorOf(R"({"schema":{ect.4},"raylaod":null})"), "no exception");
  EXPECT_NE(errorOf(R"({"schema":{ect.4},"payload":null})"), "no exception");
  EXPECT_NE(errorOf(R"({"payload":[x],"schema":{"type":"int32"}})"), "no exception");
  // Escaped member names are the names they spell, as in Connect.
  EXPECT_EQ(read(R"({"sch\u0065ma":{"type":"int32"},"payload":7})").value, Value(int32_t{7}));
}

TEST_F(JsonConverterTest, WritingMismatchesIsADataException) {
  auto errorOfWrite = [&](const SchemaPtr& schema, const Value& value) {
    try {
      write(schema, value);
    } catch (const DataException& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  EXPECT_EQ(errorOfWrite(Schema::FLOAT64_SCHEMA, true),
            "Invalid type for FLOAT64: class java.lang.Boolean");
  EXPECT_EQ(errorOfWrite(Schema::INT32_SCHEMA, Value()),
            "Conversion error: null value for field that is required and has no default value");
  EXPECT_EQ(errorOfWrite(Decimal::schema(2), 1.5),
            "Invalid type for Decimal, expected BigDecimal but was class java.lang.Double");
  EXPECT_EQ(errorOfWrite(Decimal::schema(2), DecimalValue(1, 3)),
            "Decimal value has mismatching scale for given Decimal schema. Schema has scale 2, "
            "value has scale 3.");
  EXPECT_EQ(errorOfWrite(nullptr, DecimalValue(1, 3)),
            "Java class class java.math.BigDecimal does not have corresponding schema type.");
  SchemaPtr a = SchemaBuilder::struct_().field("x", Schema::INT32_SCHEMA).build();
  SchemaPtr b = SchemaBuilder::struct_().field("y", Schema::INT32_SCHEMA).build();
  EXPECT_EQ(errorOfWrite(b, Struct(a)), "Mismatching schema.");
}

TEST_F(JsonConverterTest, ConfigErrors) {
  auto errorOfConfig = [](const ConfigMap& configs) {
    try {
      JsonConverter().configure(configs, false);
    } catch (const ConnectException& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  EXPECT_EQ(errorOfConfig({{"decimal.format", "HEX"}}),
            "Invalid value HEX for configuration decimal.format: String must be one of (case "
            "insensitive): BASE64, NUMERIC");
  EXPECT_EQ(errorOfConfig({{"schemas.cache.size", "many"}}),
            "Invalid value many for configuration schemas.cache.size: Not a number of type INT");
  EXPECT_EQ(errorOfConfig({{"schemas.enable", "TRUE"}}), "no exception");
}

}  // namespace
}  // namespace oxbow::connect
