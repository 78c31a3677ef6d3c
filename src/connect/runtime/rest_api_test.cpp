// Connect's REST API without a server or a broker: routing, status codes, error bodies, the
// plugin endpoints, and configs refused before anything starts.
#include "connect/runtime/rest_api.h"
#include "connect/runtime/standalone.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

namespace oxbow::connect::runtime {
namespace {

using Json = nlohmann::json;

class RestApiTest : public ::testing::Test {
 protected:
  RestApiTest()
      : offsets_(std::filesystem::temp_directory_path() /
                 ("oxbow-rest-" + std::to_string(::getpid()) + ".offsets")),
        worker_({{"key.converter", "org.apache.kafka.connect.storage.StringConverter"},
                 {"value.converter", "org.apache.kafka.connect.storage.StringConverter"},
                 {"offset.storage.file.filename", offsets_.string()}},
                ConnectorPlugins::withBuiltIns()),
        api_(worker_, RestInfo{"127.0.0.1:8083", "unknown", [] { return "cluster-1"; }, {}}) {}
  ~RestApiTest() override { std::filesystem::remove(offsets_); }

  std::pair<int, Json> call(std::string method, std::string path, std::string body = "") {
    std::string query;
    if (size_t q = path.find('?'); q != std::string::npos) {
      query = path.substr(q + 1);
      path.resize(q);
    }
    RestResponse response = api_.handle({method, path, query, body});
    return {response.status, response.body.empty() ? Json() : Json::parse(response.body)};
  }

  std::filesystem::path offsets_;
  StandaloneWorker worker_;
  ConnectRestApi api_;
};

TEST_F(RestApiTest, RootNamesTheVersionAndCluster) {
  auto [status, body] = call("GET", "/");
  EXPECT_EQ(status, 200);
  EXPECT_EQ(body["kafka_cluster_id"], "cluster-1");
  EXPECT_EQ(body["commit"], "unknown");
  EXPECT_TRUE(body["version"].is_string());
}

TEST_F(RestApiTest, UnknownConnectorsPathsAndMethodsAnswerAsConnect) {
  EXPECT_EQ(
      call("GET", "/connectors/x"),
      (std::pair<int, Json>{404, {{"error_code", 404}, {"message", "Connector x not found"}}}));
  EXPECT_EQ(call("GET", "/connectors/x/status").second["message"],
            "No status found for connector x");
  EXPECT_EQ(call("DELETE", "/connectors/x").first, 404);
  EXPECT_EQ(call("PUT", "/connectors/x/pause").first, 404);
  EXPECT_EQ(call("POST", "/connectors/x/tasks/0/restart").first, 404);
  EXPECT_EQ(call("GET", "/nowhere").first, 404);
  EXPECT_EQ(call("DELETE", "/connector-plugins").first, 405);
  EXPECT_EQ(call("GET", "/connectors").second, Json::array());
  EXPECT_EQ(call("GET", "/connectors?expand=status").second, Json::object());
}

TEST_F(RestApiTest, BadBodiesAndConfigsAre400) {
  EXPECT_EQ(call("POST", "/connectors", "{not json").first, 400);
  auto [status, body] =
      call("POST", "/connectors",
           R"({"name": "src", "config": {"connector.class": "FileStreamSource", "file": "/x"}})");
  EXPECT_EQ(status, 400);
  EXPECT_EQ(body["error_code"], 400);
  EXPECT_EQ(body["message"].get<std::string>().rfind(
                "Connector configuration is invalid and contains the following 1 error(s):", 0),
            0u);
  EXPECT_EQ(call("PUT", "/connectors/a/config", R"({"name": "b"})").second["message"],
            "Connector name configuration (b) doesn't match connector name in the URL (a)");
  EXPECT_EQ(call("PUT", "/connectors/a/config", R"({"connector.class": "Nope"})").first, 400);
  EXPECT_EQ(call("GET", "/connectors").second, Json::array());
}

TEST_F(RestApiTest, PluginsTheirConfigsAndValidation) {
  Json plugins = call("GET", "/connector-plugins").second;
  ASSERT_EQ(plugins.size(), 3u);  // Datagen, FileStreamSink, FileStreamSource
  EXPECT_EQ(plugins[1]["class"], "org.apache.kafka.connect.file.FileStreamSinkConnector");
  EXPECT_EQ(plugins[1]["type"], "sink");
  Json all = call("GET", "/connector-plugins?connectorsOnly=false").second;
  EXPECT_GT(all.size(), plugins.size());
  Json keys = call("GET", "/connector-plugins/FileStreamSource/config").second;
  EXPECT_TRUE(keys.is_array() && !keys.empty());
  EXPECT_EQ(call("GET", "/connector-plugins/Nope/config").first, 404);
  auto [status, infos] = call("PUT", "/connector-plugins/FileStreamSource/config/validate",
                              R"({"file": "/x", "tasks.max": "0"})");
  EXPECT_EQ(status, 200) << infos.dump();
  // No name, tasks.max below 1, no topic: Connect's own configs are checked with the connector's.
  EXPECT_EQ(infos["error_count"], 3) << infos.dump();
  EXPECT_EQ(infos["groups"][0], "Common");
  EXPECT_EQ(infos["configs"][0]["definition"]["name"], "name");
  Json sink = call("PUT", "/connector-plugins/FileStreamSink/config/validate",
                   R"({"name": "s", "file": "/x"})")
                  .second;
  EXPECT_EQ(sink["error_count"], 2) << sink.dump();  // on topics and on topics.regex
  EXPECT_EQ(call("GET", "/connectors/x/tasks/0/status").second["message"],
            "No status found for task x-0");
  EXPECT_EQ(call("PUT", "/connector-plugins/FileStreamSource/config/validate",
                 R"({"connector.class": "FileStreamSink"})")
                .first,
            400);
}

}  // namespace
}  // namespace oxbow::connect::runtime
