#pragma once
// `oxbow registry`: the REST API (rest/api.h) on an HTTP listener, over the `_schemas` topic
// (kafka_log.h). Settings use Confluent's names:
//   listeners                        http://127.0.0.1:8081
//   kafkastore.bootstrap.servers     (required) PLAINTEXT://host:port or host:port, comma-separated
//   kafkastore.topic                 _schemas
//   kafkastore.topic.replication.factor  3, lowered to the brokers there are (at most 1 here)
//   kafkastore.timeout.ms            500 in Confluent; 60000 here, as writes wait to be read back
//   schema.compatibility.level       backward
//   schema.providers.avro.validate.defaults  true (Confluent: false; see avro/schema.h)
// One instance takes every request; several instances with a primary elected through the cluster
// are still to come.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace oxbow::registry::server {

struct RegistryConfig {
  std::string host = "127.0.0.1";
  uint16_t port = 8081;
  std::string bootstrap_servers;
  std::string topic = "_schemas";
  int timeout_ms = 60000;
  std::string compatibility = "BACKWARD";
  bool validate_defaults = true;
};

// From properties (Confluent's names); nullopt with `error` set for a bad or missing setting.
std::optional<RegistryConfig> make_registry_config(const std::map<std::string, std::string>& props,
                                                   std::string& error);

class RegistryServer {
 public:
  explicit RegistryServer(RegistryConfig config);
  ~RegistryServer();
  // Reads the topic and starts listening; false with `error` when it cannot.
  bool start(std::string& error);
  // Serves until SIGINT or SIGTERM; the exit code.
  int run();
  uint16_t port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace oxbow::registry::server
