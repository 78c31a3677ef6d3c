// The Schema Registry formats against the registry library's fake registry: the schemas ksqlDB
// registers and the bytes of Confluent's wire format both ways.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "oxbow/registry/serdes.h"
#include "oxbow/streams/errors.h"
#include "registry/serde/fake_registry.h"
#include "sql/binder/sql_error.h"
#include "sql/serde/row_serde.h"
#include "sql/serde/schema_registry.h"

namespace oxbow::sql {
namespace {

using Json = nlohmann::json;

Column column(const std::string& name, SqlTypePtr type,
              ColumnNamespace ns = ColumnNamespace::kValue) {
  return {name, std::move(type), ns, ""};
}

Formats formats(const std::string& format) {
  Formats f;
  f.key_format = f.value_format = format;
  return f;
}

std::vector<Column> id_name() {
  return {column("ID", SqlType::bigint()), column("NAME", SqlType::string())};
}

Row row(int64_t id, const std::string& name) {
  Row r(2);
  r[0].set_bigint(id);
  r[1].set_string(name);
  return r;
}

class RegistryFormatsTest : public ::testing::Test {
 protected:
  registry::testing::FakeRegistry fake_;
  SchemaRegistryScope scope_{fake_.url()};
  std::shared_ptr<registry::SchemaRegistryClient> client_ = schema_registry_client(fake_.url());
};

TEST_F(RegistryFormatsTest, AvroSchemaIsKsqlDbs) {
  std::vector<Column> columns = id_name();
  columns.push_back(column("AMOUNT", SqlType::decimal(4, 2)));
  columns.push_back(column("S", SqlType::structure({{"D", SqlType::of(SqlBaseType::kDate)}})));
  columns.push_back(column("M", SqlType::map(SqlType::string(), SqlType::integer())));
  EXPECT_EQ(
      derived_schema("AVRO", columns, true).schema,
      R"({"type":"record","name":"KsqlDataSourceSchema","namespace":"io.confluent.ksql.avro_schemas",)"
      R"("fields":[{"name":"ID","type":["null","long"],"default":null},)"
      R"({"name":"NAME","type":["null","string"],"default":null},)"
      R"({"name":"AMOUNT","type":["null",{"type":"bytes","scale":2,"precision":4,"connect.version":1,)"
      R"("connect.parameters":{"scale":"2","connect.decimal.precision":"4"},)"
      R"("connect.name":"org.apache.kafka.connect.data.Decimal","logicalType":"decimal"}],"default":null},)"
      R"({"name":"S","type":["null",{"type":"record","name":"KsqlDataSourceSchema_S","fields":[)"
      R"({"name":"D","type":["null",{"type":"int","connect.version":1,)"
      R"("connect.name":"org.apache.kafka.connect.data.Date","logicalType":"date"}],"default":null}],)"
      R"("connect.name":"io.confluent.ksql.avro_schemas.KsqlDataSourceSchema_S"}],"default":null},)"
      R"({"name":"M","type":["null",{"type":"array","items":{"type":"record","name":"KsqlDataSourceSchema_M",)"
      R"("fields":[{"name":"key","type":["null","string"],"default":null},)"
      R"({"name":"value","type":["null","int"],"default":null}],"connect.internal.type":"MapEntry"},)"
      R"("connect.name":"io.confluent.ksql.avro_schemas.KsqlDataSourceSchema_M"}],"default":null}],)"
      R"("connect.name":"io.confluent.ksql.avro_schemas.KsqlDataSourceSchema"})");
  EXPECT_EQ(derived_schema("AVRO", {column("K", SqlType::integer())}, false).schema, "\"int\"");
}

TEST_F(RegistryFormatsTest, AvroValueBytesAndRegistration) {
  auto serde = row_serde(formats("AVRO"), id_name(), false);
  const std::string bytes = serde.serialize("orders", row(1, "bob"));
  // 0x00, id 1, union branch 1 (zig-zag 2) long 1 (2), branch 1, "bob".
  EXPECT_EQ(bytes, std::string("\0\0\0\0\1\2\2\2\6bob", 12));
  const auto latest = client_->latest("orders-value");
  EXPECT_EQ(latest.info.schema, derived_schema("AVRO", id_name(), true).schema);
  const Row back = serde.deserialize("orders", bytes);
  EXPECT_EQ(back[0].bigint(), 1);
  EXPECT_EQ(back[1].text(), "bob");
}

TEST_F(RegistryFormatsTest, AvroReadsAnotherWritersSchemaByName) {
  // A producer's own schema: lower-case names, required fields, an extra field, a float.
  const std::string schema =
      R"({"type":"record","name":"Order","fields":[{"name":"extra","type":"int"},)"
      R"({"name":"name","type":"string"},{"name":"id","type":"long"}]})";
  registry::Serializer writer(client_, {}, registry::Format::kAvro, schema, false);
  const std::string bytes =
      writer.serialize("orders", Json{{"extra", 5}, {"name", "ann"}, {"id", 42}});
  const Row back = row_serde(formats("AVRO"), id_name(), false).deserialize("orders", bytes);
  EXPECT_EQ(back[0].bigint(), 42);
  EXPECT_EQ(back[1].text(), "ann");
}

TEST_F(RegistryFormatsTest, AvroRoundTripsEveryType) {
  std::vector<Column> columns = {column("B", SqlType::boolean()),
                                 column("Y", SqlType::bytes()),
                                 column("M", SqlType::decimal(5, 2)),
                                 column("T", SqlType::of(SqlBaseType::kTimestamp)),
                                 column("A", SqlType::array(SqlType::integer())),
                                 column("P", SqlType::map(SqlType::string(), SqlType::string())),
                                 column("S", SqlType::structure({{"X", SqlType::double_type()}}))};
  Row r(columns.size());
  r[0].set_boolean(true);
  r[1].set_text(Value::Kind::kBytes, "\x00\xff\x80", 3);
  r[2].set_decimal(-12345, 2);
  r[3].set_time(Value::Kind::kTimestamp, 1700000000000);
  auto items = std::make_shared<std::vector<Value>>(2);
  (*items)[0].set_integer(7);
  r[4].set_items(Value::Kind::kArray, items);
  auto entries = std::make_shared<std::vector<Value>>(2);
  (*entries)[0].set_string("k");
  (*entries)[1].set_string("v");
  r[5].set_items(Value::Kind::kMap, entries);
  auto fields = std::make_shared<std::vector<Value>>(1);
  (*fields)[0].set_double(2.5);
  r[6].set_items(Value::Kind::kStruct, fields);
  auto serde = row_serde(formats("AVRO"), columns, false);
  const Row back = serde.deserialize("all", serde.serialize("all", r));
  for (size_t i = 0; i < r.size(); ++i)
    EXPECT_EQ(back[i].debug_string(), r[i].debug_string()) << columns[i].name;
}

TEST_F(RegistryFormatsTest, AvroKeyIsUnwrappedAndRegisteredUnderKeySubject) {
  auto serde = row_serde(formats("AVRO"), {column("K", SqlType::string())}, true);
  Row key(1);
  key[0].set_string("a");
  const std::string bytes = serde.serialize("t", key);
  EXPECT_EQ(bytes, std::string("\0\0\0\0\1\2a", 7));
  EXPECT_EQ(client_->latest("t-key").info.schema, "\"string\"");
  EXPECT_EQ(serde.deserialize("t", bytes)[0].text(), "a");
}

TEST_F(RegistryFormatsTest, UnreadableBytesThrowSerializationException) {
  for (const char* format : {"AVRO", "JSON_SR", "PROTOBUF"}) {
    auto serde = row_serde(formats(format), id_name(), false);
    EXPECT_THROW(serde.deserialize("t", "not framed"), streams::SerializationException) << format;
    EXPECT_THROW(serde.deserialize("t", std::string("\0\0\0\0\x63xx", 7)),
                 streams::SerializationException)
        << format;
  }
}

// Random payloads behind a valid header: a row or SerializationException, nothing else.
TEST_F(RegistryFormatsTest, RandomPayloadsReadOrThrowSerializationException) {
  std::vector<Column> columns = id_name();
  columns.push_back(column("M", SqlType::map(SqlType::string(), SqlType::decimal(6, 2))));
  columns.push_back(column("S", SqlType::structure({{"A", SqlType::array(SqlType::bytes())}})));
  std::mt19937 random(42);
  for (const char* format : {"AVRO", "JSON_SR", "PROTOBUF"}) {
    auto serde = row_serde(formats(format), columns, false);
    Row empty(columns.size());
    const std::string header = serde.serialize("fuzz", empty).substr(0, 5);
    for (int n = 0; n < 2000; ++n) {
      std::string payload(random() % 24, '\0');
      for (char& c : payload) c = static_cast<char>(random());
      try {
        serde.deserialize("fuzz", header + payload);
      } catch (const streams::SerializationException&) {
      }
    }
  }
}

TEST_F(RegistryFormatsTest, JsonSrWritesTheJsonAfterTheHeader) {
  auto serde = row_serde(formats("JSON_SR"), id_name(), false);
  const std::string bytes = serde.serialize("j", row(2, "cy"));
  EXPECT_EQ(bytes, std::string("\0\0\0\0\1", 5) + R"({"ID":2,"NAME":"cy"})");
  EXPECT_EQ(client_->latest("j-value").info.type, "JSON");
  EXPECT_EQ(client_->latest("j-value").info.schema,
            R"({"type":"object","properties":{"ID":{"connect.index":0,"oneOf":[{"type":"null"},)"
            R"({"type":"integer","connect.type":"int64"}]},"NAME":{"connect.index":1,"oneOf":[)"
            R"({"type":"null"},{"type":"string"}]}}})");
  EXPECT_EQ(serde.deserialize("j", bytes)[1].text(), "cy");
}

TEST_F(RegistryFormatsTest, ProtobufRoundTripsAndRegistersConnectDefault1) {
  std::vector<Column> columns = id_name();
  columns.push_back(column("AT", SqlType::of(SqlBaseType::kTimestamp)));
  columns.push_back(column("AMOUNT", SqlType::decimal(6, 2)));
  auto serde = row_serde(formats("PROTOBUF"), columns, false);
  Row r = row(3, "dee");
  r.resize(4);
  r[2].set_time(Value::Kind::kTimestamp, 1700000000123);
  r[3].set_decimal(-150, 2);
  const std::string bytes = serde.serialize("p", r);
  // Header, message indexes [0], then field 1 (varint 3), field 2 ("dee").
  EXPECT_EQ(bytes.substr(0, 12), std::string("\0\0\0\0\1\0\x08\x03\x12\x03"
                                             "de",
                                             12));
  EXPECT_NE(client_->latest("p-value").info.schema.find("message ConnectDefault1 {"),
            std::string::npos);
  const Row back = serde.deserialize("p", bytes);
  for (size_t i = 0; i < r.size(); ++i) EXPECT_EQ(back[i].debug_string(), r[i].debug_string());
}

// Found by the value formats' fuzzer: NaN written as a JSON number became 0.
TEST_F(RegistryFormatsTest, ProtobufKeepsDoublesJsonHasNoNumbersFor) {
  auto serde = row_serde(formats("PROTOBUF"), {column("D", SqlType::double_type())}, false);
  for (double d : {std::nan(""), HUGE_VAL, -HUGE_VAL}) {
    Row r(1);
    r[0].set_double(d);
    EXPECT_EQ(serde.deserialize("p", serde.serialize("p", r))[0].debug_string(),
              r[0].debug_string());
  }
}

TEST(RegistryFormats, DerivedSchemasInferBackToTheirColumns) {
  const std::vector<Column> columns = {
      column("ID", SqlType::bigint()),
      column("N", SqlType::integer()),
      column("AMOUNT", SqlType::decimal(4, 2)),
      column("D", SqlType::of(SqlBaseType::kDate)),
      column("T", SqlType::of(SqlBaseType::kTime)),
      column("TS", SqlType::of(SqlBaseType::kTimestamp)),
      column("A", SqlType::array(SqlType::integer())),
      column("M", SqlType::map(SqlType::string(), SqlType::double_type())),
      column("S", SqlType::structure({{"X", SqlType::boolean()}, {"Y", SqlType::bytes()}}))};
  for (const char* format : {"AVRO", "JSON_SR", "PROTOBUF"}) {
    const auto back = registry_columns(derived_schema(format, columns, true), format, false, false);
    ASSERT_EQ(back.size(), columns.size()) << format;
    for (size_t i = 0; i < columns.size(); ++i)
      EXPECT_EQ(back[i].name + " " + back[i].type->to_string(),
                columns[i].name + " " + columns[i].type->to_string())
          << format;
  }
}

TEST_F(RegistryFormatsTest, AvroRefusesNamesAvroDoesNotTake) {
  try {
    row_serde(formats("AVRO"), {column("1AVRO", SqlType::integer())}, false);
    FAIL();
  } catch (const SqlError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("Schema is not compatible with Avro: ", 0), 0u);
  }
}

TEST(RegistryFormats, BrokenProtobufTextsAreRefusedNotCrashed) {
  for (const char* text : {"message", "message M { map<", "message M { int32",
                           "syntax = \"proto3\";", "message M { repeated M m = 1; }"}) {
    try {
      registry_columns({text, "PROTOBUF", {}}, "PROTOBUF", false, false);
    } catch (const SqlError&) {
    }
  }
}

TEST(RegistryFormats, WithoutARegistryTheFormatIsRefused) {
  EXPECT_THROW(row_serde(formats("AVRO"), id_name(), false), SqlError);
}

}  // namespace
}  // namespace oxbow::sql
