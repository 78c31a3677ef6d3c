// SHOW TOPICS and PRINT in the engine, over a fake cluster: which topics ksqlDB hides, PRINT's
// topic names, refusals, LIMIT, and when a PRINT without LIMIT ends.
#include <gtest/gtest.h>

#include "sql/engine/engine.h"

namespace oxbow::sql {
namespace {

class FakeTopics : public TopicAccess {
 public:
  std::vector<TopicInfo> topics;
  std::vector<std::vector<TopicRecord>> batches;  // handed out in turn, then empty ones
  bool asked_consumers = false;
  std::optional<bool> read_from_beginning;
  int reads = 0;

  std::vector<TopicInfo> list_topics(bool consumers) override {
    asked_consumers = consumers;
    return topics;
  }
  void read(const std::string& topic, bool from_beginning,
            const std::function<bool(const ReadBatch&)>& on_batch) override {
    read_topic = topic;
    read_from_beginning = from_beginning;
    for (size_t i = 0; reads < 100; ++i) {  // a PRINT that never ends fails the test
      ++reads;
      bool last = i + 1 >= batches.size();
      std::span<const TopicRecord> records;
      if (i < batches.size()) records = batches[i];
      if (!on_batch(ReadBatch{records, last})) return;
    }
  }
  std::string read_topic;
};

class TopicStatementsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_ = std::make_shared<FakeTopics>();
    for (const char* name :
         {"pageviews", "_confluent-ksql-default__command_topic", "_confluent-monitoring",
          "__confluent.support.metrics", "_schemas", "__consumer_offsets", "__transaction_state",
          "connect-offsets", "connect-status", "_private", "Events", "default_ksql_processing_log"})
      fake_->topics.push_back({name, {1}, 0, 0});
    engine_.set_topic_access(fake_);
  }
  std::vector<std::string> names(const std::string& statement) {
    std::vector<std::string> out;
    auto results = engine_.execute(statement);
    for (const auto& t : results.at(0).topics.value().topics) out.push_back(t.name);
    return out;
  }
  std::string refusal(const std::string& statement) {
    try {
      engine_.execute(statement);
    } catch (const std::exception& e) {
      return e.what();
    }
    return "accepted";
  }
  std::shared_ptr<FakeTopics> fake_;
  Engine engine_;
};

TEST_F(TopicStatementsTest, ShowTopicsHidesWhatKsqlDbHides) {
  std::vector<std::string> shown = {"Events", "_private", "default_ksql_processing_log",
                                    "pageviews"};
  EXPECT_EQ(names("SHOW TOPICS;"), shown);
  EXPECT_EQ(names("LIST TOPICS;"), shown);
  EXPECT_FALSE(fake_->asked_consumers);
  // ALL shows ksqlDB's hidden topics, never Kafka's internal ones.
  EXPECT_EQ(names("SHOW ALL TOPICS;"),
            (std::vector<std::string>{
                "Events", "__confluent.support.metrics", "_confluent-ksql-default__command_topic",
                "_confluent-monitoring", "_private", "_schemas", "connect-offsets",
                "connect-status", "default_ksql_processing_log", "pageviews"}));
  auto extended = engine_.execute("SHOW TOPICS EXTENDED;").at(0);
  EXPECT_TRUE(fake_->asked_consumers);
  EXPECT_TRUE(extended.topics->extended);
  EXPECT_EQ(extended.statement, "SHOW TOPICS EXTENDED;");
}

TEST_F(TopicStatementsTest, WithoutAClusterTheStatementsFail) {
  Engine alone;
  EXPECT_THROW(alone.execute("SHOW TOPICS;"), std::exception);
  EXPECT_THROW(alone.execute("PRINT pageviews;"), std::exception);
}

TEST_F(TopicStatementsTest, PrintReadsFromTheBeginningUpToItsLimit) {
  fake_->batches = {{{1588760881123, 0, "1", R"({"a":1})"}, {-1, 1, "2", R"({"a":2})"}},
                    {{0, 0, "3", R"({"a":3})"}}};
  auto r = engine_.execute("PRINT pageviews FROM BEGINNING LIMIT 2;").at(0);
  EXPECT_EQ(fake_->read_topic, "pageviews");  // the name as written: topic names have case
  EXPECT_EQ(fake_->read_from_beginning, true);
  EXPECT_EQ(r.printed,
            (std::vector<std::string>{
                "Key format: JSON or KAFKA_STRING", "Value format: JSON or KAFKA_STRING",
                R"(rowtime: 2020/05/06 10:28:01.123 Z, key: 1, value: {"a":1}, partition: 0)",
                R"(rowtime: N/A, key: 2, value: {"a":2}, partition: 1)"}));
  EXPECT_EQ(fake_->reads, 1);
}

TEST_F(TopicStatementsTest, PrintWithoutLimitEndsOnceCaughtUpOrStopped) {
  fake_->batches = {{{0, 0, std::nullopt, "a"}}, {{0, 0, std::nullopt, "b"}}};
  auto r = engine_.execute("PRINT 'Events' INTERVAL 2;").at(0);
  EXPECT_EQ(fake_->read_from_beginning, false);
  EXPECT_EQ(fake_->reads, 2);
  ASSERT_EQ(r.printed.size(), 3u);  // the formats, then the first record of every two
  EXPECT_EQ(r.printed[2],
            "rowtime: 1970/01/01 00:00:00.000 Z, key: <null>, value: a, partition: 0");

  // Lines to the caller as they come; a caller that waits past the end stops it itself.
  std::vector<std::string> lines;
  int asked = 0;
  PrintOutput output{[&](const std::string& line) { lines.push_back(line); },
                     [&] { return ++asked == 5; },
                     false,
                     {}};
  engine_.set_topic_access(fake_, output);
  fake_->reads = 0;
  EXPECT_TRUE(engine_.execute("PRINT Events;").at(0).printed.empty());
  EXPECT_EQ(lines.size(), 4u);
  EXPECT_EQ(fake_->reads, 5);
}

TEST_F(TopicStatementsTest, PrintRefusals) {
  EXPECT_EQ(refusal("PRINT events;"),
            "Could not find topic 'events', or the KSQL user does not have permissions to list "
            "the topic. Topic names are case-sensitive.\nDid you mean:\n\tprint Events;");
  EXPECT_EQ(refusal("PRINT nothing;"),
            "Could not find topic 'nothing', or the KSQL user does not have permissions to list "
            "the topic. Topic names are case-sensitive.");
  EXPECT_EQ(refusal("PRINT pageviews INTERVAL 0;"),
            "INTERVAL must be greater than one, but was: 0");
  EXPECT_TRUE(engine_.execute("PRINT pageviews LIMIT 0;").at(0).printed.empty());
  EXPECT_EQ(fake_->reads, 0);
}

}  // namespace
}  // namespace oxbow::sql
