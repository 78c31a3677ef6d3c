#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <vector>

#include "oxbow/registry/client.h"
#include "oxbow/registry/serdes.h"
#include "oxbow/streams/registry_serde.h"
#include "registry/serde/fake_registry.h"

namespace oxbow::registry {
namespace {

using Json = nlohmann::json;

using testing::FakeRegistry;

const std::string kOrder = R"({"type":"record","name":"Order","namespace":"shop","fields":[
  {"name":"id","type":"long"},{"name":"note","type":["null","string"],"default":null}]})";

SerdeConfig config_for(const FakeRegistry& registry) {
  return SerdeConfig::from_properties({{"schema.registry.url", registry.url()}});
}

TEST(SerdeWire, HeaderIsMagicByteThenBigEndianId) {
  EXPECT_EQ(wire::header(0x01020304), std::string("\x00\x01\x02\x03\x04", 5));
  const auto framed = wire::parse(std::string("\x00\x00\x00\x01\x00xyz", 8));
  EXPECT_EQ(framed.schema_id, 256);
  EXPECT_EQ(framed.payload, "xyz");
  try {
    wire::parse("\x01\x00\x00\x00\x01");
    FAIL();
  } catch (const SerdeError& e) {
    EXPECT_STREQ(e.what(), "Unknown magic byte!");
  }
  EXPECT_THROW(wire::parse(std::string("\x00\x00", 2)), SerdeError);
  EXPECT_THROW(wire::parse(""), SerdeError);
}

TEST(SerdeStrategies, SubjectsAsConfluentNamesThem) {
  EXPECT_EQ(subject_name(SubjectNameStrategy::kTopicName, "orders", true, ""), "orders-key");
  EXPECT_EQ(subject_name(SubjectNameStrategy::kTopicName, "orders", false, "x.Y"), "orders-value");
  EXPECT_EQ(subject_name(SubjectNameStrategy::kRecordName, "orders", false, "shop.Order"),
            "shop.Order");
  EXPECT_EQ(subject_name(SubjectNameStrategy::kTopicRecordName, "orders", true, "shop.Order"),
            "orders-shop.Order");
  try {
    subject_name(SubjectNameStrategy::kRecordName, "orders", false, "");
    FAIL();
  } catch (const SerdeError& e) {
    EXPECT_STREQ(e.what(),
                 "In configuration value.subject.name.strategy = "
                 "io.confluent.kafka.serializers.subject.RecordNameStrategy, the message value "
                 "must only be a record schema");
  }
  EXPECT_EQ(
      parse_subject_name_strategy("io.confluent.kafka.serializers.subject.TopicRecordNameStrategy"),
      SubjectNameStrategy::kTopicRecordName);
  EXPECT_EQ(parse_subject_name_strategy("RecordNameStrategy"), SubjectNameStrategy::kRecordName);
  EXPECT_FALSE(parse_subject_name_strategy("Nope"));

  const auto config =
      SerdeConfig::from_properties({{"schema.registry.url", "http://a:1, http://b:2"},
                                    {"auto.register.schemas", "false"},
                                    {"value.subject.name.strategy", "RecordNameStrategy"},
                                    {"basic.auth.user.info", "u:p"}});
  EXPECT_EQ(config.client.urls, (std::vector<std::string>{"http://a:1", "http://b:2"}));
  EXPECT_FALSE(config.auto_register_schemas);
  EXPECT_EQ(config.value_subject_name_strategy, SubjectNameStrategy::kRecordName);
  EXPECT_EQ(config.key_subject_name_strategy, SubjectNameStrategy::kTopicName);
  EXPECT_EQ(config.client.basic_auth_user_info, "u:p");
  EXPECT_THROW(SerdeConfig::from_properties({{"use.latest.version", "yes"}}), SerdeError);
}

TEST(SerdeClient, RegistersLooksUpAndCaches) {
  FakeRegistry registry;
  ClientConfig config;
  config.urls = {registry.url()};
  config.basic_auth_user_info = "user:secret";
  SchemaRegistryClient client(config);
  const SchemaInfo order{kOrder, "AVRO", {}};
  const int id = client.register_schema("orders-value", order);
  EXPECT_EQ(id, 1);
  EXPECT_EQ(registry.authorization(), "Basic dXNlcjpzZWNyZXQ=");
  const int requests = registry.requests();
  EXPECT_EQ(client.register_schema("orders-value", order), id);
  EXPECT_EQ(client.schema_by_id(id), order);
  EXPECT_EQ(registry.requests(), requests);  // both answered from the cache
  const auto found = client.lookup("orders-value", order);
  EXPECT_EQ(found.id, id);
  EXPECT_EQ(found.version, 1);
  EXPECT_EQ(client.latest("orders-value").id, id);
  EXPECT_EQ(client.version("orders-value", 1).info.schema, kOrder);

  try {
    client.schema_by_id(42);
    FAIL();
  } catch (const RegistryClientError& e) {
    EXPECT_EQ(e.http_status(), 404);
    EXPECT_EQ(e.error_code(), 40403);
    EXPECT_EQ(e.message(), "Schema 42 not found");
  }
  try {
    client.latest("a/b c");
    FAIL();
  } catch (const RegistryClientError& e) {
    EXPECT_EQ(e.error_code(), 40401);
    EXPECT_EQ(e.message(), "Subject 'a/b c' not found.");
  }
}

