// POST /ksql with a command log: which statements are written, in what form, what a log that
// refuses them leaves behind, and what a replay of the log gives back. The log is a vector here.
#include <gtest/gtest.h>

#include "sql/server/command_topic.h"
#include "sql/server/ksql_resource.h"

namespace oxbow::sql::server {
namespace {

using nlohmann::json;

struct Server {
  Server() {
    resource.set_command_log([this](const Command& c) -> int64_t {
      if (refuse) throw std::runtime_error("broker gone");
      log.push_back(c);
      log.back().offset = static_cast<int64_t>(log.size()) - 1;
      return log.back().offset;
    });
  }
  json post(const std::string& ksql, int expected_status = 200, json properties = json::object()) {
    RestResponse r =
        resource.handle(json{{"ksql", ksql}, {"streamsProperties", properties}}.dump());
    EXPECT_EQ(r.status, expected_status) << r.body;
    return json::parse(r.body);
  }
  std::vector<std::string> names() {
    std::vector<std::string> out;
    for (const auto& s : post("SHOW STREAMS;")[0]["streams"]) out.push_back(s["name"]);
    return out;
  }

  Engine engine;
  std::vector<Command> log;
  bool refuse = false;
  int applied = 0;
  KsqlResource resource{engine, [this](const AcceptedStatement&) { ++applied; }, {}};
};

constexpr const char* kCreate =
    "CREATE STREAM pageviews (id BIGINT KEY, page STRING) WITH (kafka_topic='views', "
    "value_format='JSON', partitions=1);";

TEST(CommandLogTest, WritesWhatChangesStateWithItsOffsetAsSequenceNumber) {
  Server s;
  json created = s.post(kCreate)[0];
  s.post("SET 'auto.offset.reset'='earliest'; DEFINE tag = 'big';");
  s.post("SHOW STREAMS; DESCRIBE pageviews;");
  json csas = s.post("CREATE STREAM ${tag} AS SELECT * FROM pageviews WHERE id > 10;", 200,
                     {{"ksql.streams.num.stream.threads", 2}})[0];
  s.post("INSERT INTO pageviews (id, page) VALUES (1, 'a');");
  s.post("CREATE TYPE addr AS STRUCT<city STRING>; TERMINATE CSAS_BIG_0;");
  ASSERT_EQ(s.log.size(), 4u);
  EXPECT_EQ(s.log[0].id, "stream/PAGEVIEWS/create");
  EXPECT_EQ(s.log[0].statement, kCreate);
  EXPECT_EQ(created["commandSequenceNumber"], 0);
  EXPECT_EQ(s.log[1].statement, "CREATE STREAM big AS SELECT * FROM pageviews WHERE id > 10;");
  EXPECT_EQ(s.log[1].streams_properties.at("ksql.streams.num.stream.threads"), "2");
  EXPECT_EQ(s.log[1].original_properties.at("auto.offset.reset"), "earliest");
  EXPECT_EQ(csas["commandSequenceNumber"], 1);
  EXPECT_EQ(csas["commandId"], "stream/BIG/create");
  EXPECT_EQ(s.log[2].id, "type/ADDR/create");
  EXPECT_EQ(s.log[3].id, "terminate/CSAS_BIG_0/execute");
}

TEST(CommandLogTest, AStatementTheLogRefusesIsAnsweredFiveHundredAndTakesNoEffect) {
  Server s;
  s.refuse = true;
  json error = s.post(kCreate, 500);
  EXPECT_EQ(error["@type"], "generic_error");
  EXPECT_EQ(error["error_code"], 50000);
  EXPECT_NE(error["message"].get<std::string>().find("broker gone"), std::string::npos);
  EXPECT_EQ(s.applied, 0);
  s.refuse = false;
  for (const auto& name : s.names()) EXPECT_NE(name, "PAGEVIEWS");
  // Refused by the engine: nothing written either.
  s.post("DROP STREAM nowhere;", 400);
  EXPECT_TRUE(s.log.empty());
  s.post(kCreate);
  EXPECT_EQ(s.log.size(), 1u);
}

TEST(CommandLogTest, AReplayGivesBackSourcesQueriesAndTheirIds) {
  Server first;
  first.post(kCreate);
  first.post("SET 'auto.offset.reset'='earliest';");
  first.post("CREATE STREAM big AS SELECT * FROM pageviews WHERE id > 10;", 200,
             {{"auto.offset.reset", "latest"}});
  first.post("CREATE STREAM small AS SELECT * FROM pageviews WHERE id < 10;");
  first.post("TERMINATE CSAS_BIG_0;");
  first.post(
      "CREATE TABLE t (id BIGINT PRIMARY KEY, n INT) WITH (kafka_topic='t', "
      "value_format='JSON', partitions=1);");

  Server second;
  auto log = first.log;
  log.insert(log.begin() + 1, Command{"stream/BROKEN/create",
                                      "CREATE STREAM broken AS SELECT "
                                      "* FROM missing;",
                                      {},
                                      {},
                                      99});
  auto started = second.resource.replay(log);
  EXPECT_EQ(second.names(), first.names());
  ASSERT_EQ(second.engine.queries().size(), 1u);
  const PersistentQuery& query = second.engine.queries()[0];
  EXPECT_EQ(query.id, "CSAS_SMALL_1");
  EXPECT_EQ(query.overridden_properties.at("auto.offset.reset"), "earliest");
  EXPECT_EQ(started.at("CSAS_BIG_0").at("auto.offset.reset"), "latest");
  EXPECT_EQ(second.post("SHOW TABLES;")[0]["tables"].size(), 1u);
  EXPECT_TRUE(second.log.empty()) << "a replay writes nothing";
  EXPECT_EQ(second.post("SHOW PROPERTIES;")[0]["overwrittenProperties"], json::array())
      << "a command's SET properties are its own";
  // The next statement's sequence number follows the replayed offsets.
  second.log.resize(first.log.size());
  json next = second.post("CREATE STREAM again AS SELECT * FROM pageviews;")[0];
  EXPECT_EQ(next["commandSequenceNumber"], first.log.size());
  EXPECT_EQ(next["commandStatus"]["queryId"], "CSAS_AGAIN_2");
}

TEST(CommandTopicTest, RecordsCarryKsqlDbsKeyAndValueFields) {
  Command c{"stream/PAGEVIEWS/create", "CREATE STREAM pageviews ...;", {{"a", "1"}}, {{"b", "2"}}};
  EXPECT_EQ(command_key(c), "\"stream/`PAGEVIEWS`/create\"");
  EXPECT_EQ(command_key({"terminate/CSAS_X_0/execute", "", {}, {}}),
            "\"terminate/CSAS_X_0/execute\"");
  json value = json::parse(command_value(c));
  EXPECT_EQ(value["statement"], c.statement);
  EXPECT_EQ(value["streamsProperties"], (json{{"a", "1"}}));
  EXPECT_EQ(value["originalProperties"], (json{{"b", "2"}}));
  Command back = parse_command(command_key(c), command_value(c), 7);
  EXPECT_EQ(back.statement, c.statement);
  EXPECT_EQ(back.streams_properties, c.streams_properties);
  EXPECT_EQ(back.original_properties, c.original_properties);
  EXPECT_EQ(back.offset, 7);
  // ksqlDB writes typed values; they come back as text.
  Command typed = parse_command("\"x\"", R"({"statement":"s;","streamsProperties":{"n":2}})", 0);
  EXPECT_EQ(typed.streams_properties.at("n"), "2");
  EXPECT_THROW(parse_command("\"x\"", "{}", 0), std::runtime_error);
  EXPECT_EQ(command_topic_name("default_"), "_confluent-ksql-default__command_topic");
}

}  // namespace
}  // namespace oxbow::sql::server
