// InsertField, HoistField, ExtractField and ValueToKey, with and without schemas: the outputs
// and messages Kafka's own tests of these transforms expect.
#include <gtest/gtest.h>

#include "connect/transforms/transforms_test_util.h"
#include "oxbow/connect/errors.h"
#include "oxbow/connect/logical.h"
#include "oxbow/connect/struct.h"
#include "oxbow/connect/transformation.h"

namespace oxbow::connect {
namespace {

using testing::configured;
using testing::messageOf;

ValueMap singletonMap(std::string key, Value value) {
  ValueMap map;
  map.emplace_back(Value(std::move(key)), std::move(value));
  return map;
}

const TransformConfig kAllInsertions = {{"topic.field", "topic_field!"},
                                        {"partition.field", "partition_field"},
                                        {"timestamp.field", "timestamp_field?"},
                                        {"static.field", "instance_id"},
                                        {"static.value", "my-instance-id"}};

TEST(InsertFieldTest, CopiesTheSchemaAndInsertsConfiguredFields) {
  auto xform = configured("org.apache.kafka.connect.transforms.InsertField$Value", kAllInsertions);
  SchemaPtr schema = SchemaBuilder::struct_()
                         .name("name")
                         .version(1)
                         .doc("doc")
                         .field("magic", Schema::OPTIONAL_INT64_SCHEMA)
                         .build();
  Struct value(schema);
  value.put("magic", int64_t{42});
  ConnectRecord record("test", 0, nullptr, Value(), schema, value, 789);
  ConnectRecord out = *xform->apply(record);
  const SchemaPtr& outSchema = out.valueSchema();
  EXPECT_EQ(outSchema->name(), std::optional<std::string>("name"));
  EXPECT_EQ(outSchema->version(), std::optional<int32_t>(1));
  EXPECT_EQ(outSchema->doc(), std::optional<std::string>("doc"));
  EXPECT_EQ(*outSchema->field("magic")->schema(), *Schema::OPTIONAL_INT64_SCHEMA);
  EXPECT_EQ(*outSchema->field("topic_field")->schema(), *Schema::STRING_SCHEMA);
  EXPECT_EQ(*outSchema->field("partition_field")->schema(), *Schema::OPTIONAL_INT32_SCHEMA);
  EXPECT_EQ(*outSchema->field("timestamp_field")->schema(),
            *Timestamp::builder().optional().build());
  EXPECT_EQ(*outSchema->field("instance_id")->schema(), *Schema::OPTIONAL_STRING_SCHEMA);
  const Struct& outValue = out.value().asStruct();
  EXPECT_EQ(outValue.getInt64("magic"), 42);
  EXPECT_EQ(outValue.getString("topic_field"), "test");
  EXPECT_EQ(outValue.getInt32("partition_field"), 0);
  EXPECT_EQ(outValue.get("timestamp_field"), Value(DateTime{789}));
  EXPECT_EQ(outValue.getString("instance_id"), "my-instance-id");

  // The same input schema yields the same output schema.
  ConnectRecord second =
      *xform->apply(ConnectRecord("test", 1, nullptr, Value(), schema, Struct(schema)));
  EXPECT_EQ(second.valueSchema().get(), outSchema.get());

  // An equal schema built anew (as a converter builds one per record) hits the cache too.
  SchemaPtr rebuilt = SchemaBuilder::struct_()
                          .name("name")
                          .version(1)
                          .doc("doc")
                          .field("magic", Schema::OPTIONAL_INT64_SCHEMA)
                          .build();
  ConnectRecord third =
      *xform->apply(ConnectRecord("test", 1, nullptr, Value(), rebuilt, Struct(rebuilt)));
  EXPECT_EQ(third.valueSchema().get(), outSchema.get());
}

TEST(InsertFieldTest, SchemalessInsertsIntoTheMap) {
  auto xform = configured("InsertField$Value", kAllInsertions);
  ConnectRecord record("test", 0, nullptr, Value(), nullptr, singletonMap("magic", int64_t{42}),
                       123);
  ConnectRecord out = *xform->apply(record);
  EXPECT_EQ(out.valueSchema(), nullptr);
  EXPECT_EQ(*out.value().mapGet("magic"), Value(int64_t{42}));
  EXPECT_EQ(*out.value().mapGet("topic_field"), Value("test"));
  EXPECT_EQ(*out.value().mapGet("partition_field"), Value(int32_t{0}));
  EXPECT_EQ(*out.value().mapGet("timestamp_field"), Value(int64_t{123}));
  EXPECT_EQ(*out.value().mapGet("instance_id"), Value("my-instance-id"));
}

TEST(InsertFieldTest, TombstonesPassUnchangedAndKeysAreInsertedInto) {
  auto value = configured("InsertField$Value", kAllInsertions);
  ConnectRecord tombstone("test", 0, nullptr, Value(), nullptr, Value());
  EXPECT_EQ(*value->apply(tombstone), tombstone);
  SchemaPtr schema = SchemaBuilder::struct_().field("magic", Schema::OPTIONAL_INT64_SCHEMA);
  ConnectRecord schemaTombstone("test", 0, nullptr, Value(), schema, Value());
  EXPECT_EQ(*value->apply(schemaTombstone), schemaTombstone);

  auto key = configured("InsertField$Key", kAllInsertions);
  ConnectRecord out = *key->apply(
      ConnectRecord("test", 0, nullptr, singletonMap("magic", int64_t{42}), nullptr, Value()));
  EXPECT_EQ(*out.key().mapGet("topic_field"), Value("test"));
  EXPECT_EQ(out.key().mapGet("timestamp_field"), nullptr);  // the record has no timestamp
  EXPECT_TRUE(out.value().isNull());
}

TEST(InsertFieldTest, RequiresAStructOrAMap) {
  auto xform = configured("InsertField$Value", {{"topic.field", "topic_field"}});
  ConnectRecord record("", 0, nullptr, Value(), Schema::INT32_SCHEMA, int32_t{42});
  EXPECT_EQ(messageOf<DataException>([&] { xform->apply(record); }),
            "Only Struct objects supported for [field insertion], found: java.lang.Integer");
  ConnectRecord schemaless("", 0, nullptr, Value(), nullptr, int32_t{42});
  EXPECT_EQ(messageOf<DataException>([&] { xform->apply(schemaless); }),
            "Only Map objects supported in absence of schema for [field insertion], found: "
            "java.lang.Integer");
}

TEST(InsertFieldTest, ConfigErrors) {
  auto xform = createTransformation("InsertField$Value");
  EXPECT_EQ(messageOf<ConfigException>([&] { xform->configure({}); }),
            "No field insertion configured");
  EXPECT_EQ(messageOf<ConfigException>([&] {
              xform->configure({{"static.field", "s"}});
            }),
            "Invalid value null for configuration static.value: No value specified for static "
            "field: s");
  EXPECT_EQ(messageOf<ConfigException>([&] {
              xform->configure({{"topic.field", "t"}, {"replace.null.with.default", "maybe"}});
            }),
            "Invalid value maybe for configuration replace.null.with.default: Expected value to "
            "be either true or false");
}

TEST(InsertFieldTest, ReplaceNullWithDefaultChoosesTheDefaultOrNull) {
  SchemaPtr schema =
      SchemaBuilder::struct_()
          .field("with_default", SchemaBuilder::string().optional().defaultValue(Value("default")))
          .build();
  Struct value(schema);
  value.put("with_default", Value());
  ConnectRecord record("t", 0, nullptr, Value(), schema, value);
  auto replacing = configured("InsertField$Value", {{"topic.field", "topic"}});
  EXPECT_EQ(replacing->apply(record)->value().asStruct().getWithoutDefault("with_default"),
            Value("default"));
  auto keeping = configured("InsertField$Value",
                            {{"topic.field", "topic"}, {"replace.null.with.default", "false"}});
  EXPECT_TRUE(
      keeping->apply(record)->value().asStruct().getWithoutDefault("with_default").isNull());
}

TEST(HoistFieldTest, WrapsInAMapOrAStruct) {
  auto xform = configured("HoistField$Key", {{"field", "magic"}});
  ConnectRecord schemaless("test", 0, nullptr, int32_t{42}, nullptr, Value());
  ConnectRecord out = *xform->apply(schemaless);
  EXPECT_EQ(out.keySchema(), nullptr);
  EXPECT_EQ(out.key(), Value(singletonMap("magic", int32_t{42})));

  ConnectRecord withSchema("test", 0, Schema::INT32_SCHEMA, int32_t{42}, nullptr, Value());
  out = *xform->apply(withSchema);
  EXPECT_EQ(out.keySchema()->type(), Type::STRUCT);
  EXPECT_EQ(*out.keySchema()->field("magic")->schema(), *Schema::INT32_SCHEMA);
  EXPECT_EQ(out.key().asStruct().get("magic"), Value(int32_t{42}));

  EXPECT_EQ(
      messageOf<ConfigException>([] { createTransformation("HoistField$Value")->configure({}); }),
      "Missing required configuration \"field\" which has no default value.");
}

TEST(ExtractFieldTest, ReadsAFieldOfAMapOrAStruct) {
  auto xform = configured("ExtractField$Key", {{"field", "magic"}});
  ConnectRecord schemaless("test", 0, nullptr, singletonMap("magic", int32_t{42}), nullptr,
                           Value());
  ConnectRecord out = *xform->apply(schemaless);
  EXPECT_EQ(out.keySchema(), nullptr);
  EXPECT_EQ(out.key(), Value(int32_t{42}));
  EXPECT_TRUE(
      xform->apply(ConnectRecord("test", 0, nullptr, Value(), nullptr, Value()))->key().isNull());
  // A missing field of a map is null.
  auto missing = configured("ExtractField$Key", {{"field", "nonexistent"}});
  EXPECT_TRUE(missing->apply(schemaless)->key().isNull());

  SchemaPtr schema = SchemaBuilder::struct_().field("magic", Schema::INT32_SCHEMA);
  Struct key(schema);
  key.put("magic", int32_t{42});
  out = *xform->apply(ConnectRecord("test", 0, schema, key, nullptr, Value()));
  EXPECT_EQ(*out.keySchema(), *Schema::INT32_SCHEMA);
  EXPECT_EQ(out.key(), Value(int32_t{42}));
  out = *xform->apply(ConnectRecord("test", 0, schema, Value(), nullptr, Value()));
  EXPECT_EQ(*out.keySchema(), *Schema::INT32_SCHEMA);
  EXPECT_TRUE(out.key().isNull());

  EXPECT_EQ(messageOf<std::invalid_argument>(
                [&] { missing->apply(ConnectRecord("test", 0, schema, key, nullptr, Value())); }),
            "Unknown field: nonexistent");
}

TEST(ValueToKeyTest, CopiesFieldsFromTheValueToTheKey) {
  auto xform = configured("org.apache.kafka.connect.transforms.ValueToKey", {{"fields", "a,b"}});
  ValueMap value = {{Value("a"), int32_t{1}}, {Value("b"), int32_t{2}}, {Value("c"), int32_t{3}}};
  ConnectRecord out = *xform->apply(ConnectRecord("", 0, nullptr, Value(), nullptr, value));
  EXPECT_EQ(out.keySchema(), nullptr);
  EXPECT_EQ(out.key(), Value(ValueMap{{Value("a"), int32_t{1}}, {Value("b"), int32_t{2}}}));

  SchemaPtr valueSchema = SchemaBuilder::struct_()
                              .field("a", Schema::INT32_SCHEMA)
                              .field("b", Schema::INT32_SCHEMA)
                              .field("c", Schema::INT32_SCHEMA);
  Struct structValue(valueSchema);
  structValue.put("a", int32_t{1}).put("b", int32_t{2}).put("c", int32_t{3});
  out = *xform->apply(ConnectRecord("", 0, nullptr, Value(), valueSchema, structValue));
  SchemaPtr expectedKeySchema =
      SchemaBuilder::struct_().field("a", Schema::INT32_SCHEMA).field("b", Schema::INT32_SCHEMA);
  Struct expectedKey(expectedKeySchema);
  expectedKey.put("a", int32_t{1}).put("b", int32_t{2});
  EXPECT_EQ(*out.keySchema(), *expectedKeySchema);
  EXPECT_EQ(out.key(), Value(expectedKey));

  auto notExist = configured("ValueToKey", {{"fields", "not_exist"}});
  EXPECT_EQ(messageOf<DataException>([&] {
              notExist->apply(ConnectRecord("", 0, nullptr, Value(), valueSchema, structValue));
            }),
            "Field does not exist: not_exist");
  EXPECT_EQ(messageOf<ConfigException>([] {
              createTransformation("ValueToKey")->configure({{"fields", ""}});
            }),
            "Invalid value [] for configuration fields: Empty list");
}

}  // namespace
}  // namespace oxbow::connect
