#include "sql/server/sql_server.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <chrono>
#include <csignal>
#include <functional>

#include "common/properties.h"
#include "http/stream_server.h"
#include "sql/kafka/kafka_topic_access.h"
#include "sql/server/command_follower.h"
#include "sql/server/command_topic.h"
#include "sql/server/inserts_stream.h"
#include "sql/server/kafka_cluster.h"
#include "sql/server/ksql_resource.h"
#include "sql/server/print_resource.h"
#include "sql/server/pull_query_resource.h"
#include "sql/server/push_query_resource.h"
#include "sql/server/query_runner.h"
#include "sql/server/server_status.h"
#include "sql/server/ws_query.h"

namespace oxbow::sql::server {

namespace {

// The ksqlDB release whose REST API this serves: clients read /info's version to decide what
// they may ask for.
constexpr const char* kKsqlVersion = "0.29.0";
constexpr int kHealthTimeoutMs = 2'000;
constexpr int kStartTimeoutMs = 10'000;
constexpr int kReplayTimeoutMs = 60'000;
// ksql.server.command.response.timeout.ms's default: how long a statement waits to be read back
// from the command topic, and a request for its commandSequenceNumber.
constexpr int64_t kResponseTimeoutMs = 5'000;

std::chrono::milliseconds response_timeout_of(const std::map<std::string, std::string>& p) {
  auto found = p.find("ksql.server.command.response.timeout.ms");
  int64_t ms = found == p.end() ? kResponseTimeoutMs
                                : parse_int64(found->second).value_or(kResponseTimeoutMs);
  return std::chrono::milliseconds(std::max<int64_t>(ms, 1));
}

// "http://host:port", the first of a comma-separated list.
bool read_listener(const std::string& text, SqlServerConfig& config, std::string& error) {
  const auto listed = split(text, ',');
  const std::string first = listed.empty() ? "" : listed.front();
  constexpr std::string_view scheme = "http://";
  const auto colon = first.rfind(':');
  const int64_t port = colon == std::string::npos || colon < scheme.size()
                           ? -1
                           : parse_int64(first.substr(colon + 1)).value_or(-1);
  if (!first.starts_with(scheme) || port < 0 || port > 65535) {
    error = "listeners: expected http://host:port, got '" + first + "'";
    return false;
  }
  config.host = first.substr(scheme.size(), colon - scheme.size());
  if (config.host.empty()) config.host = "0.0.0.0";
  config.port = static_cast<uint16_t>(port);
  return true;
}

std::string response_type(const http::StreamRequest& request) {
  auto accept = request.header("accept");
  if (accept.find("application/vnd.ksql.v1+json") == std::string_view::npos &&
      accept.find("application/json") != std::string_view::npos)
    return "application/json";
  return "application/vnd.ksql.v1+json";
}

}  // namespace

// A count setting: a whole number from 1 up.
bool read_count(const std::string& name, const std::string& text, size_t& count,
                std::string& error) {
  size_t used = 0;
  try {
    long long value = std::stoll(text, &used);
    if (used == text.size() && value >= 1) {
      count = static_cast<size_t>(value);
      return true;
    }
  } catch (const std::exception&) {
  }
  error = name + ": not a count from 1 up: " + text;
  return false;
}

std::optional<SqlServerConfig> make_sql_server_config(
    const std::map<std::string, std::string>& properties, std::string& error) {
  SqlServerConfig c;
  c.properties = properties;
  c.streams_config["state.dir"] = "/tmp/oxbow-sql";
  // ksqlDB's default, where Streams' is earliest: a new query reads what comes after it starts.
  c.streams_config["auto.offset.reset"] = "latest";
  for (const auto& [name, value] : properties) {
    if (name == "listeners" && !read_listener(value, c, error)) return std::nullopt;
    if (name == "bootstrap.servers") c.bootstrap_servers = value;
    if (name == "ksql.service.id") c.service_id = value;
    if (name == "ksql.schema.registry.url") c.registry_url = value;
    if (name == "ksql.persistence.default.format.key") c.default_key_format = value;
    if (name == "ksql.persistence.default.format.value") c.default_value_format = value;
    if (name == "ksql.worker.pool.size" && !read_count(name, value, c.worker_pool_size, error))
      return std::nullopt;
    if (name == "ksql.max.push.queries" && !read_count(name, value, c.max_push_queries, error))
      return std::nullopt;
    if (name.starts_with("ksql.streams."))
      c.streams_config[name.substr(std::string_view("ksql.streams.").size())] = value;
  }
  c.streams_config["bootstrap.servers"] = c.bootstrap_servers;
  c.advertised = c.host + ":" + std::to_string(c.port);
  if (auto a = properties.find("ksql.advertised.listener"); a != properties.end()) {
    std::string url = a->second;
    if (auto scheme = url.find("://"); scheme != std::string::npos) url = url.substr(scheme + 3);
    c.advertised = url.substr(0, url.find('/'));
  }
  c.streams_config.try_emplace("application.server", c.advertised);
  if (c.service_id.empty()) {
    error = "ksql.service.id: empty";
    return std::nullopt;
  }
  return c;
}

struct SqlServer::Impl {
  explicit Impl(SqlServerConfig c)
      : config(std::move(c)),
        client{{"bootstrap.servers", config.bootstrap_servers}},
        commands(client, command_topic_name(config.service_id), config.service_id),
        engine(engine_settings(config)),
        runner(runner_settings(config)),
        ksql(
            engine, [this](const AcceptedStatement& accepted) { apply(accepted); },
            PropertyList(config.properties.begin(), config.properties.end()),
            [this](const std::string& id) { return runner.status(id); }),
        push(ksql, PushSettings{config.service_id, config.streams_config, client,
                                config.max_push_queries}),
        denied(denied_properties(config.properties)),
        ws(ksql, push, print, runner, client, denied),
        http(
            context, [this](std::shared_ptr<http::StreamExchange> e) { handle(std::move(e)); },
            http_options(config)),
        signals(context, SIGINT, SIGTERM) {
    ksql.set_denied_properties(denied);
  }

