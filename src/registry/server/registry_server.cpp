#include "registry/server/registry_server.h"

#include <spdlog/spdlog.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <chrono>
#include <csignal>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "http/admin_server.h"
#include "http/client.h"
#include "registry/rest/api.h"
#include "registry/server/kafka_log.h"
#include "registry/server/primary_election.h"

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

constexpr int kServingThreads = 4;

// What a request writes, in the words of Confluent's forwarding errors; null for a read (lookups
// and compatibility checks are POSTs that only read).
const char* write_operation(const http::Request& r) {
  std::vector<std::string> segments;
  for (size_t start = 1; start <= r.path.size();) {
    size_t slash = r.path.find('/', start);
    if (slash == std::string::npos) slash = r.path.size();
    segments.push_back(r.path.substr(start, slash - start));
    start = slash + 1;
  }
  if (segments.empty()) return nullptr;
  const std::string& root = segments[0];
  if (root == "subjects" && r.method == "POST" && segments.size() == 3) return "register schema";
  if (root == "subjects" && r.method == "DELETE")
    return segments.size() > 2 ? "delete schema version" : "delete subject";
  if (root == "config" && r.method == "PUT") return "update config";
  if (root == "config" && r.method == "DELETE") return "delete config";
  if (root == "mode" && r.method == "PUT") return "update mode";
  if (root == "mode" && r.method == "DELETE") return "delete mode";
  return nullptr;
}

http::Response server_error(int code, const std::string& message) {
  return {500, "application/vnd.schemaregistry.v1+json",
          nlohmann::json{{"error_code", code}, {"message", message}}.dump()};
}

// A refusal from the primary as Confluent's followers pass it on: its status and code, and the
// Java client's message with "; error code: N" after it.
http::Response relayed(http::Response response) {
  if (response.status < 400) return response;
  auto body = nlohmann::json::parse(response.body, nullptr, false);
  if (body.is_object() && body.contains("error_code") && body["message"].is_string()) {
    body["message"] =
        body["message"].get<std::string>() + "; error code: " + body["error_code"].dump();
    response.body = body.dump();
  }
  return response;
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
  auto number = [&](const char* key, int& out) {
    const auto* v = get(key);
    if (!v) return true;
    try {
      out = std::stoi(*v);
      return true;
    } catch (const std::exception&) {
      error = std::string(key) + ": not a number: " + *v;
      return false;
    }
  };
  if (!number("kafkastore.timeout.ms", c.timeout_ms) ||
      !number("kafkastore.topic.replication.factor", c.replication_factor) ||
      !number("oxbow.election.session.timeout.ms", c.election_session_timeout_ms))
    return std::nullopt;
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
  if (const auto* v = get("schema.registry.group.id")) c.group_id = *v;
  if (const auto* v = get("leader.eligibility")) c.leader_eligibility = *v == "true";
  if (const auto* v = get("host.name")) c.advertised_host = *v;
  return c;
}

struct RegistryServer::Impl {
  explicit Impl(RegistryConfig c)
      : config(std::move(c)),
        log({config.bootstrap_servers, config.topic, config.replication_factor, config.timeout_ms}),
        election(ElectionConfig{config.bootstrap_servers, config.topic, config.group_id, "",
                                config.leader_eligibility, config.election_session_timeout_ms}),
        service(log, {*compatibility_level(config.compatibility), config.validate_defaults}),
        api(service),
        http(context, [this](const http::Request& r) { return handle(r); }),
        signals(context, SIGINT, SIGTERM) {}

  http::Response handle(const http::Request& r) {
    const char* write = write_operation(r);
    if (write && !election.is_primary()) {
      // A forwarded write reaching a secondary means the two disagree on the primary: refusing
      // it keeps it from going round in circles.
      auto primary = r.via.empty() ? wait_for_primary() : std::nullopt;
      if (!primary) return server_error(50004, "Leader not known.");
      if (*primary != election.url()) return forward(r, *primary, write);
      // It became the primary meanwhile: it takes the write itself.
    }
    // One request at a time against the state: answers see every write before them, writes are
    // in order. (Forwarding, above, holds no lock: two instances that briefly take each other
    // for the primary must not wait on each other.)
    std::lock_guard lock(mutex);
    // The primary reads the log to its end before a write, so that no id is issued twice even
    // just after taking over from another primary.
    if (write && !log.catch_up()) return server_error(50002, "Register operation timed out");
    log.sync();
    return api.handle(r);
  }

  http::Response forward(const http::Request& r, const std::string& primary, const char* write) {
    // Marked, so that it is never forwarded again (see handle()).
    http::Request marked = r;
    marked.via = "1.1 oxbow-registry";
    auto forwarded = http::send_request(primary, marked, config.timeout_ms);
    if (!forwarded.response) {
      spdlog::warn("registry: forwarding to {}: {}", primary, forwarded.error);
      return server_error(
          50003, std::string("Error while forwarding ") + write + " request to the leader");
    }
    // So that this instance's next answers see the write.
    std::lock_guard lock(mutex);
    log.catch_up();
    return relayed(std::move(*forwarded.response));
  }

  // A rebalance (an instance joining or leaving) leaves the role unassigned for a moment: a write
  // then waits for the next primary rather than failing.
  std::optional<std::string> wait_for_primary() {
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::milliseconds(2 * config.election_session_timeout_ms);
    while (true) {
      if (auto url = election.primary_url()) return url;
      if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  RegistryConfig config;
  boost::asio::io_context context;
  KafkaLog log;
  PrimaryElection election;
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
  if (!start_election(error)) return false;
  spdlog::info("oxbow registry listening on http://{}:{}, schemas in {}", impl_->config.host,
               impl_->http.port(), impl_->config.topic);
  return true;
}

bool RegistryServer::start_election(std::string& error) {
  const auto& c = impl_->config;
  std::string host = c.advertised_host;
  if (host.empty()) host = c.host == "0.0.0.0" || c.host == "::" ? "localhost" : c.host;
  impl_->election.set_url("http://" + host + ":" + std::to_string(impl_->http.port()));
  try {
    impl_->election.start();
  } catch (const std::exception& e) {
    error = e.what();
    return false;
  }
  // Writes need a primary: wait (bounded) until the group has one, as Confluent's instances wait
  // for their leader election at start.
  if (auto primary = impl_->wait_for_primary())
    spdlog::info("registry: the primary is {}", *primary);
  else
    spdlog::warn("registry: no primary elected yet; writes wait for one");
  return true;
}

void RegistryServer::stop() {
  boost::asio::post(impl_->context, [this] {
    impl_->http.close();
    impl_->context.stop();
  });
}

uint16_t RegistryServer::port() const {
  return impl_->http.port();
}

int RegistryServer::run() {
  impl_->signals.async_wait([this](const boost::system::error_code& ec, int signal) {
    if (ec) return;
    spdlog::info("oxbow registry: signal {}, stopping", signal);
    impl_->http.close();
    impl_->context.stop();
  });
  // Several threads, so that a request forwarded to the primary (or waiting for one) does not
  // hold up the others.
  std::vector<std::thread> threads;
  for (int i = 1; i < kServingThreads; ++i) threads.emplace_back([this] { impl_->context.run(); });
  impl_->context.run();
  for (auto& t : threads) t.join();
  impl_->election.stop();
  impl_->log.stop();
  spdlog::info("oxbow registry stopped cleanly");
  return 0;
}

}  // namespace oxbow::registry::server
