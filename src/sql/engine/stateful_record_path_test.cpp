// Heap allocations per record of stateful queries (windowed and unwindowed aggregations, a
// stream-table join) over JSON, against the same query written by hand in the Streams DSL over
// the types its user would pick: String keys and values, Long counts and sums, the same stores
// and repartition topics. The hand-written topologies parse JSON with simdjson's On-Demand parser
// into a reused buffer (as the SQL reader does), so that what they cost is Streams' own record
// path (stores, caches, changelogs, repartition topics, the driver's queues) and what the SQL
// query costs beyond them is the SQL layer's. The margins below are what the SQL layer still
// pays over the hand-written query, each explained; a regression past them fails.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "oxbow/streams/kstream.h"
#include "oxbow/streams/streams_builder.h"
#include "oxbow/streams/test_driver.h"
#include "oxbow/streams/windowed_kstream.h"
#include "sql/engine/engine.h"
#include "sql/engine/record_path_counting.h"

namespace oxbow::sql {
namespace {

using streams::TopologyTestDriver;
namespace serdes = streams::serdes;
namespace od = simdjson::ondemand;

// The hand-written topologies' JSON reading: one parser and padded buffer per thread, reused.
class HandJson {
 public:
  static HandJson& of_thread() {
    thread_local HandJson json;
    return json;
  }
  int64_t bigint(std::string_view bytes, const char* field) {
    return parse(bytes).find_field_unordered(field).get_int64().value();
  }
  std::string_view text(std::string_view bytes, const char* field) {
    return parse(bytes).find_field_unordered(field).get_string().value();
  }

