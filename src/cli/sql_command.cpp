// `oxbow sql run FILE`: the SQL engine in one process, until the server of issue 43 exists. The
// KSQL_PROCESSING_LOG stream exists from the start (its topic takes the queries' processing-log
// entries); the file's statements are executed in order; the topics of sources and sinks that WITH
// gives a partition count are created if missing (as ksqlDB creates them), INSERT VALUES records
// are produced, and every persistent query runs on Oxbow Streams against the cluster until SIGINT
// or SIGTERM. A statement that fails stops the command before anything runs, with ksqlDB's message.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <sstream>
#include <thread>

#include "cli/client_config.h"
#include "cli/commands.h"
#include "oxbow/streams/kafka_streams.h"
#include "sql/engine/engine.h"
#include "sql/engine/result_text.h"
#include "sql/engine/topic_output.h"
#include "sql/kafka/kafka_topic_access.h"
#include "sql/kafka/registry_decoders.h"

namespace oxbow::cli {
namespace {

struct SqlRunOptions {
  ClientOptions client;
  std::string file;
  std::string processing_log_topic = "default_ksql_processing_log";
  std::string state_dir = "/tmp/oxbow-sql";
  std::vector<std::string> streams_configs;  // key=value, for every query's Streams runtime
  std::string registry_url;                  // ksql.schema.registry.url; empty: none
};

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail(fmt::format("cannot read {}", path));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Creates each topic of `wanted` (name, partitions) the cluster does not have.
void create_missing_topics(const ClientOptions& client,
                           const std::vector<std::pair<std::string, int>>& wanted) {
  if (wanted.empty()) return;
  const KafkaHandle rk = make_kafka_handle(RD_KAFKA_PRODUCER, make_kafka_conf(client));
  const MetadataHandle md = fetch_metadata(rk.get());
  std::vector<rd_kafka_NewTopic_t*> topics;
  char errstr[512];
  for (const auto& [name, partitions] : wanted)
    if (!find_topic(*md, name))
      topics.push_back(rd_kafka_NewTopic_new(name.c_str(), partitions, -1, errstr, sizeof errstr));
  if (topics.empty()) return;
  const auto admin_options = make_admin_options(rk.get(), RD_KAFKA_ADMIN_OP_CREATETOPICS);
  const QueueHandle queue{rd_kafka_queue_new(rk.get())};
  rd_kafka_CreateTopics(rk.get(), topics.data(), topics.size(), admin_options.get(), queue.get());
  for (auto* t : topics) rd_kafka_NewTopic_destroy(t);
  const EventHandle event = wait_for_admin_result(queue.get(), "creating topics");
  size_t count = 0;
  const auto** results =
      rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(event.get()), &count);
  for (size_t i = 0; i < count; ++i) {
    auto err = rd_kafka_topic_result_error(results[i]);
    if (err && err != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
      fail(rd_kafka_topic_result_name(results[i]), err,
           or_empty(rd_kafka_topic_result_error_string(results[i])));
  }
}

void produce_inserted(const ClientOptions& client,
                      const std::vector<sql::InsertedRecord>& records) {
  if (records.empty()) return;
  const KafkaHandle rk = make_kafka_handle(
      RD_KAFKA_PRODUCER, make_kafka_conf(client, {{"enable.idempotence", "true"}}));
  for (const auto& r : records) {
    // The macros cast their arguments without parentheses: plain variables only.
    void* key = r.key ? const_cast<char*>(r.key->data()) : nullptr;
    size_t key_size = r.key ? r.key->size() : 0;
    auto err = rd_kafka_producev(
        rk.get(), RD_KAFKA_V_TOPIC(r.topic.c_str()), RD_KAFKA_V_KEY(key, key_size),
        RD_KAFKA_V_VALUE(const_cast<char*>(r.value.data()), r.value.size()),
        RD_KAFKA_V_TIMESTAMP(r.timestamp), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_END);
    if (err) fail(r.topic, err);
  }
  if (auto err = rd_kafka_flush(rk.get(), kRequestTimeoutMs)) fail("INSERT VALUES", err);
}

// ksqlDB's processing-log stream, over the topic the entries go to.
std::string processing_log_stream(const std::string& topic) {
  return "CREATE STREAM KSQL_PROCESSING_LOG (LOGGER STRING, LEVEL STRING, TIME BIGINT, MESSAGE "
         "STRUCT<TYPE INT, DESERIALIZATIONERROR STRUCT<TARGET STRING, ERRORMESSAGE STRING, "
         "RECORDB64 STRING, CAUSE ARRAY<STRING>, `topic` STRING>, RECORDPROCESSINGERROR "
         "STRUCT<ERRORMESSAGE STRING, RECORD STRING, CAUSE ARRAY<STRING>>, PRODUCTIONERROR "
         "STRUCT<ERRORMESSAGE STRING>, SERIALIZATIONERROR STRUCT<TARGET STRING, ERRORMESSAGE "
         "STRING, RECORD STRING, CAUSE ARRAY<STRING>, `topic` STRING>, KAFKASTREAMSTHREADERROR "
         "STRUCT<ERRORMESSAGE STRING, THREADNAME STRING, CAUSE ARRAY<STRING>>>) WITH "
         "(KAFKA_TOPIC='" +
         topic + "', VALUE_FORMAT='JSON', PARTITIONS=1);";
}

// The processing log's entries as records of its topic, keyless, as ksqlDB writes them.
class TopicProcessingLog : public sql::ProcessingLog {
 public:
  TopicProcessingLog(const ClientOptions& client, std::string topic)
      : producer_(make_kafka_handle(RD_KAFKA_PRODUCER, make_kafka_conf(client))),
        topic_(std::move(topic)) {}
  ~TopicProcessingLog() override { rd_kafka_flush(producer_.get(), kRequestTimeoutMs); }
  void log(const sql::ProcessingLogEntry& entry) override {
    std::string value = sql::processing_log_json(entry);
    rd_kafka_producev(producer_.get(), RD_KAFKA_V_TOPIC(topic_.c_str()),
                      RD_KAFKA_V_VALUE(value.data(), value.size()),
                      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
    rd_kafka_poll(producer_.get(), 0);
  }

 private:
  KafkaHandle producer_;
  std::string topic_;
};

// SHOW TOPICS and PRINT look at the cluster as it is when the statement runs (before this file's
// topics are created and its INSERT VALUES produced). PRINT's lines go to stdout as they come; a
// PRINT without LIMIT ends at the end of the topic's current records, or at SIGINT/SIGTERM, so
// that the statements after it run. With --registry-url, PRINT also recognises AVRO, PROTOBUF and
// JSON_SR records.
void connect_topics(sql::Engine& engine, const ClientOptions& client,
                    const std::string& registry_url) {
  std::map<std::string, std::string> config{{"bootstrap.servers", client.bootstrap_servers}};
  for (const auto& property : client.properties) {
    std::string key, value;
    if (split_key_value(property, key, value)) config[key] = value;
  }
  install_stop_signal_handlers();
  sql::PrintOutput output{[](const std::string& line) {
                            fmt::print("{}\n", line);
                            std::fflush(stdout);
                          },
                          [] { return stop_requested(); },
                          true,
                          {}};
  try {
    output.registry = sql::registry_decoders(registry_url);
  } catch (const std::exception& e) {
    fail(e.what());
  }
  engine.set_topic_access(std::make_shared<sql::KafkaTopicAccess>(config), output);
}

void run_sql(const SqlRunOptions& options) {
  sql::DdlSettings settings;
  settings.schema_registry_url = options.registry_url;
  sql::Engine engine(settings);
  engine.execute(processing_log_stream(options.processing_log_topic));
  engine.set_processing_log(
      std::make_shared<TopicProcessingLog>(options.client, options.processing_log_topic));
  connect_topics(engine, options.client, options.registry_url);
  std::vector<sql::InsertedRecord> inserted;
  try {
    for (auto& r : engine.execute(read_file(options.file))) {
      fmt::print("{}", sql::result_text(r));
      if (!r.message.empty()) fmt::print("{}\n", r.message);
      for (const auto& w : r.warnings) fmt::print("warning: {}\n", w);
      for (auto& record : r.inserted) inserted.push_back(std::move(record));
    }
  } catch (const std::exception& e) {
    fail(e.what());
  }
  std::vector<std::pair<std::string, int>> topics;
  for (const auto& [name, source] : engine.catalog().sources())
    if (source.partitions) topics.emplace_back(source.topic, *source.partitions);
  create_missing_topics(options.client, topics);
  produce_inserted(options.client, inserted);

  std::vector<std::unique_ptr<streams::KafkaStreams>> running;
  for (const auto& q : engine.queries()) {
    if (q.paused) continue;
    auto config = q.streams_config;
    config["bootstrap.servers"] = options.client.bootstrap_servers;
    config["state.dir"] = options.state_dir;
    for (const auto& kv : options.streams_configs) {
      std::string key, value;
      if (!split_key_value(kv, key, value)) fail(fmt::format("invalid config '{}'", kv));
      config[key] = value;
    }
    running.push_back(std::make_unique<streams::KafkaStreams>(q.topology, config));
    running.back()->setProcessingExceptionHandler(q.processing_errors);
    running.back()->start();
    fmt::print("running {}\n", q.id);
  }
  std::fflush(stdout);
  install_stop_signal_handlers();
  bool failed = false;
  while (!stop_requested() && !failed) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    for (const auto& s : running)
      failed = failed || s->state() == streams::KafkaStreams::State::ERROR;
  }
  for (const auto& s : running) s->close();
  if (failed) fail("a query failed: see the log above");
}

}  // namespace

void add_sql_command(CLI::App& app) {
  CLI::App* sql = app.add_subcommand("sql", "Streaming SQL in ksqlDB's dialect");
  sql->require_subcommand(1);
  auto options = std::make_shared<SqlRunOptions>();
  CLI::App* run = sql->add_subcommand(
      "run", "Execute a file of statements and run its persistent queries until interrupted");
  run->add_option("file", options->file, "The statements, each ending with ';'")->required();
  add_client_options(*run, options->client);
  run->add_option("--state-dir", options->state_dir, "Where the queries keep their state stores")
      ->capture_default_str();
  run->add_option("--processing-log-topic", options->processing_log_topic,
                  "Where the queries write what they could not do with a record (the "
                  "KSQL_PROCESSING_LOG stream reads it)")
      ->capture_default_str();
  run->add_option("--streams-config", options->streams_configs,
                  "A Streams setting for every query, key=value (repeatable)");
  run->add_option("--registry-url", options->registry_url,
                  "The Schema Registry of the AVRO, JSON_SR and PROTOBUF formats "
                  "(ksql.schema.registry.url)");
  run->callback([options] { run_sql(*options); });
}

}  // namespace oxbow::cli
