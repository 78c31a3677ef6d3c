// The JSON Schema and Protobuf serdes against an in-process registry.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "oxbow/registry/client.h"
#include "oxbow/registry/serdes.h"
#include "oxbow/streams/registry_serde.h"
#include "registry/serde/fake_registry.h"

namespace oxbow::registry {
namespace {

using Json = nlohmann::json;
using testing::FakeRegistry;

SerdeConfig config_for(const FakeRegistry& registry,
                       std::map<std::string, std::string> properties = {}) {
  properties["schema.registry.url"] = registry.url();
  return SerdeConfig::from_properties(properties);
}

std::shared_ptr<SchemaRegistryClient> client_for(const FakeRegistry& registry) {
  return std::make_shared<SchemaRegistryClient>(config_for(registry).client);
}

// The SerdeError's text, or "" when none is thrown.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const SerdeError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

const std::string kEvent =
    R"({"title":"shop.Event","type":"object","properties":{"id":{"type":"integer"},)"
    R"("name":{"type":"string"}},"required":["id"]})";

TEST(SerdeJson, PayloadIsTheCompactTextAndRoundTrips) {
  FakeRegistry registry;
  auto client = client_for(registry);
  Serializer serializer(client, config_for(registry), Format::kJson, kEvent, false);
  const auto bytes = serializer.serialize("events", {{"id", 1}, {"name", "Zoë"}});
  EXPECT_EQ(bytes, wire::header(1) + R"({"id":1,"name":"Zoë"})");
  const auto registered = client->latest("events-value");
  EXPECT_EQ(registered.info.type, "JSON");
  EXPECT_EQ(registered.info.schema, kEvent);

  Deserializer deserializer(client_for(registry), config_for(registry), Format::kJson, false);
  EXPECT_EQ(deserializer.deserialize("events", bytes), Json::parse(R"({"id":1,"name":"Zoë"})"));
  // Printed as written, keys in the payload's order.
  EXPECT_EQ(
      deserializer.deserialize_ordered("events", wire::header(1) + R"({"name":"a","id":2})").dump(),
      R"({"name":"a","id":2})");
  EXPECT_TRUE(
      contains(error_of([&] { deserializer.deserialize("events", wire::header(1) + "{x"); }),
               "Error deserializing JSON message for id 1: the payload is not JSON"));
  // An id whose schema is of another type.
  client->register_schema("other", {R"("string")", "AVRO", {}});
  EXPECT_TRUE(contains(error_of([&] { deserializer.deserialize("events", wire::header(2) + "1"); }),
                       "Error retrieving JSON schema for id 2: the schema is AVRO, not JSON"));
}

TEST(SerdeJson, ValidatesOnlyWithFailInvalidSchema) {
  FakeRegistry registry;
  auto client = client_for(registry);
  const Json bad = {{"id", "one"}};
  // Confluent's default (json.fail.invalid.schema=false): written as it is.
  Serializer lenient(client, config_for(registry), Format::kJson, kEvent, false);
  const auto bytes = lenient.serialize("events", bad);
  EXPECT_EQ(bytes, wire::header(1) + R"({"id":"one"})");
  Deserializer reads_all(client, config_for(registry), Format::kJson, false);
  EXPECT_EQ(reads_all.deserialize("events", bytes), bad);

  const auto strict_config = config_for(registry, {{"json.fail.invalid.schema", "true"}});
  EXPECT_TRUE(strict_config.json_fail_invalid_schema);
  Serializer strict(client, strict_config, Format::kJson, kEvent, false);
  const auto error = error_of([&] { strict.serialize("events", bad); });
  EXPECT_TRUE(contains(error, "Error serializing JSON message: Validation error in JSON")) << error;
  EXPECT_TRUE(contains(error, "#/id")) << error;
  EXPECT_TRUE(contains(error_of([&] { strict.serialize("events", {{"name", "x"}}); }), "id"));
  EXPECT_EQ(strict.serialize("events", {{"id", 2}}), wire::header(1) + R"({"id":2})");

  Deserializer checks(client, strict_config, Format::kJson, false);
  EXPECT_TRUE(contains(error_of([&] { checks.deserialize("events", bytes); }),
                       "Error deserializing JSON message for id 1: Validation error"));
  EXPECT_TRUE(
      contains(error_of([&] { checks.deserialize_ordered("events", bytes); }), "Validation error"));
  // A reader schema replaces the writer's for validation.
  Deserializer with_reader(client, strict_config, Format::kJson, false,
                           R"({"type":"object","properties":{"id":{"type":"string"}}})");
  EXPECT_EQ(with_reader.deserialize("events", bytes), bad);
}

TEST(SerdeJson, RecordNameIsTheTitleAndReferencesResolve) {
  FakeRegistry registry;
  auto client = client_for(registry);
  auto config = config_for(registry, {{"json.fail.invalid.schema", "true"}});
  config.value_subject_name_strategy = SubjectNameStrategy::kRecordName;
  Serializer by_title(client, config, Format::kJson, kEvent, false);
  (void)by_title.serialize("events", {{"id", 1}});
  EXPECT_EQ(client->latest("shop.Event").id, 1);
  Serializer untitled(client, config, Format::kJson, R"({"type":"object"})", false);
  EXPECT_TRUE(contains(error_of([&] { untitled.serialize("events", Json::object()); }),
                       "the message value must only be a record schema"));

  const std::string customer = R"({"$id":"https://example.com/customer.json","type":"object",)"
                               R"("properties":{"name":{"type":"string"}},"required":["name"]})";
  client->register_schema("customer", {customer, "JSON", {}});
  const std::string order =
      R"({"type":"object","properties":{"customer":{"$ref":"https://example.com/customer.json"}}})";
  const SchemaReference ref{"https://example.com/customer.json", "customer", 1};
  auto topic_config = config_for(registry, {{"json.fail.invalid.schema", "true"}});
  Serializer with_ref(client, topic_config, Format::kJson, order, false, {ref});
  const auto bytes = with_ref.serialize("orders", {{"customer", {{"name", "Ann"}}}});
  EXPECT_EQ(client->latest("orders-value").info.references, std::vector<SchemaReference>{ref});
  EXPECT_TRUE(contains(error_of([&] {
                         with_ref.serialize("orders", {{"customer", {{"x", 1}}}});
                       }),
                       "Validation error"));
  Deserializer reader(client_for(registry), topic_config, Format::kJson, false);
  EXPECT_EQ(reader.deserialize("orders", bytes), Json::parse(R"({"customer":{"name":"Ann"}})"));
}

const std::string kShop = R"(syntax = "proto3";
package shop;

enum Kind { KIND_UNKNOWN = 0; KIND_BOOK = 1; }
message Order {
  int64 id = 1;
  string item = 2;
  message Line {
    string sku = 1;
    int32 qty = 2;
    message Note { string text = 1; }
  }
  repeated Line lines = 3;
  Kind kind = 4;
}
message Refund {
  int64 order_id = 1;
  Order.Line.Note note = 2;
}
)";

TEST(SerdeProtobuf, FirstMessageIsWrittenAfterTheSingleZeroIndex) {
  FakeRegistry registry;
  auto client = client_for(registry);
  Serializer serializer(client, config_for(registry), Format::kProtobuf, kShop, false);
  const Json order =
      Json::parse(R"({"id":"7","item":"tea","lines":[{"sku":"a","qty":2}],"kind":"KIND_BOOK"})");
  const auto bytes = serializer.serialize("orders", order);
  EXPECT_EQ(bytes, wire::header(1) + std::string("\x00", 1) +
                       std::string("\x08\x07\x12\x03tea\x1a\x05\x0a\x01"
                                   "a\x10\x02\x20\x01",
                                   16));
  EXPECT_EQ(client->latest("orders-value").info.type, "PROTOBUF");

  Deserializer deserializer(client_for(registry), config_for(registry), Format::kProtobuf, false);
  EXPECT_EQ(deserializer.deserialize("orders", bytes), order);
  // Fields in the schema's order, those at their default too.
  EXPECT_EQ(
      deserializer.deserialize_ordered("orders", wire::header(1) + std::string("\x00\x08\x01", 3))
          .dump(),
      R"({"id":"1","item":"","lines":[],"kind":"KIND_UNKNOWN"})");
  // JSON names or .proto names are both read.
  EXPECT_EQ(serializer.serialize("orders", {{"id", 1}}),
            serializer.serialize("orders", {{"id", "1"}}));
}

TEST(SerdeProtobuf, NestedAndLaterMessagesCarryTheirIndexes) {
  FakeRegistry registry;
  auto client = client_for(registry);
  auto config = config_for(registry);
  config.value_subject_name_strategy = SubjectNameStrategy::kRecordName;
  Serializer note(client, config, Format::kProtobuf, kShop, false, {}, "shop.Order.Line.Note");
  const auto note_bytes = note.serialize("notes", {{"text", "hi"}});
  // [0, 0, 0]: count 3, then three zeros (zig-zag varints).
  EXPECT_EQ(note_bytes, wire::header(1) + std::string("\x06\x00\x00\x00\x0a\x02hi", 8));
  EXPECT_EQ(client->latest("shop.Order.Line.Note").id, 1);

  // A name without its package; [1] is 02 02.
  Serializer refund(client, config, Format::kProtobuf, kShop, false, {}, "Refund");
  const auto refund_bytes =
      refund.serialize("refunds", {{"orderId", "5"}, {"note", {{"text", "late"}}}});
  EXPECT_EQ(refund_bytes.substr(5, 2), "\x02\x02");
  EXPECT_EQ(client->latest("shop.Refund").id, 1);  // the same schema, so the same id

  Deserializer deserializer(client_for(registry), config, Format::kProtobuf, false);
  EXPECT_EQ(deserializer.deserialize("notes", note_bytes), Json::parse(R"({"text":"hi"})"));
  EXPECT_EQ(deserializer.deserialize("refunds", refund_bytes),
            Json::parse(R"({"orderId":"5","note":{"text":"late"}})"));
  // The long form of [0] is read too.
  EXPECT_EQ(
      deserializer.deserialize("x", wire::header(1) + std::string("\x02\x00\x08\x03", 4)).at("id"),
      "3");
}

TEST(SerdeProtobuf, BadValuesBytesAndNamesFailClearly) {
  FakeRegistry registry;
  auto client = client_for(registry);
  Serializer serializer(client, config_for(registry), Format::kProtobuf, kShop, false);
  auto error = error_of([&] { serializer.serialize("orders", {{"id", "x"}}); });
  EXPECT_TRUE(contains(error, "Error serializing Protobuf message: Invalid JSON for shop.Order"))
      << error;
  EXPECT_TRUE(contains(error_of([&] {
                         serializer.serialize("orders", {{"nope", 1}});
                       }),
                       "Invalid JSON for shop.Order"));
  EXPECT_TRUE(contains(error_of([&] { serializer.serialize("orders", Json::array()); }),
                       "written from a JSON object"));
  EXPECT_TRUE(contains(error_of([&] {
                         Serializer(client, config_for(registry), Format::kProtobuf, kShop, false,
                                    {}, "shop.Missing");
                       }),
                       "the schema has no message shop.Missing"));
  EXPECT_TRUE(contains(
      error_of([&] { Serializer(client, config_for(registry), Format::kProtobuf, "x y", false); }),
      "Invalid Protobuf schema"));

  const auto good = serializer.serialize("orders", {{"id", 1}});
  Deserializer deserializer(client, config_for(registry), Format::kProtobuf, false);
  error = error_of([&] { deserializer.deserialize("orders", wire::header(1) + "\x02\x0a"); });
  EXPECT_TRUE(contains(error,
                       "Error deserializing Protobuf message for id 1: Invalid message "
                       "indexes: [5]"))
      << error;
  EXPECT_TRUE(contains(error_of([&] { deserializer.deserialize("orders", wire::header(1)); }),
                       "Invalid message indexes"));
  EXPECT_TRUE(
      contains(error_of([&] { deserializer.deserialize("orders", good + "\x12\x09trunc"); }),
               "Invalid Protobuf binary for shop.Order"));
  EXPECT_THROW(Deserializer(client, config_for(registry), Format::kProtobuf, false, kShop),
               SerdeError);
}

TEST(SerdeProtobuf, ImportsAreLookedUpByTheirPath) {
  FakeRegistry registry;
  auto client = client_for(registry);
  const std::string sale = R"(syntax = "proto3";
package shop;
import "shop/customer.proto";
import "google/protobuf/timestamp.proto";
message Sale {
  Customer customer = 1;
  google.protobuf.Timestamp at = 2;
}
)";
  Serializer serializer(client, config_for(registry), Format::kProtobuf, sale, false);
  const Json value = Json::parse(R"({"customer":{"name":"Zoë"},"at":"2024-03-01T12:30:00Z"})");
  EXPECT_TRUE(contains(error_of([&] { serializer.serialize("sales", value); }),
                       "Error retrieving the schema of import shop/customer.proto"));

