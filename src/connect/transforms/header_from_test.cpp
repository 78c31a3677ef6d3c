// HeaderFrom with and without schemas, copy and move, on keys and values: the records Kafka's
// HeaderFromTest expects, and its config errors.
#include <gtest/gtest.h>

#include "connect/transforms/transforms_test_util.h"
#include "oxbow/connect/errors.h"
#include "oxbow/connect/struct.h"

namespace oxbow::connect {
namespace {

using testing::configured;
using testing::messageOf;

SchemaPtr twoFields() {
  return SchemaBuilder::struct_()
      .field("field1", Schema::STRING_SCHEMA)
      .field("field2", Schema::STRING_SCHEMA)
      .build();
}

Headers existingHeader(const std::string& name) {
  Headers headers;
  headers.add(name, Schema::STRING_SCHEMA, "existing-value");
  return headers;
}

TEST(HeaderFromTest, CopiesAndMovesStructFields) {
  SchemaPtr schema = twoFields();
  Struct value(schema);
  value.put("field1", "field1-value").put("field2", "field2-value");
  ConnectRecord record("topic", 0, Schema::STRING_SCHEMA, "key", schema, value, 0,
                       existingHeader("inserted1"));

  auto copy = configured("org.apache.kafka.connect.transforms.HeaderFrom$Value",
                         {{"fields", "field1"}, {"headers", "inserted1"}, {"operation", "copy"}});
  ConnectRecord copied = *copy->apply(record);
  Headers expected = existingHeader("inserted1");
  expected.add("inserted1", Schema::STRING_SCHEMA, "field1-value");
  EXPECT_EQ(copied.headers(), expected);
  EXPECT_EQ(copied.value(), Value(value));
  EXPECT_EQ(copied.key(), Value("key"));

  auto move = configured("HeaderFrom$Value",
                         {{"fields", "field1"}, {"headers", "inserted1"}, {"operation", "move"}});
  ConnectRecord moved = *move->apply(record);
  EXPECT_EQ(moved.headers(), expected);
  SchemaPtr remaining = SchemaBuilder::struct_().field("field2", Schema::STRING_SCHEMA).build();
  Struct expectedValue(remaining);
  expectedValue.put("field2", "field2-value");
  EXPECT_EQ(*moved.valueSchema(), *remaining);
  EXPECT_EQ(moved.value(), Value(expectedValue));
}

TEST(HeaderFromTest, SchemalessKeysGiveHeadersWithoutSchemas) {
  ValueMap key = {{Value("field1"), Value("field1-value")},
                  {Value("field2"), Value("field2-value")}};
  ConnectRecord record("topic", 0, nullptr, key, nullptr, Value("value"), 0,
                       existingHeader("header1"));
  auto move = configured("HeaderFrom$Key",
                         {{"fields", "field1"}, {"headers", "inserted1"}, {"operation", "move"}});
  ConnectRecord moved = *move->apply(record);
  Headers expected = existingHeader("header1");
  expected.add("inserted1", nullptr, "field1-value");
  EXPECT_EQ(moved.headers(), expected);
  EXPECT_EQ(moved.key(), Value(ValueMap{{Value("field2"), Value("field2-value")}}));
  EXPECT_EQ(moved.value(), Value("value"));
}

TEST(HeaderFromTest, ConfigErrors) {
  auto xform = createTransformation("HeaderFrom$Value");
  EXPECT_EQ(messageOf<ConfigException>([&] {
              xform->configure({{"fields", "a,b"}, {"headers", "x"}, {"operation", "copy"}});
            }),
            "'fields' config must have the same number of elements as 'headers' config.");
  EXPECT_EQ(messageOf<ConfigException>([&] {
              xform->configure({{"fields", "a"}, {"headers", "x"}, {"operation", "swap"}});
            }),
            "Invalid value swap for configuration operation: String must be one of: move, copy");
  EXPECT_EQ(messageOf<ConfigException>([&] {
              xform->configure({{"fields", "a"}, {"headers", "x"}});
            }),
            "Missing required configuration \"operation\" which has no default value.");
}

}  // namespace
}  // namespace oxbow::connect
