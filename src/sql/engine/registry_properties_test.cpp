// The Schema Registry formats' WITH properties against the registry library's fake registry:
// *_SCHEMA_FULL_NAME, *_PROTOBUF_NULLABLE_REPRESENTATION and a pinned *_SCHEMA_ID, in the schemas
// derived, the bytes written and read, and ksqlDB's refusals.
#include <gtest/gtest.h>

#include "oxbow/registry/serdes.h"
#include "oxbow/streams/errors.h"
#include "sql/binder/sql_error.h"
#include "sql/engine/engine.h"
#include "sql/serde/fake_schema_registry.h"
#include "sql/serde/row_serde.h"
#include "sql/serde/schema_registry.h"

namespace oxbow::sql {
namespace {

using Json = nlohmann::json;

Column column(const std::string& name, SqlTypePtr type) {
  return {name, std::move(type), ColumnNamespace::kValue, ""};
}

class RegistryPropertiesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    DdlSettings settings;
    settings.schema_registry_url = fake_.url();
    engine_ = std::make_unique<Engine>(settings);
  }
  std::string latest(const std::string& subject) { return client_->latest(subject).info.schema; }
  std::string error_of(const std::string& statement) {
    try {
      engine_->execute(statement);
    } catch (const SqlError& e) {
      return e.what();
    }
    return "no error";
  }

  testing::FakeSchemaRegistry fake_;
  SchemaRegistryScope scope_{fake_.url()};
  std::shared_ptr<registry::SchemaRegistryClient> client_ = schema_registry_client(fake_.url());
  std::unique_ptr<Engine> engine_;
};

TEST_F(RegistryPropertiesTest, AvroFullNameNamesTheRecordAndItsNestedRecords) {
  const std::vector<Column> columns = {
      column("ID", SqlType::bigint()),
      column("S", SqlType::structure({{"D", SqlType::integer()}}))};
  EXPECT_EQ(derived_schema("AVRO", columns, true, {"com.acme.Order", "", {}}).schema,
            R"({"type":"record","name":"Order","namespace":"com.acme","fields":[)"
            R"({"name":"ID","type":["null","long"],"default":null},)"
            R"({"name":"S","type":["null",{"type":"record","name":"Order_S","fields":[)"
            R"({"name":"D","type":["null","int"],"default":null}],)"
            R"("connect.name":"com.acme.Order_S"}],"default":null}],)"
            R"("connect.name":"com.acme.Order"})");
  // A name without a namespace: none printed.
  EXPECT_EQ(derived_schema("AVRO", {columns[0]}, true, {"Plain", "", {}}).schema,
            R"({"type":"record","name":"Plain","fields":[)"
            R"({"name":"ID","type":["null","long"],"default":null}],"connect.name":"Plain"})");
}

TEST_F(RegistryPropertiesTest, ProtobufFullNameAndNullableRepresentations) {
  const std::vector<Column> columns = {column("ID", SqlType::bigint()),
                                       column("S", SqlType::structure({{"D", SqlType::string()}})),
                                       column("A", SqlType::array(SqlType::integer()))};
  EXPECT_EQ(derived_schema("PROTOBUF", columns, true, {"com.acme.Order", "OPTIONAL", {}}).schema,
            "syntax = \"proto3\";\npackage com.acme;\n\n"
            "message Order {\n  optional int64 ID = 1;\n  optional ConnectDefault1 S = 2;\n"
            "  repeated int32 A = 3;\n\n  message ConnectDefault1 {\n"
            "    optional string D = 1;\n  }\n}\n");
  EXPECT_EQ(derived_schema("PROTOBUF", columns, true, {"", "WRAPPER", {}}).schema,
            "syntax = \"proto3\";\n\nimport \"google/protobuf/wrappers.proto\";\n\n"
            "message ConnectDefault1 {\n  google.protobuf.Int64Value ID = 1;\n"
            "  ConnectDefault2 S = 2;\n  repeated google.protobuf.Int32Value A = 3;\n\n"
            "  message ConnectDefault2 {\n    google.protobuf.StringValue D = 1;\n  }\n}\n");
  // A ConnectDefault name is the default, as ksqlDB ignores it.
  EXPECT_EQ(derived_schema("PROTOBUF", {columns[0]}, true, {"ConnectDefault7", "", {}}).schema,
            derived_schema("PROTOBUF", {columns[0]}, true).schema);
}

