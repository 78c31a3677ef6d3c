#include "sql/server/query_runner.h"

#include <gtest/gtest.h>

#include "oxbow/streams/streams_builder.h"

namespace oxbow::sql::server {
namespace {

using streams::Materialized;
using streams::StreamsBuilder;

RuntimeNeeds reading(std::set<std::string> topics, std::string reset = "latest") {
  return RuntimeNeeds{{{"auto.offset.reset", std::move(reset)}}, std::move(topics)};
}

TEST(SharedRuntimePlacement, FirstRuntimeReadingNoneOfTheQueryTopics) {
  std::vector<RuntimeNeeds> runtimes{reading({"a", "b"}), reading({"c"})};
  EXPECT_EQ(place_query(runtimes, reading({"d"})), 0u);
  EXPECT_EQ(place_query(runtimes, reading({"a"})), 1u);
  EXPECT_EQ(place_query(runtimes, reading({"c", "e"})), 0u);
}

TEST(SharedRuntimePlacement, ANewRuntimeWhenEachReadsOneOfItsTopics) {
  std::vector<RuntimeNeeds> runtimes{reading({"a", "b"}), reading({"b", "c"})};
  EXPECT_EQ(place_query(runtimes, reading({"b"})), 2u);
  EXPECT_EQ(place_query(runtimes, reading({"a", "c"})), 2u);
  EXPECT_EQ(place_query({}, reading({"a"})), 0u);
}

TEST(SharedRuntimePlacement, OnlyRuntimesWithTheQuerySettings) {
  // auto.offset.reset and the rest are a runtime's, not a topology's: an earliest query does not
  // join a latest runtime.
  std::vector<RuntimeNeeds> runtimes{reading({"a"}), reading({"b"}, "earliest")};
  EXPECT_EQ(place_query(runtimes, reading({"c"}, "earliest")), 1u);
  EXPECT_EQ(place_query(runtimes, reading({"b"}, "earliest")), 2u);
  EXPECT_EQ(place_query(runtimes, reading({"c"})), 0u);
}

TEST(SharedRuntimePlacement, SourceTopicsLeaveOutTheTopologyRepartitionTopics) {
  StreamsBuilder builder;
  builder.stream<std::string, std::string>("pageviews")
      .selectKey([](const std::string&, const std::string& v) { return v; })
      .groupByKey()
      .count(Materialized<std::string, int64_t>::as("counts"));
  builder.stream<std::string, std::string>("users").to("users-copy");
  EXPECT_EQ(source_topics_of(builder.build()), (std::set<std::string>{"pageviews", "users"}));
}

}  // namespace
}  // namespace oxbow::sql::server
