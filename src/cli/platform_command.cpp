// `oxbow platform`: the broker and the schema registry in one process. The broker keeps the one
// data directory (log.dirs); the registry keeps its state in the broker's `_schemas` topic,
// reached over the broker's first plaintext listener unless kafkastore.bootstrap.servers says
// otherwise. Later servers (SQL, Connect) join here.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <pthread.h>

#include <atomic>
#include <csignal>
#include <ctime>
#include <memory>
#include <thread>

#include "broker/broker.h"
#include "broker/config/config.h"
#include "cli/commands.h"
#include "cli/server_properties.h"
#include "registry/server/registry_server.h"

namespace oxbow::cli {

namespace {

struct PlatformOptions {
  std::string config_file, registry_config_file;
  std::vector<std::string> overrides, registry_overrides;
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
      spdlog::info("oxbow platform: signal {}, stopping the registry, then the broker", signal);
      received_ = true;
    }
    return received_;
  }

 private:
  sigset_t set_;
  bool received_ = false;
};

// Serves the registry until a stop signal or the end of the broker; its exit code. Its Kafka
// clients are closed on return, while the broker still answers them.
int serve_registry(registry::server::RegistryConfig config, StopSignals& signals,
                   const std::atomic<bool>& broker_done) {
  registry::server::RegistryServer registry(std::move(config));
  std::string error;
  if (!registry.start(error)) {
    spdlog::error("cannot start the registry: {}", error);
    return 1;
  }
  int code = 0;
  std::thread server([&] { code = registry.run(); });
  while (!broker_done && !signals.received(100)) {
  }
  registry.stop();
  server.join();
  return code;
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
    code = serve_registry(std::move(*registry_config), signals, broker_done);
  // Stopped last, in the reverse order of the start: nothing is left to reach it.
  if (!broker_done) broker.stop();
  broker_thread.join();
  return code != 0 ? code : broker_code;
}

}  // namespace

void add_platform_command(CLI::App& app) {
  auto options = std::make_shared<PlatformOptions>();
  auto* cmd = app.add_subcommand(
      "platform", "Run the broker and the schema registry in one process (ports 9092 and 8081)");
  cmd->add_option("-c,--config", options->config_file, "the broker's server.properties file");
  cmd->add_option("-o,--override", options->overrides,
                  "a broker key=value overriding the file (repeatable)");
  cmd->add_option("--registry-config", options->registry_config_file,
                  "the registry's properties file");
  cmd->add_option("--registry-override", options->registry_overrides,
                  "a registry key=value overriding its file (repeatable)");
  cmd->callback([options] {
    int code = run_platform(*options);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace oxbow::cli
