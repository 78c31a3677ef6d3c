#pragma once
// Kafka's connection limits: max.connections.per.ip (with max.connections.per.ip.overrides),
// max.connections and max.connection.creation.rate, over all listeners. Connections are counted
// from accept to close.
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "broker/client_quotas.h"

namespace oxbow::broker {

struct ConnectionLimitConfig {
  int64_t max_per_ip = INT32_MAX;
  std::map<std::string, int64_t> per_ip_overrides;  // address -> its own maximum
  int64_t max_total = INT32_MAX;
  int64_t max_creation_rate = INT32_MAX;  // new connections per second, over all listeners
  QuotaWindow window;
};

// An address as connections report theirs (IPv4 as a.b.c.d); a host name is resolved, IPv4 first as
// Java prefers. nullopt when it is neither an address nor resolvable.
std::optional<std::string> resolve_address(const std::string& host);

// Parses max.connections.per.ip.overrides ("host:count,host:count"); nullopt with `error` when
// malformed.
std::optional<std::map<std::string, int64_t>> parse_per_ip_overrides(const std::string& text,
                                                                     std::string& error);

class ConnectionLimits {
 public:
  void configure(ConnectionLimitConfig config);
  // Counts a new connection from `ip`, or refuses it (false) when that address has its maximum.
  bool admit(const std::string& ip, int64_t& limit);
  void release(const std::string& ip);
  // max.connections reached: the listeners stop accepting until a connection closes.
  bool at_capacity() const;
  // max.connection.creation.rate: counts a new connection and returns how long, in ms (at most one
  // sample window), the listener should wait before it accepts another.
  int64_t record_creation(int64_t now_ms);

 private:
  mutable std::mutex mutex_;
  ConnectionLimitConfig config_;
  std::map<std::string, int64_t> per_ip_;
  int64_t total_ = 0;
  std::optional<SampledRate> creations_;  // while a creation rate is set
};

}  // namespace oxbow::broker
