#include "registry/server/registry_server.h"

#include <spdlog/spdlog.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <csignal>
#include <mutex>

#include "http/admin_server.h"
#include "registry/rest/api.h"
#include "registry/server/kafka_log.h"

namespace oxbow::registry::server {

namespace {

// "http://host:port" (the first of a comma-separated list) into host and port.
bool parse_listener(const std::string& text, std::string& host, uint16_t& port,
                    std::string& error) {
  std::string first = text.substr(0, text.find(','));
  const std::string scheme = "http://";
  if (first.rfind(scheme, 0) != 0) {
    error = "listeners: only http:// listeners are served, got '" + first + "'";
    return false;
  }
  std::string rest = first.substr(scheme.size());
  auto colon = rest.rfind(':');
  if (colon == std::string::npos) {
    error = "listeners: no port in '" + first + "'";
    return false;
  }
  host = rest.substr(0, colon);
  if (host.empty()) host = "0.0.0.0";
  try {
    int p = std::stoi(rest.substr(colon + 1));
    if (p < 0 || p > 65535) throw std::out_of_range("port");
    port = static_cast<uint16_t>(p);
  } catch (const std::exception&) {
    error = "listeners: bad port in '" + first + "'";
    return false;
  }
  return true;
}

// Kafka bootstrap lists may carry a protocol prefix (PLAINTEXT://host:port): librdkafka takes it,
// but only plaintext is set up here.
std::string bootstrap_of(const std::string& text) {
  std::string out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (auto scheme = item.find("://"); scheme != std::string::npos) item = item.substr(scheme + 3);
    if (!item.empty()) out += (out.empty() ? "" : ",") + item;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

std::optional<RegistryConfig> make_registry_config(const std::map<std::string, std::string>& props,
                                                   std::string& error) {
  RegistryConfig c;
  auto get = [&](const char* key) -> const std::string* {
    auto it = props.find(key);
    return it == props.end() ? nullptr : &it->second;
  };
  if (const auto* l = get("listeners"); l && !parse_listener(*l, c.host, c.port, error))
    return std::nullopt;
  const auto* bootstrap = get("kafkastore.bootstrap.servers");
  if (!bootstrap || bootstrap_of(*bootstrap).empty()) {
    error = "kafkastore.bootstrap.servers is required";
    return std::nullopt;
  }
  c.bootstrap_servers = bootstrap_of(*bootstrap);
  if (const auto* t = get("kafkastore.topic")) c.topic = *t;
  if (const auto* t = get("kafkastore.timeout.ms")) {
    try {
      c.timeout_ms = std::stoi(*t);
    } catch (const std::exception&) {
      error = "kafkastore.timeout.ms: not a number: " + *t;
      return std::nullopt;
    }
  }
  if (const auto* level = get("schema.compatibility.level")) {
    auto parsed = compatibility_level(*level);
    if (!parsed) {
      error = "schema.compatibility.level: unknown level " + *level;
      return std::nullopt;
    }
    c.compatibility = level_name(*parsed);
  }
  if (const auto* v = get("schema.providers.avro.validate.defaults"))
    c.validate_defaults = *v == "true";
  return c;
}

struct RegistryServer::Impl {
  explicit Impl(RegistryConfig c)
      : config(std::move(c)),
        log({config.bootstrap_servers, config.topic, 3, config.timeout_ms}),
        service(log, {*compatibility_level(config.compatibility), config.validate_defaults}),
        api(service),
        http(context,
             [this](const http::Request& r) {
               // One request at a time: answers see every write before them, writes are in order.
               std::lock_guard lock(mutex);
               log.sync();
               return api.handle(r);
             }),
        signals(context, SIGINT, SIGTERM) {}

  RegistryConfig config;
  boost::asio::io_context context;
  KafkaLog log;
  RegistryService service;
  rest::Api api;
  std::mutex mutex;
  http::AdminServer http;
  boost::asio::signal_set signals;
};

RegistryServer::RegistryServer(RegistryConfig config)
    : impl_(std::make_unique<Impl>(std::move(config))) {}

RegistryServer::~RegistryServer() = default;

bool RegistryServer::start(std::string& error) {
  try {
    impl_->log.start();
  } catch (const std::exception& e) {
    error = e.what();
    return false;
  }
  if (!impl_->http.listen(impl_->config.host, impl_->config.port, error)) return false;
  spdlog::info("oxbow registry listening on http://{}:{}, schemas in {}", impl_->config.host,
               impl_->http.port(), impl_->config.topic);
  return true;
}

uint16_t RegistryServer::port() const {
  return impl_->http.port();
}

int RegistryServer::run() {
  impl_->signals.async_wait([this](const boost::system::error_code&, int signal) {
    spdlog::info("oxbow registry: signal {}, stopping", signal);
    impl_->http.close();
    impl_->context.stop();
  });
  impl_->context.run();
  impl_->log.stop();
  spdlog::info("oxbow registry stopped cleanly");
  return 0;
}

}  // namespace oxbow::registry::server
