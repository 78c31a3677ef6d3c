#include "sql/server/push_query_resource.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include <nlohmann/json.hpp>

#include "http/stream_server.h"
#include "sql/server/entities.h"
#include "sql/server/query_runner.h"

namespace oxbow::sql::server {

namespace {

using nlohmann::json;

constexpr std::chrono::milliseconds kWaitAtShutdown{30'000};

constexpr const char* kDelimited = "application/vnd.ksqlapi.delimited.v1";

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

// How the rows are written: ksqlDB's three shapes.
enum class Shape { kDelimited, kJsonArray, kLegacy };

Shape shape_of(PushEndpoint endpoint, const http::StreamRequest& request) {
  if (endpoint == PushEndpoint::kQuery) return Shape::kLegacy;
  auto accept = request.header("accept");
  return accept.find("application/json") != std::string_view::npos ? Shape::kJsonArray
                                                                   : Shape::kDelimited;
}

std::string header_piece(Shape shape, const TransientPlan& plan) {
  if (shape != Shape::kLegacy) {
    json header = {{"queryId", plan.query_id},
                   {"columnNames", plan.column_names},
                   {"columnTypes", plan.column_types}};
    return shape == Shape::kDelimited ? json_text(header) + "\n" : "[" + json_text(header);
  }
  std::string schema;
  for (size_t i = 0; i < plan.column_names.size(); ++i)
    schema += (i ? ", `" : "`") + plan.column_names[i] + "` " + plan.column_types[i];
  return "[" + json_text({{"header", {{"queryId", plan.query_id}, {"schema", schema}}}});
}

// A table's deleted row (`tombstone`): /query marks it as ksqlDB's StreamedRow does, with its key
// columns and the rest null; /query-stream's writers drop it ("not currently supported"), "".
std::string row_piece(Shape shape, const json& row, bool tombstone) {
  if (tombstone && shape != Shape::kLegacy) return "";
  if (shape == Shape::kDelimited) return json_text(row) + "\n";
  if (shape == Shape::kJsonArray) return "," + json_text(row);
  json body = {{"columns", row}};
  if (tombstone) body["tombstone"] = true;
  return ",\n" + json_text({{"row", body}});
}

std::string end_piece(Shape shape, const std::string& error, bool limited) {
  json failure = {{"@type", "generic_error"}, {"error_code", 50000}, {"message", error}};
  if (shape == Shape::kDelimited) return error.empty() ? "" : json_text(failure) + "\n";
  if (shape == Shape::kJsonArray) return (error.empty() ? "" : "," + json_text(failure)) + "]";
  if (!error.empty()) return ",\n" + json_text({{"errorMessage", failure}}) + "]";
  return (limited ? ",\n" + json_text({{"finalMessage", "Limit Reached"}}) : "") + "]";
}

}  // namespace

PushQueries::PushQueries(KsqlResource& ksql, PushSettings settings)
    : ksql_(ksql), settings_(std::move(settings)) {}

PushQueries::~PushQueries() {
  close_all();
}

RestResponse PushQueries::check(PushEndpoint endpoint, std::string_view body,
                                std::string& statement,
                                std::map<std::string, std::string>& properties) {
  json request = json::parse(body, nullptr, false);
  if (request.is_discarded() || !request.is_object())
    return generic_error(400, kBadRequest, "The request body is not a JSON object.");
  const Names names = names_of(endpoint);
  auto sql = request.find(names.sql);
  if (sql == request.end() || !sql->is_string())
    return generic_error(400, endpoint == PushEndpoint::kQueryStream ? kMissingParam : kBadRequest,
                         std::string("No \"") + names.sql + "\" string in the request body.");
  if (auto p = request.find(names.properties); p != request.end()) {
    if (!p->is_object())
      return generic_error(400, kBadRequest,
                           std::string("\"") + names.properties + "\" is not a JSON object.");
    properties = text_fields(request, names.properties);
  }
  statement = with_session_variables(request, sql->get<std::string>());
  return {200, ""};
}

std::map<std::string, std::string> PushQueries::config_of(
    const TransientPlan& plan, const std::map<std::string, std::string>& properties) {
  auto config = settings_.streams_config;
  // ksqlDB's transient application id: its service id, then the query's.
  config["application.id"] = "_confluent-ksql-" + settings_.service_id + plan.query_id;
  config["default.deserialization.exception.handler"] =
      "org.apache.kafka.streams.errors.LogAndContinueExceptionHandler";
  config["processing.exception.handler"] =
      "org.apache.kafka.streams.errors.LogAndContinueProcessingExceptionHandler";
  for (const auto& [key, value] : properties)
    if (auto name = streams_property_name(key); !name.empty()) config[name] = value;
  return config;
}

void PushQueries::handle(std::shared_ptr<http::StreamExchange> exchange, PushEndpoint endpoint) {
  const auto& request = exchange->request();
  std::string statement;
  std::map<std::string, std::string> properties;
  RestResponse checked = check(endpoint, request.body, statement, properties);
  if (checked.status != 200)
    return exchange->respond(checked.status, "application/json", std::move(checked.body));
  TransientPlan plan;
  try {
    plan = plan_transient_query(ksql_, statement);
  } catch (const std::exception& e) {
    RestResponse r = refused(endpoint, statement, e.what());
    return exchange->respond(r.status, "application/json", std::move(r.body));
  }
  if (auto full = over_capacity(endpoint); !full.empty()) {
    RestResponse r = endpoint == PushEndpoint::kQueryStream
                         ? generic_error(400, kMaxPushQueriesExceeded, full)
                         : refused(endpoint, statement, full);
    return exchange->respond(r.status, "application/json", std::move(r.body));
  }
  const Shape shape = shape_of(endpoint, request);
  const std::optional<int64_t> limit = plan.limit;
  RowSink sink;
  // On the query's Streams threads: the response's queue of unsent pieces is the query's buffer,
  // drained by the connection as the client reads; writing to it never waits.
  sink.row = [exchange, shape](const json& row, bool tombstone) -> std::string {
    if (exchange->unsent_bytes() > kMaxUnsentBytes)
      return "the client reads too slowly: more than " + std::to_string(kMaxUnsentBytes) +
             " bytes of rows wait for it";
    std::string piece = row_piece(shape, row, tombstone);
    if (exchange->client_gone() || (!piece.empty() && !exchange->write(std::move(piece))))
      return "the client is gone";
    return "";
  };
  auto config = config_of(plan, properties);
  const std::string id = plan.query_id;
  sink.end = [this, exchange, shape, limit, id](const std::string& error) {
    exchange->write(end_piece(shape, error, limit.has_value()));
    exchange->finish();
    forget(id);
  };
  exchange->set_status(200);
  exchange->set_header("content-type",
                       shape == Shape::kDelimited ? kDelimited : "application/json");
  exchange->write(header_piece(shape, plan));
  auto query = std::make_shared<TransientQuery>(std::move(plan), std::move(config),
                                                settings_.client, std::move(sink));
  {
    std::lock_guard lock(mutex_);
    running_[id] = query;
  }
  exchange->on_client_gone([weak = std::weak_ptr(query)] {
    if (auto q = weak.lock()) q->stop();
  });
  try {
    query->start();
  } catch (const std::exception& e) {
    forget(id);
    exchange->write(end_piece(shape, e.what(), false));
    exchange->finish();
  }
  spdlog::info("sql-server: push query {} started: {}", id, statement);
}

// ksqlDB counts the queries live when one more is asked for; two asked at once may both pass,
// as there.
std::string PushQueries::over_capacity(PushEndpoint endpoint) {
  size_t live;
  {
    std::lock_guard lock(mutex_);
    live = running_.size();
  }
  if (live < settings_.max_push_queries) return "";
  if (endpoint == PushEndpoint::kQueryStream) return "Maximum number of push queries exceeded";
  return "Not executing statement(s) as it would cause the number of active, push queries to "
         "exceed the configured limit. Terminate existing PUSH queries, or increase the "
         "'ksql.max.push.queries' setting via the 'ksql-server.properties' file. Current push "
         "query count: " +
         std::to_string(live) +
         ". Configured limit: " + std::to_string(settings_.max_push_queries) + ".";
}

RestResponse PushQueries::close(std::string_view body) {
  json request = json::parse(body, nullptr, false);
  if (request.is_discarded() || !request.is_object())
    return generic_error(400, kBadRequest, "The request body is not a JSON object.");
  auto id = request.find("queryId");
  if (id == request.end() || !id->is_string())
    return generic_error(400, kMissingParam, "No \"queryId\" string in the request body.");
  std::lock_guard lock(mutex_);
  auto found = running_.find(id->get<std::string>());
  if (found == running_.end())
    return generic_error(400, kUnknownQueryId, "No query with id " + id->get<std::string>());
  found->second->stop();
  return {200, ""};
}

std::string PushQueries::start(const std::string& statement,
                               const std::map<std::string, std::string>& properties,
                               const std::function<RowSink(const TransientPlan&)>& make_sink) {
  TransientPlan plan = plan_transient_query(ksql_, statement);
  if (auto full = over_capacity(PushEndpoint::kQuery); !full.empty())
    throw std::runtime_error(full);
  RowSink sink = make_sink(plan);
  const std::string id = plan.query_id;
  sink.end = [this, id, end = std::move(sink.end)](const std::string& error) {
    end(error);
    forget(id);
  };
  auto config = config_of(plan, properties);
  auto query = std::make_shared<TransientQuery>(std::move(plan), std::move(config),
                                                settings_.client, std::move(sink));
  {
    std::lock_guard lock(mutex_);
    running_[id] = query;
  }
  try {
    query->start();
  } catch (...) {
    forget(id);
    throw;
  }
  return id;
}

void PushQueries::close_all() {
  std::map<std::string, std::shared_ptr<TransientQuery>> queries;
  {
    std::lock_guard lock(mutex_);
    queries = running_;
  }
  for (auto& [id, query] : queries) query->stop();
  // One bound for all: they end in parallel, and a stuck one must not hold up the next ones.
  const auto deadline = std::chrono::steady_clock::now() + kWaitAtShutdown;
  auto ms_until = [](auto until) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    return static_cast<int>(std::max<int64_t>(0, left.count()));
  };
  for (auto& [id, query] : queries)
    if (!query->wait(ms_until(deadline))) spdlog::warn("sql-server: push query {} did not end", id);
}

void PushQueries::forget(const std::string& id) {
  std::lock_guard lock(mutex_);
  running_.erase(id);
}

}  // namespace oxbow::sql::server
