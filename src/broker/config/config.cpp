#include "broker/config/config.h"

#include <boost/asio/ip/address.hpp>

#include "broker/config/host_addresses.h"

#include "broker/config/config_defs.h"

namespace oxbow::broker {

std::optional<std::string> BrokerConfig::value_of(const std::string& key) const {
  if (auto it = given.find(key); it != given.end()) return it->second;
  if (const auto* def = find_broker_config(key); def && def->default_value)
    return def->default_value;
  return std::nullopt;
}

std::optional<std::vector<Endpoint>> parse_listeners(const std::string& text, std::string& error) {
  std::vector<Endpoint> out;
  for (const auto& item : split(text, ',')) {
    if (item.empty()) continue;
    auto scheme = item.find("://");
    auto colon = item.rfind(':');
    if (scheme == std::string::npos || colon == std::string::npos || colon < scheme + 3) {
      error = "expected NAME://host:port, got '" + item + "'";
      return std::nullopt;
    }
    Endpoint e;
    e.name = item.substr(0, scheme);
    e.host = item.substr(scheme + 3, colon - scheme - 3);
    if (e.host.size() >= 2 && e.host.front() == '[' && e.host.back() == ']') {
      e.host = e.host.substr(1, e.host.size() - 2);
    }
    auto port = parse_int64(item.substr(colon + 1));
    if (!port || *port < 0 || *port > 65535) {
      error = "bad port in '" + item + "'";
      return std::nullopt;
    }
    e.port = static_cast<uint16_t>(*port);
    e.security_protocol = e.name;
    out.push_back(e);
  }
  if (out.empty()) {
    error = "no listener given";
    return std::nullopt;
  }
  return out;
}

namespace {

// 4 or 6 for an IP address, 0 for a host name or an empty host.
int ip_version(const std::string& host) {
  boost::system::error_code ec;
  auto address = boost::asio::ip::make_address(host, ec);
  if (ec) return 0;
  return address.is_v4() ? 4 : 6;
}

// Kafka's rules for `listeners`: distinct names, and distinct ports (0 aside) unless two listeners
// share one with one IPv4 and one IPv6 address. Advertised listeners may share ports.
bool check_distinct_listeners(const std::vector<Endpoint>& endpoints, const std::string& text,
                              bool distinct_ports, std::string& error) {
  std::map<std::string, int> names;
  std::map<uint16_t, std::vector<const Endpoint*>> by_port;
  for (const auto& e : endpoints) {
    if (++names[e.name] > 1) {
      error = "Each listener must have a different name, listeners: " + text;
      return false;
    }
    if (e.port != 0) by_port[e.port].push_back(&e);
  }
  if (!distinct_ports) return true;
  for (const auto& [port, sharing] : by_port) {
    if (sharing.size() == 1) continue;
    bool v4_and_v6 =
        sharing.size() == 2 && ip_version(sharing[0]->host) * ip_version(sharing[1]->host) == 4 * 6;
    if (v4_and_v6) continue;
    error =
        "Each listener must have a different port unless exactly one listener has an IPv4 "
        "address and the other IPv6 address, listeners: " +
        text + ", port: " + std::to_string(port);
    return false;
  }
  return true;
}

// compression.type's value as the codec number batches carry (validated with the config).
int compression_codec(const std::string& type) {
  if (type == "uncompressed") return 0;
  if (type == "gzip") return 1;
  if (type == "snappy") return 2;
  if (type == "lz4") return 3;
  if (type == "zstd") return 4;
  return storage::kProducerCompression;
}

int64_t number(const BrokerConfig& c, const std::string& key, int64_t fallback) {
  auto v = c.value_of(key);
  if (!v) return fallback;
  return parse_int64(*v).value_or(fallback);
}

// A token validator of its own (OIDC, KIP-768) would be a promise of signature checks that Oxbow
// cannot keep: such keys stop the start rather than let unsecured tokens in in its place.
bool names_oauth_bearer_validator(const std::string& key) {
  return key == "sasl.oauthbearer.jwks.endpoint.url" ||
         (key.starts_with("listener.name.") &&
          (key.ends_with(".oauthbearer.sasl.server.callback.handler.class") ||
           key.ends_with(".sasl.oauthbearer.jwks.endpoint.url")));
}

void apply_log_defaults(BrokerConfig& c) {
  auto& d = c.log_defaults;
  d.segment_bytes = number(c, "log.segment.bytes", d.segment_bytes);
  d.segment_ms = c.given.count("log.roll.ms") ? number(c, "log.roll.ms", d.segment_ms)
                                              : number(c, "log.roll.hours", 168) * 3600 * 1000;
  if (c.given.count("log.retention.ms")) {
    d.retention_ms = number(c, "log.retention.ms", d.retention_ms);
  } else if (c.given.count("log.retention.minutes")) {
    d.retention_ms = number(c, "log.retention.minutes", 0) * 60 * 1000;
  } else {
    d.retention_ms = number(c, "log.retention.hours", 168) * 3600 * 1000;
  }
  if (d.retention_ms < 0) d.retention_ms = -1;
  d.retention_bytes = number(c, "log.retention.bytes", -1);
  d.flush_messages = number(c, "log.flush.interval.messages", storage::kNever);
  d.flush_ms = number(c, "log.flush.interval.ms", storage::kNever);
  d.index_interval_bytes = static_cast<int32_t>(number(c, "log.index.interval.bytes", 4096));
  d.max_message_bytes = static_cast<int32_t>(number(c, "message.max.bytes", 1048588));
  d.min_insync_replicas = static_cast<int32_t>(number(c, "min.insync.replicas", 1));
  d.log_append_time = c.value_of("log.message.timestamp.type") == "LogAppendTime";
  d.timestamp_difference_max_ms =
      number(c, "log.message.timestamp.difference.max.ms", d.timestamp_difference_max_ms);
  auto policy = c.value_of("log.cleanup.policy").value_or("delete");
  d.delete_policy = policy.find("delete") != std::string::npos;
  d.compact = policy.find("compact") != std::string::npos;
  d.delete_retention_ms = number(c, "log.cleaner.delete.retention.ms", d.delete_retention_ms);
  d.message_downconversion = c.value_of("log.message.downconversion.enable") != "false";
  d.compression_codec = compression_codec(c.value_of("compression.type").value_or("producer"));
  d.gzip_level = static_cast<int>(number(c, "compression.gzip.level", d.gzip_level));
  d.lz4_level = static_cast<int>(number(c, "compression.lz4.level", d.lz4_level));
  d.zstd_level = static_cast<int>(number(c, "compression.zstd.level", d.zstd_level));
  d.min_compaction_lag_ms = number(c, "log.cleaner.min.compaction.lag.ms", d.min_compaction_lag_ms);
  d.max_compaction_lag_ms = number(c, "log.cleaner.max.compaction.lag.ms", d.max_compaction_lag_ms);
  d.min_cleanable_dirty_ratio =
      parse_double(c.value_of("log.cleaner.min.cleanable.ratio").value_or(""))
          .value_or(d.min_cleanable_dirty_ratio);
}

}  // namespace

std::optional<BrokerConfig> make_broker_config(const Properties& props, std::string& error,
                                               std::vector<std::string>& warnings) {
  BrokerConfig c;
  for (const auto& [key, value] : props) {
    if (names_oauth_bearer_validator(key)) {
      error = key + ": OAUTHBEARER validates only unsecured tokens here; no validator of its own";
      return std::nullopt;
    }
    if (key == "max.connections.per.ip.overrides" && !parse_per_ip_overrides(value, error)) {
      return std::nullopt;
    }
    if (key == "max.connections.per.ip" && value == "0" &&
        props.find("max.connections.per.ip.overrides") == props.end()) {
      error =
          "max.connections.per.ip can be set to zero only if "
          "max.connections.per.ip.overrides property is set.";
      return std::nullopt;
    }
    if (key == "client.quota.callback.class" && !value.empty()) {
      error = key + ": quotas follow Kafka's default callback here; no callback of its own";
      return std::nullopt;
    }
    // Per-listener settings (listener.name.<name>.<mechanism>.sasl.jaas.config, ...) are kept as
    // given; the connection limits among them are checked as their broker-wide keys are.
    if (key.starts_with("listener.name.")) {
      if (const ConfigDef* def = find_listener_config(key)) {
        if (auto invalid = validate_config_value(*def, value, key)) {
          error = *invalid;
          return std::nullopt;
        }
      }
      c.given[key] = value;
      continue;
    }
    const ConfigDef* def = find_broker_config(key);
    if (!def) def = find_topic_config(key);  // Kafka accepts some topic names in server.properties
    if (!def) {
      warnings.push_back("unknown configuration '" + key + "' ignored");
      continue;
    }
    if (auto invalid = validate_config_value(*def, value)) {
      error = *invalid;
      return std::nullopt;
    }
    c.given[key] = value;
  }
  c.node_id = static_cast<int32_t>(c.given.count("node.id") ? number(c, "node.id", 0)
                                                            : number(c, "broker.id", 0));
  c.rack = c.value_of("broker.rack");
  if (c.value_of("transaction.partition.verification.enable") == "false")
    warnings.push_back(
        "transaction.partition.verification.enable=false ignored: a transactional produce is "
        "always checked against its transaction's partitions");
  auto listeners = parse_listeners(*c.value_of("listeners"), error);
  if (!listeners) {
    error = "listeners: " + error;
    return std::nullopt;
  }
  if (!check_distinct_listeners(*listeners, *c.value_of("listeners"), true, error))
    return std::nullopt;
  c.listeners = *listeners;
  std::map<std::string, std::string> protocols;
  for (const auto& entry : split(*c.value_of("listener.security.protocol.map"), ',')) {
    auto colon = entry.find(':');
    if (colon == std::string::npos) continue;
    protocols[entry.substr(0, colon)] = entry.substr(colon + 1);
  }
  for (auto& listener : c.listeners) {
    auto it = protocols.find(listener.name);
    if (it == protocols.end()) {
      error = "listener " + listener.name +
              " has no security protocol in listener.security.protocol.map";
      return std::nullopt;
    }
    listener.security_protocol = it->second;
  }
  if (auto adv = c.value_of("advertised.listeners")) {
    auto parsed = parse_listeners(*adv, error);
    if (!parsed) {
      error = "advertised.listeners: " + error;
      return std::nullopt;
    }
    if (!check_distinct_listeners(*parsed, *adv, false, error)) return std::nullopt;
    c.advertised_listeners = *parsed;
  } else {
    c.advertised_listeners = c.listeners;
  }
  if (auto dirs = c.value_of("log.dirs")) {
    for (auto& d : split(*dirs, ',')) {
      if (!d.empty()) c.log_dirs.push_back(d);
    }
  }
  if (c.log_dirs.empty()) c.log_dirs.push_back(*c.value_of("log.dir"));
  c.num_partitions = static_cast<int32_t>(number(c, "num.partitions", 1));
  c.auto_create_topics = c.value_of("auto.create.topics.enable") == "true";
  c.delete_topic_enable = c.value_of("delete.topic.enable") == "true";
  c.socket_request_max_bytes = number(c, "socket.request.max.bytes", c.socket_request_max_bytes);
  c.sasl_server_max_receive_size =
      number(c, "sasl.server.max.receive.size", c.sasl_server_max_receive_size);
  c.network_threads = static_cast<int32_t>(number(c, "num.network.threads", 0));
  c.retention_check_interval_ms = number(c, "log.retention.check.interval.ms", 300000);
  apply_log_defaults(c);
  return c;
}

storage::LogConfig resolve_log_config(const storage::LogConfig& broker_defaults,
                                      const std::map<std::string, std::string>& overrides) {
  storage::LogConfig config = broker_defaults;
  auto get = [&](const char* key, int64_t current) {
    auto it = overrides.find(key);
    if (it == overrides.end()) return current;
    return parse_int64(it->second).value_or(current);
  };
  config.segment_bytes = get("segment.bytes", config.segment_bytes);
  config.segment_ms = get("segment.ms", config.segment_ms);
  config.retention_ms = get("retention.ms", config.retention_ms);
  config.retention_bytes = get("retention.bytes", config.retention_bytes);
  config.flush_messages = get("flush.messages", config.flush_messages);
  config.flush_ms = get("flush.ms", config.flush_ms);
  config.index_interval_bytes =
      static_cast<int32_t>(get("index.interval.bytes", config.index_interval_bytes));
  config.max_message_bytes =
      static_cast<int32_t>(get("max.message.bytes", config.max_message_bytes));
  config.min_insync_replicas =
      static_cast<int32_t>(get("min.insync.replicas", config.min_insync_replicas));
  config.timestamp_difference_max_ms =
      get("message.timestamp.difference.max.ms", config.timestamp_difference_max_ms);
  if (auto it = overrides.find("message.timestamp.type"); it != overrides.end()) {
    config.log_append_time = it->second == "LogAppendTime";
  }
  if (auto it = overrides.find("cleanup.policy"); it != overrides.end()) {
    config.delete_policy = it->second.find("delete") != std::string::npos;
    config.compact = it->second.find("compact") != std::string::npos;
  }
  if (auto it = overrides.find("compression.type"); it != overrides.end()) {
    config.compression_codec = compression_codec(it->second);
  }
  config.gzip_level = static_cast<int>(get("compression.gzip.level", config.gzip_level));
  config.lz4_level = static_cast<int>(get("compression.lz4.level", config.lz4_level));
  config.zstd_level = static_cast<int>(get("compression.zstd.level", config.zstd_level));
  if (auto it = overrides.find("message.downconversion.enable"); it != overrides.end()) {
    config.message_downconversion = it->second != "false";
  }
  config.delete_retention_ms = get("delete.retention.ms", config.delete_retention_ms);
  config.min_compaction_lag_ms = get("min.compaction.lag.ms", config.min_compaction_lag_ms);
  config.max_compaction_lag_ms = get("max.compaction.lag.ms", config.max_compaction_lag_ms);
  if (auto it = overrides.find("min.cleanable.dirty.ratio"); it != overrides.end()) {
    config.min_cleanable_dirty_ratio =
        parse_double(it->second).value_or(config.min_cleanable_dirty_ratio);
  }
  return config;
}

}  // namespace oxbow::broker
