// SQL on the test driver: a stream of page views declared in ksqlDB's dialect, and a persistent
// query that keeps the long ones (CREATE STREAM AS SELECT ... WHERE). The engine compiles the query
// into an Oxbow Streams topology; this program runs it in TopologyTestDriver, pipes a few JSON
// records into the source topic and prints what the query wrote. Built on the public headers of
// oxbow-sql and oxbow-streams only.
#include <cstdio>
#include <exception>
#include <string>

#include "oxbow/sql/engine.h"
#include "oxbow/streams/test_driver.h"

namespace sql = oxbow::sql;
namespace streams = oxbow::streams;

int main() try {
  sql::SqlEngine engine;
  auto results = engine.execute(
      "CREATE STREAM pageviews (user_id STRING KEY, page STRING, duration_ms BIGINT)\n"
      "  WITH (kafka_topic='pageviews', value_format='JSON', partitions=1);\n"
      "CREATE STREAM long_views AS\n"
      "  SELECT user_id, page, duration_ms FROM pageviews WHERE duration_ms >= 1000;\n");
  for (const auto& r : results) std::printf("%s\n", r.message.c_str());

  const sql::RunnableQuery query = engine.queries().at(0);
  streams::TopologyTestDriver driver(query.topology, query.streams_properties);
  driver.setProcessingExceptionHandler(query.processing_error_handler);
  auto input = driver.createInputTopic<std::string, std::string>("pageviews");
  input.pipeInput("alice", R"({"page":"/home","duration_ms":250})", 1000);
  input.pipeInput("bob", R"({"page":"/pricing","duration_ms":4200})", 2000);
  input.pipeInput("alice", R"({"page":"/docs","duration_ms":1000})", 4000);

  auto output = driver.createOutputTopic<std::string, std::string>("LONG_VIEWS");
  while (!output.isEmpty()) {
    auto record = output.readRecord();
    std::printf("%s %s\n", record.key.value_or("").c_str(), record.value.value_or("null").c_str());
  }
  return 0;
} catch (const sql::StatementError& e) {
  std::fprintf(stderr, "sql-filter: line %d, column %d: %s\n", e.line(), e.column(), e.what());
  return 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "sql-filter: %s\n", e.what());
  return 1;
}
