#include <spdlog/spdlog.h>

#include "broker/broker.h"
#include "broker/config/config.h"
#include "cli/commands.h"
#include "cli/server_properties.h"

namespace oxbow::cli {

namespace {

int run_broker(const Properties& props) {
  std::string error;
  std::vector<std::string> warnings;
  auto config = broker::make_broker_config(props, error, warnings);
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
  add_server_command(app, "broker", "Run a broker", "server.properties file", run_broker);
}

}  // namespace oxbow::cli
