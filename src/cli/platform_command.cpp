// `oxbow platform`: the broker, the schema registry, the SQL server and a Connect worker in one
// process. The broker keeps the one data directory (log.dirs); the registry keeps its state in the
// broker's `_schemas` topic, the SQL server its statements in its command topic and the Connect
// worker its connectors in its three topics, all reached over the broker's first plaintext
// listener unless kafkastore.bootstrap.servers / bootstrap.servers say otherwise; the SQL server's
// ksql.schema.registry.url and the worker's converters use the platform's registry unless given.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <pthread.h>

#include <atomic>
#include <csignal>
#include <ctime>
#include <functional>
#include <memory>
#include <optional>
#include <thread>

#include "broker/broker.h"
#include "broker/config/config.h"
#include "cli/commands.h"
#include "cli/connect_worker.h"
#include "cli/server_properties.h"
#include "connect/plugin_loader/plugin_loader.h"
#include "registry/server/registry_server.h"
#include "sql/server/sql_server.h"

namespace oxbow::cli {

namespace {

struct PlatformOptions {
  std::string config_file, registry_config_file, sql_config_file, connect_config_file;
  std::vector<std::string> overrides, registry_overrides, sql_overrides, connect_overrides;
};

std::string broker_address(const broker::BrokerConfig& config) {
  for (const auto& l : config.listeners)
    if (l.security_protocol == "PLAINTEXT")
      return (l.host.empty() || l.host == "0.0.0.0" ? "127.0.0.1" : l.host) + ":" +
             std::to_string(l.port);
  return "";
}

// SIGINT and SIGTERM, blocked in this thread and in every thread started after it (the broker's,
// the registry's, librdkafka's), wait to be taken by received(): the platform, not each server,
// decides the order in which they stop. Left blocked, as the process ends after the stop.
class StopSignals {
 public:
  StopSignals() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set_, nullptr);
  }
  // Whether one has come, waiting up to `wait_ms` for it.
  bool received(int wait_ms) {
    if (received_) return true;
    timespec timeout{wait_ms / 1000, (wait_ms % 1000) * 1000000L};
    if (int signal = sigtimedwait(&set_, nullptr, &timeout); signal > 0) {
      spdlog::info(
          "oxbow platform: signal {}, stopping Connect, the SQL server, the registry, then the "
          "broker",
          signal);
      received_ = true;
    }
    return received_;
  }

 private:
  sigset_t set_;
  bool received_ = false;
};

// Runs the started `server` on a thread while `meanwhile` runs here, then stops it; the first
// non-zero exit code of the two.
template <class Server>
int serve_while(Server& server, const std::function<int()>& meanwhile) {
  int code = 0;
  std::thread thread([&] { code = server.run(); });
  int inner = meanwhile();
  server.stop();
  thread.join();
  return inner != 0 ? inner : code;
}

