#pragma once
// oxbow-sql's in-process API: an engine that executes statements in ksqlDB's dialect against its
// own catalog, and hands out each persistent query it makes as an Oxbow Streams topology with the
// Streams properties it runs with. The application runs the queries itself, on
// oxbow::streams::KafkaStreams against a cluster or on oxbow::streams::TopologyTestDriver:
//
//   oxbow::sql::SqlEngine engine;
//   engine.execute("CREATE STREAM s (...) WITH (...); CREATE STREAM t AS SELECT ... FROM s;");
//   for (const auto& q : engine.queries()) {
//     oxbow::streams::TopologyTestDriver driver(q.topology, q.streams_properties);
//     driver.setProcessingExceptionHandler(q.processing_error_handler);
//     ...
//   }
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "oxbow/streams/errors.h"
#include "oxbow/streams/topology.h"

namespace oxbow::sql {

// The engine's settings, by ksqlDB's property names.
struct EngineSettings {
  // ksql.schema.registry.url: where AVRO, JSON_SR and PROTOBUF sources find their schemas.
  // Empty: none (those formats then need their columns written out, and cannot serialize).
  std::string schema_registry_url;
  // ksql.persistence.default.format.key / .value: a source's formats when WITH names none.
  std::string default_key_format = "KAFKA";
  std::string default_value_format;
};

// What one statement did.
struct ExecutedStatement {
  std::string statement;  // its text
  std::string message;    // ksqlDB's status message ("Stream created", "Created query ...")
  std::string query_id;   // the persistent query it made, if any
  std::vector<std::string> warnings;
  // SHOW / LIST / DESCRIBE / EXPLAIN / SHOW TOPICS: the table or description ksqlDB's CLI prints
  // (as `oxbow sql run` prints it); empty for the other statements.
  std::string text;
};

// A statement the engine refuses or cannot parse. what() is ksqlDB's message; line() and
// column() (from 1) locate it in the text given to execute(), 0 when the message has no place.
class StatementError : public std::runtime_error {
 public:
  StatementError(const std::string& message, int line, int column)
      : std::runtime_error(message), line_(line), column_(column) {}
  int line() const { return line_; }
  int column() const { return column_; }

 private:
  int line_, column_;
};

// A persistent query (CREATE ... AS SELECT, INSERT INTO ... SELECT), ready to run.
struct RunnableQuery {
  std::string id;  // ksqlDB's: CSAS_<SINK>_<n>, CTAS_<SINK>_<n>, INSERTQUERY_<n>
  std::string sink;
  std::string statement;
  oxbow::streams::Topology topology;
  // The Streams properties it needs (application.id, the exception handlers by name, ...); add
  // bootstrap.servers and state.dir to run it on KafkaStreams.
  std::map<std::string, std::string> streams_properties;
  // The handler the engine means for it: a record a node fails on is written to the engine's
  // processing log and skipped. Install it with setProcessingExceptionHandler.
  oxbow::streams::ProcessingExceptionHandler processing_error_handler;
  bool paused = false;  // PAUSE: not to be run until RESUME
};

class SqlEngine {
 public:
  explicit SqlEngine(EngineSettings settings = {});
  ~SqlEngine();
  SqlEngine(SqlEngine&&) noexcept;
  SqlEngine& operator=(SqlEngine&&) noexcept;

  // Each statement of `statements` in order (each ending with ';'). Stops at the first that
  // fails with StatementError; what the statements before it did is kept.
  std::vector<ExecutedStatement> execute(std::string_view statements);

  // The persistent queries as they are now (TERMINATE removes one, CREATE OR REPLACE changes
  // its topology).
  std::vector<RunnableQuery> queries() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace oxbow::sql
