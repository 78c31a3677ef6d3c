// `oxbow connect standalone WORKER.properties CONNECTOR.properties...`: Kafka's
// connect-standalone.sh, without its REST API (docs/connect/standalone.md).
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "cli/client_config.h"
#include "cli/commands.h"
#include "connect/runtime/standalone.h"
#include "oxbow/connect/config_def.h"
#include "oxbow/connect/errors.h"

namespace oxbow::cli {
namespace {

struct StandaloneOptions {
  std::string worker;
  std::vector<std::string> connectors;
};

void report_failed_tasks(const connect::runtime::StandaloneWorker& worker) {
  for (const auto& status : worker.taskStatuses()) {
    if (status.state == connect::runtime::TaskState::FAILED) {
      spdlog::error("connect: task {} is FAILED: {}", status.name, status.failure);
    }
  }
}

void run_standalone(const StandaloneOptions& options) {
  using namespace connect::runtime;
  // Handlers first: a signal while connectors start still stops them cleanly.
  install_stop_signal_handlers();
  try {
    StandaloneWorker worker(readPropertiesFile(options.worker),
                            connect::ConnectorPlugins::withBuiltIns());
    for (const std::string& path : options.connectors) {
      worker.addConnector(readPropertiesFile(path));
    }
    spdlog::info("connect: standalone worker running {} connector(s); stop with SIGINT or SIGTERM",
                 options.connectors.size());
    while (!stop_requested()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    spdlog::info("connect: stopping");
    worker.stop();
    report_failed_tasks(worker);
  } catch (const connect::ConnectException& e) {
    fail(e.what());
  } catch (const connect::ConfigException& e) {  // a transform's or converter's config
    fail(e.what());
  }
}

}  // namespace

void add_connect_command(CLI::App& app) {
  CLI::App* connect = app.add_subcommand("connect", "Kafka Connect workers");
  connect->require_subcommand(1);
  auto options = std::make_shared<StandaloneOptions>();
  CLI::App* standalone = connect->add_subcommand(
      "standalone",
      "Run connectors in this process, source offsets in offset.storage.file.filename, until "
      "SIGINT or SIGTERM");
  standalone->add_option("worker", options->worker, "The worker's properties file")
      ->required()
      ->check(CLI::ExistingFile);
  standalone->add_option("connectors", options->connectors, "A properties file per connector")
      ->required()
      ->check(CLI::ExistingFile);
  standalone->callback([options] { run_standalone(*options); });
}

}  // namespace oxbow::cli