 private:
  od::document& parse(std::string_view bytes) {
    padded_.assign(bytes);
    padded_.resize(bytes.size() + simdjson::SIMDJSON_PADDING);
    document_ = parser_.iterate(padded_.data(), bytes.size(), padded_.size()).value();
    return document_;
  }
  od::parser parser_;
  od::document document_;
  std::string padded_;
};

std::string json_field(const char* name, int64_t n) {
  return std::string("{\"") + name + "\":" + std::to_string(n) + "}";
}

constexpr auto kWindow = std::chrono::seconds(1);
constexpr auto kGrace = std::chrono::seconds(10);

// Each query runs over records whose string column fits std::string's inline 15 characters and
// over records whose string does not, so that every copy of it the path makes is counted.
const char* const kGroups[] = {"x", "customer-000000001"};
bool is_long(const std::string& text) {
  return text.size() > 15;
}

const char* const kSource =
    "CREATE STREAM s (id STRING KEY, g STRING, a BIGINT) WITH (kafka_topic='s', "
    "value_format='JSON', partitions=1);";
// The same record each time: each query updates one group (a windowed one a new window each
// second).
Traffic records_of(const std::string& group) {
  return {"s", "O", "k1", R"({"G":")" + group + R"(","A":5})"};
}

// The SQL query of `statements` (the last query they start) against the hand-written `topology`
// over `t`'s records: the SQL query's allocations per record are at most the hand-written one's
// and `margin`. `before` pipes what each needs first (a table's rows).
void expect_at_most_by_hand(const std::string& statements, const streams::Topology& hand,
                            const Traffic& t, double margin,
                            const std::function<void(TopologyTestDriver&)>& before = {}) {
  Engine engine;
  engine.execute(statements);
  const PersistentQuery& q = engine.queries().back();
  TopologyTestDriver sql_driver(q.topology, q.streams_config);
  if (before) before(sql_driver);
  double sql = allocations_per_record(sql_driver, t);
  TopologyTestDriver hand_driver(hand, {{"application.id", "hand"}});
  if (before) before(hand_driver);
  double by_hand = allocations_per_record(hand_driver, t);
  std::printf("allocations per record (%s): SQL %.3f, by hand %.3f\n", t.value.c_str(), sql,
              by_hand);
  EXPECT_LE(sql, by_hand + margin) << t.value;
}

// `query` over kSource's records, for each grouping string, against `hand`, with no margin.
void expect_each_group_at_most_by_hand(const std::string& query, const streams::Topology& hand) {
  for (std::string group : kGroups)
    expect_at_most_by_hand(std::string(kSource) + query, hand, records_of(group), 0);
}

TEST(SqlStatefulRecordPath, TumblingCountGroupedByAStringColumn) {
  streams::StreamsBuilder builder;
  builder.stream<std::string, std::string>("s")
      .groupBy([](const std::string&,
                  const std::string& v) { return std::string(HandJson::of_thread().text(v, "G")); },
               streams::Grouped<std::string, std::string>::with(serdes::String(), serdes::String()))
      .windowedBy(streams::TimeWindows::ofSizeAndGrace(kWindow, kGrace))
      .count()
      .toStream()
      .mapValues([](int64_t n) { return json_field("N", n); })
      .to("O", streams::Produced<streams::Windowed<std::string>, std::string>::with(
                   serdes::TimeWindowed(serdes::String(), 1000), serdes::String()));
  expect_each_group_at_most_by_hand(
      "CREATE TABLE o AS SELECT g, COUNT(*) AS n FROM s WINDOW TUMBLING "
      "(SIZE 1 SECOND, GRACE PERIOD 10 SECONDS) GROUP BY g;",
      builder.build());
}

TEST(SqlStatefulRecordPath, TumblingSumGroupedByABigintColumn) {
  streams::StreamsBuilder builder;
  builder.stream<std::string, std::string>("s")
      .map([](const std::string&, const std::string& v) {
        HandJson& json = HandJson::of_thread();
        return streams::KeyValue<int64_t, int64_t>{json.bigint(v, "B"), json.bigint(v, "A")};
      })
      .groupByKey(streams::Grouped<int64_t, int64_t>::with(serdes::Int64(), serdes::Int64()))
      .windowedBy(streams::TimeWindows::ofSizeAndGrace(kWindow, kGrace))
      .reduce([](int64_t sum, int64_t a) { return sum + a; })
      .toStream()
      .mapValues([](int64_t sum) { return json_field("TOTAL", sum); })
      .to("O", streams::Produced<streams::Windowed<int64_t>, std::string>::with(
                   serdes::TimeWindowed(serdes::Int64(), 1000), serdes::String()));
  expect_at_most_by_hand(
      "CREATE STREAM s (id STRING KEY, b BIGINT, a BIGINT) WITH (kafka_topic='s', "
      "value_format='JSON', partitions=1);"
      "CREATE TABLE o AS SELECT b, SUM(a) AS total FROM s "
      "WINDOW TUMBLING (SIZE 1 SECOND, GRACE PERIOD 10 SECONDS) GROUP BY b;",
      builder.build(), {"s", "O", "k1", R"({"B":7,"A":5})"}, 0);
}

// COUNT and SUM of a group: by hand, one aggregate of both as two Longs (16 bytes).
struct CountAndSum {
  int64_t n = 0, sum = 0;
};

streams::Serde<CountAndSum> count_and_sum_serde() {
  auto serialize = [](std::string_view, const CountAndSum& v) {
    std::string out(16, '\0');
    std::memcpy(out.data(), &v.n, 8);
    std::memcpy(out.data() + 8, &v.sum, 8);
    return out;
  };
  auto deserialize = [](std::string_view, std::string_view bytes) {
    CountAndSum v;
    std::memcpy(&v.n, bytes.data(), 8);
    std::memcpy(&v.sum, bytes.data() + 8, 8);
    return v;
  };
  return {serialize, deserialize, "CountAndSum"};
}

TEST(SqlStatefulRecordPath, CountAndSumGroupedByAStringColumn) {
  streams::StreamsBuilder builder;
  builder.stream<std::string, std::string>("s")
      .map([](const std::string&, const std::string& v) {
        HandJson& json = HandJson::of_thread();
        std::string g(json.text(v, "G"));
        return streams::KeyValue<std::string, int64_t>{std::move(g), json.bigint(v, "A")};
      })
      .groupByKey(streams::Grouped<std::string, int64_t>::with(serdes::String(), serdes::Int64()))
      .aggregate<CountAndSum>([] { return CountAndSum{}; },
                              [](const std::string&, int64_t a, const CountAndSum& agg) {
                                return CountAndSum{agg.n + 1, agg.sum + a};
                              },
                              streams::Materialized<std::string, CountAndSum>::with(
                                  serdes::String(), count_and_sum_serde()))
      .toStream()
      .mapValues([](const CountAndSum& agg) {
        return "{\"N\":" + std::to_string(agg.n) + ",\"TOTAL\":" + std::to_string(agg.sum) + "}";
      })
      .to("O",
          streams::Produced<std::string, std::string>::with(serdes::String(), serdes::String()));
  expect_each_group_at_most_by_hand(
      "CREATE TABLE o AS SELECT g, COUNT(*) AS n, SUM(a) AS total FROM s GROUP BY g;",
      builder.build());
}

// The SQL join copies each string longer than std::string's inline buffer into each row it
// makes: the stream side's row (StreamSideValues), the joined row (Concat) and the projection,
// where the hand-written joiner makes only its output string; hence the margin with long strings.
TEST(SqlStatefulRecordPath, StreamTableJoin) {
  streams::StreamsBuilder builder;
  auto customers = builder.table<std::string, std::string>("t");
  builder.stream<std::string, std::string>("s")
      .join<std::string>(customers,
                         [](const std::string& order, const std::string& customer) {
                           HandJson& json = HandJson::of_thread();
                           std::string a = std::to_string(json.bigint(order, "A"));
                           std::string_view region = json.text(customer, "R");
                           std::string out;
                           out.reserve(12 + a.size() + region.size());
                           out.append("{\"A\":").append(a).append(",\"R\":\"");
                           out.append(region).append("\"}");
                           return out;
                         })
      .to("O");
  streams::Topology hand = builder.build();
  for (std::string text : kGroups) {
    std::string region = is_long(text) ? "region-0000000001" : "r";
    auto customer = [&](TopologyTestDriver& driver) {
      driver.pipe("t", "k1", R"({"R":")" + region + R"("})", 0);
    };
    expect_at_most_by_hand(std::string(kSource) +
                               "CREATE TABLE t (id STRING PRIMARY KEY, r STRING) WITH "
                               "(kafka_topic='t', value_format='JSON', partitions=1);"
                               "CREATE STREAM o AS SELECT s.id, a, r FROM s JOIN t ON s.id = t.id;",
                           hand, records_of(text), is_long(text) ? 2 : 0, customer);
  }
}

}  // namespace
}  // namespace oxbow::sql