// Texts as ksqlDB's query-validation plans hold them (historical_plans, 8.0): JSON_SR properties
// in java.util.HashMap's order, Protobuf's decimal option laid out by Confluent's printer and maps
// as repeated entry messages.
TEST_F(RegistryPropertiesTest, SchemaTextsAreThoseKsqlDbRegisters) {
  EXPECT_EQ(derived_schema("JSON_SR",
                           {column("S1_KEY", SqlType::integer()),
                            column("S2_KEY", SqlType::integer()), column("VAL", SqlType::string())},
                           true)
                .schema,
            R"({"type":"object","properties":{"S2_KEY":{"connect.index":1,"oneOf":[)"
            R"({"type":"null"},{"type":"integer","connect.type":"int32"}]},)"
            R"("VAL":{"connect.index":2,"oneOf":[{"type":"null"},{"type":"string"}]},)"
            R"("S1_KEY":{"connect.index":0,"oneOf":[{"type":"null"},)"
            R"({"type":"integer","connect.type":"int32"}]}}})");
  EXPECT_EQ(
      derived_schema("PROTOBUF",
                     {column("C1", SqlType::boolean()), column("C6", SqlType::decimal(4, 2))}, true)
          .schema,
      "syntax = \"proto3\";\n\nimport \"confluent/type/decimal.proto\";\n\n"
      "message ConnectDefault1 {\n  bool C1 = 1;\n"
      "  confluent.type.Decimal C6 = 2 [(confluent.field_meta) = {\n    params: [\n"
      "      {\n        value: \"4\",\n        key: \"precision\"\n      },\n"
      "      {\n        value: \"2\",\n        key: \"scale\"\n      }\n    ]\n  }];\n}\n");
  EXPECT_EQ(
      derived_schema(
          "PROTOBUF",
          {column("NAME", SqlType::string()),
           column("VALUE", SqlType::map(SqlType::string(), SqlType::of(SqlBaseType::kTimestamp)))},
          true)
          .schema,
      "syntax = \"proto3\";\n\nimport \"google/protobuf/timestamp.proto\";\n\n"
      "message ConnectDefault1 {\n  string NAME = 1;\n"
      "  repeated ConnectDefault2Entry VALUE = 2;\n\n"
      "  message ConnectDefault2Entry {\n    string key = 1;\n"
      "    google.protobuf.Timestamp value = 2;\n  }\n}\n");
}

// With presence, a NULL is told apart from the default and reads back as NULL.
TEST_F(RegistryPropertiesTest, ProtobufNullsRoundTripWithEitherRepresentation) {
  const std::vector<Column> columns = {column("N", SqlType::integer()),
                                       column("T", SqlType::string())};
  Row row(2);
  row[0].set_integer(0);
  for (const char* representation : {"OPTIONAL", "WRAPPER"}) {
    SCOPED_TRACE(representation);
    Formats f;
    f.key_format = "KAFKA";
    f.value_format = "PROTOBUF";
    f.value_protobuf_nullable = representation;
    auto serde = row_serde(f, columns, false);
    const Row back = serde.deserialize("p", serde.serialize("p", row));
    ASSERT_FALSE(back[0].is_null());
    EXPECT_EQ(back[0].integer(), 0);
    EXPECT_TRUE(back[1].is_null());
  }
  // Without one, as ksqlDB's default, NULL is not written and reads back as the default.
  auto plain = row_serde("PROTOBUF", columns, false);
  const Row back = plain.deserialize("q", plain.serialize("q", row));
  EXPECT_EQ(back[1].text(), "");
}

