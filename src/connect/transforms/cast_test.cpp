// Cast of whole values and of fields, with and without schemas: Kafka's CastTest outputs, Java's
// conversions, and the config and data errors.
#include <gtest/gtest.h>

#include "connect/transforms/transforms_test_util.h"
#include "oxbow/connect/errors.h"
#include "oxbow/connect/logical.h"
#include "oxbow/connect/struct.h"

namespace oxbow::connect {
namespace {

using testing::configured;
using testing::messageOf;
using testing::valueRecord;

Value castWhole(const std::string& type, SchemaPtr schema, Value value,
                SchemaPtr* outSchema = nullptr) {
  auto xform = configured("Cast$Value", {{"spec", type}});
  ConnectRecord out = *xform->apply(valueRecord(schema, std::move(value)));
  if (outSchema) *outSchema = out.valueSchema();
  return out.value();
}

TEST(CastTest, WholeValuesWithSchemas) {
  SchemaPtr schema;
  EXPECT_EQ(castWhole("int8", Schema::INT32_SCHEMA, int32_t{42}, &schema), Value(int8_t{42}));
  EXPECT_EQ(schema->type(), Type::INT8);
  EXPECT_EQ(castWhole("int16", Schema::INT32_SCHEMA, int32_t{42}), Value(int16_t{42}));
  EXPECT_EQ(castWhole("int64", Schema::INT32_SCHEMA, int32_t{42}), Value(int64_t{42}));
  EXPECT_EQ(castWhole("float32", Schema::INT32_SCHEMA, int32_t{42}), Value(42.0f));
  EXPECT_EQ(castWhole("float64", Schema::INT32_SCHEMA, int32_t{42}), Value(42.0));
  EXPECT_EQ(castWhole("boolean", Schema::INT32_SCHEMA, int32_t{42}), Value(true));
  EXPECT_EQ(castWhole("boolean", Schema::INT32_SCHEMA, int32_t{0}), Value(false));
  EXPECT_EQ(castWhole("string", Schema::INT32_SCHEMA, int32_t{42}), Value("42"));
  EXPECT_EQ(castWhole("int32", Schema::STRING_SCHEMA, "42"), Value(int32_t{42}));
  EXPECT_EQ(castWhole("string", Schema::BYTES_SCHEMA, Bytes{"hello"}), Value("aGVsbG8="));
  // Java's narrowing: wraps for integers, saturates for floats.
  EXPECT_EQ(castWhole("int8", Schema::INT32_SCHEMA, int32_t{300}), Value(int8_t{44}));
  EXPECT_EQ(castWhole("int32", Schema::FLOAT64_SCHEMA, 1e12), Value(int32_t{2147483647}));
  EXPECT_EQ(castWhole("string", Timestamp::SCHEMA, DateTime{1483425001864LL}),
            Value("2017-01-03T06:30:01.864Z"));
  EXPECT_EQ(castWhole("int64", Timestamp::SCHEMA, DateTime{1483425001864LL}),
            Value(int64_t{1483425001864LL}));

  SchemaPtr withDefault = SchemaBuilder::int64().defaultValue(int64_t{-42}).build();
  EXPECT_EQ(castWhole("int32", withDefault, int64_t{42}, &schema), Value(int32_t{42}));
  EXPECT_EQ(schema->defaultValue(), Value(int32_t{-42}));
}

TEST(CastTest, WholeValuesWithoutSchemas) {
  EXPECT_EQ(castWhole("int8", nullptr, int32_t{42}), Value(int8_t{42}));
  EXPECT_EQ(castWhole("boolean", nullptr, "TRUE"), Value(true));
  EXPECT_EQ(castWhole("float64", nullptr, "1.5"), Value(1.5));
  EXPECT_EQ(messageOf<DataException>([] { castWhole("int8", nullptr, "300"); }),
            "Value (300) was out of range for requested data type");
  EXPECT_EQ(messageOf<DataException>([] { castWhole("int8", nullptr, ValueList{}); }),
            "Cast transformation does not support casting from ARRAY; supported types are [INT8, "
            "INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING, BYTES]");
  EXPECT_EQ(messageOf<DataException>([] { castWhole("int8", nullptr, Bytes{"x"}); }),
            "Unexpected type in Cast transformation: class [B");
  // Tombstones pass unchanged.
  auto xform = configured("Cast$Value", {{"spec", "foo:int64"}});
  EXPECT_EQ(*xform->apply(valueRecord(nullptr, Value())), valueRecord(nullptr, Value()));
}

TEST(CastTest, FieldsOfStructsAndMaps) {
  SchemaPtr schema = SchemaBuilder::struct_()
                         .field("int32", Schema::INT32_SCHEMA)
                         .field("string", Schema::STRING_SCHEMA)
                         .field("optional", Schema::OPTIONAL_INT64_SCHEMA)
                         .field("kept", Schema::STRING_SCHEMA)
                         .build();
  Struct value(schema);
  value.put("int32", int32_t{42}).put("string", "7").put("kept", "x");
  auto xform = configured("org.apache.kafka.connect.transforms.Cast$Value",
                          {{"spec", "int32:string, string:int16, optional:float32"}});
  ConnectRecord out = *xform->apply(valueRecord(schema, value));
  const Struct& cast = out.value().asStruct();
  EXPECT_EQ(cast.getString("int32"), "42");
  EXPECT_EQ(cast.getInt16("string"), 7);
  EXPECT_TRUE(cast.get("optional").isNull());
  EXPECT_TRUE(out.valueSchema()->field("optional")->schema()->isOptional());
  EXPECT_EQ(out.valueSchema()->field("optional")->schema()->type(), Type::FLOAT32);
  EXPECT_EQ(cast.getString("kept"), "x");

  ValueMap map = {{Value("int32"), int32_t{42}}, {Value("string"), Value("7")}};
  Value castMap = xform->apply(valueRecord(nullptr, map))->value();
  EXPECT_EQ(*castMap.mapGet("int32"), Value("42"));
  EXPECT_EQ(*castMap.mapGet("string"), Value(int16_t{7}));
  EXPECT_TRUE(castMap.mapGet("optional")->isNull());
}

TEST(CastTest, ConfigErrors) {
  auto xform = createTransformation("Cast$Key");
  auto errorOf = [&](const std::string& spec) {
    return messageOf<ConfigException>([&] { xform->configure({{"spec", spec}}); });
  };
  EXPECT_EQ(errorOf(""), "Must specify at least one field to cast.");
  EXPECT_EQ(errorOf("foo:faketype"), "Invalid type found in casting spec: faketype");
  EXPECT_EQ(errorOf("foo:array"),
            "Cast transformation does not support casting to ARRAY; supported types are [INT8, "
            "INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING]");
  EXPECT_EQ(errorOf("foo:bytes"),
            "Cast transformation does not support casting to BYTES; supported types are [INT8, "
            "INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING]");
  EXPECT_EQ(errorOf("foo:int8:extra"),
            "Invalid value [foo:int8:extra] for configuration renames: Invalid rename mapping: "
            "foo:int8:extra");
  EXPECT_EQ(errorOf("foo:int8,int32"),
            "Cast transformations that specify a type to cast the entire value to may only "
            "specify a single cast in their spec");
  EXPECT_EQ(messageOf<ConfigException>([&] { xform->configure({}); }),
            "Missing required configuration \"spec\" which has no default value.");
}

}  // namespace
}  // namespace oxbow::connect
