// Heap allocations per record of whole queries, counted by replacing operator new for this test
// binary: a query over fixed-width columns must cost no allocation beyond what the Streams record
// path costs for the same records passed through untouched (the TopologyTestDriver's own
// queues included). A row boxed, copied onto the heap or re-serialized per record fails here.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "oxbow/streams/kstream.h"
#include "oxbow/streams/streams_builder.h"
#include "oxbow/streams/test_driver.h"
#include "sql/engine/engine.h"
#include "sql/engine/record_path_counting.h"

namespace oxbow::sql {
namespace {

using streams::TopologyTestDriver;

// The same records through a topology that only passes them on.
double pass_through_allocations(const Traffic& t) {
  streams::StreamsBuilder builder;
  builder.stream<std::string, std::string>(t.in).to(t.out);
  TopologyTestDriver driver(builder.build(), {{"application.id", "pass"}});
  return allocations_per_record(driver, t);
}

// The query `statements` make (its id CSAS_O_0) costs no more per record than passing the same
// records through.
void expect_no_more_than_pass_through(const std::string& statements, const Traffic& t) {
  Engine engine;
  engine.execute(statements);
  const PersistentQuery* q = engine.query("CSAS_O_0");
  ASSERT_NE(q, nullptr);
  TopologyTestDriver driver(q->topology, q->streams_config);
  double sql = allocations_per_record(driver, t);
  double baseline = pass_through_allocations(t);
  EXPECT_LE(sql, baseline);
  std::printf("allocations per record: %.3f (pass-through %.3f)\n", sql, baseline);
}

TEST(SqlRecordPath, DelimitedProjectionAndFilterCostNothingPerRecord) {
  expect_no_more_than_pass_through(
      "CREATE STREAM s (id STRING KEY, a BIGINT, b DOUBLE, c INT) WITH (kafka_topic='s', "
      "value_format='DELIMITED', partitions=1);"
      "CREATE STREAM o AS SELECT id, a * 2 AS x, b + c AS y, c FROM s WHERE a > 0;",
      {"s", "O", "k1", "5,2.5,7"});
}

TEST(SqlRecordPath, JsonProjectionAndFilterCostNothingPerRecord) {
  expect_no_more_than_pass_through(
      "CREATE STREAM s (id STRING KEY, a BIGINT, b INT) WITH (kafka_topic='s', "
      "value_format='JSON', partitions=1);"
      "CREATE STREAM o AS SELECT id, a + b AS x FROM s WHERE a > 0;",
      {"s", "O", "k1", R"({"A":5,"B":2})"});
}

}  // namespace
}  // namespace oxbow::sql