TEST(SerdeClient, FailsOverToTheNextUrlAndReportsUnreachable) {
  FakeRegistry registry;
  int dead_port = 0;
  {
    FakeRegistry gone;
    dead_port = gone.port();
  }
  ClientConfig config;
  config.urls = {"http://127.0.0.1:" + std::to_string(dead_port), registry.url()};
  config.timeout = std::chrono::milliseconds(2000);
  SchemaRegistryClient client(config);
  EXPECT_EQ(client.register_schema("s", {kOrder, "AVRO", {}}), 1);

  SchemaRegistryClient unreachable(
      ClientConfig{{"http://127.0.0.1:" + std::to_string(dead_port)}, "", config.timeout});
  try {
    unreachable.schema_by_id(1);
    FAIL();
  } catch (const RegistryClientError& e) {
    EXPECT_EQ(e.http_status(), 0);
  }
  EXPECT_THROW(SchemaRegistryClient(ClientConfig{{"https://x:1"}, "", config.timeout}),
               RegistryClientError);
}

TEST(SerdeAvro, SerializesRegistersAndDeserializes) {
  FakeRegistry registry;
  auto client = std::make_shared<SchemaRegistryClient>(config_for(registry).client);
  Serializer serializer(client, config_for(registry), Format::kAvro, kOrder, false);
  const std::string bytes = serializer.serialize("orders", {{"id", 5}, {"note", "hi"}});
  EXPECT_EQ(bytes, wire::header(1) + std::string("\x0a\x02\x04hi", 5));
  EXPECT_EQ(client->lookup("orders-value", {kOrder, "AVRO", {}}).id, 1);

  // A second client, as another process: the writer's schema comes from the registry by id.
  auto other = std::make_shared<SchemaRegistryClient>(config_for(registry).client);
  Deserializer deserializer(other, config_for(registry), Format::kAvro, false);
  EXPECT_EQ(deserializer.deserialize("orders", bytes),
            Json::parse(R"({"id":5,"note":{"string":"hi"}})"));
  EXPECT_EQ(deserializer.deserialize_ordered("orders", bytes).dump(),
            R"({"id":5,"note":{"string":"hi"}})");

  EXPECT_THROW(deserializer.deserialize("orders", "\x01\x00\x00\x00\x01"), SerdeError);
  try {
    deserializer.deserialize("orders", wire::header(77) + "x");
    FAIL();
  } catch (const SerdeError& e) {
    EXPECT_NE(std::string(e.what()).find("Error retrieving Avro schema for id 77"),
              std::string::npos);
    EXPECT_NE(std::string(e.what()).find("Schema 77 not found"), std::string::npos);
  }
  EXPECT_THROW(deserializer.deserialize("orders", wire::header(1) + "\x0a\x04"), SerdeError);
  EXPECT_THROW(serializer.serialize("orders", {{"id", "five"}}), SerdeError);
}

TEST(SerdeAvro, StrategiesLatestVersionLookupAndReaderSchema) {
  FakeRegistry registry;
  auto config = config_for(registry);
  auto client = std::make_shared<SchemaRegistryClient>(config.client);
  config.value_subject_name_strategy = SubjectNameStrategy::kTopicRecordName;
  Serializer by_record(client, config, Format::kAvro, kOrder, false);
  (void)by_record.serialize("orders", {{"id", 1}});
  EXPECT_EQ(client->latest("orders-shop.Order").id, 1);
  Serializer primitive(client, config, Format::kAvro, R"("string")", false);
  EXPECT_THROW(primitive.serialize("orders", "x"), SerdeError);

  auto latest_config = config_for(registry);
  latest_config.use_latest_version = true;
  latest_config.auto_register_schemas = false;
  Serializer latest(client, latest_config, Format::kAvro, "", false);
  EXPECT_THROW(latest.serialize("orders", {{"id", 1}}), SerdeError);  // no orders-value yet
  client->register_schema("orders-value", {kOrder, "AVRO", {}});
  const auto bytes = latest.serialize("orders", {{"id", 9}});
  EXPECT_EQ(wire::parse(bytes).schema_id, 1);

  auto lookup_config = config_for(registry);
  lookup_config.auto_register_schemas = false;
  Serializer lookup(client, lookup_config, Format::kAvro,
                    R"({"type":"enum","name":"E","symbols":["A"]})", true);
  EXPECT_THROW(lookup.serialize("orders", "A"), SerdeError);  // never registered

  Deserializer reader(client, config, Format::kAvro, false,
                      R"({"type":"record","name":"Order","namespace":"shop","fields":[
                        {"name":"id","type":"double"},{"name":"extra","type":"int","default":3}]})");
  EXPECT_EQ(reader.deserialize("orders", bytes), Json::parse(R"({"id":9.0,"extra":3})"));
}

