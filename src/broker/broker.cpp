#include "broker/broker.h"

#include <spdlog/spdlog.h>

#include <set>
#include <thread>

#include "broker/config/config_defs.h"
#include "broker/config/host_addresses.h"
#include "broker/handlers/fetch_session.h"
#include "broker/net/server.h"
#include "broker/quotas/client_quotas.h"
#include "broker/quotas/connection_limits.h"
#include "broker/sasl/authenticator.h"
#include "broker/sasl/scram.h"
#include "broker/topics/consumer_topics.h"
#include "broker/topics/internal_topic.h"
#include "broker/topics/producer_ids.h"
#include "broker/topics/topic_registry.h"
#include "broker/topics/txn_partitions.h"
#include "common/properties.h"
#include "common/random_id.h"
#include "group/coordinator.h"
#include "http/admin_server.h"
#include "security/authorizer.h"
#include "storage/file.h"
#include "storage/log_manager.h"
#include "txn/transaction_coordinator.h"

namespace oxbow::broker {

Broker::Broker(BrokerConfig config) : config_(std::move(config)) {}

Broker::~Broker() = default;

// meta.properties in each log dir, as Kafka's storage format writes it: identifies the cluster
// and node the data belongs to.
bool Broker::load_or_create_meta_properties(std::string& error) {
  const std::string path = config_.log_dirs.front() + "/meta.properties";
  std::string text;
  if (storage::read_whole_file(path, text)) {
    Properties meta;
    if (auto bad = parse_properties(text, meta)) {
      error = path + ": " + *bad;
      return false;
    }
    cluster_id_ = meta["cluster.id"];
    auto node = parse_int64(meta["node.id"]);
    if (node && *node != config_.node_id) {
      error = path + ": the data belongs to node.id " + std::to_string(*node) + ", not " +
              std::to_string(config_.node_id);
      return false;
    }
  }
  if (cluster_id_.empty()) {
    cluster_id_ = random_base64_id();
    std::string contents = "version=1\ncluster.id=" + cluster_id_ +
                           "\nnode.id=" + std::to_string(config_.node_id) + "\n";
    if (!storage::write_file_atomically(path, contents, error)) return false;
  }
  return true;
}

namespace {

// quota.window.num and quota.window.size.seconds, or with prefix "controller." the mutation
// quota's pair.
QuotaWindow quota_window(const BrokerConfig& config, const std::string& prefix = "") {
  auto number_of = [&](const std::string& key, int64_t fallback) {
    auto v = config.value_of(prefix + key);
    return std::max<int64_t>(v ? parse_int64(*v).value_or(fallback) : fallback, 1);
  };
  return {static_cast<int>(std::min<int64_t>(number_of("quota.window.num", 11), 1000)),
          number_of("quota.window.size.seconds", 1) * 1000};
}

}  // namespace

int64_t Broker::number(const char* key, int64_t fallback) const {
  auto value = config_.value_of(key);
  return value ? parse_int64(*value).value_or(fallback) : fallback;
}

bool Broker::start(std::string& error) {
  storage::LogManagerOptions options;
  options.log_dirs = config_.log_dirs;
  options.retention_check_interval_ms = config_.retention_check_interval_ms;
  options.cleaner_enabled = config_.value_of("log.cleaner.enable").value_or("true") == "true";
  options.cleaner_backoff_ms = number("log.cleaner.backoff.ms", 15000);
  options.cleaner_key_map_bytes =
      static_cast<size_t>(number("log.cleaner.dedupe.buffer.size", 128 << 20));
  options.recovery_threads_per_dir =
      static_cast<int>(number("num.recovery.threads.per.data.dir", 1));
  logs_ = std::make_unique<storage::LogManager>(options);
  if (!logs_->start(error)) return false;
  if (!load_or_create_meta_properties(error)) return false;
  fault_every_produce_ = number("test.fault.drop.connection.every.produce", 0);
  if (fault_every_produce_ > 0)
    spdlog::warn("test fault injection on: every {}th produce loses its connection",
                 fault_every_produce_);
  int threads = config_.network_threads > 0
                    ? config_.network_threads
                    : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  connection_limits_ = std::make_unique<ConnectionLimits>();
  fetch_sessions_ = std::make_unique<FetchSessions>(
      static_cast<size_t>(number("max.incremental.fetch.session.cache.slots", 1000)));
  configure_connection_limits(config_);  // until the dynamic configs are read
  authenticator_ = std::make_unique<Authenticator>(config_);
  scram_credentials_ = std::make_unique<ScramCredentialStore>(config_.log_dirs.front() +
                                                              "/oxbow-scram-credentials.json");
  if (!scram_credentials_->load(error)) return false;
  client_quotas_ =
      std::make_unique<ClientQuotas>(config_.log_dirs.front() + "/oxbow-client-quotas.json",
                                     quota_window(config_), quota_window(config_, "controller."));
  if (!client_quotas_->load(error)) return false;
  if (!start_authorizer(error)) return false;
  server_ = std::make_unique<Server>(*this, threads);
  if (!server_->listen(config_.listeners, error)) return false;
  return start_admin_api(error);
}

bool Broker::start_authorizer(std::string& error) {
  static const std::set<std::string> kAclAuthorizers = {
      "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
      "kafka.security.authorizer.AclAuthorizer", "kafka.security.auth.SimpleAclAuthorizer"};
  std::string name = config_.value_of("authorizer.class.name").value_or("");
  if (name.empty()) return true;
  if (!kAclAuthorizers.count(name)) {
    error = "authorizer.class.name: unknown authorizer '" + name +
            "'; Oxbow's ACL authorizer is org.apache.kafka.metadata.authorizer.StandardAuthorizer";
    return false;
  }
  security::AuthorizerConfig settings;
  for (auto& user : split(config_.value_of("super.users").value_or(""), ';')) {
    if (!user.empty()) settings.super_users.push_back(user);
  }
  settings.allow_everyone_if_no_acl_found =
      config_.value_of("allow.everyone.if.no.acl.found") == "true";
  authorizer_ = std::make_unique<security::Authorizer>(
      config_.log_dirs.front() + "/oxbow-acls.json", settings);
  if (!authorizer_->load(error)) return false;
  spdlog::info(
      "ACL authorization on: {} ACLs, {} super users{}", authorizer_->size(),
      settings.super_users.size(),
      settings.allow_everyone_if_no_acl_found ? ", resources without ACLs open to everyone" : "");
  return true;
}

// group.consumer.*: KIP-848's settings, checked against each other as Kafka does.
bool Broker::consumer_group_options(group::ConsumerGroupOptions& out, std::string& error) const {
  auto int_of = [&](const char* key, int64_t fallback) {
    return static_cast<int32_t>(number(key, fallback));
  };
  out.session_timeout_ms = int_of("group.consumer.session.timeout.ms", 45000);
  out.heartbeat_interval_ms = int_of("group.consumer.heartbeat.interval.ms", 5000);
  out.max_size = int_of("group.consumer.max.size", 2147483647);
  int32_t min_session = int_of("group.consumer.min.session.timeout.ms", 45000);
  int32_t max_session = int_of("group.consumer.max.session.timeout.ms", 60000);
  int32_t min_heartbeat = int_of("group.consumer.min.heartbeat.interval.ms", 5000);
  int32_t max_heartbeat = int_of("group.consumer.max.heartbeat.interval.ms", 15000);
  auto within = [&](const char* key, int32_t value, int32_t lo, const char* lo_key, int32_t hi,
                    const char* hi_key) {
    if (value >= lo && value <= hi) return true;
    error = fmt::format("{} ({}) must be between {} ({}) and {} ({})", key, value, lo_key, lo,
                        hi_key, hi);
    return false;
  };
  if (!within("group.consumer.session.timeout.ms", out.session_timeout_ms, min_session,
              "group.consumer.min.session.timeout.ms", max_session,
              "group.consumer.max.session.timeout.ms") ||
      !within("group.consumer.heartbeat.interval.ms", out.heartbeat_interval_ms, min_heartbeat,
              "group.consumer.min.heartbeat.interval.ms", max_heartbeat,
              "group.consumer.max.heartbeat.interval.ms")) {
    return false;
  }
  if (out.heartbeat_interval_ms >= out.session_timeout_ms) {
    error =
        "group.consumer.heartbeat.interval.ms must be less than "
        "group.consumer.session.timeout.ms";
    return false;
  }
  out.assignors.clear();
  for (auto name : split(config_.value_of("group.consumer.assignors").value_or(""), ',')) {
    name = std::string(trim(name));
    if (name.empty()) continue;
    if (!group::is_assignor(name)) {
      error = fmt::format(
          "group.consumer.assignors: unknown assignor {} (Oxbow has uniform, range)", name);
      return false;
    }
    out.assignors.push_back(name);
  }
  if (out.assignors.empty()) out.assignors = group::assignor_names();
  return true;
}

bool Broker::load(std::string& error) {
  if (int64_t delay = number("test.fault.recovery.delay.ms", 0); delay > 0) {
    spdlog::warn("test fault injection on: log loading delayed by {} ms", delay);
    std::this_thread::sleep_for(std::chrono::milliseconds(delay));
  }
  if (!logs_->last_shutdown_clean()) spdlog::warn("last shutdown was not clean: recovering logs");
  dynamic_configs_ =
      std::make_unique<DynamicConfigs>(config_.log_dirs.front() + "/oxbow-broker-configs.json");
  if (!dynamic_configs_->load(error)) return false;
  auto effective = DynamicConfigs::effective(config_, dynamic_configs_->snapshot(), error);
  if (!effective) return false;
  topics_ = std::make_unique<TopicRegistry>(config_, *logs_);
  apply_dynamic_configs(
      *effective);  // before the logs open, so they open with the defaults in effect
  if (!topics_->load(error)) return false;
  offsets_topic_ = std::make_unique<InternalTopic>(
      *topics_, kOffsetsTopic, static_cast<int32_t>(number("offsets.topic.num.partitions", 50)));
  group::CoordinatorOptions group_options;
  group_options.initial_rebalance_delay_ms = number("group.initial.rebalance.delay.ms", 3000);
  group_options.min_session_timeout_ms =
      static_cast<int32_t>(number("group.min.session.timeout.ms", 6000));
  group_options.max_session_timeout_ms =
      static_cast<int32_t>(number("group.max.session.timeout.ms", 1800000));
  group_options.offsets_retention_ms = number("offsets.retention.minutes", 10080) * 60 * 1000;
  group_options.offset_metadata_max_bytes =
      static_cast<int32_t>(number("offset.metadata.max.bytes", 4096));
  if (!consumer_group_options(group_options.consumer, error)) return false;
  groups_ = std::make_unique<group::GroupCoordinator>(group_options, *offsets_topic_);
  consumer_topics_ = std::make_unique<ConsumerTopics>(*topics_);
  groups_->set_topic_catalog(consumer_topics_.get());
  groups_->start();
  producer_ids_ =
      std::make_unique<ProducerIdManager>(config_.log_dirs.front() + "/oxbow-producer-ids");
  txn_state_topic_ = std::make_unique<InternalTopic>(
      *topics_, kTransactionStateTopic,
      static_cast<int32_t>(number("transaction.state.log.num.partitions", 50)));
  txn_partitions_ = std::make_unique<TxnPartitions>(*topics_, *offsets_topic_, *groups_);
  txn::TxnOptions txn_options;
  txn_options.max_timeout_ms = static_cast<int32_t>(number("transaction.max.timeout.ms", 900000));
  txn_options.abort_check_interval_ms =
      number("transaction.abort.timed.out.transaction.cleanup.interval.ms", 10000);
  txn_options.id_expiration_ms = number("transactional.id.expiration.ms", 604800000);
  transactions_ = std::make_unique<txn::TransactionCoordinator>(
      txn_options, *txn_state_topic_, *txn_partitions_, [this] { return producer_ids_->next(); });
  transactions_->start();
  return true;
}

int Broker::run() {
  server_->start();
  std::string error;
  bool loaded = load(error);
  bool listening = true;
  if (!loaded) {
    spdlog::error("cannot load the logs: {}", error);
    server_->stop();
  } else if (!server_->stopping() && !server_->accept(error)) {
    spdlog::error("{}", error);
    listening = false;
    server_->stop();
  } else if (!server_->stopping()) {
    ready_ = true;
    spdlog::info("oxbow broker {} ready (cluster {}), {} topics, log dirs {}", config_.node_id,
                 cluster_id_, topics_->list().size(), fmt::join(config_.log_dirs, ","));
  }
  server_->wait();
  ready_ = false;
  admin_.reset();
  server_.reset();
  if (transactions_) transactions_->stop();
  if (groups_) groups_->stop();
  if (!loaded) return 1;
  logs_->shutdown();
  if (!listening) return 1;
  spdlog::info("oxbow broker stopped cleanly");
  return 0;
}

Endpoint Broker::advertised_endpoint(const std::string& listener) const {
  const auto& advertised = config_.advertised_listeners;
  Endpoint chosen = advertised.front();
  for (const auto& e : advertised) {
    if (e.name == listener) chosen = e;
  }
  if (chosen.host.empty() || chosen.host == "0.0.0.0" || chosen.host == "::")
    chosen.host = "localhost";
  return chosen;
}

TopicRegistry::Result Broker::alter_broker_configs(
    const std::string& name, const std::function<TopicRegistry::Result(ConfigMap&)>& change,
    bool validate_only) {
  using protocol::ErrorCode;
  bool cluster_wide = name.empty();
  if (!cluster_wide && name != std::to_string(config_.node_id)) {
    return {ErrorCode::kInvalidRequest,
            "Unexpected broker id, expected " + std::to_string(config_.node_id)};
  }
  std::lock_guard lock(alter_mutex_);
  auto layers = dynamic_configs_->snapshot();
  ConfigMap& layer = cluster_wide ? layers.cluster_default : layers.broker;
  if (auto result = change(layer); result.error != ErrorCode::kNone) return result;
  for (const auto& [key, value] : layer) {
    // A listener's connection limits may be set for the broker or cluster-wide, as in Kafka;
    // Oxbow reads no other per-listener key after the start.
    if (is_dynamic_listener_config(key)) {
      if (auto invalid = validate_config_value(*find_listener_config(key), value, key))
        return {ErrorCode::kInvalidConfig, *invalid};
      continue;
    }
    if (key.starts_with("listener.name."))
      return {ErrorCode::kInvalidConfig, "Cannot update these configs dynamically: " + key};
    const ConfigDef* def = find_broker_config(key);
    if (!def) return {ErrorCode::kInvalidConfig, "Unknown broker config " + key};
    if (def->read_only)
      return {ErrorCode::kInvalidConfig, "Cannot update these configs dynamically: " + key};
    if (auto invalid = validate_config_value(*def, value))
      return {ErrorCode::kInvalidConfig, *invalid};
  }
  std::string error;
  auto effective = DynamicConfigs::effective(config_, layers, error);
  if (!effective) return {ErrorCode::kInvalidConfig, error};
  if (validate_only) return {};
  if (!dynamic_configs_->store(layers, error)) return {ErrorCode::kKafkaStorageError, error};
  apply_dynamic_configs(*effective);
  spdlog::info("altered dynamic configs of {}",
               cluster_wide ? "the cluster default" : "broker " + name);
  return {};
}

void Broker::apply_dynamic_configs(const BrokerConfig& effective) {
  topics_->set_broker_defaults(effective.log_defaults, effective.num_partitions);
  configure_connection_limits(effective);
  auto slow = effective.value_of("slow.request.threshold.ms");
  slow_request_ms_ = slow ? parse_int64(*slow).value_or(5000) : 5000;
}

void Broker::configure_connection_limits(const BrokerConfig& effective) {
  ConnectionLimitConfig limits;
  auto number_of = [&](const char* key, int64_t fallback) {
    auto v = effective.value_of(key);
    return v ? parse_int64(*v).value_or(fallback) : fallback;
  };
  limits.max_per_ip = number_of("max.connections.per.ip", INT32_MAX);
  limits.max_total = number_of("max.connections", INT32_MAX);
  limits.max_creation_rate = number_of("max.connection.creation.rate", INT32_MAX);
  limits.listeners = listener_limits(effective.given);
  limits.window = quota_window(effective);
  std::vector<std::string> listener_names;
  for (const auto& listener : config_.listeners) listener_names.push_back(listener.name);
  limits.protected_listener = protected_listener(
      listener_names, effective.value_of("inter.broker.listener.name"),
      effective.value_of("security.inter.broker.protocol").value_or("PLAINTEXT"));
  std::string ignored;  // validated with the config
  limits.per_ip_overrides =
      parse_per_ip_overrides(effective.value_of("max.connections.per.ip.overrides").value_or(""),
                             ignored)
          .value_or(std::map<std::string, int64_t>{});
  connection_limits_->configure(std::move(limits));
}

bool Broker::inject_produce_fault() {
  return fault_every_produce_ > 0 && ++produce_count_ % fault_every_produce_ == 0;
}

void Broker::stop() {
  if (server_) server_->stop();
}

}  // namespace oxbow::broker
