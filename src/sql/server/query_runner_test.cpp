#include "sql/server/query_runner.h"

#include <gtest/gtest.h>

#include "oxbow/streams/streams_builder.h"

namespace oxbow::sql::server {
namespace {

using streams::Materialized;
using streams::StreamsBuilder;

RuntimeNeeds reading(std::set<std::string> topics, std::string reset = "latest",
                     std::set<std::string> beside = {}) {
  return RuntimeNeeds{
      {{"auto.offset.reset", std::move(reset)}}, std::move(topics), std::move(beside)};
}

TEST(SharedRuntimePlacement, QueriesReadingATopicAloneShareARuntime) {
  std::vector<RuntimeNeeds> runtimes{reading({"a", "b"}), reading({"c"})};
  EXPECT_EQ(place_query(runtimes, reading({"d"})), 0u);
  EXPECT_EQ(place_query(runtimes, reading({"a"})), 0u);
  EXPECT_EQ(place_query(runtimes, reading({"c", "e"})), 0u);
}

TEST(SharedRuntimePlacement, ATopicReadBesideOthersIsNotShared) {
  // Runtime 0 joins a with b; runtime 1 reads b alone.
  std::vector<RuntimeNeeds> runtimes{reading({"a", "b"}, "latest", {"a", "b"}),
                                     reading({"b", "c"})};
  EXPECT_EQ(place_query(runtimes, reading({"b"})), 1u);
  EXPECT_EQ(place_query(runtimes, reading({"c"})), 0u);
  // A query joining c with d goes where nothing reads c or d.
  EXPECT_EQ(place_query(runtimes, reading({"c", "d"}, "latest", {"c", "d"})), 0u);
  EXPECT_EQ(place_query(runtimes, reading({"a", "c"}, "latest", {"a", "c"})), 2u);
  EXPECT_EQ(place_query({}, reading({"a"})), 0u);
}

TEST(SharedRuntimePlacement, OnlyRuntimesWithTheQuerySettings) {
  // auto.offset.reset and the rest are a runtime's, not a topology's: an earliest query does not
  // join a latest runtime.
  std::vector<RuntimeNeeds> runtimes{reading({"a"}), reading({"b"}, "earliest")};
  EXPECT_EQ(place_query(runtimes, reading({"c"}, "earliest")), 1u);
  EXPECT_EQ(place_query(runtimes, reading({"b"}, "earliest")), 1u);
  EXPECT_EQ(place_query(runtimes, reading({"b"}, "earliest", {"b"})), 2u);
  EXPECT_EQ(place_query(runtimes, reading({"c"})), 0u);
}

TEST(SharedRuntimePlacement, SourceTopicsLeaveOutTheTopologyRepartitionTopics) {
  StreamsBuilder builder;
  builder.stream<std::string, std::string>("pageviews")
      .selectKey([](const std::string&, const std::string& v) { return v; })
      .groupByKey()
      .count(Materialized<std::string, int64_t>::as("counts"));
  builder.stream<std::string, std::string>("users").to("users-copy");
  auto needs = source_topics_of(builder.build());
  EXPECT_EQ(needs.topics, (std::set<std::string>{"pageviews", "users"}));
  EXPECT_TRUE(needs.read_beside_others.empty());
  StreamsBuilder merging;
  merging.stream<std::string, std::string>("a")
      .merge(merging.stream<std::string, std::string>("b"))
      .to("c");
  EXPECT_EQ(source_topics_of(merging.build()).read_beside_others,
            (std::set<std::string>{"a", "b"}));
}

}  // namespace
}  // namespace oxbow::sql::server