  static http::StreamServerOptions http_options(const SqlServerConfig& c) {
    http::StreamServerOptions options;
    options.handler_threads = static_cast<unsigned>(c.worker_pool_size);
    options.offer_websocket = [](const http::StreamRequest& r) { return r.path == "/ws/query"; };
    // Its rows are taken as they come, each acknowledged while the client sends more.
    options.stream_request_body = [](const http::StreamRequest& r) {
      return r.path == "/inserts-stream";
    };
    return options;
  }

  static RunnerSettings runner_settings(const SqlServerConfig& c) {
    auto shared = c.properties.find("ksql.runtime.feature.shared.enabled");
    return {c.streams_config, c.service_id,
            shared == c.properties.end() || shared->second != "false"};
  }

  static DdlSettings engine_settings(const SqlServerConfig& c) {
    DdlSettings settings;
    settings.schema_registry_url = c.registry_url;
    settings.default_key_format = c.default_key_format;
    settings.default_value_format = c.default_value_format;
    return settings;
  }

  // An accepted statement's effect on the cluster, in ksqlDB's order: the topics its sources
  // and sinks need (or the one DROP deletes), INSERT VALUES' records, then the queries.
  void apply(const AcceptedStatement& accepted) {
    const StatementResult& result = accepted.result;
    create_missing_topics(client, source_topics(engine.catalog()));
    if (!accepted.deleted_topic.empty()) delete_topic(client, accepted.deleted_topic);
    produce_records(client, result.inserted);
    runner.sync(engine.queries(), result.affected_queries, accepted.request_properties);
  }

  // ksqlDB's command runner at start: the command topic from its beginning to its end, executed
  // again in order, then the topics the sources need and the queries that remain, each with its
  // own request's properties. Queries resume from their groups' committed offsets (their
  // application ids come out as before, since the statements run in the same order). From then
  // on each statement that changes state is written there before it takes effect, and the topic
  // is followed: what other servers of the service write takes effect here too, in its order.
  void recover() {
    commands.create_if_missing();
    // A transaction a killed server left open holds back every later statement's reading until
    // it times out (a minute): beginning one of the same id aborts it now.
    commands.begin();
    commands.abort();
    follower.start();
    auto read = follower.take(follower.last_offset(), std::chrono::milliseconds(kReplayTimeoutMs));
    auto overrides = ksql.replay(read);
    create_missing_topics(client, source_topics(engine.catalog()));
    for (const auto& query : engine.queries()) {
      try {
        runner.start(query, overrides[query.id]);
      } catch (const std::exception& e) {
        spdlog::error("sql-server: query {} did not start: {}", query.id, e.what());
      }
    }
    ksql.set_command_log([this](const Command& command) { return commands.append(command); });
    ksql.set_command_transaction([this] { commands.begin(); }, [this] { commands.abort(); });
    ksql.set_command_feed(
        [this](int64_t through) {
          if (through == KsqlResource::kLogEnd) through = follower.last_offset();
          return follower.take(through, response_timeout);
        },
        response_timeout);
    follower.follow([this] { ksql.apply_fetched(); });
    spdlog::info("sql-server: replayed {} statements from {}, {} queries running", read.size(),
                 commands.topic(), runner.running().size());
  }

