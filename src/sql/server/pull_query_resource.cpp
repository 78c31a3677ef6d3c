#include "sql/server/pull_query_resource.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <vector>

#include "http/stream_server.h"
#include "sql/engine/pull_query.h"
#include "sql/parser/parser.h"
#include "sql/serde/row_serde.h"
#include "sql/server/entities.h"
#include "sql/server/ksql_resource.h"
#include "sql/server/pull_query_reader.h"
#include "sql/server/pull_query_routing.h"
#include "sql/server/query_runner.h"

namespace oxbow::sql::server {

namespace {

using nlohmann::json;

constexpr const char* kDelimited = "application/vnd.ksqlapi.delimited.v1";
// How long a row waits for a client that reads slowly (more than kMaxUnsentBytes unsent) before
// the query gives up on it.
constexpr auto kSlowClientWait = std::chrono::seconds(30);
// ksqlDB's ksql.query.pull.thread.pool.size default.
constexpr int64_t kDefaultThreads = 50;

std::optional<std::string> statement_of(PushEndpoint endpoint, std::string_view body) {
  json request = json::parse(body, nullptr, false);
  if (!request.is_object()) return std::nullopt;
  auto sql = request.find(endpoint == PushEndpoint::kQueryStream ? "sql" : "ksql");
  if (sql == request.end() || !sql->is_string()) return std::nullopt;
  return with_session_variables(request, sql->get<std::string>());
}

// The one SELECT of `statements` when it has no EMIT clause, else null.
const parser::Query* pull_query_of(const std::vector<parser::Statement>& statements) {
  if (statements.size() != 1) return nullptr;
  const auto* query = std::get_if<std::unique_ptr<parser::Query>>(&statements.front().body);
  return query && (*query)->emit == parser::EmitType::kNone ? query->get() : nullptr;
}

// ksqlDB's refusals: /query's as /ksql's statement errors, /query-stream's code and message.
RestResponse refusal(PushEndpoint endpoint, const std::string& statement,
                     const std::string& message) {
  if (endpoint == PushEndpoint::kQueryStream) return generic_error(400, kBadStatement, message);
  return {400, json_text({{"@type", "statement_error"},
                          {"error_code", kBadStatement},
                          {"message", message},
                          {"statementText", statement},
                          {"entities", json::array()}})};
}

// The response's pieces in ksqlDB's three shapes: /query-stream delimited or as one JSON array,
// /query's chunked array of header and row objects. A pull query ends without finalMessage.
class PullResponse {
 public:
  PullResponse(std::shared_ptr<http::StreamExchange> exchange, PushEndpoint endpoint,
               const PullPlan& plan)
      : exchange_(std::move(exchange)),
        legacy_(endpoint == PushEndpoint::kQuery),
        delimited_(!legacy_ && exchange_->request().header("accept").find("application/json") ==
                                   std::string_view::npos),
        serde_(row_serde(json_formats(), plan.columns, false)),
        columns_(plan.column_names) {}

