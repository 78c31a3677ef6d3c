#include "sql/server/transient_query.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <random>
#include <thread>

#include "oxbow/streams/kafka_streams.h"
#include "sql/engine/descriptions.h"
#include "sql/parser/parser.h"
#include "sql/serde/row_serde.h"
#include "sql/server/ksql_resource.h"

namespace oxbow::sql::server {

namespace {

using nlohmann::json;

// How often the query looks at its Streams application's state besides being woken.
constexpr int kCheckMs = 100;

std::string random_suffix() {
  static std::mt19937_64 generator{std::random_device{}()};
  static std::mutex mutex;
  std::lock_guard lock(mutex);
  return std::to_string(generator() % 10'000'000'000'000'000ULL);
}

// The sink the query would have as a persistent one: the result's columns and kind. Only its
// formats are used (the query's internal topics and stores), JSON whatever the source's, since
// JSON holds any key columns; no topic is written.
DataSource result_sink(const BoundQuery& bound, const std::string& name) {
  DataSource sink;
  sink.name = name;
  sink.kind = bound.result_kind;
  sink.formats.key_format = "JSON";
  sink.formats.value_format = "JSON";
  for (const auto& c : bound.columns)
    sink.columns.push_back(
        {c.name, c.type, c.key ? ColumnNamespace::kKey : ColumnNamespace::kValue, ""});
  return sink;
}

}  // namespace

void RowFeed::attach(RowSink* sink, std::function<void()> done) {
  std::lock_guard lock(mutex_);
  sink_ = sink;
  on_done_ = std::move(done);
}

void RowFeed::accept(const Row& key, const Row* value) {
  std::lock_guard lock(mutex_);
  if (done_ || !sink_) return;
  error_ = sink_->row(row_of(key, value), value == nullptr);
  // As ksqlDB's queue, a tombstone counts towards the LIMIT whether or not the client is sent it.
  done_ = !error_.empty() || (limit_ && ++rows_ >= *limit_);
  if (done_ && on_done_) on_done_();
}

bool RowFeed::done(std::string& error) {
  std::lock_guard lock(mutex_);
  error = error_;
  return done_;
}

// The values written as the JSON format writes them, then read back as one document: the rows
// the client gets are those it got when they went through a JSON topic.
json RowFeed::row_of(const Row& key, const Row* value) const {
  std::string text = "[";
  size_t k = 0, v = 0;
  for (const Column& c : columns_) {
    if (text.size() > 1) text += ',';
    const Row* from = c.key ? &key : value;
    size_t& at = c.key ? k : v;
    if (from && at < from->size())
      append_json((*from)[at], *c.type, text);
    else
      text += "null";
    ++at;
  }
  text += ']';
  return json::parse(text);
}

TransientPlan plan_transient_query(KsqlResource& ksql, const std::string& statement) {
  std::vector<FieldInfo> fields = ksql.push_query_columns(statement);
  TransientPlan plan;
  ksql.read_engine([&](const Engine& engine) {
    static const FunctionRegistry functions;
    auto statements = parser::parse(statement);
    const auto& query = std::get<std::unique_ptr<parser::Query>>(statements.front().body);
    BoundQuery bound = bind_query(*query, engine.catalog(), functions, QueryContext{});
    const std::string suffix = bound.from->name + "_" + random_suffix();
    plan.query_id = "transient_" + suffix;
    DataSource sink = result_sink(bound, plan.query_id);
    auto counters = std::make_shared<QueryCounters>();
    counters->query_id = plan.query_id;
    counters->log = engine.processing_log();
    std::vector<RowFeed::Column> columns;
    for (const auto& c : bound.columns) columns.push_back({c.key, c.type});
    plan.feed = std::make_shared<RowFeed>(std::move(columns), bound.limit);
    plan.topology = plan_query(
        *physical_plan(bound, sink), bound, sink, counters,
        [feed = plan.feed](const Row& key, const Row* value) { feed->accept(key, value); });
    plan.limit = bound.limit;
  });
  for (const auto& f : fields) {
    plan.column_names.push_back(f.name);
    plan.column_types.push_back(f.schema->to_string());
  }
  return plan;
}

TransientQuery::TransientQuery(TransientPlan plan, std::map<std::string, std::string> config,
                               ClientConfig client, RowSink sink)
    : plan_(std::move(plan)),
      streams_config_(std::move(config)),
      client_(std::move(client)),
      sink_(std::move(sink)) {}

TransientQuery::~TransientQuery() = default;

void TransientQuery::start() {
  plan_.feed->attach(&sink_, [this] { cv_.notify_all(); });
  // The thread holds the query: it lives until its resources are freed, whoever drops it.
  std::thread([self = shared_from_this()] { self->run(); }).detach();
}

void TransientQuery::stop() {
  stopping_ = true;
  cv_.notify_all();
}

bool TransientQuery::wait(int timeout_ms) {
  std::unique_lock lock(mutex_);
  return cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [this] { return ended_; });
}

std::string TransientQuery::wait_for_end() {
  std::string error;
  std::unique_lock lock(mutex_);
  while (!stopping_ && !plan_.feed->done(error) && streams_error_.empty())
    cv_.wait_for(lock, std::chrono::milliseconds(kCheckMs));
  return error.empty() ? streams_error_ : error;
}

void TransientQuery::run() {
  std::string error;
  std::unique_ptr<streams::KafkaStreams> streams;
  try {
    streams = std::make_unique<streams::KafkaStreams>(plan_.topology, streams_config_);
    streams->setUncaughtExceptionHandler([this](const std::exception& e) {
      {
        std::lock_guard lock(mutex_);
        streams_error_ = e.what();
      }
      cv_.notify_all();
      return streams::KafkaStreams::StreamThreadExceptionResponse::SHUTDOWN_CLIENT;
    });
    streams->start();
    error = wait_for_end();
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (streams) {
    streams->close();
    streams->cleanUp();
  }
  // Streams makes a topic of its own for each application (shutdown requests): it goes with the
  // query, or every push query would leave one behind.
  const std::string topic = streams_config_["application.id"] + "-shutdown-requests";
  try {
    delete_topic(client_, topic);
  } catch (const std::exception& e) {
    spdlog::warn("sql-server: push query {}: its topic {} stays: {}", id(), topic, e.what());
  }
  sink_.end(error);
  spdlog::info("sql-server: push query {} ended{}{}", id(), error.empty() ? "" : ": ", error);
  std::lock_guard lock(mutex_);
  ended_ = true;
  cv_.notify_all();
}

}  // namespace oxbow::sql::server