// Runs the Connect worker until a stop signal or the end of the broker. Stopped first: its tasks
// commit while the broker still answers them.
int serve_connect(const Properties& props, StopSignals& signals,
                  const std::atomic<bool>& broker_done) {
  try {
    connect::ConnectorPlugins plugins = connect::ConnectorPlugins::withBuiltIns();
    connect::plugin_loader::loadPluginPath(plugins, props);
    DistributedWorker worker(props, std::move(plugins));
    std::string fatal;
    while (!broker_done && !signals.received(100) && (fatal = worker.fatalError()).empty()) {
    }
    worker.stop();
    if (!fatal.empty()) {
      spdlog::error("the Connect worker cannot join its group: {}", fatal);
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    spdlog::error("cannot start the Connect worker: {}", e.what());
    return 1;
  }
}

// Serves the SQL server, and Connect beside it, until a stop signal or the end of the broker;
// their exit code. Stopped before the registry: its queries commit while the broker still
// answers them.
int serve_sql(sql::server::SqlServerConfig config, const Properties& connect_props,
              StopSignals& signals, const std::atomic<bool>& broker_done) {
  sql::server::SqlServer sql(std::move(config));
  std::string error;
  if (!sql.start(error)) {
    spdlog::error("cannot start the SQL server: {}", error);
    return 1;
  }
  return serve_while(sql, [&] { return serve_connect(connect_props, signals, broker_done); });
}

// Serves the registry, and the SQL server beside it, until a stop signal or the end of the
// broker. Their Kafka clients are closed on return, while the broker still answers them.
int serve_registry(registry::server::RegistryConfig config, sql::server::SqlServerConfig sql,
                   const Properties& connect_props, StopSignals& signals,
                   const std::atomic<bool>& broker_done) {
  registry::server::RegistryServer registry(std::move(config));
  std::string error;
  if (!registry.start(error)) {
    spdlog::error("cannot start the registry: {}", error);
    return 1;
  }
  return serve_while(
      registry, [&] { return serve_sql(std::move(sql), connect_props, signals, broker_done); });
}

std::string registry_url(const registry::server::RegistryConfig& registry) {
  const std::string host =
      registry.host.empty() || registry.host == "0.0.0.0" ? "127.0.0.1" : registry.host;
  return "http://" + host + ":" + std::to_string(registry.port);
}

// The SQL server's settings: its own file and overrides over the platform's broker and registry.
std::optional<sql::server::SqlServerConfig> sql_config(
    const PlatformOptions& options, const std::string& broker,
    const registry::server::RegistryConfig& registry, std::string& error) {
  auto props = server_properties(options.sql_config_file, options.sql_overrides, error);
  if (!props) return std::nullopt;
  if (!props->count("bootstrap.servers")) (*props)["bootstrap.servers"] = broker;
  if (!props->count("ksql.schema.registry.url")) {
    (*props)["ksql.schema.registry.url"] = registry_url(registry);
  }
  return sql::server::make_sql_server_config(*props, error);
}

// The Connect worker's properties: its own file and overrides over a cluster of one worker on
// 8083 (Confluent Platform's names for its group and topics), keys as strings and values in Avro
// through the platform's registry, as Confluent's quick starts configure a worker.
std::optional<Properties> connect_props(const PlatformOptions& options, const std::string& broker,
                                        const registry::server::RegistryConfig& registry,
                                        std::string& error) {
  auto props = server_properties(options.connect_config_file, options.connect_overrides, error);
  if (!props) return std::nullopt;
  const std::string url = registry_url(registry);
  const std::pair<const char*, std::string> defaults[] = {
      {"bootstrap.servers", broker},
      {"group.id", "connect-cluster"},
      {"config.storage.topic", "connect-configs"},
      {"offset.storage.topic", "connect-offsets"},
      {"status.storage.topic", "connect-status"},
      {"config.storage.replication.factor", "1"},
      {"offset.storage.replication.factor", "1"},
      {"status.storage.replication.factor", "1"},
      {"key.converter", "org.apache.kafka.connect.storage.StringConverter"},
      {"value.converter", "io.confluent.connect.avro.AvroConverter"},
      {"key.converter.schema.registry.url", url},
      {"value.converter.schema.registry.url", url},
      {"listeners", "http://127.0.0.1:8083"},
  };
  for (const auto& [key, value] : defaults) props->emplace(key, value);
  return props;
}

int run_platform(const PlatformOptions& options) {
  spdlog::set_default_logger(spdlog::stderr_color_mt("oxbow"));
  std::string error;
  auto props = server_properties(options.config_file, options.overrides, error);
  auto registry_props =
      props ? server_properties(options.registry_config_file, options.registry_overrides, error)
            : std::nullopt;
  if (!props || !registry_props) {
    spdlog::error("{}", error);
    return 1;
  }
  std::vector<std::string> warnings;
  auto broker_config = broker::make_broker_config(*props, error, warnings);
  for (const auto& w : warnings) spdlog::warn("{}", w);
  if (!broker_config) {
    spdlog::error("invalid broker configuration: {}", error);
    return 1;
  }
  if (!registry_props->count("kafkastore.bootstrap.servers"))
    (*registry_props)["kafkastore.bootstrap.servers"] = broker_address(*broker_config);
  auto registry_config = registry::server::make_registry_config(*registry_props, error);
  if (!registry_config) {
    spdlog::error("invalid registry configuration: {}", error);
    return 1;
  }
  auto sql = sql_config(options, broker_address(*broker_config), *registry_config, error);
  if (!sql) {
    spdlog::error("invalid SQL server configuration: {}", error);
    return 1;
  }
  auto connect = connect_props(options, broker_address(*broker_config), *registry_config, error);
  if (!connect) {
    spdlog::error("invalid Connect worker configuration: {}", error);
    return 1;
  }

  // Before any thread starts, so that every thread inherits the blocked signals.
  StopSignals signals;
  broker::Broker broker(std::move(*broker_config));
  if (!broker.start(error)) {
    spdlog::error("cannot start the broker: {}", error);
    return 1;
  }
  int broker_code = 0;
  std::atomic<bool> broker_done{false};
  std::thread broker_thread([&] {
    broker_code = broker.run();
    broker_done = true;
  });
  while (!broker.ready() && !broker_done && !signals.received(20)) {
  }
  int code = 0;
  if (!broker_done && !signals.received(0))
    code = serve_registry(std::move(*registry_config), std::move(*sql), *connect, signals,
                          broker_done);
  // Stopped last, in the reverse order of the start: nothing is left to reach it.
  if (!broker_done) broker.stop();
  broker_thread.join();
  return code != 0 ? code : broker_code;
}

}  // namespace

void add_platform_command(CLI::App& app) {
  auto options = std::make_shared<PlatformOptions>();
  auto* cmd = app.add_subcommand(
      "platform",
      "Run the broker, the schema registry, the SQL server and a Connect worker in one process "
      "(ports 9092, 8081, 8088 and 8083)");
  cmd->add_option("-c,--config", options->config_file, "the broker's server.properties file");
  cmd->add_option("-o,--override", options->overrides,
                  "a broker key=value overriding the file (repeatable)");
  cmd->add_option("--registry-config", options->registry_config_file,
                  "the registry's properties file");
  cmd->add_option("--registry-override", options->registry_overrides,
                  "a registry key=value overriding its file (repeatable)");
  cmd->add_option("--sql-config", options->sql_config_file,
                  "the SQL server's ksql-server.properties file");
  cmd->add_option("--sql-override", options->sql_overrides,
                  "a SQL server key=value overriding its file (repeatable)");
  cmd->add_option("--connect-config", options->connect_config_file,
                  "the Connect worker's connect-distributed.properties file");
  cmd->add_option("--connect-override", options->connect_overrides,
                  "a Connect worker key=value overriding its file (repeatable)");
  cmd->callback([options] {
    int code = run_platform(*options);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace oxbow::cli