TEST(SerdeAvro, BytesSchemaIsRawAndBadSchemasFailAtConstruction) {
  FakeRegistry registry;
  auto client = std::make_shared<SchemaRegistryClient>(config_for(registry).client);
  Serializer serializer(client, config_for(registry), Format::kAvro, R"("bytes")", true);
  const auto bytes = serializer.serialize("t", "ab\xC3\xBF");
  EXPECT_EQ(bytes, wire::header(1) + "ab\xff");
  Deserializer deserializer(client, config_for(registry), Format::kAvro, true);
  EXPECT_EQ(deserializer.deserialize("t", bytes), "ab\xC3\xBF");
  EXPECT_THROW(Serializer(client, config_for(registry), Format::kJson, "[1", false), SerdeError);
  EXPECT_THROW(Serializer(client, config_for(registry), Format::kProtobuf, "message {", false),
               SerdeError);
  EXPECT_THROW(Serializer(client, config_for(registry), Format::kAvro, "{bad", false), SerdeError);
}

TEST(SerdeAvro, ATypeTwoReferencesShareIsDefinedOnce) {
  // FirstLevel references SecondLevelA and SecondLevelB, which both reference ThirdLevel: the
  // codec parses ThirdLevel once, as Confluent's serdes resolve each reference name once.
  FakeRegistry registry;
  auto client = std::make_shared<SchemaRegistryClient>(config_for(registry).client);
  client->register_schema("third", {R"({"type":"record","name":"ThirdLevel","namespace":"test",)"
                                    R"("fields":[{"name":"id","type":"int"}]})",
                                    "AVRO",
                                    {}});
  const std::vector<SchemaReference> to_third{{"test.ThirdLevel", "third", 1}};
  for (const std::string side : {"A", "B"})
    client->register_schema(
        "second-" + side,
        {R"({"type":"record","name":"SecondLevel)" + side +
             R"(","namespace":"test","fields":[{"name":"thirdLevel","type":"test.ThirdLevel"}]})",
         "AVRO", to_third});
  const std::string first =
      R"({"type":"record","name":"FirstLevel","namespace":"test","fields":[)"
      R"({"name":"id","type":"int"},{"name":"secondLevelA","type":"test.SecondLevelA"},)"
      R"({"name":"secondLevelB","type":"test.SecondLevelB"}]})";
  const std::vector<SchemaReference> refs{{"test.SecondLevelA", "second-A", 1},
                                          {"test.SecondLevelB", "second-B", 1}};
  Serializer serializer(client, config_for(registry), Format::kAvro, first, false, refs);
  const Json value = Json::parse(
      R"({"id":1,"secondLevelA":{"thirdLevel":{"id":2}},"secondLevelB":{"thirdLevel":{"id":3}}})");
  const std::string bytes = serializer.serialize("first", value);
  EXPECT_EQ(bytes, wire::header(4) + std::string("\x02\x04\x06", 3));
  auto other = std::make_shared<SchemaRegistryClient>(config_for(registry).client);
  Deserializer deserializer(other, config_for(registry), Format::kAvro, false);
  EXPECT_EQ(deserializer.deserialize("first", bytes), value);
}

TEST(SerdeStreams, AvroSerdeRoundTripsAndThrowsSerializationException) {
  FakeRegistry registry;
  const std::map<std::string, std::string> config{{"schema.registry.url", registry.url()}};
  auto serde = streams::serdes::Avro(config, kOrder, false);
  ASSERT_TRUE(serde);
  const auto bytes = serde.serialize("orders", {{"id", 3}});
  EXPECT_EQ(streams::serdes::Avro(config, "", false).deserialize("orders", bytes),
            Json::parse(R"({"id":3,"note":null})"));
  EXPECT_THROW(serde.deserialize("orders", "\x05junk"), streams::SerializationException);
  EXPECT_THROW(serde.serialize("orders", {{"id", "x"}}), streams::SerializationException);
  EXPECT_THROW(streams::serdes::Avro(config, "", false).serialize("orders", {{"id", 1}}),
               streams::SerializationException);
  EXPECT_THROW(streams::serdes::Avro({{"auto.register.schemas", "maybe"}}, kOrder, false),
               std::invalid_argument);
}

}  // namespace
}  // namespace oxbow::registry
