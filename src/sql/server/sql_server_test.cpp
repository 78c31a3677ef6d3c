#include "sql/server/sql_server.h"

#include <gtest/gtest.h>

namespace oxbow::sql::server {
namespace {

TEST(SqlServerConfigTest, ReadsKsqlDbsPropertyNames) {
  std::string error;
  auto config = make_sql_server_config({{"listeners", "http://0.0.0.0:9088,http://[::]:9089"},
                                        {"bootstrap.servers", "k1:9092,k2:9092"},
                                        {"ksql.service.id", "svc_"},
                                        {"ksql.streams.num.stream.threads", "4"},
                                        {"ksql.streams.state.dir", "/var/lib/sql"},
                                        {"ksql.schema.registry.url", "http://r:8081"},
                                        {"ksql.something.unknown", "kept"}},
                                       error);
  ASSERT_TRUE(config) << error;
  EXPECT_EQ(config->host, "0.0.0.0");
  EXPECT_EQ(config->port, 9088);
  EXPECT_EQ(config->service_id, "svc_");
  EXPECT_EQ(config->registry_url, "http://r:8081");
  EXPECT_EQ(config->streams_config.at("num.stream.threads"), "4");
  EXPECT_EQ(config->streams_config.at("state.dir"), "/var/lib/sql");
  EXPECT_EQ(config->streams_config.at("bootstrap.servers"), "k1:9092,k2:9092");
  EXPECT_EQ(config->streams_config.at("auto.offset.reset"), "latest");
  EXPECT_EQ(config->properties.at("ksql.something.unknown"), "kept");
  EXPECT_EQ(config->advertised, "0.0.0.0:9088");
  EXPECT_EQ(config->streams_config.at("application.server"), "0.0.0.0:9088");
}

TEST(SqlServerConfigTest, AdvertisesTheAdvertisedListenerToItsQueries) {
  std::string error;
  auto config = make_sql_server_config(
      {{"listeners", "http://0.0.0.0:8088"}, {"ksql.advertised.listener", "http://sql-1:8088"}},
      error);
  ASSERT_TRUE(config) << error;
  EXPECT_EQ(config->advertised, "sql-1:8088");
  EXPECT_EQ(config->streams_config.at("application.server"), "sql-1:8088");
  config = make_sql_server_config({{"ksql.streams.application.server", "other:1"}}, error);
  ASSERT_TRUE(config) << error;
  EXPECT_EQ(config->streams_config.at("application.server"), "other:1");
}

TEST(SqlServerConfigTest, DefaultsToLoopbackAndRefusesBadListeners) {
  std::string error;
  auto config = make_sql_server_config({}, error);
  ASSERT_TRUE(config) << error;
  EXPECT_EQ(config->host, "127.0.0.1");
  EXPECT_EQ(config->port, 8088);
  EXPECT_EQ(config->service_id, "default_");
  for (const char* bad : {"https://h:1", "http://h", "http://h:99999", "h:1", ""}) {
    EXPECT_FALSE(make_sql_server_config({{"listeners", bad}}, error)) << bad;
    EXPECT_NE(error.find("listeners"), std::string::npos) << bad;
  }
}

}  // namespace
}  // namespace oxbow::sql::server
