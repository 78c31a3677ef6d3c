// ReplaceField, MaskField, SetSchemaMetadata and TimestampRouter, with and without schemas: the
// outputs and messages Kafka's own tests of these transforms expect.
#include <gtest/gtest.h>

#include "connect/transforms/transforms_test_util.h"
#include "oxbow/connect/errors.h"
#include "oxbow/connect/struct.h"
#include "oxbow/connect/transformation.h"

namespace oxbow::connect {
namespace {

using testing::configured;
using testing::messageOf;
using testing::valueRecord;

SchemaPtr fourFieldSchema() {
  return SchemaBuilder::struct_()
      .field("dont", Schema::STRING_SCHEMA)
      .field("abc", Schema::INT32_SCHEMA)
      .field("foo", Schema::BOOLEAN_SCHEMA)
      .field("etc", Schema::STRING_SCHEMA)
      .build();
}

TEST(ReplaceFieldTest, SchemalessExcludesAndRenames) {
  auto xform =
      configured("ReplaceField$Value", {{"exclude", "dont"}, {"renames", "abc:xyz,foo:bar"}});
  ValueMap value = {{Value("dont"), Value("whatever")},
                    {Value("abc"), int32_t{42}},
                    {Value("foo"), true},
                    {Value("etc"), Value("etc")}};
  Value out = xform->apply(valueRecord(nullptr, value))->value();
  EXPECT_EQ(out.asMap().size(), 3u);
  EXPECT_EQ(*out.mapGet("xyz"), Value(int32_t{42}));
  EXPECT_EQ(*out.mapGet("bar"), Value(true));
  EXPECT_EQ(*out.mapGet("etc"), Value("etc"));
}

TEST(ReplaceFieldTest, WithSchemaIncludesAndRenames) {
  auto xform = configured("org.apache.kafka.connect.transforms.ReplaceField$Value",
                          {{"include", "abc,foo"}, {"renames", "abc:xyz,foo:bar"}});
  SchemaPtr schema = fourFieldSchema();
  Struct value(schema);
  value.put("dont", "whatever").put("abc", int32_t{42}).put("foo", true).put("etc", "etc");
  ConnectRecord out = *xform->apply(valueRecord(schema, value));
  const Struct& updated = out.value().asStruct();
  EXPECT_EQ(updated.schema()->fields().size(), 2u);
  EXPECT_EQ(updated.getInt32("xyz"), 42);
  EXPECT_EQ(updated.getBoolean("bar"), true);

  // Tombstones pass unchanged, with their schema.
  ConnectRecord tombstone = valueRecord(schema, Value());
  EXPECT_EQ(*xform->apply(tombstone), tombstone);
  EXPECT_EQ(*xform->apply(valueRecord(nullptr, Value())), valueRecord(nullptr, Value()));
}

TEST(ReplaceFieldTest, RefusesBadRenames) {
  auto xform = createTransformation("ReplaceField$Key");
  EXPECT_EQ(messageOf<ConfigException>([&] {
              xform->configure({{"renames", "a:b,c"}});
            }),
            "Invalid value [a:b, c] for configuration renames: Invalid rename mapping: c");
  EXPECT_EQ(messageOf<ConfigException>([&] {
              xform->configure({{"renames", "a:b:c"}});
            }),
            "Invalid value [a:b:c] for configuration renames: Invalid rename mapping: a:b:c");
}

TEST(MaskFieldTest, MasksWithEmptyValuesOrAReplacement) {
  SchemaPtr schema = SchemaBuilder::struct_()
                         .field("magic", Schema::INT32_SCHEMA)
                         .field("name", Schema::STRING_SCHEMA)
                         .field("ok", Schema::BOOLEAN_SCHEMA)
                         .field("kept", Schema::STRING_SCHEMA)
                         .build();
  Struct value(schema);
  value.put("magic", int32_t{42}).put("name", "secret").put("ok", true).put("kept", "x");
  auto empty = configured("MaskField$Value", {{"fields", "magic,name,ok"}});
  ConnectRecord maskedRecord = *empty->apply(valueRecord(schema, value));
  const Struct& masked = maskedRecord.value().asStruct();
  EXPECT_EQ(masked.getInt32("magic"), 0);
  EXPECT_EQ(masked.getString("name"), "");
  EXPECT_EQ(masked.getBoolean("ok"), false);
  EXPECT_EQ(masked.getString("kept"), "x");

  auto replacing =
      configured("MaskField$Value", {{"fields", "magic,name"}, {"replacement", "123"}});
  ConnectRecord replacedRecord = *replacing->apply(valueRecord(schema, value));
  const Struct& replaced = replacedRecord.value().asStruct();
  EXPECT_EQ(replaced.getInt32("magic"), 123);
  EXPECT_EQ(replaced.getString("name"), "123");

  ValueMap map = {{Value("magic"), int32_t{42}}, {Value("list"), ValueList{Value(1)}}};
  Value schemaless = empty->apply(valueRecord(nullptr, map))->value();
  auto listMask = configured("MaskField$Value", {{"fields", "list"}});
  EXPECT_EQ(*listMask->apply(valueRecord(nullptr, map))->value().mapGet("list"),
            Value(ValueList{}));
  EXPECT_EQ(*schemaless.mapGet("magic"), Value(int32_t{0}));

  auto badNumber = configured("MaskField$Value", {{"fields", "magic"}, {"replacement", "abc"}});
  EXPECT_EQ(messageOf<DataException>([&] { badNumber->apply(valueRecord(schema, value)); }),
            "Unable to convert abc (class java.lang.String) to number");
  auto boolReplacement = configured("MaskField$Value", {{"fields", "ok"}, {"replacement", "x"}});
  EXPECT_EQ(messageOf<DataException>([&] { boolReplacement->apply(valueRecord(schema, value)); }),
            "Cannot mask value of type class java.lang.Boolean with custom replacement.");
  EXPECT_EQ(
      messageOf<ConfigException>([] {
        createTransformation("MaskField$Value")->configure({{"fields", "a"}, {"replacement", ""}});
      }),
      "Invalid value  for configuration replacement: String must be non-empty");
}

TEST(SetSchemaMetadataTest, SetsTheNameAndVersionAndRestatesStructs) {
  auto xform =
      configured("SetSchemaMetadata$Value", {{"schema.name", "foo"}, {"schema.version", "42"}});
  SchemaPtr schema = SchemaBuilder::struct_()
                         .name("my.orig.SchemaDefn")
                         .field("stringField", Schema::STRING_SCHEMA)
                         .field("intField", Schema::INT32_SCHEMA)
                         .build();
  Struct value(schema);
  value.put("stringField", "value").put("intField", int32_t{1});
  ConnectRecord out = *xform->apply(valueRecord(schema, value));
  EXPECT_EQ(out.valueSchema()->name(), std::optional<std::string>("foo"));
  EXPECT_EQ(out.valueSchema()->version(), std::optional<int32_t>(42));
  const Struct& restated = out.value().asStruct();
  EXPECT_EQ(restated.schema().get(), out.valueSchema().get());
  EXPECT_EQ(restated.getString("stringField"), "value");
  EXPECT_EQ(restated.getInt32("intField"), 1);

  // A schemaless value fails; a schemaless tombstone passes.
  EXPECT_EQ(messageOf<DataException>([&] { xform->apply(valueRecord(nullptr, int32_t{1})); }),
            "Schema required for [updating schema metadata]");
  EXPECT_EQ(*xform->apply(valueRecord(nullptr, Value())), valueRecord(nullptr, Value()));

  auto nameOnly = configured("SetSchemaMetadata$Key", {{"schema.name", "foo"}});
  ConnectRecord keyed("t", 0, Schema::INT32_SCHEMA, int32_t{5}, nullptr, Value());
  ConnectRecord keyOut = *nameOnly->apply(keyed);
  EXPECT_EQ(keyOut.keySchema()->name(), std::optional<std::string>("foo"));
  EXPECT_EQ(keyOut.keySchema()->type(), Type::INT32);
  EXPECT_EQ(keyOut.key(), Value(int32_t{5}));

  EXPECT_EQ(messageOf<ConfigException>(
                [] { createTransformation("SetSchemaMetadata$Value")->configure({}); }),
            "Neither schema name nor version configured");
}

TEST(TimestampRouterTest, FormatsTheTopicWithTheTimestamp) {
  auto xform = configured("org.apache.kafka.connect.transforms.TimestampRouter", {});
  ConnectRecord record("test", 0, nullptr, Value(), nullptr, Value(), 1483425001864LL);
  EXPECT_EQ(xform->apply(record)->topic(), "test-20170103");
  auto custom = configured("TimestampRouter", {{"topic.format", "${timestamp}.${topic}.${topic}"},
                                               {"timestamp.format", "yy-MM-dd'T'HH:mm:ss.SSS"}});
  EXPECT_EQ(custom->apply(record)->topic(), "17-01-03T06:30:01.864.test.test");
  EXPECT_EQ(messageOf<DataException>([&] {
              xform->apply(ConnectRecord("test", 0, nullptr, Value(), nullptr, Value()));
            }).rfind("Timestamp missing on record: ", 0),
            0u);
  EXPECT_EQ(
      messageOf<ConfigException>([] {
        createTransformation("TimestampRouter")->configure({{"timestamp.format", "yyyyQ"}});
      }),
      "Invalid value yyyyQ for configuration timestamp.format: Illegal pattern character 'Q'");
}

}  // namespace
}  // namespace oxbow::connect
