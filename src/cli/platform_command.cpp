// `oxbow platform`: the broker and the schema registry in one process. The broker keeps the one
// data directory (log.dirs); the registry keeps its state in the broker's `_schemas` topic,
// reached over the broker's first plaintext listener unless kafkastore.bootstrap.servers says
// otherwise. Later servers (SQL, Connect) join here.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <atomic>
#include <chrono>
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
  while (!broker.ready() && !broker_done)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  int code = 1;
  if (!broker_done) {
    registry::server::RegistryServer registry(std::move(*registry_config));
    if (registry.start(error)) {
      code = registry.run();  // until SIGINT or SIGTERM, which the broker hears too
    } else {
      spdlog::error("cannot start the registry: {}", error);
      broker.stop();
    }
  }
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
