#pragma once
// Kafka's connection limits: max.connections.per.ip (with max.connections.per.ip.overrides),
// max.connections and max.connection.creation.rate over all listeners, and each listener's own
// listener.name.<name>.max.connections and .max.connection.creation.rate (KIP-402, KIP-612).
// Connections are counted from accept to close. As in Kafka, the inter-broker listener of a broker
// with more than one listener is exempt from the broker-wide limits (its own still hold), so that
// clients filling max.connections cannot lock the operators' listener out.
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "broker/quotas/client_quotas.h"

namespace oxbow::broker {

// A listener's own limits, in force besides the broker-wide ones.
struct ListenerLimitConfig {
  int64_t max_connections = INT32_MAX;
  int64_t max_creation_rate = INT32_MAX;  // new connections per second on this listener
};

struct ConnectionLimitConfig {
  int64_t max_per_ip = INT32_MAX;
  std::map<std::string, int64_t> per_ip_overrides;  // address -> its own maximum
  int64_t max_total = INT32_MAX;
  int64_t max_creation_rate = INT32_MAX;  // new connections per second, over all listeners
  std::map<std::string, ListenerLimitConfig> listeners;  // by listener name, lower case
  QuotaWindow window;
  // Lower case; empty when the broker has a single listener, which the broker-wide limits hold.
  std::string protected_listener;
};

// The listener exempt from the broker-wide limits: the inter-broker one
// (inter.broker.listener.name, else the listener named as security.inter.broker.protocol), when
// the broker has more than one listener; empty otherwise.
std::string protected_listener(const std::vector<std::string>& listener_names,
                               const std::optional<std::string>& inter_broker_listener,
                               const std::string& inter_broker_protocol);

// The listener limits that listener.name.<name>.max.connections and
// listener.name.<name>.max.connection.creation.rate set among `configs` (validated already).
std::map<std::string, ListenerLimitConfig> listener_limits(
    const std::map<std::string, std::string>& configs);

class ConnectionLimits {
 public:
  void configure(ConnectionLimitConfig config);
  // Counts a new connection from `ip` on `listener`, or refuses it (false) when that address has
  // its maximum, which `limit` then holds.
  bool admit(const std::string& listener, const std::string& ip, int64_t& limit);
  void release(const std::string& listener, const std::string& ip);
  // max.connections, or the listener's own, reached: the listener stops accepting until a
  // connection closes.
  bool at_capacity(const std::string& listener) const;
  // The creation rates, the broker's and the listener's: counts a new connection on `listener` and
  // returns how long, in ms (at most one sample window), it should wait before it accepts another.
  int64_t record_creation(const std::string& listener, int64_t now_ms);

 private:
  struct Listener {
    ListenerLimitConfig limits;
    int64_t count = 0;
    std::optional<SampledRate> creations;  // while a creation rate is set
  };
  Listener& listener_locked(const std::string& name);
  bool is_protected(const std::string& name) const;
  int64_t creation_delay_locked(std::optional<SampledRate>& rate, int64_t limit, int64_t now_ms);

  mutable std::mutex mutex_;
  ConnectionLimitConfig config_;
  std::map<std::string, int64_t> per_ip_;
  int64_t total_ = 0;
  std::optional<SampledRate> creations_;       // while a creation rate is set
  std::map<std::string, Listener> listeners_;  // by lower-case name
};

}  // namespace oxbow::broker
