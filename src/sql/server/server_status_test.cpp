// GET /clusterStatus's and /is_valid_property's bodies, the deny list, and /ws/query's request
// parameter and close reasons, as ksqlDB shapes them.
#include "sql/server/server_status.h"

#include <gtest/gtest.h>

#include "sql/server/ws_query.h"

namespace oxbow::sql::server {
namespace {

using nlohmann::json;

TEST(ServerStatusTest, DeniesTheListedPropertiesAndTheServiceId) {
  auto denied = denied_properties(
      {{"ksql.properties.overrides.denylist", " ksql.streams.num.stream.threads ,,a.b"}});
  EXPECT_EQ(denied, (std::vector<std::string>{"ksql.streams.num.stream.threads", "a.b",
                                              "ksql.service.id"}));
  EXPECT_EQ(denied_properties({}), std::vector<std::string>{"ksql.service.id"});
  EXPECT_FALSE(denied_overrides(denied, {{"auto.offset.reset", "earliest"}}));
  EXPECT_EQ(denied_overrides(denied, {{"a.b", "1"}, {"ksql.service.id", "x"}, {"c", "2"}}),
            "One or more properties overrides set locally are prohibited by the KSQL server "
            "(use UNSET to reset their default value): [a.b, ksql.service.id]");
}

TEST(ServerStatusTest, IsValidPropertyIsTrueUnlessDenied) {
  auto denied = denied_properties({{"ksql.properties.overrides.denylist", "a.b"}});
  for (const char* name : {"auto.offset.reset", "ksql.streams.num.stream.threads", "made.up"}) {
    RestResponse r = is_valid_property(name, denied);
    EXPECT_EQ(r.status, 200) << name;
    EXPECT_EQ(r.body, "true") << name;
  }
  for (const char* name : {"a.b", "ksql.service.id"}) {
    RestResponse r = is_valid_property(name, denied);
    EXPECT_EQ(r.status, 400) << name;
    json error = json::parse(r.body);
    EXPECT_EQ(error["@type"], "generic_error");
    EXPECT_EQ(error["error_code"], 40000);
    EXPECT_EQ(error["message"],
              "One or more properties overrides set locally are prohibited by the KSQL server "
              "(use UNSET to reset their default value): [" +
                  std::string(name) + "]");
  }
}

TEST(ServerStatusTest, ClusterStatusHasThisHostsEntryWithItsQueries) {
  streams::StreamsMetadata instance(streams::HostInfo::unavailable(), {"Aggregate-Materialize"},
                                    {{"pageviews", 1}, {"pageviews", 0}}, {}, {});
  json body = cluster_status_json("localhost:8088", 1700000000123,
                                  {{"CTAS_T_1", {instance}}, {"CSAS_S_0", {}}});
  json expected = {
      {"clusterStatus",
       {{"localhost:8088",
         {{"hostAlive", true},
          {"lastStatusUpdateMs", 1700000000123},
          {"activeStandbyPerQuery",
           {{"CTAS_T_1",
             {{"activeStores", {"Aggregate-Materialize"}},
              {"activePartitions",
               {{{"topic", "pageviews"}, {"partition", 0}},
                {{"topic", "pageviews"}, {"partition", 1}}}},
              {"standByStores", json::array()},
              {"standByPartitions", json::array()}}},
            {"CSAS_S_0",
             {{"activeStores", json::array()},
              {"activePartitions", json::array()},
              {"standByStores", json::array()},
              {"standByPartitions", json::array()}}}}},
          {"hostStoreLags", {{"stateStoreLags", json::object()}, {"updateTimeMs", 0}}}}}}}};
  EXPECT_EQ(body, expected) << body.dump(2);
  EXPECT_EQ(cluster_status_json("h:1", 5, {})["clusterStatus"]["h:1"]["activeStandbyPerQuery"],
            json::object());
}

TEST(ServerStatusTest, ClusterStatusListsEveryServerWithItsPart) {
  streams::StreamsMetadata here({"a", 1}, {"store"}, {{"t", 0}}, {}, {});
  streams::StreamsMetadata there({"b", 2}, {"store"}, {{"t", 1}}, {}, {});
  json status = cluster_status_json("a:1", 5, {{"Q", {here, there}}})["clusterStatus"];
  ASSERT_EQ(status.size(), 2u);
  EXPECT_EQ(status["a:1"]["activeStandbyPerQuery"]["Q"]["activePartitions"],
            (json{{{"topic", "t"}, {"partition", 0}}}));
  EXPECT_EQ(status["b:2"]["activeStandbyPerQuery"]["Q"]["activePartitions"],
            (json{{{"topic", "t"}, {"partition", 1}}}));
  EXPECT_EQ(status["b:2"]["hostAlive"], true);
}

TEST(WsQueryRequestTest, ReadsThePercentEncodedRequestParameter) {
  auto denied = denied_properties({});
  // {"ksql":"SELECT * FROM s EMIT CHANGES;","streamsProperties":{"auto.offset.reset":"earliest"}}
  WsQueryRequest r = parse_ws_query(
      "version=1&request=%7B%22ksql%22%3A%22SELECT+*+FROM+s+EMIT+CHANGES%3B%22%2C"
      "%22streamsProperties%22%3A%7B%22auto.offset.reset%22%3A%22earliest%22%7D%7D",
      denied);
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.statement, "SELECT * FROM s EMIT CHANGES;");
  EXPECT_EQ(r.properties, (std::map<std::string, std::string>{{"auto.offset.reset", "earliest"}}));
}

TEST(WsQueryRequestTest, RefusesWhatKsqlDbRefuses) {
  auto denied = denied_properties({});
  auto error = [&](const char* query) { return parse_ws_query(query, denied).error; };
  EXPECT_EQ(error(""), "Error parsing request: missing request parameter");
  EXPECT_EQ(error("request="), "Error parsing request: missing request parameter");
  EXPECT_EQ(error("version=2&request=%7B%7D"), "Received invalid api version: 2");
  EXPECT_EQ(error("request=nope"),
            "Error parsing request: the request parameter is not a JSON object");
  EXPECT_EQ(error("request=%7B%22ksql%22%3A%22%22%7D"),
            "Error parsing request: \"ksql\" field of \"request\" must be populated");
  EXPECT_EQ(error("request=%7B%22ksql%22%3A%22SELECT%201%3B%22%2C%22streamsProperties%22%3A%7B"
                  "%22ksql.service.id%22%3A%22x%22%7D%7D"),
            "Error parsing request: One or more properties overrides set locally are prohibited "
            "by the KSQL server (use UNSET to reset their default value): [ksql.service.id]");
}

TEST(WsQueryRequestTest, CutsLongCloseReasonsAsKsqlDbDoes) {
  EXPECT_EQ(close_reason("done"), "done");
  std::string long_reason(200, 'x');
  EXPECT_EQ(close_reason(long_reason), std::string(120, 'x') + "...");
  // Not inside a two-byte character.
  std::string accented = std::string(119, 'x') + "\xc3\xa9" + std::string(10, 'y');
  EXPECT_EQ(close_reason(accented), std::string(119, 'x') + "...");
}

}  // namespace
}  // namespace oxbow::sql::server
