#pragma once
// ksqlDB's `POST /ksql`: a request's statements executed one after the other, each result as
// one of ksqlDB's entities (entities.h), the first failure as a statement_error carrying the
// entities of the statements before it. The engine is used by one request at a time.
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "sql/engine/engine.h"
#include "sql/server/entities.h"

namespace oxbow::sql::server {

struct RestResponse {
  int status = 200;
  std::string body;  // JSON
};

// ksqlDB's error body: {"@type":"generic_error","error_code":...,"message":...}.
RestResponse generic_error(int status, int error_code, const std::string& message);

// A statement the engine accepted, for its part on the cluster.
struct AcceptedStatement {
  const StatementResult& result;
  const std::map<std::string, std::string>& request_properties;  // its request's
  std::string deleted_topic;  // DROP ... DELETE TOPIC: the dropped source's topic
};

class KsqlResource {
 public:
  // What an accepted statement does to the cluster (topics, records, running queries). An
  // exception fails the statement with its message.
  using Apply = std::function<void(const AcceptedStatement& accepted)>;
  // A query's status where it runs (RUNNING, ERROR), "" to keep the engine's.
  using QueryStatus = std::function<std::string(const std::string& query_id)>;

  KsqlResource(Engine& engine, Apply apply, PropertyList server_properties,
               QueryStatus query_status = {});

  // The response to a request body: 200 with the array of entities, 400 with a statement_error
  // or, for a body that is no JSON object with a "ksql" string, a generic_error.
  RestResponse handle(std::string_view body);

  // ksqlDB's GET /status/<command id>: {"status":"SUCCESS","message":...} of an accepted
  // statement (every statement is done when /ksql answers), 404 for an id never seen; GET
  // /status: {"commandStatuses": {<id>: <status>}}.
  RestResponse command_status(const std::string& command_id);
  RestResponse command_statuses();

 private:
  // Runs one statement; its entity (null for none), or throws with the engine's message.
  nlohmann::json run(const std::string& statement,
                     const std::map<std::string, std::string>& properties);

  std::mutex mutex_;
  Engine& engine_;
  Apply apply_;
  PropertyList server_properties_;
  QueryStatus query_status_;
  int64_t sequence_number_ = 0;  // the commandSequenceNumber of the last accepted statement
  std::map<std::string, std::string> command_messages_;  // by command id, the latest
};

}  // namespace oxbow::sql::server
