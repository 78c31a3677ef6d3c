// Connect workers' REST server and the distributed worker the CLI and the platform run.
#include "cli/connect_worker.h"

#include <librdkafka/rdkafka.h>
#include <spdlog/spdlog.h>

#include "connect/runtime/distributed/distributed_herder.h"
#include "connect/runtime/rest_api.h"
#include "connect/runtime/worker_metrics.h"
#include "http/admin_server.h"
#include "http/client.h"
#include "oxbow/connect/errors.h"

namespace oxbow::cli {

namespace {

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

}  // namespace

ConnectRestServer::ConnectRestServer(connect::runtime::Herder& worker, const Properties& props) {
  const std::string bootstrap = worker.config().bootstrapServers;
  auto [host, port] = rest_listener(props);
  connect::runtime::RestInfo info;
  info.clusterId = [bootstrap] { return cluster_id(bootstrap); };
  info.forward = forward_request;
  api_ = std::make_shared<connect::runtime::ConnectRestApi>(worker, info);
  auto api = api_;
  connect::runtime::Herder* herder = &worker;
  server_ =
      std::make_unique<http::AdminServer>(context_, [api, herder](const http::Request& request) {
        // Oxbow's addition: Kafka Connect's metrics for Prometheus beside its REST API.
        if (request.method == "GET" && request.path == "/metrics") {
          return http::Response{200, "text/plain; version=0.0.4",
                                connect::runtime::prometheusMetrics(*herder)};
        }
        connect::runtime::RestResponse response =
            api->handle({request.method, request.path, request.query, request.body});
        return http::Response{response.status, "application/json", response.body};
      });
  std::string error;
  if (!server_->listen(host, port, error)) {
    throw connect::ConnectException("Cannot listen on " + host + ":" + std::to_string(port) + ": " +
                                    error);
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

ConnectRestServer::~ConnectRestServer() {
  server_->close();
  work_.reset();
  context_.stop();
  if (thread_.joinable()) thread_.join();
}

DistributedWorker::DistributedWorker(const Properties& props, connect::ConnectorPlugins plugins)
    : herder_(std::make_unique<connect::runtime::distributed::DistributedHerder>(
          props, std::move(plugins))),
      rest_(std::make_unique<ConnectRestServer>(*herder_, props)) {
  herder_->start(rest_->workerId(), forward_request);
}

DistributedWorker::~DistributedWorker() {
  stop();
}

std::string DistributedWorker::fatalError() const {
  return herder_->fatalError();
}

void DistributedWorker::stop() {
  if (!rest_) return;
  rest_.reset();
  herder_->stop();
}

}  // namespace oxbow::cli