TEST_F(RegistryPropertiesTest, PinnedAvroSchemaWritesTheRowsWithItsId) {
  const int id = client_->register_schema(
      "elsewhere-value",
      {R"({"type":"record","name":"Tx","namespace":"com.acme","fields":[)"
       R"({"name":"id","type":"long"},{"name":"note","type":"string","default":"foo"}]})",
       "AVRO",
       {}});
  Formats f;
  f.value_format = "AVRO";
  f.value_schema_id = id;
  auto serde = row_serde(f, {column("ID", SqlType::bigint())}, false);
  Row row(1);
  row[0].set_bigint(7);
  const std::string bytes = serde.serialize("sink", row);
  EXPECT_EQ(registry::wire::parse(bytes).schema_id, id);
  registry::Deserializer reader(client_, {}, registry::Format::kAvro, false);
  EXPECT_EQ(reader.deserialize("sink", bytes), (Json{{"id", 7}, {"note", "foo"}}));
  // Nothing was registered for the sink's topic.
  EXPECT_THROW(client_->latest("sink-value"), registry::RegistryClientError);
  // A column the pinned schema lacks does not serialize.
  auto extra =
      row_serde(f, {column("ID", SqlType::bigint()), column("X", SqlType::integer())}, false);
  Row two(2);
  two[0].set_bigint(1);
  two[1].set_integer(2);
  EXPECT_THROW(extra.serialize("sink", two), streams::SerializationException);
}

TEST_F(RegistryPropertiesTest, PinnedProtobufAndJsonSchemas) {
  const int proto_id = client_->register_schema(
      "p-value",
      {"syntax = \"proto3\"; message Pinned { int32 c1 = 1; string c2 = 2; }", "PROTOBUF", {}});
  Formats f;
  f.value_format = "PROTOBUF";
  f.value_schema_id = proto_id;
  auto proto = row_serde(f, {column("C1", SqlType::integer())}, false);
  Row row(1);
  row[0].set_integer(4);
  const std::string bytes = proto.serialize("out", row);
  EXPECT_EQ(registry::wire::parse(bytes).schema_id, proto_id);
  EXPECT_EQ(proto.deserialize("out", bytes)[0].integer(), 4);

  const int json_id = client_->register_schema(
      "j-value",
      {R"({"type":"object","properties":{"c1":{"type":"integer"},"c2":{"type":"string"}}})",
       "JSON",
       {}});
  f.value_format = "JSON_SR";
  f.value_schema_id = json_id;
  const std::string json =
      row_serde(f, {column("C1", SqlType::integer())}, false).serialize("out", row);
  EXPECT_EQ(registry::wire::parse(json).schema_id, json_id);
  // The pinned schema's other properties are written as nulls (ksqlDB's {"c1":4,"c2":null}).
  EXPECT_EQ(std::string(registry::wire::parse(json).payload), R"({"C1":4,"c2":null})");
  // A column the pinned schema lacks fails the record.
  Row two(2);
  two[0].set_integer(1);
  two[1].set_integer(2);
  EXPECT_THROW(
      row_serde(f, {column("C1", SqlType::integer()), column("C3", SqlType::integer())}, false)
          .serialize("out", two),
      streams::SerializationException);
}

TEST_F(RegistryPropertiesTest, StatementsRegisterNamedSchemas) {
  engine_->execute(
      "CREATE STREAM s (k1 INT KEY, k2 INT KEY, v INT) WITH (kafka_topic='s', format='AVRO', "
      "value_schema_full_name='com.acme.Value', partitions=1);");
  EXPECT_NE(latest("s-value").find(R"("name":"Value","namespace":"com.acme")"), std::string::npos);
  // An AVRO key record is named after its source, as ksqlDB names it.
  EXPECT_NE(latest("s-key").find(R"("name":"SKey","namespace":"io.confluent.ksql.avro_schemas")"),
            std::string::npos);
  engine_->execute(
      "CREATE STREAM my_sink WITH (value_format='PROTOBUF', "
      "value_schema_full_name='shop.Out', value_protobuf_nullable_representation='OPTIONAL') "
      "AS SELECT * FROM s;");
  EXPECT_EQ(latest("MY_SINK-value"),
            "syntax = \"proto3\";\npackage shop;\n\nmessage Out {\n  optional int32 V = 1;\n}\n");
  EXPECT_NE(latest("MY_SINK-key").find(R"("name":"MySinkKey")"), std::string::npos);
}

