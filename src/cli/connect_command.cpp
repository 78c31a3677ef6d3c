// `oxbow connect standalone WORKER.properties [CONNECTOR.properties...]` and `oxbow connect
// distributed WORKER.properties`: Kafka's connect-standalone.sh and connect-distributed.sh with
// Connect's REST API on `listeners` (docs/connect/standalone.md, docs/connect/distributed.md).
#include <librdkafka/rdkafka.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cli/client_config.h"
#include "cli/commands.h"
#include "connect/plugin_loader/plugin_loader.h"
#include "connect/runtime/distributed/distributed_herder.h"
#include "connect/runtime/rest_api.h"
#include "connect/runtime/standalone.h"
#include "http/admin_server.h"
#include "http/client.h"
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

// The cluster's id for GET /, asked of the bootstrap servers with a throwaway producer.
std::string cluster_id(const std::string& bootstrap) {
  char error[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), error, sizeof error);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
  if (rk == nullptr) return "";
  std::string id;
  if (char* found = rd_kafka_clusterid(rk, 5000)) {
    id = found;
    rd_kafka_mem_free(rk, found);
  }
  rd_kafka_destroy(rk);
  return id;
}

// `listeners`' first URL as host and port (Connect's default http://:8083, here on loopback).
std::pair<std::string, uint16_t> rest_listener(const Properties& props) {
  auto found = props.find("listeners");
  std::string url = found == props.end() ? "http://127.0.0.1:8083" : found->second;
  url = url.substr(0, url.find(','));
  const std::string scheme = "http://";
  if (url.rfind(scheme, 0) != 0) {
    throw connect::ConnectException("listeners: only http:// is supported, not " + url);
  }
  std::string hostPort = url.substr(scheme.size());
  size_t colon = hostPort.rfind(':');
  int port = 0;
  try {
    port = colon == std::string::npos ? -1 : std::stoi(hostPort.substr(colon + 1));
  } catch (const std::exception&) {
    port = -1;
  }
  if (port < 0 || port > 65535) throw connect::ConnectException("listeners: bad URL " + url);
  std::string host = hostPort.substr(0, colon);
  if (host.empty()) host = "0.0.0.0";
  return {host, static_cast<uint16_t>(port)};
}

// Connect's REST API on its own thread; answers one request at a time.
// A request sent on to another worker (the leader, or the one running a task).
std::optional<connect::runtime::RestResponse> forward_request(
    const std::string& url, const connect::runtime::RestRequest& request, std::string& error) {
  http::Request forwarded{request.method,
                          request.path,
                          request.query,
                          request.body,
                          "application/json",
                          "application/json",
                          ""};
  http::Exchange exchange = http::send_request(url, forwarded, 30'000);
  if (!exchange.response) {
    error = exchange.error;
    return std::nullopt;
  }
  return connect::runtime::RestResponse{exchange.response->status, exchange.response->body};
}

// A worker's REST API on `listeners`, answering as `rest.advertised.host.name` and
// `rest.advertised.port` (by default the listener's own address) in statuses and to the group.
class RestServer {
 public:
  RestServer(connect::runtime::Herder& worker, const Properties& props,
             const std::string& bootstrap) {
    auto [host, port] = rest_listener(props);
    connect::runtime::RestInfo info;
    info.clusterId = [bootstrap] { return cluster_id(bootstrap); };
    info.forward = forward_request;
    api_ = std::make_shared<connect::runtime::ConnectRestApi>(worker, info);
    auto api = api_;
    server_ = std::make_unique<http::AdminServer>(context_, [api](const http::Request& request) {
      connect::runtime::RestResponse response =
          api->handle({request.method, request.path, request.query, request.body});
      return http::Response{response.status, "application/json", response.body};
    });
    std::string error;
    if (!server_->listen(host, port, error)) {
      throw connect::ConnectException("Cannot listen on " + host + ":" + std::to_string(port) +
                                      ": " + error);
    }
    // Statuses name the worker by the address it answers on.
    auto advertisedHost = props.find("rest.advertised.host.name");
    auto advertisedPort = props.find("rest.advertised.port");
    std::string advertised = advertisedHost != props.end() ? advertisedHost->second
                             : host == "0.0.0.0"           ? "127.0.0.1"
                                                           : host;
    workerId_ =
        advertised + ":" +
        (advertisedPort != props.end() ? advertisedPort->second : std::to_string(server_->port()));
    api_->setWorkerId(workerId_);
    spdlog::info("connect: REST API on http://{}:{}", host, server_->port());
    thread_ = std::thread([this] { context_.run(); });
  }
  ~RestServer() {
    server_->close();
    work_.reset();
    context_.stop();
    if (thread_.joinable()) thread_.join();
  }
  // "host:port", as the worker is known to others.
  const std::string& workerId() const { return workerId_; }

 private:
  boost::asio::io_context context_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_{
      context_.get_executor()};
  std::shared_ptr<connect::runtime::ConnectRestApi> api_;
  std::unique_ptr<http::AdminServer> server_;
  std::thread thread_;
  std::string workerId_;
};

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
    auto rest = std::make_unique<RestServer>(worker, workerProps, worker.config().bootstrapServers);
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
    distributed::DistributedHerder herder(props, std::move(plugins));
    auto rest = std::make_unique<RestServer>(herder, props, herder.config().bootstrapServers);
    herder.start(rest->workerId(), forward_request);
    spdlog::info("connect: distributed worker {} running; stop with SIGINT or SIGTERM",
                 rest->workerId());
    std::string fatal;
    while (!stop_requested() && (fatal = herder.fatalError()).empty()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    spdlog::info("connect: stopping");
    rest.reset();
    herder.stop();
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
