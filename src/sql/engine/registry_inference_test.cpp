// CREATE's schema inference from the registry (docs/sql/ksqldb-facts.md §3), against the
// registry library's fake registry, with ksqlDB's refusals.
#include <gtest/gtest.h>

#include "sql/binder/sql_error.h"
#include "sql/engine/engine.h"
#include "sql/serde/fake_schema_registry.h"
#include "sql/serde/schema_registry.h"

namespace oxbow::sql {
namespace {

class InferenceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    DdlSettings settings;
    settings.schema_registry_url = fake_.url();
    engine_ = std::make_unique<Engine>(settings);
  }
  void register_value(const std::string& subject, const std::string& schema,
                      const std::string& type = "AVRO") {
    client_->register_schema(subject, {schema, type, {}});
  }
  std::string schema_of(const std::string& name) {
    return engine_->catalog().find_source(name)->schema_text();
  }

  testing::FakeSchemaRegistry fake_;
  std::shared_ptr<registry::SchemaRegistryClient> client_ = schema_registry_client(fake_.url());
  std::unique_ptr<Engine> engine_;
};

TEST_F(InferenceTest, ValueColumnsComeFromTheLatestSchema) {
  register_value("src-value",
                 R"({"type":"record","name":"R","fields":[{"name":"id","type":"long"},)"
                 R"({"name":"tags","type":{"type":"array","items":"string"}},)"
                 R"({"name":"at","type":{"type":"long","logicalType":"timestamp-millis"}},)"
                 R"({"name":"kind","type":{"type":"enum","name":"K","symbols":["A"]}}]})");
  engine_->execute("CREATE STREAM s WITH (kafka_topic='src', value_format='AVRO');");
  EXPECT_EQ(schema_of("S"), "`ID` BIGINT, `TAGS` ARRAY<STRING>, `AT` TIMESTAMP, `KIND` STRING");
}

TEST_F(InferenceTest, KeysFromTheKeySubjectAndRowkey) {
  register_value("k-key", R"("string")");
  register_value("k-value",
                 R"({"type":"object","properties":{"V":{"type":"integer",)"
                 R"("connect.type":"int32"}}})",
                 "JSON");
  engine_->execute(
      "CREATE TABLE t WITH (kafka_topic='k', key_format='AVRO', value_format='JSON_SR');");
  EXPECT_EQ(schema_of("T"), "`ROWKEY` STRING PRIMARY KEY, `V` INTEGER");
}

TEST_F(InferenceTest, ProtobufColumnsFromTheFirstMessage) {
  register_value("pb-value", R"(syntax = "proto3";
package shop;
import "google/protobuf/timestamp.proto";
import "confluent/meta.proto";
import "confluent/type/decimal.proto";

message Order {
  int64 id = 1;
  repeated string tags = 2;
  map<string, int32> counts = 3;
  Item item = 4;
  google.protobuf.Timestamp at = 5;
  confluent.type.Decimal price = 6 [(confluent.field_meta) = { params: [ { key: "precision", value: "6" }, { key: "scale", value: "2" } ] }];
  Kind kind = 7;
  message Item {
    string name = 1;
  }
  enum Kind { A = 0; }
}
)",
                 "PROTOBUF");
  engine_->execute("CREATE STREAM pb WITH (kafka_topic='pb', value_format='PROTOBUF');");
  EXPECT_EQ(schema_of("PB"),
            "`ID` BIGINT, `TAGS` ARRAY<STRING>, `COUNTS` MAP<STRING, INTEGER>, "
            "`ITEM` STRUCT<`NAME` STRING>, `AT` TIMESTAMP, `PRICE` DECIMAL(6, 2), `KIND` STRING");
}

TEST_F(InferenceTest, SchemaIdPinsASchema) {
  register_value("x-value", R"({"type":"record","name":"A","fields":[{"name":"a","type":"int"}]})");
  register_value("x-value", R"({"type":"record","name":"A","fields":[{"name":"b","type":"int"}]})");
  engine_->execute(
      "CREATE STREAM x WITH (kafka_topic='x', value_format='AVRO', value_schema_id=1);");
  // A pinned schema's names stay as written (ksqlDB's ORIGINAL_FIELD_NAME policy).
  EXPECT_EQ(schema_of("X"), "`a` INTEGER");
}

TEST_F(InferenceTest, SchemasAreRegisteredByTheStatements) {
  // CREATE with columns: registered when the subject has none, left when it has one.
  register_value("taken-value",
                 R"({"type":"record","name":"Own","fields":[{"name":"V","type":"int"}]})");
  engine_->execute(
      "CREATE STREAM fresh (k STRING KEY, v INT) WITH (kafka_topic='fresh', format='AVRO', "
      "partitions=1);"
      "CREATE STREAM taken (v INT) WITH (kafka_topic='taken', value_format='AVRO', "
      "partitions=1);");
  EXPECT_EQ(client_->latest("fresh-key").info.schema, "\"string\"");
  EXPECT_EQ(client_->latest("fresh-value").info.schema,
            derived_schema("AVRO", {{"V", SqlType::integer(), ColumnNamespace::kValue, ""}}, true)
                .schema);
  EXPECT_EQ(client_->latest("taken-value").version, 1);
  // C*AS: the sink's schemas at once, before any record.
  engine_->execute(
      "CREATE STREAM doubled WITH (value_format='JSON_SR') AS SELECT k, v * 2 AS w "
      "FROM fresh;");
  EXPECT_EQ(client_->latest("DOUBLED-value").info.type, "JSON");
  EXPECT_EQ(client_->latest("DOUBLED-key").info.schema, "\"string\"");
}

TEST_F(InferenceTest, KsqlDbsRefusals) {
  auto message = [&](const std::string& statement) {
    try {
      engine_->execute(statement);
    } catch (const SqlError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("CREATE STREAM a WITH (kafka_topic='input_topic', value_format='AVRO');"),
            "Schema for message values on topic 'input_topic' does not exist in the Schema "
            "Registry.");
  EXPECT_EQ(message("CREATE STREAM a (v INT) WITH (kafka_topic='a', value_format='AVRO', "
                    "value_schema_id=1);"),
            "Table elements and VALUE_SCHEMA_ID cannot both exist for create statement.");
  EXPECT_EQ(message("CREATE STREAM a (v INT) WITH (kafka_topic='a', value_format='KAFKA', "
                    "value_schema_id=1);"),
            "VALUE_FORMAT should support schema inference when VALUE_SCHEMA_ID is provided. "
            "Current format is KAFKA.");
  Engine unconfigured;
  try {
    unconfigured.execute("CREATE STREAM a (v INT) WITH (kafka_topic='a', value_format='AVRO');");
    FAIL();
  } catch (const SqlError& e) {
    EXPECT_STREQ(e.what(),
                 "Cannot create topic 'a' with format AVRO without configuring "
                 "'ksql.schema.registry.url'");
  }
}

}  // namespace
}  // namespace oxbow::sql
