// The registry converters against an in-process registry: every Connect type and logical type
// through each format and back, the schemas registered as Confluent's converters register them,
// and records Confluent's own serializers would write read as Confluent's converters read them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "oxbow/connect/errors.h"
#include "oxbow/connect/logical.h"
#include "oxbow/connect/registry_converters.h"
#include "oxbow/connect/struct.h"
#include "oxbow/registry/serdes.h"
#include "registry/serde/fake_registry.h"

namespace oxbow::connect {
namespace {

using registry::testing::FakeRegistry;

std::unique_ptr<Converter> make(std::string_view className, const FakeRegistry& fake,
                                ConfigMap extra = {}) {
  auto converter = ConverterRegistry::instance().create(className);
  extra["schema.registry.url"] = fake.url();
  converter->configure(extra, false);
  return converter;
}

std::shared_ptr<registry::SchemaRegistryClient> clientOf(const FakeRegistry& fake) {
  registry::ClientConfig config;
  config.urls = {fake.url()};
  return std::make_shared<registry::SchemaRegistryClient>(config);
}

// A struct of every type: primitives, logical types, optional fields, a nested struct, an array,
// maps with string and int keys.
SchemaPtr everything() {
  SchemaPtr inner =
      SchemaBuilder::struct_().name("com.example.Inner").field("x", Schema::INT32_SCHEMA);
  return SchemaBuilder::struct_()
      .name("com.example.Everything")
      .field("i8", Schema::INT8_SCHEMA)
      .field("i16", Schema::INT16_SCHEMA)
      .field("i32", Schema::INT32_SCHEMA)
      .field("i64", Schema::INT64_SCHEMA)
      .field("f32", Schema::FLOAT32_SCHEMA)
      .field("f64", Schema::FLOAT64_SCHEMA)
      .field("b", Schema::BOOLEAN_SCHEMA)
      .field("s", Schema::STRING_SCHEMA)
      .field("bytes", Schema::BYTES_SCHEMA)
      .field("dec", Decimal::schema(2))
      .field("date", Date::SCHEMA)
      .field("time", Time::SCHEMA)
      .field("ts", Timestamp::SCHEMA)
      .field("opt", Schema::OPTIONAL_STRING_SCHEMA)
      .field("inner", inner)
      .field("list", SchemaBuilder::array(Schema::INT64_SCHEMA).build())
      .field("smap", SchemaBuilder::map(Schema::STRING_SCHEMA, Schema::INT32_SCHEMA).build())
      .field("imap", SchemaBuilder::map(Schema::INT32_SCHEMA, Schema::STRING_SCHEMA).build());
}

Struct everythingValue(const SchemaPtr& schema, bool withOptional) {
  Struct inner(schema->field("inner")->schema());
  inner.put("x", int32_t{7});
  Struct s(schema);
  s.put("i8", int8_t{-8})
      .put("i16", int16_t{1600})
      .put("i32", int32_t{-320000})
      .put("i64", int64_t{6400000000LL})
      .put("f32", 1.5f)
      .put("f64", -2.25)
      .put("b", true)
      .put("s", "héllo")
      .put("bytes", Bytes{std::string("\x00\xff\x80z", 4)})
      .put("dec", DecimalValue::parse("-123.45"))
      .put("date", DateTime{19000LL * 86400000})
      .put("time", DateTime{3723004})
      .put("ts", DateTime{1700000000123LL})
      .put("opt", withOptional ? Value("there") : Value())
      .put("inner", inner)
      .put("list", ValueList{int64_t{1}, int64_t{-2}})
      .put("smap", ValueMap{{Value("a"), Value(int32_t{1})}})
      .put("imap", ValueMap{{Value(int32_t{5}), Value("five")}});
  return s;
}

// The fields of `actual` equal `expected`'s by name (schemas may differ in metadata).
void expectSameValues(const Struct& expected, const Struct& actual) {
  for (const Field& f : expected.schema()->fields()) {
    const Value& e = expected.get(f);
    const Value& a = actual.get(f.name());
    if (e.kind() == Value::Kind::Struct) {
      ASSERT_EQ(a.kind(), Value::Kind::Struct) << f.name();
      expectSameValues(e.asStruct(), a.asStruct());
    } else {
      EXPECT_EQ(e, a) << f.name() << ": " << e.toString() << " vs " << a.toString();
    }
  }
}

class RoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(RoundTrip, EveryTypeComesBack) {
  FakeRegistry fake;
  auto converter = make(GetParam(), fake);
  const SchemaPtr schema = everything();
  for (bool withOptional : {true, false}) {
    const Struct value = everythingValue(schema, withOptional);
    auto bytes = converter->fromConnectData("t", schema, Value(value));
    ASSERT_TRUE(bytes);
    EXPECT_EQ((*bytes)[0], '\0');
    SchemaAndValue back = converter->toConnectData("t", *bytes);
    ASSERT_TRUE(back.schema);
    EXPECT_EQ(back.schema->type(), Type::STRUCT);
    Struct expected = value;
    // Protobuf has no null string: an unset field reads as "", as with Confluent's converter.
    if (GetParam() == ProtobufConverter::CLASS_NAME && !withOptional) expected.put("opt", "");
    expectSameValues(expected, back.value.asStruct());
    // The schema read back writes the same record again (a sink's records re-produced).
    auto again = converter->fromConnectData("t2", back.schema, back.value);
    ASSERT_TRUE(again);
    expectSameValues(expected, converter->toConnectData("t2", *again).value.asStruct());
  }
}

INSTANTIATE_TEST_SUITE_P(Converters, RoundTrip,
                         ::testing::Values(std::string(AvroConverter::CLASS_NAME),
                                           std::string(JsonSchemaConverter::CLASS_NAME),
                                           std::string(ProtobufConverter::CLASS_NAME)));

TEST(AvroConverterTest, PrimitivesAndLogicalTypesAtTheTop) {
  FakeRegistry fake;
  auto converter = make(AvroConverter::CLASS_NAME, fake);
  const std::vector<std::pair<SchemaPtr, Value>> cases = {
      {Schema::INT8_SCHEMA, int8_t{3}},
      {Schema::INT16_SCHEMA, int16_t{-300}},
      {Schema::INT32_SCHEMA, int32_t{1 << 20}},
      {Schema::INT64_SCHEMA, int64_t{-(1LL << 40)}},
      {Schema::FLOAT32_SCHEMA, 0.5f},
      {Schema::FLOAT64_SCHEMA, 1e300},
      {Schema::BOOLEAN_SCHEMA, false},
      {Schema::STRING_SCHEMA, "text"},
      {Schema::BYTES_SCHEMA, Bytes{std::string("\x01\x02", 2)}},
      {Schema::OPTIONAL_STRING_SCHEMA, "maybe"},
      {Decimal::schema(3), DecimalValue::parse("1.234")},
      {Date::SCHEMA, DateTime{86400000}},
      {Time::SCHEMA, DateTime{1000}},
      {Timestamp::SCHEMA, DateTime{-5}},
  };
  for (const auto& [schema, value] : cases) {
    auto bytes = converter->fromConnectData("p", schema, value);
    ASSERT_TRUE(bytes) << schema->toString();
    SchemaAndValue back = converter->toConnectData("p", *bytes);
    EXPECT_EQ(back.value, value) << schema->toString();
    EXPECT_EQ(back.schema->type(), schema->type());
    EXPECT_EQ(back.schema->name(), schema->name());
  }
  EXPECT_FALSE(converter->fromConnectData("p", Schema::OPTIONAL_STRING_SCHEMA, Value()));
  EXPECT_EQ(converter->toConnectData("p", std::nullopt), SchemaAndValue{});
}

TEST(AvroConverterTest, RegistersTheSchemaAvroDataDerives) {
  FakeRegistry fake;
  auto converter = make(AvroConverter::CLASS_NAME, fake);
  SchemaPtr schema = SchemaBuilder::struct_()
                         .field("id", Schema::INT8_SCHEMA)
                         .field("name", Schema::OPTIONAL_STRING_SCHEMA)
                         .field("amount", Decimal::schema(2))
                         .field("when", Timestamp::SCHEMA);
  Struct value(schema);
  value.put("id", int8_t{1}).put("amount", DecimalValue::parse("1.00")).put("when", DateTime{0});
  ASSERT_TRUE(converter->fromConnectData("orders", schema, Value(value)));
  auto client = clientOf(fake);
  const auto latest = client->latest("orders-value");
  EXPECT_EQ(latest.info.schema,
            R"({"type":"record","name":"ConnectDefault","namespace":"io.confluent.connect.avro",)"
            R"("fields":[{"name":"id","type":{"type":"int","connect.type":"int8"}},)"
            R"({"name":"name","type":["null","string"],"default":null},)"
            R"({"name":"amount","type":{"type":"bytes","scale":2,"precision":64,)"
            R"("connect.version":1,"connect.parameters":{"scale":"2"},)"
            R"("connect.name":"org.apache.kafka.connect.data.Decimal","logicalType":"decimal"}},)"
            R"({"name":"when","type":{"type":"long","connect.version":1,)"
            R"("connect.name":"org.apache.kafka.connect.data.Timestamp",)"
            R"("logicalType":"timestamp-millis"}}]})");
}

TEST(AvroConverterTest, ReadsWhatConfluentsSerializerWrites) {
  FakeRegistry fake;
  auto client = clientOf(fake);
  const std::string avro =
      R"({"type":"record","name":"User","namespace":"com.acme","fields":[)"
      R"({"name":"name","type":"string"},{"name":"age","type":["null","int"],"default":null},)"
      R"({"name":"tags","type":{"type":"array","items":"string"}},)"
      R"({"name":"kind","type":{"type":"enum","name":"Kind","symbols":["A","B"]}},)"
      R"({"name":"score","type":"double","default":1.5},)"
      R"({"name":"either","type":["null","string","long"],"default":null}]})";
  registry::Serializer serializer(client, {}, registry::Format::kAvro, avro, false);
  const std::string bytes = serializer.serialize("users", {{"name", "ann"},
                                                           {"age", {{"int", 42}}},
                                                           {"tags", {"x"}},
                                                           {"kind", "B"},
                                                           {"score", 2.0},
                                                           {"either", {{"long", 5}}}});
  auto converter = make(AvroConverter::CLASS_NAME, fake);
  SchemaAndValue read = converter->toConnectData("users", bytes);
  ASSERT_TRUE(read.schema);
  EXPECT_EQ(read.schema->name(), "com.acme.User");
  EXPECT_EQ(read.schema->version(), 1);  // the subject's version, as Confluent's converter gives it
  EXPECT_TRUE(read.schema->field("age")->schema()->isOptional());
  EXPECT_EQ(read.schema->field("kind")->schema()->name(), "com.acme.Kind");
  EXPECT_EQ(read.schema->field("score")->schema()->defaultValue(), Value(1.5));
  EXPECT_EQ(read.schema->field("either")->schema()->name(), "io.confluent.connect.avro.Union");
  EXPECT_EQ(read.value.asStruct().toString(),
            "Struct{name=ann,age=42,tags=[x],kind=B,score=2.0,either=Struct{long=5}}");
  // Written back (a sink's record re-produced), the union is an Avro union again.
  auto again = converter->fromConnectData("users2", read.schema, read.value);
  ASSERT_TRUE(again);
  EXPECT_EQ(converter->toConnectData("users2", *again).value.asStruct().toString(),
            read.value.asStruct().toString());
}

TEST(JsonSchemaConverterTest, ReadsAProducersSchema) {
  FakeRegistry fake;
  auto client = clientOf(fake);
  const std::string schema =
      R"({"type":"object","title":"Person","properties":{"name":{"type":"string"},)"
      R"("age":{"type":"integer"},"nick":{"type":["string","null"]}}})";
  registry::Serializer serializer(client, {}, registry::Format::kJson, schema, false);
  const std::string bytes =
      serializer.serialize("people", {{"name", "bo"}, {"age", 3}, {"nick", nullptr}});
  auto converter = make(JsonSchemaConverter::CLASS_NAME, fake);
  SchemaAndValue read = converter->toConnectData("people", bytes);
  EXPECT_EQ(read.schema->name(), "Person");
  EXPECT_EQ(read.schema->field("age")->schema()->type(), Type::INT64);
  EXPECT_TRUE(read.schema->field("nick")->schema()->isOptional());
  EXPECT_EQ(read.value.asStruct().toString(), "Struct{name=bo,age=3}");
}

TEST(ProtobufConverterTest, ReadsAProducersMessage) {
  FakeRegistry fake;
  auto client = clientOf(fake);
  const std::string proto =
      "syntax = \"proto3\";\npackage shop;\nmessage Order {\n  string id = 1;\n  int64 qty = 2;\n"
      "  repeated string notes = 3;\n  Item item = 4;\n  message Item { double price = 1; }\n}\n";
  registry::Serializer serializer(client, {}, registry::Format::kProtobuf, proto, false);
  const std::string bytes = serializer.serialize(
      "orders", {{"id", "o1"}, {"qty", 2}, {"notes", {"n"}}, {"item", {{"price", 9.5}}}});
  auto converter = make(ProtobufConverter::CLASS_NAME, fake);
  SchemaAndValue read = converter->toConnectData("orders", bytes);
  EXPECT_EQ(read.schema->name(), "Order");
  EXPECT_EQ(*read.schema->field("qty")->schema()->parameter("io.confluent.connect.protobuf.Tag"),
            "2");
  EXPECT_EQ(read.value.asStruct().toString(),
            "Struct{id=o1,qty=2,notes=[n],item=Struct{price=9.5}}");
}

TEST(RegistryConverterTest, ConfigurationAndFailures) {
  auto converter = ConverterRegistry::instance().create("AvroConverter");
  EXPECT_THROW(converter->configure({}, false), ConnectException);
  FakeRegistry fake;
  auto avro = make(AvroConverter::CLASS_NAME, fake);
  EXPECT_THROW(avro->toConnectData("t", std::string_view("\x01garbage")), DataException);
  EXPECT_THROW(avro->fromConnectData("t", nullptr, Value("schemaless")), DataException);
  auto lookupOnly = make(AvroConverter::CLASS_NAME, fake, {{"auto.register.schemas", "false"}});
  EXPECT_THROW(lookupOnly->fromConnectData("new", Schema::STRING_SCHEMA, Value("x")),
               DataException);
  auto record = make(AvroConverter::CLASS_NAME, fake,
                     {{"value.subject.name.strategy",
                       "io.confluent.kafka.serializers.subject.RecordNameStrategy"}});
  SchemaPtr named = SchemaBuilder::struct_().name("a.B").field("f", Schema::INT32_SCHEMA);
  Struct value(named);
  value.put("f", int32_t{1});
  ASSERT_TRUE(record->fromConnectData("t", named, Value(value)));
  auto client = clientOf(fake);
  EXPECT_EQ(client->latest("a.B").version, 1);
}

TEST(RegistryConverterTest, AWorkersKeyConverterWithBasicAuth) {
  FakeRegistry fake;
  auto converter = ConverterRegistry::instance().configured(
      {{"key.converter", "AvroConverter"},
       {"key.converter.schema.registry.url", fake.url()},
       {"key.converter.basic.auth.credentials.source", "USER_INFO"},
       {"key.converter.basic.auth.user.info", "user:secret"}},
      "key.converter", true);
  auto bytes = converter->fromConnectData("k", Schema::STRING_SCHEMA, Value("the key"));
  ASSERT_TRUE(bytes);
  EXPECT_EQ(fake.authorization(), "Basic dXNlcjpzZWNyZXQ=");
  EXPECT_EQ(clientOf(fake)->latest("k-key").info.schema, R"("string")");
  EXPECT_EQ(converter->toConnectData("k", *bytes).value, Value("the key"));
}

}  // namespace
}  // namespace oxbow::connect