  client->register_schema("shop/customer.proto",
                          {"syntax = \"proto3\";\npackage shop;\nmessage Customer { string name = "
                           "1; }\n",
                           "PROTOBUF",
                           {}});
  Serializer after(client, config_for(registry), Format::kProtobuf, sale, false);
  const auto bytes = after.serialize("sales", value);
  const auto registered = client->latest("sales-value");
  EXPECT_EQ(registered.info.references,
            (std::vector<SchemaReference>{{"shop/customer.proto", "shop/customer.proto", 1}}));
  Deserializer deserializer(client_for(registry), config_for(registry), Format::kProtobuf, false);
  EXPECT_EQ(deserializer.deserialize("sales", bytes), value);
}

TEST(SerdeJson, ASchemaTwoReferencesShareIsParsedOnce) {
  // FirstLevel references SecondLevelA and SecondLevelB, which both reference ThirdLevel.
  FakeRegistry registry;
  auto client = client_for(registry);
  client->register_schema("third", {R"({"$id":"https://example.com/third.json","type":"object",)"
                                    R"("properties":{"id":{"type":"integer"}},"required":["id"]})",
                                    "JSON",
                                    {}});
  const std::vector<SchemaReference> to_third{{"https://example.com/third.json", "third", 1}};
  for (const std::string side : {"a", "b"})
    client->register_schema("second-" + side,
                            {R"({"$id":"https://example.com/)" + side +
                                 R"(.json","type":"object","properties":{"thirdLevel":)"
                                 R"({"$ref":"https://example.com/third.json"}}})",
                             "JSON", to_third});
  const std::string first = R"({"type":"object","properties":{"id":{"type":"integer"},)"
                            R"("secondLevelA":{"$ref":"https://example.com/a.json"},)"
                            R"("secondLevelB":{"$ref":"https://example.com/b.json"}}})";
  const std::vector<SchemaReference> refs{{"https://example.com/a.json", "second-a", 1},
                                          {"https://example.com/b.json", "second-b", 1}};
  auto config = config_for(registry, {{"json.fail.invalid.schema", "true"}});
  Serializer serializer(client, config, Format::kJson, first, false, refs);
  const Json value = Json::parse(
      R"({"id":1,"secondLevelA":{"thirdLevel":{"id":2}},"secondLevelB":{"thirdLevel":{"id":3}}})");
  const auto bytes = serializer.serialize("first", value);
  EXPECT_TRUE(contains(error_of([&] {
                         serializer.serialize("first",
                                              Json::parse(R"({"secondLevelB":{"thirdLevel":{}}})"));
                       }),
                       "Validation error"));  // ThirdLevel's "required", through B
  Deserializer deserializer(client_for(registry), config, Format::kJson, false);
  EXPECT_EQ(deserializer.deserialize("first", bytes), value);
}

