// /admin/loggers over spdlog: Kafka's shapes, levels and errors.
#include "connect/runtime/loggers.h"

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "connect/runtime/rest_test_fixture.h"

namespace oxbow::connect::runtime {
namespace {

using Json = nlohmann::json;

class LoggersRestTest : public WorkerRestFixture {
 protected:
  ~LoggersRestTest() override {
    spdlog::default_logger()->set_level(rootLevel_);
    spdlog::drop("oxbow.test.a");
    spdlog::drop("oxbow.test.a.b");
    spdlog::drop("oxbow.test");
  }

  spdlog::level::level_enum rootLevel_ = spdlog::default_logger()->level();
};

TEST_F(LoggersRestTest, ListsRootAndNamedLoggers) {
  spdlog::default_logger()->set_level(spdlog::level::warn);
  auto [status, all] = call("GET", "/admin/loggers");
  EXPECT_EQ(status, 200);
  EXPECT_EQ(all["root"], (Json{{"level", "WARN"}, {"last_modified", nullptr}}));
  EXPECT_EQ(call("GET", "/admin/loggers/root").second["level"], "WARN");
  EXPECT_EQ(call("GET", "/admin/loggers/oxbow.test.a"),
            (std::pair<int, Json>{
                404, {{"error_code", 404}, {"message", "Logger oxbow.test.a not found."}}}));
  EXPECT_EQ(call("POST", "/admin/loggers").first, 405);
  EXPECT_EQ(call("GET", "/admin/other").first, 404);
}

TEST_F(LoggersRestTest, SettingANamespaceSetsItsChildrenAndCreatesIt) {
  spdlog::register_logger(spdlog::default_logger()->clone("oxbow.test.a"));
  spdlog::register_logger(spdlog::default_logger()->clone("oxbow.test.a.b"));
  auto [status, changed] = call("PUT", "/admin/loggers/oxbow.test.a", R"({"level": "debug"})");
  EXPECT_EQ(status, 200);
  EXPECT_EQ(changed, (Json{"oxbow.test.a", "oxbow.test.a.b"}));
  EXPECT_EQ(spdlog::get("oxbow.test.a.b")->level(), spdlog::level::debug);
  Json a = call("GET", "/admin/loggers/oxbow.test.a").second;
  EXPECT_EQ(a["level"], "DEBUG");
  EXPECT_TRUE(a["last_modified"].is_number());
  // A namespace no logger has is created, with the level.
  EXPECT_EQ(call("PUT", "/admin/loggers/oxbow.test", R"({"level": "FATAL"})").second,
            (Json{"oxbow.test", "oxbow.test.a", "oxbow.test.a.b"}));
  EXPECT_EQ(spdlog::get("oxbow.test")->level(), spdlog::level::critical);
  EXPECT_EQ(call("PUT", "/admin/loggers/root", R"({"level": "ERROR"})", "scope=cluster").first,
            204);
  EXPECT_EQ(spdlog::default_logger()->level(), spdlog::level::err);
  EXPECT_EQ(call("PUT", "/admin/loggers/root", R"({"level": "WARN"})", "scope=Cluster").first, 204);
  EXPECT_EQ(call("PUT", "/admin/loggers/root", R"({"level": "WARN"})", "scope=worker").first, 200);
  EXPECT_EQ(call("PUT", "/admin/loggers/root", R"({"level": "WARN"})", "xscope=cluster").first,
            200);
}

TEST_F(LoggersRestTest, BadLevelsAnswerAsKafka) {
  EXPECT_EQ(call("PUT", "/admin/loggers/root", R"({"lvl": "INFO"})"),
            (std::pair<int, Json>{
                400,
                {{"error_code", 400},
                 {"message", "Desired 'level' parameter was not specified in request."}}}));
  EXPECT_EQ(
      call("PUT", "/admin/loggers/root", R"({"level": "LOUD"})"),
      (std::pair<int, Json>{404, {{"error_code", 404}, {"message", "invalid log level 'LOUD'."}}}));
  EXPECT_EQ(call("PUT", "/admin/loggers/root", "{nope").first, 400);
}

}  // namespace
}  // namespace oxbow::connect::runtime