  // PRINT (on /query, and /ws/query's own endpoint) prints a topic; a SELECT without EMIT is a pull
  // query; anything else (errors included) the push queries'. Each runs once the command its
  // request names is executed here, so that a client may query what it has just created elsewhere.
  void query(std::shared_ptr<http::StreamExchange> exchange, PushEndpoint endpoint) {
    if (auto waited = ksql.wait_for_command(exchange->request().body))
      return exchange->respond(waited->status, "application/json", std::move(waited->body));
    if (endpoint == PushEndpoint::kQuery)
      if (auto printed = PrintTopics::request_of(exchange->request().body))
        return print.handle(std::move(exchange), *printed);
    if (auto pull_request = PullQueries::pull_request_of(endpoint, exchange->request().body))
      return pull.handle(std::move(exchange), endpoint, std::move(pull_request));
    push.handle(std::move(exchange), endpoint);
  }

  void handle(std::shared_ptr<http::StreamExchange> exchange) {
    const auto& request = exchange->request();
    if (request.method == "POST" && request.path == "/query-stream")
      return query(std::move(exchange), PushEndpoint::kQueryStream);
    if (request.method == "POST" && request.path == "/query" &&
        request.protocol == http::Protocol::http1)
      return query(std::move(exchange), PushEndpoint::kQuery);
    if (request.method == "GET" && request.path == "/ws/query") return ws.handle(exchange);
    if (request.method == "POST" && request.path == "/inserts-stream")
      return inserts.handle(std::move(exchange));
    RestResponse response;
    try {
      response = route(request);
    } catch (const std::exception& e) {
      // Whatever a statement or the cluster throws ends this request only, as ksqlDB's 50000.
      spdlog::error("sql-server: {} {}: {}", request.method, request.path, e.what());
      response = generic_error(500, 50000, e.what());
    }
    exchange->respond(response.status, response_type(request), std::move(response.body));
  }

  RestResponse route(const http::StreamRequest& request) {
    struct Route {
      const char* path;
      const char* method;
      std::function<RestResponse()> answer;
    };
    const Route routes[] = {
        {"/info", "GET", [this] { return info(); }},
        {"/healthcheck", "GET", [this] { return health(); }},
        {"/ksql", "POST", [&] { return ksql.handle(request.body); }},
        {"/status", "GET", [this] { return ksql.command_statuses(); }},
        // handle() takes the push queries' POSTs, but for /query over HTTP/2 (refused below).
        {"/query-stream", "POST", [] { return RestResponse{}; }},
        {"/query", "POST", [] { return RestResponse{}; }},
        {"/close-query", "POST", [&] { return push.close(request.body); }},
        {"/inserts-stream", "POST", [] { return RestResponse{}; }},  // handle() takes it
        {"/clusterStatus", "GET", [this] { return cluster_status(); }},
        // handle() takes GET /ws/query.
        {"/ws/query", "GET", [] { return RestResponse{}; }},
    };
    constexpr std::string_view property_prefix = "/is_valid_property/";
    if (request.path.starts_with(property_prefix) && request.method == "GET")
      return is_valid_property(request.path.substr(property_prefix.size()), denied);
    constexpr std::string_view status_prefix = "/status/";
    if (request.path.starts_with(status_prefix) && request.method == "GET")
      return ksql.command_status(request.path.substr(status_prefix.size()));
    for (const auto& r : routes) {
      if (request.path != r.path) continue;
      if (request.method != r.method)
        return generic_error(405, 40500, request.method + " is not allowed on " + request.path);
      // ksqlDB serves its older chunked /query over HTTP/1.1 only.
      if (request.path == "/query" && request.protocol == http::Protocol::http2)
        return generic_error(405, 40500, "/query is served over HTTP/1.1 only; use /query-stream");
      return r.answer();
    }
    return generic_error(404, 40400, "No resource at " + request.path);
  }