  void start(const PullPlan& plan) {
    exchange_->set_status(200);
    exchange_->set_header("content-type", delimited_ ? kDelimited : "application/json");
    if (legacy_) {
      exchange_->write(
          "[" + json_text({{"header", {{"queryId", plan.query_id}, {"schema", plan.schema}}}}));
      return;
    }
    json header = {{"queryId", plan.query_id},
                   {"columnNames", plan.column_names},
                   {"columnTypes", plan.column_types}};
    exchange_->write(delimited_ ? json_text(header) + "\n" : "[" + json_text(header));
  }
  // False when the client is gone or reads too slowly.
  bool row(const Row& row) {
    for (auto waited = std::chrono::milliseconds(0); exchange_->unsent_bytes() > kMaxUnsentBytes;
         waited += std::chrono::milliseconds(5)) {
      if (exchange_->client_gone() || waited > kSlowClientWait) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    const std::string values = json_text(row_json(row));
    if (legacy_) return exchange_->write(",\n{\"row\":{\"columns\":" + values + "}}");
    return exchange_->write(delimited_ ? values + "\n" : "," + values);
  }
  void end(const std::string& error) {
    json failure = {{"@type", "generic_error"}, {"error_code", 50000}, {"message", error}};
    if (legacy_)
      exchange_->write((error.empty() ? "" : ",\n" + json_text({{"errorMessage", failure}})) + "]");
    else if (delimited_)
      exchange_->write(error.empty() ? "" : json_text(failure) + "\n");
    else
      exchange_->write((error.empty() ? "" : "," + json_text(failure)) + "]");
    exchange_->finish();
  }

 private:
  static Formats json_formats() {
    Formats f;
    f.value_format = "JSON";
    f.wrap_single_value = true;
    return f;
  }
  // The row's values as ksqlDB's JSON writes them, through the JSON format's serde.
  json row_json(const Row& row) {
    std::string bytes = serde_.serialize("", row);
    json object = json::parse(bytes, nullptr, false);
    json values = json::array();
    for (const auto& name : columns_)
      values.push_back(object.is_object() ? object.value(name, json()) : json());
    return values;
  }

  std::shared_ptr<http::StreamExchange> exchange_;
  const bool legacy_, delimited_;
  streams::Serde<Row> serde_;
  std::vector<std::string> columns_;
};

// The query's rows, on its own thread. An error before the first row is answered as a refusal;
// after it, the response ends with it.
void run(std::shared_ptr<http::StreamExchange> exchange, PushEndpoint endpoint,
         std::shared_ptr<PullPlan> plan, QueryStreams streams, const ClientConfig& client,
         const PullRoute& route) {
  const std::string& statement = route.statement;
  std::optional<PullResponse> response;
  bool started = false;
  try {
    response.emplace(exchange, endpoint, *plan);
    auto emit = [&](const Row& row) {
      if (!started) response->start(*plan);
      started = true;
      return response->row(row);
    };
    if (plan->stream)
      read_stream_rows(client, *plan, emit);
    else
      read_routed_rows(*streams.streams, streams.topology, *plan, route, emit);
    if (!started) response->start(*plan);
    started = true;
  } catch (const std::exception& e) {
    const std::string message = std::string(plan->stream ? "Failed to read the stream's topic"
                                                         : "Failed to get value from "
                                                           "materialized table") +
                                ", reason: " + e.what();
    spdlog::info("sql-server: pull query {} failed: {}", plan->query_id, message);
    if (started) return response->end(message);
    RestResponse r = refusal(endpoint, statement, message);
    return exchange->respond(r.status, "application/json", std::move(r.body));
  }
  response->end("");
}

}  // namespace

// A fixed pool of threads taking tasks in their order of arrival.
class PullQueries::Workers {
 public:
  explicit Workers(size_t count) {
    for (size_t i = 0; i < count; ++i) threads_.emplace_back([this] { work(); });
  }
  ~Workers() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    ready_.notify_all();
    for (auto& t : threads_) t.join();
  }
  void add(std::function<void()> task) {
    {
      std::lock_guard lock(mutex_);
      tasks_.push_back(std::move(task));
    }
    ready_.notify_one();
  }

 private:
  void work() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
        if (stopping_) return;
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
    }
  }

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

PullQueries::PullQueries(KsqlResource& ksql, const QueryRunner& runner, ClientConfig client,
                         const std::map<std::string, std::string>& properties)
    : ksql_(ksql), runner_(runner), client_(std::move(client)) {
  int64_t threads = kDefaultThreads;
  if (auto p = properties.find("ksql.query.pull.thread.pool.size"); p != properties.end())
    threads = std::clamp<int64_t>(std::atoll(p->second.c_str()), 1, 10'000);
  workers_ = std::make_unique<Workers>(static_cast<size_t>(threads));
}

PullQueries::~PullQueries() = default;

struct PullQueries::Request {
  std::string statement;
  std::vector<parser::Statement> parsed;
  const parser::Query* query = nullptr;  // in `parsed`
};

std::shared_ptr<const PullQueries::Request> PullQueries::pull_request_of(PushEndpoint endpoint,
                                                                         std::string_view body) {
  auto statement = statement_of(endpoint, body);
  if (!statement) return nullptr;
  auto request = std::make_shared<Request>();
  try {
    request->parsed = parser::parse(*statement);
  } catch (const std::exception&) {
    return nullptr;
  }
  request->query = pull_query_of(request->parsed);
  if (!request->query) return nullptr;
  request->statement = std::move(*statement);
  return request;
}

void PullQueries::handle(std::shared_ptr<http::StreamExchange> exchange, PushEndpoint endpoint,
                         std::shared_ptr<const Request> request) {
  const std::string& statement = request->statement;
  auto plan = std::make_shared<PullPlan>();
  try {
    ksql_.read_engine(
        [&](const Engine& engine) { *plan = plan_pull_query(engine, *request->query); });
  } catch (const std::exception& e) {
    RestResponse r = refusal(endpoint, statement, e.what());
    return exchange->respond(r.status, "application/json", std::move(r.body));
  }
  auto streams = plan->stream ? QueryStreams{} : runner_.query_streams(plan->materializing_query);
  if (!plan->stream && !streams.streams) {
    RestResponse r = refusal(endpoint, statement, "Materializing query has been stopped");
    return exchange->respond(r.status, "application/json", std::move(r.body));
  }
  const PullRoute route{runner_.endpoint(), !forwarded_request(exchange->request().body),
                        statement};
  workers_->add([=, this] { run(exchange, endpoint, plan, streams, client_, route); });
}

}  // namespace oxbow::sql::server
