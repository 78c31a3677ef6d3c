#pragma once
// The single-node broker: configuration, storage, topics and the network server, started and
// stopped together.
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "broker/config/config.h"
#include "broker/config/dynamic_configs.h"
#include "broker/topics/topic_registry.h"

namespace oxbow::storage {
class LogManager;
}
namespace oxbow::group {
class GroupCoordinator;
struct ConsumerGroupOptions;
}  // namespace oxbow::group
namespace oxbow::txn {
class TransactionCoordinator;
}
namespace oxbow::security {
class Authorizer;
}
namespace oxbow::http {
class AdminServer;
struct Request;
struct Response;
}  // namespace oxbow::http

namespace oxbow::broker {

class TopicRegistry;
class ConsumerTopics;
class Server;
class InternalTopic;
class Authenticator;
class ScramCredentialStore;
class ClientQuotas;
class ConnectionLimits;
class FetchSessions;
class TxnPartitions;
class ProducerIdManager;

class Broker {
 public:
  explicit Broker(BrokerConfig config);
  ~Broker();

  // Checks the log dirs and binds the listeners (the admin API starts answering at once).
  bool start(std::string& error);
  // Loads (and after a crash recovers) the logs, then serves Kafka clients until SIGINT/SIGTERM or
  // stop(), and shuts down cleanly. Returns the process exit code.
  int run();
  void stop();
  // Ready once the logs are loaded and Kafka listeners accept (/v1/status/ready).
  bool ready() const { return ready_; }
  double slow_request_ms() const { return static_cast<double>(slow_request_ms_.load()); }
  // The admin HTTP API's answer to one request (admin/admin_api.cpp).
  http::Response handle_admin(const http::Request& request);
  // Test-only fault (test.fault.drop.connection.every.produce=N): true for every Nth produce,
  // whose connection is then closed after the append and before the response.
  bool inject_produce_fault();

  // The static configuration (server.properties and overrides); dynamic changes are in
  // dynamic_configs().
  const BrokerConfig& config() const { return config_; }
  DynamicConfigs& dynamic_configs() { return *dynamic_configs_; }
  // AlterConfigs on a BROKER resource: `name` is this broker's id or empty (cluster default);
  // `change` edits that layer's overrides. The new values take effect at once and persist.
  TopicRegistry::Result alter_broker_configs(
      const std::string& name, const std::function<TopicRegistry::Result(ConfigMap&)>& change,
      bool validate_only);
  TopicRegistry& topics() { return *topics_; }
  storage::LogManager& logs() { return *logs_; }
  group::GroupCoordinator& groups() { return *groups_; }
  ProducerIdManager& producer_ids() { return *producer_ids_; }
  txn::TransactionCoordinator& transactions() { return *transactions_; }
  InternalTopic& offsets_topic() { return *offsets_topic_; }
  const Authenticator& authenticator() const { return *authenticator_; }
  ScramCredentialStore& scram_credentials() { return *scram_credentials_; }
  ClientQuotas& client_quotas() { return *client_quotas_; }
  ConnectionLimits& connection_limits() { return *connection_limits_; }
  FetchSessions& fetch_sessions() { return *fetch_sessions_; }
  // The ACL authorizer; nullptr unless authorizer.class.name enables one.
  security::Authorizer* authorizer() const { return authorizer_.get(); }
  const std::string& cluster_id() const { return cluster_id_; }
  // The endpoint clients should use: the advertised one of the listener they came in on.
  Endpoint advertised_endpoint(const std::string& listener) const;

 private:
  bool load_or_create_meta_properties(std::string& error);
  bool load(std::string& error);
  bool start_admin_api(std::string& error);
  bool start_authorizer(std::string& error);
  int64_t number(const char* key, int64_t fallback) const;
  bool consumer_group_options(group::ConsumerGroupOptions& out, std::string& error) const;
  std::string metrics_text();
  void apply_dynamic_configs(const BrokerConfig& effective);
  void configure_connection_limits(const BrokerConfig& effective);

  BrokerConfig config_;
  std::string cluster_id_;
  int64_t fault_every_produce_ = 0;
  std::atomic<int64_t> produce_count_{0};
  std::unique_ptr<storage::LogManager> logs_;
  std::unique_ptr<TopicRegistry> topics_;
  std::unique_ptr<DynamicConfigs> dynamic_configs_;
  std::unique_ptr<Authenticator> authenticator_;
  std::unique_ptr<ScramCredentialStore> scram_credentials_;
  std::unique_ptr<ClientQuotas> client_quotas_;
  std::unique_ptr<ConnectionLimits> connection_limits_;
  std::unique_ptr<FetchSessions> fetch_sessions_;
  std::unique_ptr<security::Authorizer> authorizer_;
  std::mutex alter_mutex_;  // one dynamic config change at a time
  std::unique_ptr<InternalTopic> offsets_topic_;
  std::unique_ptr<InternalTopic> txn_state_topic_;
  std::unique_ptr<ProducerIdManager> producer_ids_;
  std::unique_ptr<ConsumerTopics> consumer_topics_;  // outlives groups_, which reads it
  std::unique_ptr<group::GroupCoordinator> groups_;
  std::unique_ptr<TxnPartitions> txn_partitions_;
  std::unique_ptr<txn::TransactionCoordinator> transactions_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<http::AdminServer> admin_;
  std::atomic<bool> ready_{false};
  std::atomic<int64_t> slow_request_ms_{5000};
};

}  // namespace oxbow::broker
