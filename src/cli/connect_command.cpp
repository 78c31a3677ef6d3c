// `oxbow connect standalone WORKER.properties [CONNECTOR.properties...]` and `oxbow connect
// distributed WORKER.properties`: Kafka's connect-standalone.sh and connect-distributed.sh with
// Connect's REST API on `listeners` (docs/connect/standalone.md, docs/connect/distributed.md).
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cli/client_config.h"
#include "cli/commands.h"
#include "cli/connect_worker.h"
#include "connect/plugin_loader/plugin_loader.h"
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
    if (status.state == "FAILED") {
      spdlog::error("connect: task {} is FAILED: {}", status.name, status.failure);
    }
  }
}

void run_standalone(const StandaloneOptions& options) {
  using namespace connect::runtime;
  // Handlers first: a signal while connectors start still stops them cleanly.
  install_stop_signal_handlers();
  try {
    Properties workerProps = readPropertiesFile(options.worker);
    connect::ConnectorPlugins plugins = connect::ConnectorPlugins::withBuiltIns();
    connect::plugin_loader::loadPluginPath(plugins, workerProps);
    StandaloneWorker worker(workerProps, std::move(plugins));
    for (const std::string& path : options.connectors) {
      worker.addConnector(readPropertiesFile(path));
    }
    auto rest = std::make_unique<ConnectRestServer>(worker, workerProps);
    spdlog::info("connect: standalone worker running {} connector(s); stop with SIGINT or SIGTERM",
                 options.connectors.size());
    while (!stop_requested()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    spdlog::info("connect: stopping");
    // The API first, as Kafka stops its REST server before its herder: no request races the stop.
    rest.reset();
    worker.stop();
    report_failed_tasks(worker);
  } catch (const connect::ConnectException& e) {
    fail(e.what());
  } catch (const connect::ConfigException& e) {  // a transform's or converter's config
    fail(e.what());
  }
}

void run_distributed(const std::string& configFile) {
  using namespace connect::runtime;
  install_stop_signal_handlers();
  try {
    Properties props = readPropertiesFile(configFile);
    connect::ConnectorPlugins plugins = connect::ConnectorPlugins::withBuiltIns();
    connect::plugin_loader::loadPluginPath(plugins, props);
    DistributedWorker worker(props, std::move(plugins));
    spdlog::info("connect: distributed worker {} running; stop with SIGINT or SIGTERM",
                 worker.workerId());
    std::string fatal;
    while (!stop_requested() && (fatal = worker.fatalError()).empty()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    spdlog::info("connect: stopping");
    worker.stop();
    if (!fatal.empty()) fail("connect: the worker cannot join its group: " + fatal);
  } catch (const connect::ConnectException& e) {
    fail(e.what());
  } catch (const connect::ConfigException& e) {
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
  standalone
      ->add_option("connectors", options->connectors,
                   "A properties file per connector (more can be created through the REST API)")
      ->check(CLI::ExistingFile);
  standalone->callback([options] { run_standalone(*options); });

  auto configFile = std::make_shared<std::string>();
  CLI::App* distributed = connect->add_subcommand(
      "distributed",
      "Run a worker of a Connect cluster (group.id), configs, offsets and statuses in Kafka "
      "topics, until SIGINT or SIGTERM");
  distributed->add_option("--config,config", *configFile, "The worker's properties file")
      ->required()
      ->check(CLI::ExistingFile);
  distributed->callback([configFile] { run_distributed(*configFile); });
}

}  // namespace oxbow::cli
