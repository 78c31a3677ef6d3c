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
//   schema.registry.group.id         schema-registry: the group the primary is elected in
//   leader.eligibility               true: whether this instance may become the primary
//   host.name                        the listener's host: how other instances reach this one
//   oxbow.election.session.timeout.ms  10000 (ours): how long a dead primary keeps the role
// Several instances may share one topic: the primary (primary_election.h) allocates ids and takes
// every write, the others forward writes to it and answer reads from their own copy of the log.
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
  int replication_factor = 3;
  std::string compatibility = "BACKWARD";
  bool validate_defaults = true;
  std::string group_id = "schema-registry";
  bool leader_eligibility = true;
  std::string advertised_host;  // host.name; empty: the listener's host
  int election_session_timeout_ms = 10000;
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
  // Serves until SIGINT, SIGTERM or stop(); the exit code. Its Kafka clients are closed on return.
  int run();
  // Ends run(); callable from any thread.
  void stop();
  uint16_t port() const;

 private:
  bool start_election(std::string& error);

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace oxbow::registry::server
