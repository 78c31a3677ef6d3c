// PRINT's and SHOW TOPICS' text: ksqlDB's guesses of key and value formats from bytes, its record
// lines, and its CLI's topic table.
#include <gtest/gtest.h>

#include "sql/engine/topic_output.h"

namespace oxbow::sql {
namespace {

std::string bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out += static_cast<char>(v);
  return out;
}

std::string big_endian(uint64_t v, int width = 8) {
  std::string out;
  for (int i = width - 1; i >= 0; --i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
  return out;
}

TopicRecord record(std::optional<std::string> key, std::optional<std::string> value,
                   int64_t timestamp = 1588760881123, int32_t partition = 0) {
  return TopicRecord{timestamp, partition, std::move(key), std::move(value)};
}

// The lines of one PRINT over `batches`, every record printed.
std::vector<std::string> print(const std::vector<std::vector<TopicRecord>>& batches) {
  PrintSession session(1, std::nullopt);
  std::vector<std::string> out;
  for (const auto& b : batches)
    for (auto& line : session.lines(b)) out.push_back(line);
  return out;
}

TEST(TopicOutputTest, JsonValuesUnderStringKeys) {
  EXPECT_EQ(print({{record("1", R"({"a":1})")}}),
            (std::vector<std::string>{
                "Key format: JSON or KAFKA_STRING", "Value format: JSON or KAFKA_STRING",
                R"(rowtime: 2020/05/06 10:28:01.123 Z, key: 1, value: {"a":1}, partition: 0)"}));
}

TEST(TopicOutputTest, EachKafkaFormatIsRecognised) {
  auto formats = [](const std::string& value) { return print({{record(std::nullopt, value)}}); };
  EXPECT_EQ(formats(big_endian(7, 4))[1], "Value format: KAFKA_INT or KAFKA_STRING");
  EXPECT_EQ(formats(big_endian(7, 4))[2],
            "rowtime: 2020/05/06 10:28:01.123 Z, key: <null>, value: 7, partition: 0");
  EXPECT_EQ(formats(big_endian(1))[1],
            "Value format: KAFKA_BIGINT or KAFKA_DOUBLE or KAFKA_STRING");
  // A double's bytes are a long's as well: ksqlDB says so, and writes the long.
  auto one_and_a_half = formats(big_endian(4609434218613702656ULL));
  EXPECT_EQ(one_and_a_half[1], "Value format: KAFKA_BIGINT or KAFKA_DOUBLE");
  EXPECT_NE(one_and_a_half[2].find("value: 4609434218613702656,"), std::string::npos);
  EXPECT_EQ(formats("hello")[1], "Value format: KAFKA_STRING");
  EXPECT_EQ(formats("hello")[0], "Key format: ¯\\_(ツ)_/¯ - no data processed");
  EXPECT_EQ(formats("  [1, 2]  ")[1], "Value format: JSON or KAFKA_STRING");
}

TEST(TopicOutputTest, BytesNoFormatReadsAreWrittenAsKafkaBytes) {
  auto lines = print({{record(std::nullopt, bytes({0xFF, 0xFE, 0x00, '\\', 'a'}))}});
  EXPECT_EQ(lines[1],
            "Value format:  does not match any supported format. It may be a STRING with "
            "encoding other than UTF8, or some other format.");
  EXPECT_EQ(
      lines[2],
      R"(rowtime: 2020/05/06 10:28:01.123 Z, key: <null>, value: \xFF\xFE\x00\x5Ca, partition: 0)");
  // Empty bytes are data, but no format reads them.
  EXPECT_EQ(print({{record("", "x")}})[0],
            "Key format:  does not match any supported format. It may be a STRING with encoding "
            "other than UTF8, or some other format.");
}

TEST(TopicOutputTest, NullsAndMissingTimestamps) {
  EXPECT_EQ(print({{record(std::nullopt, std::nullopt, -1, 3)}}),
            (std::vector<std::string>{"Key format: ¯\\_(ツ)_/¯ - no data processed",
                                      "Value format: ¯\\_(ツ)_/¯ - no data processed",
                                      "rowtime: N/A, key: <null>, value: <null>, partition: 3"}));
}

TEST(TopicOutputTest, WindowedKeys) {
  auto time_key = "k1" + big_endian(1000);
  EXPECT_EQ(print({{record(time_key, "v")}})[0],
            "Key format: HOPPING(KAFKA_STRING) or TUMBLING(KAFKA_STRING)");
  EXPECT_NE(print({{record(time_key, "v")}})[2].find("key: [k1@1000/-],"), std::string::npos);
  auto session_key = "k1" + big_endian(2000) + big_endian(1000);
  EXPECT_EQ(print({{record(session_key, "v")}})[0], "Key format: SESSION(KAFKA_STRING)");
  EXPECT_NE(print({{record(session_key, "v")}})[2].find("key: [k1@1000/2000],"), std::string::npos);
  // An int key in a window (its start all spaces, so that the whole key is text too); a start
  // no window can have rules the windows out.
  EXPECT_EQ(print({{record(big_endian(5, 4) + big_endian(0x2020202020202020ULL), "v")}})[0],
            "Key format: HOPPING(KAFKA_INT) or TUMBLING(KAFKA_INT) or HOPPING(KAFKA_STRING) or "
            "TUMBLING(KAFKA_STRING) or KAFKA_STRING");
  EXPECT_EQ(print({{record("k1" + big_endian(0x7FFFFFFFFFFFFFFFULL), "v")}})[0],
            "Key format:  does not match any supported format. It may be a STRING with encoding "
            "other than UTF8, or some other format.");
}

TEST(TopicOutputTest, FormatsNarrowOverTheRecordsAndAreAnnouncedWhenTheyChange) {
  auto lines = print({{record("a", "1")}, {record("b", "2")}, {record("c", "abc")}});
  EXPECT_EQ(lines, (std::vector<std::string>{
                       "Key format: KAFKA_STRING", "Value format: JSON or KAFKA_STRING",
                       "rowtime: 2020/05/06 10:28:01.123 Z, key: a, value: 1, partition: 0",
                       "rowtime: 2020/05/06 10:28:01.123 Z, key: b, value: 2, partition: 0",
                       "Value format: KAFKA_STRING",
                       "rowtime: 2020/05/06 10:28:01.123 Z, key: c, value: abc, partition: 0"}));
  // Within one batch, every record is written in the format left after the whole batch.
  auto batch = print({{record(big_endian(42, 4), "v"), record("abcde", "v")}});
  EXPECT_EQ(batch[0], "Key format: KAFKA_STRING");
  EXPECT_NE(batch[2].find(std::string("key: \0\0\0*,", 10)), std::string::npos);
}

TEST(TopicOutputTest, RegistryFormatsComeFirstWhenGiven) {
  // Stand-ins for the registry's deserializers: Confluent's magic byte, then a tag per format.
  auto tagged = [](char tag, const char* text) -> FormatDecoder {
    return [tag, text](std::string_view b) -> std::optional<std::string> {
      if (b.size() < 2 || b[0] != 0 || b[1] != tag) return std::nullopt;
      return text;
    };
  };
  RegistryDecoders registry{tagged('a', "{\"id\": 1}"), tagged('p', "id: 1"),
                            tagged('j', "{\"id\":1}")};
  PrintSession session(1, std::nullopt, registry);
  std::vector<TopicRecord> avro = {record(std::string("\0a", 2), std::string("\0a", 2))};
  auto lines = session.lines(avro);
  EXPECT_EQ(lines[0], "Key format: AVRO or KAFKA_STRING");
  EXPECT_EQ(lines[1], "Value format: AVRO or KAFKA_STRING");
  EXPECT_EQ(
      lines[2],
      R"(rowtime: 2020/05/06 10:28:01.123 Z, key: {"id": 1}, value: {"id": 1}, partition: 0)");
  PrintSession json_sr(1, std::nullopt, registry);
  std::vector<TopicRecord> json = {record(std::nullopt, std::string("\0j", 2))};
  EXPECT_EQ(json_sr.lines(json)[1], "Value format: JSON_SR or KAFKA_STRING");
  std::vector<TopicRecord> protobuf = {record(std::nullopt, std::string("\0p", 2))};
  EXPECT_EQ(PrintSession(1, std::nullopt, registry).lines(protobuf)[1],
            "Value format: PROTOBUF or KAFKA_STRING");
}

TEST(TopicOutputTest, IntervalAndLimit) {
  PrintSession session(2, 2);
  std::vector<TopicRecord> records;
  for (int i = 0; i < 3; ++i) records.push_back(record(std::nullopt, std::to_string(i)));
  auto first = session.lines(records);
  ASSERT_EQ(first.size(), 4u);  // formats, records 0 and 2
  EXPECT_NE(first[2].find("value: 0,"), std::string::npos);
  EXPECT_NE(first[3].find("value: 2,"), std::string::npos);
  EXPECT_TRUE(session.done());
  EXPECT_TRUE(session.lines(records).empty());
  PrintSession every_other(2, std::nullopt);
  every_other.lines(std::span(records).first(1));  // record 0 printed
  auto next = every_other.lines(std::span(records).subspan(1));
  ASSERT_EQ(next.size(), 1u);  // record 2: the count runs across batches
  EXPECT_NE(next[0].find("value: 2,"), std::string::npos);
}

TEST(TopicOutputTest, JavaTexts) {
  EXPECT_EQ(rowtime_text(0), "1970/01/01 00:00:00.000 Z");
  EXPECT_EQ(rowtime_text(-1), "N/A");
  EXPECT_EQ(rowtime_text(-2), "1969/12/31 23:59:59.998 Z");
}

TEST(TopicOutputTest, TextAndJsonAsJavaReadsThem) {
  EXPECT_TRUE(is_java_text("h\xC3\xA9llo"));
  EXPECT_FALSE(is_java_text("\xC3"));           // truncated
  EXPECT_FALSE(is_java_text("\xC0\xAF"));       // overlong
  EXPECT_FALSE(is_java_text("\xED\xA0\x80"));   // a surrogate
  EXPECT_FALSE(is_java_text("a\xEF\xBF\xBD"));  // U+FFFD itself
  EXPECT_TRUE(is_java_text("\xF0\x9F\x98\x80"));
  for (const char* ok : {"1 2", "{\"a\":1} trailing", "[1,{\"b\":[true,null]}]", "  ", "-0.5e+3",
                         "\"\\u00e9\"", "true,"})
    EXPECT_TRUE(is_jackson_json(ok)) << ok;
  for (const char* bad : {"1x", "truex", "01", "'a'", "[1,]", "{a:1}", "1.", "-", "\"a\nb\"", "nul",
                          "{\"a\" 1}", "[1"})
    EXPECT_FALSE(is_jackson_json(bad)) << bad;
}

TEST(TopicOutputTest, TopicsTableAsKsqlDbsCliPrintsIt) {
  std::vector<TopicInfo> topics = {{"default_ksql_processing_log", {1}, 0, 0},
                                   {"pageviews", {3, 3, 1}, 2, 1}};
  EXPECT_EQ(topics_table(topics, false),
            " Kafka Topic                 | Partitions | Partition Replicas \n"
            "---------------------------------------------------------------\n"
            " default_ksql_processing_log | 1          | 1                  \n"
            " pageviews                   | 3          | 3, 3, 1            \n"
            "---------------------------------------------------------------\n");
  std::string rule(76, '-');  // as wide as the rows
  EXPECT_EQ(topics_table({{"t", {}, 0, 0}}, true),
            " Kafka Topic | Partitions | Partition Replicas | Consumers | ConsumerGroups \n" +
                rule +
                "\n t           | 0          | 0                  | 0         | 0              \n" +
                rule + "\n");
}

}  // namespace
}  // namespace oxbow::sql
