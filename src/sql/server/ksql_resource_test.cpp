// POST /ksql's bodies over a real engine, without a cluster: what the apply hook is asked to do
// is recorded instead.
#include "sql/server/ksql_resource.h"

#include <gtest/gtest.h>

namespace oxbow::sql::server {
namespace {

using nlohmann::json;

constexpr const char* kCreate =
    "CREATE STREAM pageviews (id BIGINT KEY, page STRING) WITH (kafka_topic='pv', "
    "value_format='JSON', partitions=2);";

class KsqlResourceTest : public ::testing::Test {
 protected:
  json post(const json& request, int expected_status = 200) {
    RestResponse r = resource.handle(request.dump());
    EXPECT_EQ(r.status, expected_status) << r.body;
    return json::parse(r.body);
  }

  Engine engine;
  std::vector<std::string> applied;  // each applied statement's text
  std::map<std::string, std::string> last_properties;
  std::string last_deleted_topic;
  KsqlResource resource{engine,
                        [this](const AcceptedStatement& accepted) {
                          applied.push_back(accepted.result.statement);
                          last_properties = accepted.request_properties;
                          last_deleted_topic = accepted.deleted_topic;
                        },
                        {{"ksql.service.id", "default_"}}};
};

TEST_F(KsqlResourceTest, CreatesAStreamAsCurrentStatus) {
  json body = post({{"ksql", kCreate}, {"streamsProperties", {{"auto.offset.reset", "earliest"}}}});
  ASSERT_EQ(body.size(), 1u);
  const json& status = body[0];
  EXPECT_EQ(status["@type"], "currentStatus");
  EXPECT_EQ(status["commandId"], "stream/PAGEVIEWS/create");
  EXPECT_EQ(status["commandStatus"]["status"], "SUCCESS");
  EXPECT_EQ(status["commandStatus"]["message"], "Stream created");
  EXPECT_EQ(status["commandSequenceNumber"], 1);
  EXPECT_EQ(status["statementText"], kCreate);
  EXPECT_EQ(status["warnings"], json::array());
  EXPECT_EQ(applied.size(), 1u);
  EXPECT_EQ(last_properties.at("auto.offset.reset"), "earliest");
}

TEST_F(KsqlResourceTest, ListsAndDescribesSources) {
  post({{"ksql", kCreate}});
  json body = post({{"ksql", "SHOW STREAMS; DESCRIBE pageviews;"}});
  ASSERT_EQ(body.size(), 2u);
  EXPECT_EQ(body[0]["@type"], "streams");
  json expected_stream = {{"type", "STREAM"},     {"name", "PAGEVIEWS"},   {"topic", "pv"},
                          {"keyFormat", "KAFKA"}, {"valueFormat", "JSON"}, {"isWindowed", false}};
  bool listed = false;
  for (const auto& s : body[0]["streams"]) listed = listed || s == expected_stream;
  EXPECT_TRUE(listed) << body[0].dump();
  const json& source = body[1]["sourceDescription"];
  EXPECT_EQ(body[1]["@type"], "sourceDescription");
  EXPECT_EQ(source["name"], "PAGEVIEWS");
  EXPECT_EQ(source["type"], "STREAM");
  EXPECT_EQ(source["topic"], "pv");
  ASSERT_EQ(source["fields"].size(), 2u);
  EXPECT_EQ(source["fields"][0],
            (json{{"name", "ID"},
                  {"schema", {{"type", "BIGINT"}, {"fields", nullptr}, {"memberSchema", nullptr}}},
                  {"type", "KEY"}}));
  EXPECT_FALSE(source["fields"][1].contains("type"));
  EXPECT_TRUE(applied.size() == 1u) << "SHOW and DESCRIBE change nothing on the cluster";
}

TEST_F(KsqlResourceTest, RunsAndTerminatesAPersistentQuery) {
  post({{"ksql", kCreate}});
  json created = post({{"ksql", "CREATE STREAM big AS SELECT * FROM pageviews WHERE id > 10;"}});
  EXPECT_EQ(created[0]["commandStatus"]["message"], "Created query with ID CSAS_BIG_0");
  EXPECT_EQ(created[0]["commandId"], "stream/BIG/create");
  json queries = post({{"ksql", "SHOW QUERIES;"}});
  EXPECT_EQ(queries[0]["@type"], "queries");
  ASSERT_EQ(queries[0]["queries"].size(), 1u);
  EXPECT_EQ(queries[0]["queries"][0]["id"], "CSAS_BIG_0");
  EXPECT_EQ(queries[0]["queries"][0]["sinks"], json::array({"BIG"}));
  json terminated = post({{"ksql", "TERMINATE CSAS_BIG_0;"}});
  EXPECT_EQ(terminated[0]["commandId"], "terminate/CSAS_BIG_0/execute");
  EXPECT_EQ(terminated[0]["commandStatus"]["message"], "Query terminated.");
  EXPECT_EQ(terminated[0]["commandSequenceNumber"], 3);
  EXPECT_TRUE(engine.queries().empty());

  RestResponse status = resource.command_status("stream/BIG/create");
  EXPECT_EQ(status.status, 200);
  EXPECT_EQ(json::parse(status.body),
            (json{{"status", "SUCCESS"}, {"message", "Created query with ID CSAS_BIG_0"}}));
  EXPECT_EQ(resource.command_status("stream/NOPE/create").status, 404);
  json all = json::parse(resource.command_statuses().body)["commandStatuses"];
  EXPECT_EQ(all.size(), 3u) << all.dump();
  EXPECT_EQ(all["terminate/CSAS_BIG_0/execute"], "SUCCESS");
}

TEST_F(KsqlResourceTest, QueriesShowTheStatusTheyRunWith) {
  KsqlResource failing{
      engine, {}, {}, [](const std::string& id) { return id == "CSAS_BIG_0" ? "ERROR" : ""; }};
  failing.handle(json{{"ksql", kCreate}}.dump());
  failing.handle(
      json{{"ksql", "CREATE STREAM big AS SELECT * FROM pageviews WHERE id > 10;"}}.dump());
  json shown = json::parse(failing
                               .handle(json{{"ksql",
                                             "SHOW QUERIES; DESCRIBE pageviews EXTENDED; EXPLAIN "
                                             "CSAS_BIG_0;"}}
                                           .dump())
                               .body);
  ASSERT_EQ(shown.size(), 3u) << shown.dump();
  EXPECT_EQ(shown[0]["queries"][0]["statusCount"], (json{{"ERROR", 1}}));
  EXPECT_EQ(shown[0]["queries"][0]["state"], "ERROR");
  EXPECT_EQ(shown[1]["sourceDescription"]["readQueries"][0]["state"], "ERROR");
  EXPECT_EQ(shown[2]["queryDescription"]["state"], "ERROR");
}

TEST_F(KsqlResourceTest, DropDeleteTopicNamesTheTopicToDelete) {
  post({{"ksql", kCreate}});
  json dropped = post({{"ksql", "DROP STREAM pageviews DELETE TOPIC;"}});
  EXPECT_EQ(dropped[0]["commandId"], "stream/PAGEVIEWS/drop");
  EXPECT_EQ(dropped[0]["commandStatus"]["message"], "Source `PAGEVIEWS` (topic: pv) was dropped.");
  EXPECT_EQ(last_deleted_topic, "pv");
  post({{"ksql", kCreate}});
  post({{"ksql", "DROP STREAM pageviews;"}});
  EXPECT_EQ(last_deleted_topic, "");
}

TEST_F(KsqlResourceTest, AFailedStatementCarriesTheEntitiesBeforeIt) {
  json error = post({{"ksql", std::string(kCreate) + " DESCRIBE nowhere;"}}, 400);
  EXPECT_EQ(error["@type"], "statement_error");
  EXPECT_EQ(error["error_code"], 40001);
  EXPECT_EQ(error["statementText"], "DESCRIBE nowhere;");
  EXPECT_NE(error["message"].get<std::string>().find("NOWHERE"), std::string::npos)
      << error["message"];
  ASSERT_EQ(error["entities"].size(), 1u);
  EXPECT_EQ(error["entities"][0]["commandStatus"]["message"], "Stream created");
}

TEST_F(KsqlResourceTest, RefusesPushQueriesAndBadBodies) {
  post({{"ksql", kCreate}});
  json select = post({{"ksql", "SELECT * FROM pageviews EMIT CHANGES;"}}, 400);
  EXPECT_EQ(select["@type"], "statement_error");
  EXPECT_NE(select["message"].get<std::string>().find("'/query'"), std::string::npos);
  for (const char* body : {"not json", "[1]", "{\"sql\":\"SHOW STREAMS;\"}", "{\"ksql\":3}"}) {
    RestResponse r = resource.handle(body);
    EXPECT_EQ(r.status, 400) << body;
    json error = json::parse(r.body);
    EXPECT_EQ(error["@type"], "generic_error") << body;
    EXPECT_EQ(error["error_code"], 40000) << body;
  }
}

TEST_F(KsqlResourceTest, ShowsPropertiesOfTheServerAndTheSession) {
  json body = post({{"ksql", "SET 'auto.offset.reset'='earliest'; SHOW PROPERTIES;"}});
  ASSERT_EQ(body.size(), 2u);
  EXPECT_EQ(body[1]["@type"], "properties");
  const json& properties = body[1]["properties"];
  auto has = [&](const std::string& name, const std::string& value) {
    for (const auto& p : properties)
      if (p["name"] == name && p["value"] == value) return true;
    return false;
  };
  EXPECT_TRUE(has("ksql.service.id", "default_")) << properties.dump();
  EXPECT_TRUE(has("auto.offset.reset", "earliest")) << properties.dump();
  EXPECT_EQ(body[1]["overwrittenProperties"], json::array({"auto.offset.reset"}));
}

TEST_F(KsqlResourceTest, SubstitutesTheRequestsSessionVariablesForItsStatementsOnly) {
  post({{"ksql", "DEFINE `topic` = 'session_topic';"}});
  json body =
      post({{"ksql",
             "CREATE STREAM ${name} (id INT KEY, v STRING) WITH (kafka_topic='${topic}', "
             "value_format='JSON', partitions=${count}); SHOW VARIABLES;"},
            {"sessionVariables", {{"NAME", "views"}, {"topic", "views_topic"}, {"count", 3}}}});
  ASSERT_EQ(body.size(), 2u);
  EXPECT_EQ(body[0]["commandId"], "stream/VIEWS/create");
  EXPECT_EQ(body[0]["statementText"],
            "CREATE STREAM views (id INT KEY, v STRING) WITH (kafka_topic='views_topic', "
            "value_format='JSON', partitions=3);");
  // After the request, the session's own variables are back and the request's are gone.
  json after = post({{"ksql", "SHOW VARIABLES;"}});
  EXPECT_EQ(after[0]["variables"], json::array({{{"name", "topic"}, {"value", "session_topic"}}}));
  json described = post({{"ksql", "DESCRIBE views;"}});
  EXPECT_EQ(described[0]["sourceDescription"]["topic"], "views_topic");
  // A DROP with a variable still knows its source (for DELETE TOPIC).
  post({{"ksql", "DROP STREAM ${s} DELETE TOPIC;"}, {"sessionVariables", {{"s", "views"}}}});
  EXPECT_EQ(last_deleted_topic, "views_topic");
}

TEST_F(KsqlResourceTest, RefusesDeniedStreamsPropertiesBeforeAnyStatementRuns) {
  resource.set_denied_properties({"ksql.service.id"});
  json error =
      post({{"ksql", kCreate}, {"streamsProperties", {{"ksql.service.id", "other_"}}}}, 400);
  EXPECT_EQ(error["@type"], "generic_error");
  EXPECT_EQ(error["error_code"], 40000);
  EXPECT_EQ(error["message"],
            "One or more properties overrides set locally are prohibited by the KSQL server (use "
            "UNSET to reset their default value): [ksql.service.id]");
  EXPECT_TRUE(applied.empty());
}

TEST_F(KsqlResourceTest, DescribesAFunctionAsDescribeFunction) {
  json body = post({{"ksql", "DESCRIBE FUNCTION concat;"}});
  ASSERT_EQ(body.size(), 1u);
  const json& f = body[0];
  EXPECT_EQ(f["@type"], "describe_function");
  EXPECT_EQ(f["name"], "CONCAT");
  EXPECT_EQ(f["type"], "SCALAR");
  EXPECT_EQ(f["author"], "Confluent");
  EXPECT_EQ(f["path"], "internal");
  EXPECT_EQ(f["statementText"], "DESCRIBE FUNCTION concat;");
  EXPECT_FALSE(f["description"].get<std::string>().empty());
  ASSERT_FALSE(f["functions"].empty());
  EXPECT_EQ(
      f["functions"][0]["arguments"],
      json::array(
          {{{"name", "inputs"}, {"type", "VARCHAR"}, {"description", ""}, {"isVariadic", true}}}));
  EXPECT_EQ(f["functions"][0]["returnType"], "VARCHAR");
  json error = post({{"ksql", "DESCRIBE FUNCTION nope;"}}, 400);
  EXPECT_EQ(error["message"], "Can't find any functions with the name 'NOPE'");
}

}  // namespace
}  // namespace oxbow::sql::server
