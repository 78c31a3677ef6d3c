// KIP-875's bodies (parsing, a sink's shapes and Connect's messages for bad ones), the offsets
// file's alter and listing, and the offsets and topics endpoints' answers without a broker.
#include "connect/runtime/offsets_body.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "connect/runtime/rest_test_fixture.h"
#include "oxbow/connect/errors.h"

namespace oxbow::connect::runtime {
namespace {

using Json = nlohmann::json;

std::string messageOf(const std::function<void()>& body) {
  try {
    body();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(OffsetsBodyTest, ParsesPartitionsAndOffsetsWithNulls) {
  std::vector<OffsetEntry> entries = parseOffsetsBody(
      R"({"offsets":[{"partition":{"filename":"/a"},"offset":{"position":7}},
                     {"partition":{"filename":"/b"},"offset":null},
                     {"partition":{"filename":"/c"}}]})");
  ASSERT_EQ(entries.size(), 3u);
  ASSERT_TRUE(entries[0].partition && entries[0].offset);
  EXPECT_EQ((*entries[0].offset)[0].second.kind(), Value::Kind::Int64);  // a long, as Connect's
  EXPECT_EQ((*entries[0].offset)[0].second.asInt64(), 7);
  EXPECT_FALSE(entries[1].offset);
  EXPECT_FALSE(entries[2].offset);
  SourceOffsets source = sourceOffsets(entries);
  EXPECT_EQ(source[0].first[0].second.asString(), "/a");
}

TEST(OffsetsBodyTest, RefusesBodiesThatAreNotOffsets) {
  const std::string empty = "Partitions / offsets need to be provided for an alter offsets request";
  EXPECT_EQ(messageOf([] { parseOffsetsBody("{}"); }), empty);
  EXPECT_EQ(messageOf([] { parseOffsetsBody(R"({"offsets":[]})"); }), empty);
  EXPECT_THROW(parseOffsetsBody("{nope"), BadRequestException);
  EXPECT_THROW(parseOffsetsBody(R"({"offsets":{}})"), BadRequestException);
  EXPECT_THROW(parseOffsetsBody(R"({"offsets":[1]})"), BadRequestException);
  EXPECT_THROW(parseOffsetsBody(R"({"offsets":[{"partition":"a"}]})"), BadRequestException);
  EXPECT_EQ(messageOf([] { parseOffsetsBody(R"({"offsets":[{"partition":{"a":[1]}}]})"); }),
            "Offsets may only contain primitive types as values, but field a contains ARRAY");
  EXPECT_THROW(parseOffsetsBody(R"({"offsets":[{"offset":{"a":{}}}]})"), DataException);
  EXPECT_THROW(sourceOffsets(parseOffsetsBody(R"({"offsets":[{"offset":{"a":1}}]})")),
               BadRequestException);
}

TEST(OffsetsBodyTest, SinkOffsetsTakeNumbersOrTheirText) {
  auto offsets = sinkOffsets(parseOffsetsBody(
      R"({"offsets":[{"partition":{"kafka_topic":"t","kafka_partition":"2"},
                      "offset":{"kafka_offset":"10"}},
                     {"partition":{"kafka_topic":"t","kafka_partition":0},
                      "offset":{"kafka_offset":5}},
                     {"partition":{"kafka_topic":"u","kafka_partition":1},"offset":null}]})"));
  ASSERT_EQ(offsets.size(), 3u);
  EXPECT_EQ(offsets.at(TopicPartition{"t", 2}), 10);
  EXPECT_EQ(offsets.at(TopicPartition{"t", 0}), 5);
  EXPECT_EQ(offsets.at(TopicPartition{"u", 1}), std::nullopt);
}

TEST(OffsetsBodyTest, SinkOffsetsRefusedWithConnectsMessages) {
  auto sink = [](const std::string& entry) {
    return messageOf([&] { sinkOffsets(parseOffsetsBody(R"({"offsets":[)" + entry + "]}")); });
  };
  EXPECT_EQ(sink(R"({"offset":{"kafka_offset":1}})"),
            "The partition for a sink connector offset cannot be null or missing");
  EXPECT_EQ(sink(R"({"partition":{"kafka_partition":0}})"),
            "The partition for a sink connector offset must contain the keys 'kafka_topic' and "
            "'kafka_partition'");
  EXPECT_EQ(sink(R"({"partition":{"kafka_topic":null,"kafka_partition":0}})"),
            "Kafka topic names must be valid strings and may not be null");
  EXPECT_EQ(sink(R"({"partition":{"kafka_topic":"t","kafka_partition":null}})"),
            "Kafka partitions must be valid numbers and may not be null");
  EXPECT_EQ(sink(R"({"partition":{"kafka_topic":"t","kafka_partition":1.5}})"),
            "Failed to parse the following Kafka partition value in the provided offsets: '1.5'. "
            "Partition values for sink connectors need to be integers.");
  EXPECT_EQ(sink(R"({"partition":{"kafka_topic":"t","kafka_partition":0},"offset":{}})"),
            "The offset for a sink connector should either be null or contain the key "
            "'kafka_offset'");
  EXPECT_EQ(sink(R"({"partition":{"kafka_topic":"t","kafka_partition":0},)"
                 R"("offset":{"kafka_offset":"x"}})"),
            "Failed to parse the following Kafka offset value in the provided offsets: 'x'. "
            "Offset values for sink connectors need to be integers.");
}

