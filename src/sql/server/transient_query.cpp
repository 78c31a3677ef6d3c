#include "sql/server/transient_query.h"

#include <librdkafka/rdkafka.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <random>
#include <thread>

#include "oxbow/streams/kafka_streams.h"
#include "sql/engine/descriptions.h"
#include "sql/parser/parser.h"
#include "sql/server/ksql_resource.h"

namespace oxbow::sql::server {

namespace {

using nlohmann::json;

constexpr int kPollMs = 100;

std::string random_suffix() {
  static std::mt19937_64 generator{std::random_device{}()};
  static std::mutex mutex;
  std::lock_guard lock(mutex);
  return std::to_string(generator() % 10'000'000'000'000'000ULL);
}

// The query's result as a sink of its own: the rows' columns, JSON on both sides (whatever
// the source's formats), so that the reader needs no serde of the engine's.
DataSource row_topic(const BoundQuery& bound, const std::string& topic) {
  DataSource sink;
  sink.name = topic;
  sink.topic = topic;
  sink.kind = bound.result_kind;
  sink.formats.key_format = "JSON";
  sink.formats.value_format = "JSON";
  for (const auto& c : bound.columns)
    sink.columns.push_back(
        {c.name, c.type, c.key ? ColumnNamespace::kKey : ColumnNamespace::kValue, ""});
  return sink;
}

}  // namespace

TransientPlan plan_transient_query(KsqlResource& ksql, const std::string& statement,
                                   const std::string& service_id) {
  std::vector<FieldInfo> fields = ksql.push_query_columns(statement);
  TransientPlan plan;
  ksql.read_engine([&](const Engine& engine) {
    static const FunctionRegistry functions;
    auto statements = parser::parse(statement);
    const auto& query = std::get<std::unique_ptr<parser::Query>>(statements.front().body);
    BoundQuery bound = bind_query(*query, engine.catalog(), functions, QueryContext{});
    const std::string suffix = bound.from->name + "_" + random_suffix();
    plan.query_id = "transient_" + suffix;
    plan.topic = "_confluent-ksql-" + service_id + "transient_" + suffix + "-rows";
    DataSource sink = row_topic(bound, plan.topic);
    auto counters = std::make_shared<QueryCounters>();
    counters->query_id = plan.query_id;
    counters->log = engine.processing_log();
    plan.topology = plan_query(*physical_plan(bound, sink), bound, sink, counters);
    plan.limit = bound.limit;
    for (const auto& c : bound.columns) plan.key_columns.push_back(c.key);
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
  create_missing_topics(client_, {{plan_.topic, 1}});
  // The thread holds the query: it lives until its resources are freed, whoever drops it.
  std::thread([self = shared_from_this()] { self->run(); }).detach();
}

bool TransientQuery::wait(int timeout_ms) {
  std::unique_lock lock(mutex_);
  return ended_cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [this] { return ended_; });
}

void TransientQuery::run() {
  std::string error;
  std::unique_ptr<streams::KafkaStreams> streams;
  try {
    streams = std::make_unique<streams::KafkaStreams>(plan_.topology, streams_config_);
    streams->start();
    read_rows();
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (error.empty() && !error_.empty()) error = error_;
  if (streams) {
    streams->close();
    streams->cleanUp();
  }
  // Streams makes a topic of its own for each application (shutdown requests): a query's
  // topics go with it, or every push query would leave two behind.
  for (const auto& topic :
       {plan_.topic, streams_config_["application.id"] + "-shutdown-requests"}) {
    try {
      delete_topic(client_, topic);
    } catch (const std::exception& e) {
      spdlog::warn("sql-server: push query {}: its topic {} stays: {}", id(), topic, e.what());
    }
  }
  sink_.end(error);
  spdlog::info("sql-server: push query {} ended{}{}", id(), error.empty() ? "" : ": ", error);
  std::lock_guard lock(mutex_);
  ended_ = true;
  ended_cv_.notify_all();
}

void TransientQuery::read_rows() {
  rd_kafka_t* consumer = new_kafka_client(RD_KAFKA_CONSUMER, client_,
                                          {{"group.id", plan_.query_id},
                                           {"enable.auto.commit", "false"},
                                           {"auto.offset.reset", "earliest"}});
  rd_kafka_topic_partition_list_t* partitions = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(partitions, plan_.topic.c_str(), 0)->offset =
      RD_KAFKA_OFFSET_BEGINNING;
  rd_kafka_assign(consumer, partitions);
  rd_kafka_topic_partition_list_destroy(partitions);
  int64_t rows = 0;
  while (!stopping_ && !(plan_.limit && rows >= *plan_.limit)) {
    rd_kafka_message_t* message = rd_kafka_consumer_poll(consumer, kPollMs);
    if (!message) continue;
    std::optional<json> row;
    if (!message->err)
      row = row_of(static_cast<const char*>(message->key), message->key_len,
                   static_cast<const char*>(message->payload), message->len);
    rd_kafka_message_destroy(message);
    if (!row) continue;
    if (error_ = sink_.row(*row); !error_.empty()) break;
    ++rows;
  }
  rd_kafka_consumer_close(consumer);
  rd_kafka_destroy(consumer);
}

// A row as ksqlDB sends it: the columns' values in order, keys from the record's key (the value
// itself for one key column, an object by name for more).
std::optional<json> TransientQuery::row_of(const char* key, size_t key_size, const char* value,
                                           size_t value_size) const {
  if (!value) return std::nullopt;  // a table's deletion
  json values = json::parse(value, value + value_size, nullptr, false);
  if (!values.is_object()) return std::nullopt;
  json keys = key ? json::parse(key, key + key_size, nullptr, false) : json();
  size_t key_count = 0;
  for (bool k : plan_.key_columns) key_count += k;
  json row = json::array();
  for (size_t i = 0; i < plan_.column_names.size(); ++i) {
    const std::string& name = plan_.column_names[i];
    const bool is_key = i < plan_.key_columns.size() && plan_.key_columns[i];
    if (is_key && key_count == 1 && !keys.is_discarded())
      row.push_back(keys);
    else if (is_key && keys.is_object())
      row.push_back(keys.value(name, json()));
    else
      row.push_back(values.value(name, json()));
  }
  return row;
}

}  // namespace oxbow::sql::server
