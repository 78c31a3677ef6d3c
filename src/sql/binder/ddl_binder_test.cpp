#include "sql/binder/ddl_binder.h"

#include <gtest/gtest.h>

#include "sql/binder/sql_error.h"
#include "sql/parser/parser.h"

namespace oxbow::sql {
namespace {

BoundCreate bind(const std::string& text, const Catalog& catalog = {},
                 const DdlSettings& settings = {}) {
  auto statements = parser::parse(text);
  return bind_create_source(std::get<parser::CreateSource>(statements.at(0).body), catalog,
                            settings);
}

std::string error_of(const std::string& text, const Catalog& catalog = {}) {
  try {
    bind(text, catalog);
  } catch (const SqlError& e) {
    return e.what();
  }
  return "(bound)";
}

TEST(DdlBinder, StreamWithKeysHeadersAndFormats) {
  auto bound = bind(
      "CREATE STREAM s (v STRING, id BIGINT KEY, h BYTES HEADER('trace'), "
      "hs ARRAY<STRUCT<key STRING, value BYTES>> HEADERS) WITH (kafka_topic='t', "
      "value_format='json', partitions=3, timestamp='id');");
  const DataSource& s = bound.source;
  EXPECT_EQ(s.kind, SourceKind::kStream);
  EXPECT_EQ(s.topic, "t");
  EXPECT_EQ(s.formats.key_format, "KAFKA");
  EXPECT_EQ(s.formats.value_format, "JSON");
  EXPECT_EQ(s.partitions, 3);
  EXPECT_EQ(s.timestamp_column, "ID");
  EXPECT_EQ(s.schema_text(),
            "`ID` BIGINT KEY, `V` STRING, `H` BYTES HEADER('trace'), "
            "`HS` ARRAY<STRUCT<`KEY` STRING, `VALUE` BYTES>> HEADERS");
}

TEST(DdlBinder, TablesAndTheirKeyMarkers) {
  EXPECT_EQ(bind("CREATE TABLE t (id INT PRIMARY KEY, v STRING) WITH (kafka_topic='t', "
                 "format='json');")
                .source.schema_text(),
            "`ID` INTEGER PRIMARY KEY, `V` STRING");
  EXPECT_EQ(error_of("CREATE TABLE t (v STRING) WITH (kafka_topic='t', value_format='json');"),
            "Tables require a PRIMARY KEY. Please define the PRIMARY KEY.");
  EXPECT_EQ(error_of("CREATE TABLE INPUT (ID INT KEY, V STRING) WITH (kafka_topic='t', "
                     "value_format='json');"),
            "Line: 1, Col: 21: Column `ID` is a 'KEY' column: please use 'PRIMARY KEY' for "
            "tables.");
  EXPECT_EQ(error_of("CREATE STREAM s (ID INT PRIMARY KEY) WITH (kafka_topic='t', "
                     "value_format='json');"),
            "Line: 1, Col: 18: Column `ID` is a 'PRIMARY KEY' column: please use 'KEY' for "
            "streams.");
}

TEST(DdlBinder, WithClauseErrors) {
  EXPECT_EQ(error_of("CREATE STREAM s (v INT) WITH (kafka_topic='t', value_format='json', "
                     "foo=1, bar='x');"),
            "Invalid config variable(s) in the WITH clause: FOO,BAR");
  EXPECT_EQ(error_of("CREATE STREAM s (v INT) WITH (kafka_topic='t');"),
            "Statement is missing the 'VALUE_FORMAT' property from the WITH clause. Either "
            "provide one or set a default via the 'ksql.persistence.default.format.value' "
            "config.");
  EXPECT_EQ(error_of("CREATE STREAM s (v INT) WITH (value_format='json');"),
            "Missing required configuration \"KAFKA_TOPIC\" which has no default value.");
  EXPECT_EQ(error_of("CREATE STREAM s (v INT) WITH (kafka_topic='t', value_format='foo');"),
            "Unknown format: FOO");
  EXPECT_EQ(error_of("CREATE STREAM s (v INT) WITH (kafka_topic='t', format='json', "
                     "key_format='kafka');")
                .rfind("Cannot supply both 'KEY_FORMAT' and 'FORMAT' properties", 0),
            0u);
  EXPECT_EQ(error_of("CREATE STREAM s (v INT) WITH (kafka_topic='t', value_format='json', "
                     "value_delimiter='|');"),
            "JSON does not support the following configs: [delimiter]");
  EXPECT_EQ(error_of("CREATE STREAM s (v INT) WITH (kafka_topic='t', value_format='delimited', "
                     "value_delimiter='<~>');"),
            "Configuration VALUE_DELIMITER is invalid: Invalid delimiter value: '<~>'. Delimiter "
            "must be a single character or TAB,SPACE\nExample valid value: ';'");
  EXPECT_EQ(bind("CREATE STREAM s (v INT) WITH (kafka_topic='t', value_format='delimited', "
                 "value_delimiter='TAB');")
                .source.formats.value_delimiter,
            "\t");
  EXPECT_EQ(error_of("CREATE TABLE t (k INT PRIMARY KEY) WITH (kafka_topic='t', "
                     "value_format='json', retention_ms=5);"),
            "Invalid config variable in the WITH clause: RETENTION_MS. Non-windowed tables do "
            "not support retention.");
}

TEST(DdlBinder, TimestampColumnChecks) {
  EXPECT_EQ(error_of("CREATE STREAM s (v INT) WITH (kafka_topic='t', value_format='json', "
                     "timestamp='invalid_ts');"),
            "The TIMESTAMP column set in the WITH clause does not exist in the schema: "
            "'INVALID_TS'");
  EXPECT_EQ(error_of("CREATE STREAM s (event_ts INT) WITH (kafka_topic='t', "
                     "value_format='json', timestamp='event_ts');"),
            "Timestamp column, `EVENT_TS`, should be LONG(INT64), TIMESTAMP, or a String with a "
            "timestamp_format specified");
  EXPECT_EQ(bind("CREATE STREAM s (ts STRING) WITH (kafka_topic='t', value_format='json', "
                 "timestamp='ts', timestamp_format='yyyy-MM-dd');")
                .source.timestamp_format,
            "yyyy-MM-dd");
}

TEST(DdlBinder, Windows) {
  auto bound = bind(
      "CREATE TABLE w (k STRING PRIMARY KEY, n BIGINT) WITH (kafka_topic='w', "
      "value_format='json', window_type='Hopping', window_size='30 SECONDS');");
  EXPECT_EQ(bound.source.window->size_ms, 30'000);
  EXPECT_EQ(error_of("CREATE STREAM s (n BIGINT) WITH (kafka_topic='w', value_format='json', "
                     "window_type='tumbling', window_size='30 bobs');"),
            "Configuration WINDOW_SIZE is invalid: Invalid duration: '30 bobs'. Unknown time "
            "unit: 'BOBS'");
  EXPECT_EQ(error_of("CREATE STREAM s (k INT KEY) WITH (kafka_topic='w', value_format='json', "
                     "window_type='session', window_size='1 second');"),
            "'WINDOW_SIZE' should not be set for SESSION windows.");
  EXPECT_EQ(error_of("CREATE STREAM s (n BIGINT) WITH (kafka_topic='w', value_format='json', "
                     "window_type='session');"),
            "Windowed sources require a key column.");
}

TEST(DdlBinder, ColumnTypesAndNames) {
  EXPECT_EQ(error_of("CREATE STREAM s (h INT HEADER('k')) WITH (kafka_topic='t', "
                     "value_format='json');"),
            "Line: 1, Col: 18: Invalid type for HEADER('k') column: expected BYTES, got INTEGER");
  EXPECT_EQ(error_of("CREATE STREAM s (h BYTES HEADERS) WITH (kafka_topic='t', "
                     "value_format='json');"),
            "Line: 1, Col: 18: Invalid type for HEADERS column: expected "
            "ARRAY<STRUCT<`KEY` STRING, `VALUE` BYTES>>, got BYTES");
  EXPECT_EQ(error_of("CREATE STREAM s (rowpartition INT) WITH (kafka_topic='t', "
                     "value_format='json');"),
            "Line: 1, Col: 18: 'ROWPARTITION' is a reserved column name. You cannot use it as a "
            "name for a column.");
  EXPECT_EQ(error_of("CREATE STREAM s (k MAP<INT, DOUBLE> KEY) WITH (kafka_topic='t', "
                     "format='json');")
                .rfind("Map keys, including types that contain maps, are not supported", 0),
            0u);
  EXPECT_EQ(error_of("CREATE STREAM s (a INT KEY, b INT KEY) WITH (kafka_topic='t', "
                     "value_format='json');"),
            "The 'KAFKA' format only supports a single field. Got: [`A` INTEGER, `B` INTEGER]");
  EXPECT_EQ(error_of("CREATE STREAM s (d DECIMAL(2, 3)) WITH (kafka_topic='t', "
                     "value_format='json');"),
            "DECIMAL precision must be >= scale: DECIMAL(2,3)");
  EXPECT_EQ(error_of("CREATE STREAM s (a ADDRESS) WITH (kafka_topic='t', value_format='json');"),
            "Cannot resolve unknown type or alias: ADDRESS");
  Catalog catalog;
  catalog.put_type("ADDRESS", SqlType::structure({{"STREET", SqlType::string()}}));
  EXPECT_EQ(
      bind("CREATE STREAM s (a ADDRESS) WITH (kafka_topic='t', value_format='json');", catalog)
          .source.schema_text(),
      "`A` STRUCT<`STREET` STRING>");
}

TEST(DdlBinder, NamesTakenAndIfNotExists) {
  Catalog catalog;
  catalog.put_source(
      bind("CREATE TABLE t (k INT PRIMARY KEY) WITH (kafka_topic='t', value_format='json');")
          .source);
  EXPECT_EQ(
      error_of("CREATE STREAM t (v INT) WITH (kafka_topic='t', value_format='json');", catalog),
      "Cannot add stream 'T': A table with the same name already exists");
  auto again = bind(
      "CREATE TABLE IF NOT EXISTS t (k INT PRIMARY KEY) WITH (kafka_topic='t', "
      "value_format='json');",
      catalog);
  EXPECT_TRUE(again.skip);
  EXPECT_EQ(again.warning, "A table with the same name already exists.");
  catalog.put_source(
      bind("CREATE SOURCE STREAM input (v INT) WITH (kafka_topic='i', value_format='json');")
          .source);
  EXPECT_EQ(error_of("CREATE OR REPLACE STREAM input (v INT) WITH (kafka_topic='i', "
                     "value_format='json');",
                     catalog),
            "Cannot add stream 'INPUT': CREATE OR REPLACE is not supported on source streams.");
}

}  // namespace
}  // namespace oxbow::sql
