// TimestampConverter between Unix numbers, strings, Date, Time and Timestamp, whole and per
// field, with and without schemas: the values Kafka's TimestampConverterTest expects.
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

// 1970-01-02T00:00:01.234Z, as Kafka's test's DATE_PLUS_TIME.
constexpr int64_t kDatePlusTime = 86401234;
const std::string kFormat = "yyyy MM dd HH mm ss SSS z";
const std::string kDatePlusTimeText = "1970 01 02 00 00 01 234 UTC";

ConnectRecord convertValue(const TransformConfig& config, SchemaPtr schema, Value value) {
  return *configured("TimestampConverter$Value", config)->apply(valueRecord(schema, value));
}

TEST(TimestampConverterTest, WholeValuesWithSchemas) {
  ConnectRecord out =
      convertValue({{"target.type", "Timestamp"}}, Schema::INT64_SCHEMA, int64_t{kDatePlusTime});
  EXPECT_EQ(*out.valueSchema(), *Timestamp::SCHEMA);
  EXPECT_EQ(out.value(), Value(DateTime{kDatePlusTime}));

  out = convertValue({{"target.type", "Date"}}, Timestamp::SCHEMA, DateTime{kDatePlusTime});
  EXPECT_EQ(*out.valueSchema(), *Date::SCHEMA);
  EXPECT_EQ(out.value(), Value(DateTime{86400000}));

  out = convertValue({{"target.type", "Time"}}, Timestamp::SCHEMA, DateTime{kDatePlusTime});
  EXPECT_EQ(*out.valueSchema(), *Time::SCHEMA);
  EXPECT_EQ(out.value(), Value(DateTime{1234}));

  out = convertValue({{"target.type", "unix"}}, Timestamp::SCHEMA, DateTime{kDatePlusTime});
  EXPECT_EQ(*out.valueSchema(), *Schema::INT64_SCHEMA);
  EXPECT_EQ(out.value(), Value(int64_t{kDatePlusTime}));

  out = convertValue({{"target.type", "string"}, {"format", kFormat}}, Timestamp::SCHEMA,
                     DateTime{kDatePlusTime});
  EXPECT_EQ(*out.valueSchema(), *Schema::STRING_SCHEMA);
  EXPECT_EQ(out.value(), Value(kDatePlusTimeText));

  out = convertValue({{"target.type", "Timestamp"}, {"format", kFormat}}, Schema::STRING_SCHEMA,
                     kDatePlusTimeText);
  EXPECT_EQ(out.value(), Value(DateTime{kDatePlusTime}));

  // An optional schema stays optional; a null stays null.
  out = convertValue({{"target.type", "Timestamp"}}, Schema::OPTIONAL_INT64_SCHEMA, Value());
  EXPECT_TRUE(out.valueSchema()->isOptional());
  EXPECT_TRUE(out.value().isNull());
}

TEST(TimestampConverterTest, UnixPrecisions) {
  EXPECT_EQ(convertValue({{"target.type", "Timestamp"}, {"unix.precision", "seconds"}}, nullptr,
                         int64_t{86401})
                .value(),
            Value(DateTime{86401000}));
  EXPECT_EQ(convertValue({{"target.type", "Timestamp"}, {"unix.precision", "microseconds"}},
                         nullptr, int64_t{86401234123})
                .value(),
            Value(DateTime{kDatePlusTime}));
  EXPECT_EQ(convertValue({{"target.type", "Timestamp"}, {"unix.precision", "nanoseconds"}}, nullptr,
                         int64_t{86401234123456})
                .value(),
            Value(DateTime{kDatePlusTime}));
  EXPECT_EQ(convertValue({{"target.type", "unix"}, {"unix.precision", "seconds"}}, nullptr,
                         DateTime{kDatePlusTime})
                .value(),
            Value(int64_t{86401}));
  EXPECT_EQ(convertValue({{"target.type", "unix"}, {"unix.precision", "microseconds"}}, nullptr,
                         DateTime{kDatePlusTime})
                .value(),
            Value(int64_t{86401234000}));
}

TEST(TimestampConverterTest, FieldsOfStructsAndMaps) {
  SchemaPtr schema = SchemaBuilder::struct_()
                         .field("ts", Schema::INT64_SCHEMA)
                         .field("other", Schema::STRING_SCHEMA)
                         .build();
  Struct value(schema);
  value.put("ts", int64_t{kDatePlusTime}).put("other", "test");
  ConnectRecord out = convertValue({{"target.type", "Date"}, {"field", "ts"}}, schema, value);
  EXPECT_EQ(*out.valueSchema()->field("ts")->schema(), *Date::SCHEMA);
  EXPECT_EQ(out.value().asStruct().get("ts"), Value(DateTime{86400000}));
  EXPECT_EQ(out.value().asStruct().getString("other"), "test");

  ValueMap map = {{Value("ts"), int64_t{kDatePlusTime}}, {Value("other"), Value("test")}};
  out =
      convertValue({{"target.type", "string"}, {"format", kFormat}, {"field", "ts"}}, nullptr, map);
  EXPECT_EQ(*out.value().mapGet("ts"), Value(kDatePlusTimeText));
  EXPECT_EQ(*out.value().mapGet("other"), Value("test"));
}

TEST(TimestampConverterTest, DataAndConfigErrors) {
  EXPECT_EQ(
      messageOf<DataException>([] {
        convertValue({{"target.type", "Timestamp"}, {"format", kFormat}}, nullptr, "not a date");
      }),
      "Could not parse timestamp: value (not a date) does not match pattern (" + kFormat + ")");
  EXPECT_EQ(messageOf<DataException>([] {
              convertValue({{"target.type", "Timestamp"}}, nullptr, int32_t{5});
            }),
            "TimestampConverter does not support class java.lang.Integer objects as timestamps");
  EXPECT_EQ(messageOf<DataException>([] {
              convertValue({{"target.type", "Timestamp"}}, Schema::INT64_SCHEMA, "x");
            }),
            "Expected Unix timestamp to be a Long, but found class java.lang.String");

  auto xform = createTransformation("TimestampConverter$Value");
  auto errorOf = [&](const TransformConfig& config) {
    return messageOf<ConfigException>([&] { xform->configure(config); });
  };
  EXPECT_EQ(errorOf({}),
            "Missing required configuration \"target.type\" which has no default value.");
  EXPECT_EQ(errorOf({{"target.type", "invalid"}}),
            "Invalid value invalid for configuration target.type: String must be one of: string, "
            "unix, Date, Time, Timestamp");
  EXPECT_EQ(errorOf({{"target.type", "string"}}),
            "TimestampConverter requires format option to be specified when using string "
            "timestamps");
  EXPECT_EQ(errorOf({{"target.type", "string"}, {"format", "bad-format QQ"}}),
            "TimestampConverter requires a SimpleDateFormat-compatible pattern for string "
            "timestamps: bad-format QQ");
  EXPECT_EQ(errorOf({{"target.type", "unix"}, {"unix.precision", "minutes"}}),
            "Invalid value minutes for configuration unix.precision: String must be one of: "
            "nanoseconds, microseconds, milliseconds, seconds");
}

}  // namespace
}  // namespace oxbow::connect