  RestResponse info() const {
    nlohmann::json body = {{"KsqlServerInfo",
                            {{"version", kKsqlVersion},
                             {"kafkaClusterId", cluster},
                             {"ksqlServiceId", config.service_id},
                             {"serverStatus", "RUNNING"}}}};
    return {200, json_text(body)};
  }

  // This server's entry as ksqlDB's heartbeat agent keeps it: the server that answers is alive.
  RestResponse cluster_status() const {
    const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::system_clock::now().time_since_epoch());
    return {200, json_text(cluster_status_json(config.advertised, now.count(),
                                               runner.streams_metadata()))};
  }

  // ksqlDB's checks: the metastore and the command runner are this process's own and always
  // well; Kafka is well when a broker answers a metadata request.
  RestResponse health() const {
    bool kafka = cluster_id(client, kHealthTimeoutMs).has_value();
    auto healthy = [](bool ok) { return nlohmann::json{{"isHealthy", ok}}; };
    nlohmann::json body = {{"isHealthy", kafka},
                           {"details",
                            {{"metastore", healthy(true)},
                             {"kafka", healthy(kafka)},
                             {"commandRunner", healthy(true)}}}};
    return {kafka ? 200 : 503, json_text(body)};
  }

  void shut() {
    http.close();
    context.stop();
  }

  SqlServerConfig config;
  ClientConfig client;
  std::string cluster;
  // Before the listener, so destroyed after it: its destructor waits for the requests that use
  // them (a statement may still be beginning its transaction when the shutdown comes).
  CommandTopic commands;
  CommandFollower follower{client, command_topic_name(config.service_id)};
  Engine engine;
  QueryRunner runner;
  KsqlResource ksql;
  PushQueries push;
  InsertsEndpoint inserts{ksql, InsertsSettings{client, config.registry_url}};
  PullQueries pull{ksql, runner, client, config.properties};
  PrintTopics print{client, config.registry_url};
  const std::vector<std::string> denied;  // properties no request may override
  WsQueryEndpoint ws;
  boost::asio::io_context context;
  http::StreamServer http;
  boost::asio::signal_set signals;
  const std::chrono::milliseconds response_timeout = response_timeout_of(config.properties);
};

SqlServer::SqlServer(SqlServerConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {}

SqlServer::~SqlServer() = default;

bool SqlServer::start(std::string& error) {
  auto& s = *impl_;
  auto id = cluster_id(s.client, kStartTimeoutMs);
  if (!id) {
    error = "no Kafka broker answered at " + s.config.bootstrap_servers;
    return false;
  }
  s.cluster = *id;
  try {
    // ksqlDB's processing log: its stream exists from the start, its topic takes the entries.
    const std::string log_topic = s.config.service_id + "ksql_processing_log";
    s.engine.execute(processing_log_statement(log_topic));
    create_missing_topics(s.client, source_topics(s.engine.catalog()));
    s.engine.set_processing_log(std::make_shared<TopicProcessingLog>(s.client, log_topic));
    s.engine.set_topic_access(std::make_shared<KafkaTopicAccess>(s.client));
    s.recover();
  } catch (const std::exception& e) {
    error = e.what();
    return false;
  }
  if (!s.http.listen(s.config.host, s.config.port, error)) return false;
  spdlog::info("oxbow sql-server listening on http://{}:{}, Kafka cluster {} at {}", s.config.host,
               s.http.port(), s.cluster, s.config.bootstrap_servers);
  return true;
}

// Both run on the network thread: no request is taken after the listener closes.
void SqlServer::stop() {
  boost::asio::post(impl_->context, [impl = impl_.get()] { impl->shut(); });
}

uint16_t SqlServer::port() const {
  return impl_->http.port();
}

int SqlServer::run() {
  impl_->signals.async_wait([impl = impl_.get()](const boost::system::error_code& ec, int sig) {
    if (ec) return;
    spdlog::info("oxbow sql-server: signal {}, stopping", sig);
    impl->shut();
  });
  impl_->context.run();
  impl_->follower.stop();
  impl_->push.close_all();
  impl_->print.close_all();
  impl_->inserts.close_all();
  // Bounded: with the cluster gone a query cannot commit or leave its group, and the process
  // still exits (exit code 0, as ksqlDB's after its shutdown timeout).
  if (impl_->runner.close())
    spdlog::info("oxbow sql-server stopped cleanly");
  else
    spdlog::warn("oxbow sql-server stopped; some queries had not stopped within {} ms",
                 impl_->runner.shutdown_timeout().count());
  return 0;
}

}  // namespace oxbow::sql::server
