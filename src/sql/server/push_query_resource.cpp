#include "sql/server/push_query_resource.h"

#include <nlohmann/json.hpp>

namespace oxbow::sql::server {

namespace {

using nlohmann::json;

constexpr int kBadRequest = 40000;
constexpr int kBadStatement = 40001;
// ksqlDB's API server codes (io.confluent.ksql.api.server.ErrorCodes).
constexpr int kMissingParam = 50001;
constexpr int kUnknownQueryId = 50002;

struct Names {
  const char* sql;
  const char* properties;
};

Names names_of(PushEndpoint endpoint) {
  if (endpoint == PushEndpoint::kQueryStream) return {"sql", "properties"};
  return {"ksql", "streamsProperties"};
}

// /query is the older API: its errors are statement_errors with the statement, as /ksql's;
// /query-stream's carry the code and the message only.
RestResponse refused(PushEndpoint endpoint, const std::string& statement,
                     const std::string& message) {
  if (endpoint == PushEndpoint::kQueryStream) return generic_error(400, kBadStatement, message);
  json body = {{"@type", "statement_error"},
               {"error_code", kBadStatement},
               {"message", message},
               {"statementText", statement},
               {"entities", json::array()}};
  return {400, json_text(body)};
}

}  // namespace

RestResponse push_query(KsqlResource& ksql, PushEndpoint endpoint, std::string_view body) {
  json request = json::parse(body, nullptr, false);
  if (request.is_discarded() || !request.is_object())
    return generic_error(400, kBadRequest, "The request body is not a JSON object.");
  const Names names = names_of(endpoint);
  auto sql = request.find(names.sql);
  if (sql == request.end() || !sql->is_string())
    return generic_error(400, endpoint == PushEndpoint::kQueryStream ? kMissingParam : kBadRequest,
                         std::string("No \"") + names.sql + "\" string in the request body.");
  if (auto p = request.find(names.properties); p != request.end() && !p->is_object())
    return generic_error(400, kBadRequest,
                         std::string("\"") + names.properties + "\" is not a JSON object.");
  const std::string statement = sql->get<std::string>();
  try {
    ksql.push_query_columns(statement);
  } catch (const std::exception& e) {
    return refused(endpoint, statement, e.what());
  }
  return generic_error(501, 50100,
                       "Push queries are not run by this server yet: the statement is valid, but "
                       "no transient query runtime exists (issue 43).");
}

RestResponse close_query(std::string_view body) {
  json request = json::parse(body, nullptr, false);
  if (request.is_discarded() || !request.is_object())
    return generic_error(400, kBadRequest, "The request body is not a JSON object.");
  auto id = request.find("queryId");
  if (id == request.end() || !id->is_string())
    return generic_error(400, kMissingParam, "No \"queryId\" string in the request body.");
  return generic_error(400, kUnknownQueryId, "No query with id " + id->get<std::string>());
}

}  // namespace oxbow::sql::server
