#pragma once
// The broker's configuration, read from Kafka-named properties (server.properties + --override).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/properties.h"
#include "storage/log_config.h"

namespace oxbow::broker {

struct Endpoint {
  std::string name;  // listener name, e.g. PLAINTEXT
  std::string host;  // empty: all interfaces (bind) / machine host name (advertise)
  uint16_t port = 0;
  std::string security_protocol = "PLAINTEXT";
};

struct BrokerConfig {
  int32_t node_id = 0;
  std::optional<std::string> rack;  // broker.rack
  std::vector<Endpoint> listeners;
  std::vector<Endpoint> advertised_listeners;
  std::vector<std::string> log_dirs;
  int32_t num_partitions = 1;
  bool auto_create_topics = true;
  bool delete_topic_enable = true;
  int64_t socket_request_max_bytes = 104857600;
  int64_t sasl_server_max_receive_size = 524288;  // before a SASL client has authenticated
  int32_t network_threads = 0;
  int64_t retention_check_interval_ms = 300000;
  storage::LogConfig log_defaults;
  // Every key as given (after overrides), for DescribeConfigs.
  Properties given;

  // Resolves the effective value of a broker key: given, else the default. nullopt: null.
  std::optional<std::string> value_of(const std::string& key) const;
};

// Builds the configuration. Unknown keys go to `warnings`; an invalid value makes it fail with a
// message naming the key.
std::optional<BrokerConfig> make_broker_config(const Properties& props, std::string& error,
                                               std::vector<std::string>& warnings);

// Parses "NAME://host:port[,...]".
std::optional<std::vector<Endpoint>> parse_listeners(const std::string& text, std::string& error);

// The log settings of a topic: its overrides over the broker's defaults.
storage::LogConfig resolve_log_config(const storage::LogConfig& broker_defaults,
                                      const std::map<std::string, std::string>& topic_overrides);

}  // namespace oxbow::broker
