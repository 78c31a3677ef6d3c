// Flatten with and without schemas: the fields and names Kafka's FlattenTest expects, optional
// and default values carried down, and the types it refuses.
#include <gtest/gtest.h>

#include "connect/transforms/transforms_test_util.h"
#include "oxbow/connect/errors.h"
#include "oxbow/connect/struct.h"

namespace oxbow::connect {
namespace {

using testing::configured;
using testing::messageOf;
using testing::valueRecord;

TEST(FlattenTest, NestedStructsBecomeDottedFields) {
  SchemaPtr leaf = SchemaBuilder::struct_()
                       .field("int8", Schema::INT8_SCHEMA)
                       .field("string", Schema::STRING_SCHEMA)
                       .field("bytes", Schema::BYTES_SCHEMA)
                       .build();
  SchemaPtr middle = SchemaBuilder::struct_().field("B", leaf).build();
  SchemaPtr top = SchemaBuilder::struct_().field("A", middle).build();
  Struct leafValue(leaf);
  leafValue.put("int8", int8_t{8}).put("string", "stringy").put("bytes", Bytes{"bytes"});
  Struct middleValue(middle);
  middleValue.put("B", leafValue);
  Struct topValue(top);
  topValue.put("A", middleValue);

  auto xform = configured("org.apache.kafka.connect.transforms.Flatten$Value", {});
  ConnectRecord out = *xform->apply(valueRecord(top, topValue));
  const Struct& flat = out.value().asStruct();
  EXPECT_EQ(flat.schema()->fields().size(), 3u);
  EXPECT_EQ(flat.getInt8("A.B.int8"), 8);
  EXPECT_EQ(flat.getString("A.B.string"), "stringy");
  EXPECT_EQ(flat.getBytes("A.B.bytes"), Bytes{"bytes"});
}

TEST(FlattenTest, NestedMapsWithADelimiter) {
  ValueMap leaf = {{Value("int32"), int32_t{32}}, {Value("string"), Value("stringy")}};
  ValueMap top = {{Value("A"), ValueMap{{Value("B"), leaf}}}, {Value("n"), Value()}};
  auto xform = configured("Flatten$Value", {{"delimiter", "#"}});
  ConnectRecord out = *xform->apply(valueRecord(nullptr, top));
  EXPECT_EQ(out.valueSchema(), nullptr);
  EXPECT_EQ(out.value().asMap().size(), 3u);
  EXPECT_EQ(*out.value().mapGet("A#B#int32"), Value(int32_t{32}));
  EXPECT_EQ(*out.value().mapGet("A#B#string"), Value("stringy"));
  EXPECT_TRUE(out.value().mapGet("n")->isNull());
}

TEST(FlattenTest, OptionalParentsMakeOptionalFieldsAndDefaultsCarryDown) {
  SchemaPtr inner = SchemaBuilder::struct_()
                        .field("opt_int32", Schema::OPTIONAL_INT32_SCHEMA)
                        .field("req_int32", Schema::INT32_SCHEMA)
                        .build();
  SchemaPtr outer =
      SchemaBuilder::struct_()
          .field("inner",
                 SchemaBuilder::struct_().field("x", Schema::INT32_SCHEMA).optional().build())
          .field("plain", inner)
          .build();
  Struct plain(inner);
  plain.put("req_int32", int32_t{1});
  Struct value(outer);
  value.put("plain", plain);
  auto xform = configured("Flatten$Value", {});
  ConnectRecord out = *xform->apply(valueRecord(outer, value));
  EXPECT_TRUE(out.valueSchema()->field("inner.x")->schema()->isOptional());
  EXPECT_FALSE(out.valueSchema()->field("plain.req_int32")->schema()->isOptional());
  EXPECT_TRUE(out.valueSchema()->field("plain.opt_int32")->schema()->isOptional());
  EXPECT_TRUE(out.value().asStruct().get("inner.x").isNull());
  EXPECT_EQ(out.value().asStruct().getInt32("plain.req_int32"), 1);

  SchemaPtr withDefault = SchemaBuilder::struct_()
                              .field("a", SchemaBuilder::int32().defaultValue(int32_t{7}).build())
                              .build();
  SchemaPtr parent = SchemaBuilder::struct_().field("s", withDefault).build();
  ConnectRecord defaulted = *xform->apply(valueRecord(parent, Struct(parent)));
  EXPECT_EQ(defaulted.valueSchema()->field("s.a")->schema()->defaultValue(), Value(int32_t{7}));
}

TEST(FlattenTest, RefusesMapsWithSchemasAndStructsWithout) {
  SchemaPtr schema =
      SchemaBuilder::struct_()
          .field("m", SchemaBuilder::map(Schema::STRING_SCHEMA, Schema::STRING_SCHEMA).build())
          .build();
  auto xform = configured("Flatten$Value", {});
  EXPECT_EQ(messageOf<DataException>([&] { xform->apply(valueRecord(schema, Struct(schema))); }),
            "Flatten transformation does not support MAP for record with schemas (for field m).");
  SchemaPtr inner = SchemaBuilder::struct_().field("x", Schema::INT32_SCHEMA).build();
  Struct innerValue(inner);
  innerValue.put("x", int32_t{1});
  ValueMap map = {{Value("s"), Value(innerValue)}};
  EXPECT_EQ(messageOf<DataException>([&] { xform->apply(valueRecord(nullptr, map)); }),
            "Flatten transformation does not support class org.apache.kafka.connect.data.Struct "
            "for record without schemas (for field s).");
  EXPECT_EQ(messageOf<DataException>([&] { xform->apply(valueRecord(nullptr, int32_t{1})); }),
            "Only Map objects supported in absence of schema for [flattening], found: "
            "java.lang.Integer");
}

}  // namespace
}  // namespace oxbow::connect