TEST_F(RegistryPropertiesTest, KsqlDbsRefusals) {
  EXPECT_EQ(error_of("CREATE STREAM a (v INT) WITH (kafka_topic='a', value_format='JSON', "
                     "value_avro_schema_full_name='com.custom.schema', partitions=1);"),
            "JSON does not support the following configs: [fullSchemaName]");
  EXPECT_EQ(error_of("CREATE STREAM a (v INT) WITH (kafka_topic='a', value_format='AVRO', "
                     "value_avro_schema_full_name=' ', partitions=1);"),
            "fullSchemaName cannot be empty. Format configuration: {fullSchemaName=}");
  EXPECT_EQ(error_of("CREATE STREAM a (v INT) WITH (kafka_topic='a', value_format='AVRO', "
                     "value_avro_schema_full_name='x.A', value_schema_full_name='x.B', "
                     "partitions=1);"),
            "Cannot supply both 'VALUE_AVRO_SCHEMA_FULL_NAME' and 'VALUE_SCHEMA_FULL_NAME' "
            "properties. Please only set 'VALUE_SCHEMA_FULL_NAME'.");
  EXPECT_EQ(error_of("CREATE STREAM a (v INT) WITH (kafka_topic='a', value_format='AVRO', "
                     "value_protobuf_nullable_representation='OPTIONAL', partitions=1);"),
            "Property VALUE_PROTOBUF_NULLABLE_REPRESENTATION can only be enabled with protobuf "
            "format");
  EXPECT_EQ(error_of("CREATE STREAM a (v INT) WITH (kafka_topic='a', value_format='PROTOBUF', "
                     "value_protobuf_nullable_representation='MAYBE', partitions=1);"),
            "Invalid value MAYBE for configuration VALUE_PROTOBUF_NULLABLE_REPRESENTATION: String "
            "must be one of: OPTIONAL, WRAPPER, null");
}

// ksqlDB's protobuf.json cases: a full name picks one of several messages; none is refused.
TEST_F(RegistryPropertiesTest, ProtobufFullNamePicksTheMessageInferred) {
  client_->register_schema("input-key", {"syntax = \"proto3\"; message ProtobufKey1 {uint32 k1 = "
                                         "1;} message ProtobufKey2 {string k1 = 1;}",
                                         "PROTOBUF",
                                         {}});
  client_->register_schema("input-value",
                           {"syntax = \"proto3\"; package shop; message ProtobufValue1 {float c1 "
                            "= 1; uint32 c2 = 2;} message ProtobufValue2 {uint32 c1 = 1;}",
                            "PROTOBUF",
                            {}});
  EXPECT_EQ(error_of("CREATE STREAM input WITH (kafka_topic='input', format='PROTOBUF', "
                     "key_schema_full_name='ProtobufKey2');"),
            "Value schema has multiple schema definitions. \n\n- shop.ProtobufValue1\n- "
            "shop.ProtobufValue2\n\nPlease specify a schema full name in the WITH clause using "
            "VALUE_SCHEMA_FULL_NAME");
  engine_->execute(
      "CREATE STREAM input WITH (kafka_topic='input', format='PROTOBUF', "
      "key_schema_full_name='ProtobufKey2', value_schema_full_name='shop.ProtobufValue2');");
  EXPECT_EQ(engine_->catalog().find_source("INPUT")->schema_text(), "`K1` STRING KEY, `C1` BIGINT");
}

TEST_F(RegistryPropertiesTest, CsasColumnsMustFitThePinnedSchema) {
  engine_->execute(
      "CREATE STREAM input (`id` INT KEY, `c1` INT) WITH (kafka_topic='input', "
      "value_format='AVRO', partitions=1);");
  const int reordered = client_->register_schema(
      "other-value", {R"({"type":"record","name":"blah","fields":[{"name":"c2","type":"double"},)"
                      R"({"name":"c1","type":"int"}]})",
                      "AVRO",
                      {}});
  EXPECT_EQ(error_of("CREATE STREAM output WITH (value_schema_id=" + std::to_string(reordered) +
                     ") AS SELECT * FROM input;"),
            "The following value columns are changed, missing or reordered: [`c1` INTEGER]. "
            "Schema from schema registry is [`c2` DOUBLE, `c1` INTEGER]");
  const int fitting = client_->register_schema(
      "fits-value", {R"({"type":"record","name":"blah","fields":[{"name":"c1","type":"int"},)"
                     R"({"name":"c2","type":["null","int"],"default":null}]})",
                     "AVRO",
                     {}});
  engine_->execute("CREATE STREAM output WITH (value_schema_id=" + std::to_string(fitting) +
                   ") AS SELECT * FROM input;");
  // The pinned schema is used as it is: nothing registered for the sink's value.
  EXPECT_THROW(client_->latest("OUTPUT-value"), registry::RegistryClientError);
}

}  // namespace
}  // namespace oxbow::sql
