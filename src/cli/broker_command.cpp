#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "broker/broker.h"
#include "broker/config/config.h"
#include "cli/commands.h"
#include "cli/server_properties.h"
#include "common/properties.h"

namespace oxbow::cli {

namespace {

struct BrokerOptions {
  std::string config_file;
  std::vector<std::string> overrides;
};

int run_broker(const BrokerOptions& options) {
  // Logs go to stderr, leaving stdout to tools that wrap the broker.
  spdlog::set_default_logger(spdlog::stderr_color_mt("oxbow"));
  std::string error;
  auto props = server_properties(options.config_file, options.overrides, error);
  if (!props) {
    spdlog::error("{}", error);
    return 1;
  }
  std::vector<std::string> warnings;
  auto config = broker::make_broker_config(*props, error, warnings);
  for (const auto& w : warnings) spdlog::warn("{}", w);
  if (!config) {
    spdlog::error("invalid configuration: {}", error);
    return 1;
  }
  broker::Broker broker(std::move(*config));
  if (!broker.start(error)) {
    spdlog::error("cannot start: {}", error);
    return 1;
  }
  return broker.run();
}

}  // namespace

void add_broker_command(CLI::App& app) {
  auto options = std::make_shared<BrokerOptions>();
  auto* cmd = app.add_subcommand("broker", "Run a broker");
  cmd->add_option("-c,--config", options->config_file, "server.properties file");
  cmd->add_option("-o,--override", options->overrides,
                  "key=value overriding the file (repeatable)");
  cmd->callback([options] {
    int code = run_broker(*options);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace oxbow::cli
