#include "sql/server/entities.h"

#include <gtest/gtest.h>

#include "sql/server/query_runner.h"

namespace oxbow::sql::server {
namespace {

using nlohmann::json;

TEST(EntitiesTest, SchemasNestAsKsqlDbsSchemaInfo) {
  auto type = SqlType::array(SqlType::structure({{"A", SqlType::decimal(4, 2)}}));
  json schema = schema_json(*type);
  EXPECT_EQ(schema["type"], "ARRAY");
  EXPECT_EQ(schema["fields"], nullptr);
  const json& member = schema["memberSchema"];
  EXPECT_EQ(member["type"], "STRUCT");
  ASSERT_EQ(member["fields"].size(), 1u);
  EXPECT_EQ(member["fields"][0]["name"], "A");
  EXPECT_EQ(member["fields"][0]["schema"]["type"], "DECIMAL");
  EXPECT_EQ(member["fields"][0]["schema"]["parameters"], (json{{"precision", 4}, {"scale", 2}}));
}

TEST(EntitiesTest, CommandIdsNameTheKindTheSourceAndTheAction) {
  EXPECT_EQ(statement_info("CREATE TABLE t (k INT PRIMARY KEY, v INT) WITH (kafka_topic='t', "
                           "value_format='JSON');")
                .command_id,
            "table/T/create");
  EXPECT_EQ(statement_info("DROP STREAM s;").command_id, "stream/S/drop");
  EXPECT_EQ(statement_info("INSERT INTO s SELECT * FROM r;").command_id, "stream/S/create");
  EXPECT_EQ(statement_info("SHOW TABLES;").listed, "TABLES");
  EXPECT_TRUE(statement_info("SELECT * FROM s EMIT CHANGES;").streamed);
  EXPECT_TRUE(statement_info("PRINT 't';").streamed);
  EXPECT_TRUE(statement_info("nonsense").command_id.empty());
}

TEST(EntitiesTest, QueriesTakeTheRequestsSessionVariables) {
  json request = {{"sql", "SELECT * FROM ${T} WHERE W = '${w}' EMIT CHANGES;"},
                  {"sessionVariables", {{"t", "words"}, {"W", "tree"}}}};
  EXPECT_EQ(with_session_variables(request, request["sql"]),
            "SELECT * FROM words WHERE W = 'tree' EMIT CHANGES;");
  EXPECT_EQ(with_session_variables(json::object(), "SELECT '$${x}';"), "SELECT '$${x}';");
}

TEST(EntitiesTest, TextThatIsNotUtf8IsReplacedNotThrown) {
  EXPECT_EQ(json_text(json{{"message", std::string("caf\xc3")}}),
            "{\"message\":\"caf\xef\xbf\xbd\"}");
}

TEST(EntitiesTest, StreamsPropertiesMapToStreamsSettings) {
  EXPECT_EQ(streams_property_name("ksql.streams.num.stream.threads"), "num.stream.threads");
  EXPECT_EQ(streams_property_name("auto.offset.reset"), "auto.offset.reset");
  EXPECT_EQ(streams_property_name("ksql.service.id"), "");
}

}  // namespace
}  // namespace oxbow::sql::server
