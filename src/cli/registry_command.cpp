// `oxbow registry`: the schema registry server (src/registry/server/registry_server.h).
#include <spdlog/spdlog.h>

#include "cli/commands.h"
#include "cli/server_properties.h"
#include "registry/server/registry_server.h"

namespace oxbow::cli {

namespace {

int run_registry(const Properties& props) {
  std::string error;
  auto config = registry::server::make_registry_config(props, error);
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
  add_server_command(app, "registry", "Run a schema registry (Confluent's REST API)",
                     "schema-registry.properties file", run_registry);
}

}  // namespace oxbow::cli
