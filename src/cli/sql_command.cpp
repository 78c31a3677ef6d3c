// `oxbow sql run FILE`: the SQL engine in one process, without the server (`oxbow sql-server`
// serves the same engine over ksqlDB's REST API, sharing src/sql/server/ with this command; `oxbow
// sql [URL]` is its client, sql_client.cpp). The
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
#include "cli/sql_client.h"
#include "sql/engine/engine.h"
#include "sql/engine/result_text.h"
#include "sql/engine/topic_output.h"
#include "sql/kafka/kafka_topic_access.h"
#include "sql/kafka/registry_decoders.h"
#include "sql/server/kafka_cluster.h"
#include "sql/server/query_runner.h"

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

// The librdkafka settings of the command's clients: the bootstrap servers, then each -X.
sql::server::ClientConfig client_config(const ClientOptions& client) {
  sql::server::ClientConfig config{{"bootstrap.servers", client.bootstrap_servers}};
  for (const auto& property : client.properties) {
    std::string key, value;
    if (split_key_value(property, key, value)) config[key] = value;
  }
  return config;
}

// SHOW TOPICS and PRINT look at the cluster as it is when the statement runs (before this file's
// topics are created and its INSERT VALUES produced). PRINT's lines go to stdout as they come; a
// PRINT without LIMIT ends at the end of the topic's current records, or at SIGINT/SIGTERM, so
// that the statements after it run. With --registry-url, PRINT also recognises AVRO, PROTOBUF and
// JSON_SR records.
void connect_topics(sql::Engine& engine, const ClientOptions& client,
                    const std::string& registry_url) {
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
  engine.set_topic_access(std::make_shared<sql::KafkaTopicAccess>(client_config(client)), output);
}

// Every query's Streams settings: the cluster, the state directory and each --streams-config.
sql::server::RunnerSettings runner_settings(const SqlRunOptions& options) {
  sql::server::RunnerSettings settings;
  settings.streams_config = {{"bootstrap.servers", options.client.bootstrap_servers},
                             {"state.dir", options.state_dir}};
  for (const auto& kv : options.streams_configs) {
    std::string key, value;
    if (!split_key_value(kv, key, value)) fail(fmt::format("invalid config '{}'", kv));
    settings.streams_config[key] = value;
  }
  return settings;
}

void run_sql(const SqlRunOptions& options) {
  sql::DdlSettings settings;
  settings.schema_registry_url = options.registry_url;
  sql::Engine engine(settings);
  const std::string statements = read_file(options.file);  // fails with its own line
  const auto client = client_config(options.client);
  engine.execute(sql::server::processing_log_statement(options.processing_log_topic));
  std::vector<sql::InsertedRecord> inserted;
  sql::server::QueryRunner runner(runner_settings(options));
  connect_topics(engine, options.client, options.registry_url);
  try {
    engine.set_processing_log(
        std::make_shared<sql::server::TopicProcessingLog>(client, options.processing_log_topic));
    for (auto& r : engine.execute(statements)) {
      fmt::print("{}", sql::result_text(r));
      if (!r.message.empty()) fmt::print("{}\n", r.message);
      for (const auto& w : r.warnings) fmt::print("warning: {}\n", w);
      for (auto& record : r.inserted) inserted.push_back(std::move(record));
    }
    sql::server::create_missing_topics(client, sql::server::source_topics(engine.catalog()));
    sql::server::produce_records(client, inserted);
    runner.sync(engine.queries());
  } catch (const std::exception& e) {
    fail(e.what());
  }
  for (const auto& id : runner.running()) fmt::print("running {}\n", id);
  std::fflush(stdout);
  install_stop_signal_handlers();
  bool failed = false;
  while (!stop_requested() && !failed) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    failed = runner.any_failed();
  }
  runner.close();
  if (failed) fail("a query failed: see the log above");
}

}  // namespace

void add_sql_command(CLI::App& app) {
  CLI::App* sql = app.add_subcommand(
      "sql",
      "Streaming SQL in ksqlDB's dialect: ksqlDB's CLI against an `oxbow sql-server`, or run");
  // CLI11 takes `run` for the subcommand before it would fill the optional URL.
  sql->require_subcommand(0, 1);
  auto client = std::make_shared<SqlClientOptions>();
  sql->add_option("url", client->url, "The SQL server")->capture_default_str();
  auto* execute =
      sql->add_option("-e,--execute", client->execute, "Execute these statements, then exit");
  sql->add_option("-f,--file", client->file, "Execute this file's statements, then exit")
      ->excludes(execute);
  sql->add_option("--output", client->output, "JSON or TABULAR")->capture_default_str();
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
  sql->callback([sql, run, client] {
    if (!sql->got_subcommand(run)) run_sql_client(*client);
  });
}

}  // namespace oxbow::cli