TEST(OffsetsBodyTest, WritesConnectsShapes) {
  EXPECT_EQ(sinkOffsetsJson({{TopicPartition{"t", 1}, 4}}).dump(),
            R"({"offsets":[{"partition":{"kafka_topic":"t","kafka_partition":1},)"
            R"("offset":{"kafka_offset":4}}]})");
  EXPECT_EQ(
      offsetsJson({{ValueMap{{"filename", "/a"}}, ValueMap{{"position", int64_t{3}}}}}).dump(),
      R"({"offsets":[{"partition":{"filename":"/a"},"offset":{"position":3}}]})");
}

TEST(OffsetsBodyTest, OffsetStoreAltersAndListsOneConnectorsOffsets) {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("oxbow-alter-" + std::to_string(::getpid()) + ".offsets");
  {
    FileOffsetStore store(path.string());
    store.commit("a", {{ValueMap{{"filename", "/x"}}, ValueMap{{"position", int64_t{1}}}}});
    store.commit("b", {{ValueMap{{"filename", "/y"}}, ValueMap{{"position", int64_t{2}}}}});
    store.alter("a", {{ValueMap{{"filename", "/z"}}, ValueMap{{"position", int64_t{9}}}},
                      {ValueMap{{"filename", "/x"}}, std::nullopt}});
  }
  FileOffsetStore reread(path.string());  // the file holds what was altered
  auto offsets = reread.connectorOffsets("a");
  ASSERT_EQ(offsets.size(), 1u);
  EXPECT_EQ(offsets[0].first[0].second.asString(), "/z");
  EXPECT_EQ(offsets[0].second[0].second.asInt64(), 9);
  EXPECT_EQ(reread.connectorOffsets("b").size(), 1u);
  std::filesystem::remove(path);
}

TEST(OffsetsBodyTest, TopicTrackingConfigsAreBooleans) {
  Properties props{{"key.converter", "StringConverter"},
                   {"value.converter", "StringConverter"},
                   {"offset.storage.file.filename", "/tmp/x"}};
  EXPECT_TRUE(WorkerConfig::parse(props).topicTrackingEnable);
  props["topic.tracking.allow.reset"] = "FALSE";
  EXPECT_FALSE(WorkerConfig::parse(props).topicTrackingAllowReset);
  props["topic.tracking.enable"] = "maybe";
  EXPECT_EQ(messageOf([&] { WorkerConfig::parse(props); }),
            "Invalid value maybe for configuration topic.tracking.enable: Expected value to be "
            "either true or false");
}

class OffsetsRestTest : public WorkerRestFixture {
 protected:
  OffsetsRestTest() : WorkerRestFixture({{"topic.tracking.allow.reset", "false"}}) {}
};

TEST_F(OffsetsRestTest, UnknownConnectorsAndMethods) {
  const std::string body = R"({"offsets":[{"partition":{"a":1},"offset":{"b":2}}]})";
  EXPECT_EQ(
      call("GET", "/connectors/x/offsets"),
      (std::pair<int, Json>{404, {{"error_code", 404}, {"message", "Connector x not found"}}}));
  EXPECT_EQ(call("PATCH", "/connectors/x/offsets", body).first, 404);
  EXPECT_EQ(call("DELETE", "/connectors/x/offsets").first, 404);
  EXPECT_EQ(call("PATCH", "/connectors/x/offsets", "{}").first, 400);  // the body first
  EXPECT_EQ(call("POST", "/connectors/x/offsets", body).first, 405);
  EXPECT_EQ(call("GET", "/connectors/x/offsets/y").first, 404);
}

TEST_F(OffsetsRestTest, TopicsOfAConnectorAndTheirReset) {
  EXPECT_EQ(call("GET", "/connectors/x/topics"),
            (std::pair<int, Json>{200, {{"x", {{"topics", Json::array()}}}}}));
  worker_.activeTopics().record("x", "b");
  worker_.activeTopics().record("x", "a");
  EXPECT_EQ(call("GET", "/connectors/x/topics").second["x"]["topics"], (Json{"a", "b"}));
  EXPECT_EQ(call("PUT", "/connectors/x/topics/reset"),
            (std::pair<int, Json>{
                403, {{"error_code", 403}, {"message", "Topic tracking reset is disabled."}}}));
  EXPECT_EQ(call("GET", "/connectors/x/topics/reset").first, 405);
  EXPECT_EQ(call("PUT", "/connectors/x/topics").first, 405);
}

}  // namespace
}  // namespace oxbow::connect::runtime
