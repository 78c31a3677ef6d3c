#pragma once
// Kafka's connection limits: max.connections.per.ip (with max.connections.per.ip.overrides) and
// max.connections, counted over all listeners. Connections are counted from accept to close.
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace oxbow::broker {

struct ConnectionLimitConfig {
  int64_t max_per_ip = INT32_MAX;
  std::map<std::string, int64_t> per_ip_overrides;  // address -> its own maximum
  int64_t max_total = INT32_MAX;
};

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

 private:
  mutable std::mutex mutex_;
  ConnectionLimitConfig config_;
  std::map<std::string, int64_t> per_ip_;
  int64_t total_ = 0;
};

}  // namespace oxbow::broker
