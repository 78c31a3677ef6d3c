// StringConverter, ByteArrayConverter, the number converters and the registry by class name.
#include <gtest/gtest.h>

#include "oxbow/connect/converters.h"
#include "oxbow/connect/errors.h"
#include "oxbow/connect/json_converter.h"

namespace oxbow::connect {
namespace {

std::string messageOf(const std::function<void()>& action) {
  try {
    action();
  } catch (const ConnectException& e) {
    return e.what();
  }
  return "no exception";
}

TEST(StringConverter, RoundTripsTextAndNull) {
  StringConverter converter;
  converter.configure({}, false);
  EXPECT_EQ(*converter.fromConnectData("t", Schema::STRING_SCHEMA, "héllo"), "héllo");
  EXPECT_EQ(*converter.fromConnectData("t", Schema::INT32_SCHEMA, 12), "12");  // toString()
  EXPECT_FALSE(converter.fromConnectData("t", Schema::OPTIONAL_STRING_SCHEMA, Value()));
  SchemaAndValue read = converter.toConnectData("t", "héllo");
  EXPECT_EQ(read, (SchemaAndValue{Schema::OPTIONAL_STRING_SCHEMA, "héllo"}));
  EXPECT_EQ(converter.toConnectData("t", std::nullopt),
            (SchemaAndValue{Schema::OPTIONAL_STRING_SCHEMA, Value()}));
}

TEST(StringConverter, Latin1Encoding) {
  StringConverter converter;
  converter.configure({{"converter.encoding", "ISO-8859-1"}}, true);
  EXPECT_EQ(*converter.fromConnectData("t", nullptr, "héllo€"), "h\xe9llo?");
  EXPECT_EQ(converter.toConnectData("t", "h\xe9llo").value.asString(), "héllo");
  EXPECT_EQ(messageOf([] {
              StringConverter().configure({{"converter.encoding", "EBCDIC"}}, false);
            }),
            "Unsupported encoding for StringConverter: EBCDIC");
}

TEST(ByteArrayConverter, PassesBytesThroughAndRefusesOthers) {
  ByteArrayConverter converter;
  EXPECT_EQ(*converter.fromConnectData("t", Schema::BYTES_SCHEMA, Bytes{std::string("\0\1", 2)}),
            std::string("\0\1", 2));
  EXPECT_EQ(converter.toConnectData("t", std::string_view("ab")),
            (SchemaAndValue{Schema::OPTIONAL_BYTES_SCHEMA, Bytes{"ab"}}));
  EXPECT_FALSE(converter.fromConnectData("t", nullptr, Value()));
  EXPECT_EQ(messageOf([&] { converter.fromConnectData("t", Schema::STRING_SCHEMA, Bytes{}); }),
            "Invalid schema type for ByteArrayConverter: STRING");
  EXPECT_EQ(messageOf([&] { converter.fromConnectData("t", nullptr, "text"); }),
            "ByteArrayConverter is not compatible with objects of type class java.lang.String");
}

TEST(NumberConverters, WriteKafkasBigEndianSerializations) {
  IntegerConverter integers;
  EXPECT_EQ(*integers.fromConnectData("t", nullptr, 0x01020304), std::string("\1\2\3\4", 4));
  EXPECT_EQ(integers.toConnectData("t", std::string("\xff\xff\xff\xfe", 4)),
            (SchemaAndValue{Schema::OPTIONAL_INT32_SCHEMA, -2}));
  LongConverter longs;
  auto bytes = *longs.fromConnectData("t", nullptr, int64_t{-5});
  EXPECT_EQ(bytes.size(), 8u);
  EXPECT_EQ(longs.toConnectData("t", bytes).value.asInt64(), -5);
  DoubleConverter doubles;
  EXPECT_EQ(
      doubles.toConnectData("t", *doubles.fromConnectData("t", nullptr, 2.5)).value.asFloat64(),
      2.5);
  FloatConverter floats;
  EXPECT_EQ(*floats.fromConnectData("t", nullptr, 1.0f), std::string("\x3f\x80\0\0", 4));
  ShortConverter shorts;
  EXPECT_EQ(shorts.toConnectData("t", std::string("\x01\x00", 2)).value.asInt16(), 256);
  BooleanConverter booleans;
  EXPECT_EQ(*booleans.fromConnectData("t", Schema::BOOLEAN_SCHEMA, true), "\x01");
  EXPECT_FALSE(booleans.toConnectData("t", std::string("\0", 1)).value.asBoolean());
  EXPECT_FALSE(integers.fromConnectData("t", nullptr, Value()));
  EXPECT_TRUE(integers.toConnectData("t", std::nullopt).value.isNull());
}

TEST(NumberConverters, ErrorsAsConnects) {
  IntegerConverter integers;
  EXPECT_EQ(messageOf([&] { integers.toConnectData("t", std::string_view("abc")); }),
            "Failed to deserialize integer: Size of data received by IntegerDeserializer is not 4");
  EXPECT_EQ(messageOf([&] { integers.fromConnectData("t", nullptr, "x"); }),
            "Failed to serialize to integer (was class java.lang.String): ");
  BooleanConverter booleans;
  EXPECT_EQ(messageOf([&] { booleans.fromConnectData("t", Schema::INT32_SCHEMA, true); }),
            "Invalid schema type for BooleanConverter: INT32");
  EXPECT_EQ(messageOf([&] { booleans.fromConnectData("t", nullptr, 1); }),
            "BooleanConverter is not compatible with objects of type class java.lang.Integer");
  EXPECT_THROW(booleans.toConnectData("t", std::string_view("\x02")), DataException);
}

TEST(ConverterRegistry, MakesConvertersByClassNameAndAlias) {
  auto& registry = ConverterRegistry::instance();
  for (const std::string& name : registry.classNames()) EXPECT_TRUE(registry.create(name)) << name;
  EXPECT_NE(dynamic_cast<JsonConverter*>(registry.create("JsonConverter").get()), nullptr);
  EXPECT_NE(dynamic_cast<JsonConverter*>(registry.create("Json").get()), nullptr);
  EXPECT_NE(dynamic_cast<StringConverter*>(
                registry.create("org.apache.kafka.connect.storage.StringConverter").get()),
            nullptr);
  EXPECT_EQ(messageOf([&] { registry.create("com.example.Nope"); }),
            "Class com.example.Nope could not be found.");
}

TEST(ConverterRegistry, ConfiguresFromAWorkersProperties) {
  ConfigMap worker{{"key.converter", "org.apache.kafka.connect.storage.StringConverter"},
                   {"value.converter", "org.apache.kafka.connect.json.JsonConverter"},
                   {"value.converter.schemas.enable", "false"}};
  auto& registry = ConverterRegistry::instance();
  auto value = registry.configured(worker, "value.converter", false);
  // Schemas disabled: the bare payload.
  EXPECT_EQ(*value->fromConnectData("t", nullptr, 12), "12");
  auto key = registry.configured(worker, "key.converter", true);
  EXPECT_EQ(*key->fromConnectData("t", nullptr, "k"), "k");
  EXPECT_EQ(messageOf([&] { registry.configured(worker, "header.converter", false); }),
            "Missing required configuration \"header.converter\" which has no default value.");
  worker["value.converter.schemas.enable"] = "maybe";
  EXPECT_EQ(messageOf([&] { registry.configured(worker, "value.converter", false); }),
            "Invalid value maybe for configuration schemas.enable: Expected value to be either "
            "true or false");
}

}  // namespace
}  // namespace oxbow::connect