TEST(SerdeProtobuf, AnImportTwoReferencesShareIsParsedOnce) {
  // first.proto imports A.proto and B.proto, which both import third.proto.
  FakeRegistry registry;
  auto client = client_for(registry);
  client->register_schema(
      "test/third.proto",
      {"syntax = \"proto3\";\npackage test;\nmessage ThirdLevel { int32 id = 1; }\n",
       "PROTOBUF",
       {}});
  const std::vector<SchemaReference> to_third{{"test/third.proto", "test/third.proto", 1}};
  for (const std::string side : {"A", "B"})
    client->register_schema("test/" + side + ".proto",
                            {"syntax = \"proto3\";\npackage test;\nimport \"test/third.proto\";\n"
                             "message SecondLevel" +
                                 side + " { ThirdLevel third_level = 1; }\n",
                             "PROTOBUF", to_third});
  const std::string first =
      "syntax = \"proto3\";\npackage test;\nimport \"test/A.proto\";\nimport \"test/B.proto\";\n"
      "message FirstLevel {\n  int32 id = 1;\n  SecondLevelA second_level_a = 2;\n"
      "  SecondLevelB second_level_b = 3;\n}\n";
  const std::vector<SchemaReference> refs{{"test/A.proto", "test/A.proto", 1},
                                          {"test/B.proto", "test/B.proto", 1}};
  Serializer serializer(client, config_for(registry), Format::kProtobuf, first, false, refs);
  const Json value = Json::parse(
      R"({"id":1,"secondLevelA":{"thirdLevel":{"id":2}},"secondLevelB":{"thirdLevel":{"id":3}}})");
  const auto bytes = serializer.serialize("first", value);
  Deserializer deserializer(client_for(registry), config_for(registry), Format::kProtobuf, false);
  EXPECT_EQ(deserializer.deserialize("first", bytes), value);
}

