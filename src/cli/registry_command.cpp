// `oxbow registry`: the schema registry server (src/registry/server/registry_server.h).
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/server_properties.h"
#include "registry/server/registry_server.h"

#include <memory>

namespace oxbow::cli {

namespace {

struct RegistryOptions {
  std::string config_file;
  std::vector<std::string> overrides;
};

int run_registry(const RegistryOptions& options) {
  spdlog::set_default_logger(spdlog::stderr_color_mt("oxbow"));
  std::string error;
  auto props = server_properties(options.config_file, options.overrides, error);
  if (!props) {
    spdlog::error("{}", error);
    return 1;
  }
  auto config = registry::server::make_registry_config(*props, error);
  if (!config) {
    spdlog::error("invalid configuration: {}", error);
    return 1;
  }
  registry::server::RegistryServer server(std::move(*config));
  if (!server.start(error)) {
    spdlog::error("cannot start: {}", error);
    return 1;
  }
  return server.run();
}

}  // namespace

void add_registry_command(CLI::App& app) {
  auto options = std::make_shared<RegistryOptions>();
  auto* cmd = app.add_subcommand("registry", "Run a schema registry (Confluent's REST API)");
  cmd->add_option("-c,--config", options->config_file, "schema-registry.properties file");
  cmd->add_option("-o,--override", options->overrides,
                  "key=value overriding the file (repeatable)");
  cmd->callback([options] {
    int code = run_registry(*options);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace oxbow::cli