TEST(SerdeStreams, JsonSchemaAndProtobufSerdes) {
  FakeRegistry registry;
  const std::map<std::string, std::string> config{{"schema.registry.url", registry.url()},
                                                  {"json.fail.invalid.schema", "true"}};
  auto json = streams::serdes::JsonSchema(config, kEvent, false);
  EXPECT_EQ(json.name, "KafkaJsonSchemaSerde");
  const auto event = json.serialize("events", {{"id", 4}});
  EXPECT_EQ(streams::serdes::JsonSchema(config, "", false).deserialize("events", event),
            Json::parse(R"({"id":4})"));
  EXPECT_THROW(json.serialize("events", {{"id", "x"}}), streams::SerializationException);
  EXPECT_THROW(streams::serdes::JsonSchema(config, "{", false), std::invalid_argument);

  auto proto = streams::serdes::Protobuf(config, kShop, true, "shop.Refund");
  EXPECT_EQ(proto.name, "KafkaProtobufSerde");
  const auto refund = proto.serialize("refunds", {{"orderId", "9"}});
  EXPECT_EQ(streams::serdes::Protobuf(config, "", true).deserialize("refunds", refund),
            Json::parse(R"({"orderId":"9"})"));
  EXPECT_THROW(proto.serialize("refunds", {{"orderId", "x"}}), streams::SerializationException);
  EXPECT_THROW(proto.deserialize("refunds", "\x00junk"), streams::SerializationException);
  EXPECT_THROW(streams::serdes::Protobuf(config, kShop, true, "Nope"), std::invalid_argument);
}

}  // namespace
}  // namespace oxbow::registry
