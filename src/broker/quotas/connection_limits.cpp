#include "broker/quotas/connection_limits.h"

#include <cmath>

#include "broker/config/config_defs.h"
#include "broker/config/host_addresses.h"
#include "common/properties.h"

namespace oxbow::broker {

std::map<std::string, ListenerLimitConfig> listener_limits(
    const std::map<std::string, std::string>& configs) {
  std::map<std::string, ListenerLimitConfig> out;
  for (const auto& [key, value] : configs) {
    auto setting = listener_base_key(key);
    auto number = parse_int64(value);
    if (setting.empty() || !number) continue;
    if (setting == "max.connections") out[listener_of_key(key)].max_connections = *number;
    if (setting == "max.connection.creation.rate")
      out[listener_of_key(key)].max_creation_rate = *number;
  }
  return out;
}

namespace {

// A creation rate's sensor: absent while no rate is set, restarted when its window changes.
void reconfigure_rate(std::optional<SampledRate>& rate, int64_t limit, bool window_changed,
                      const QuotaWindow& window) {
  if (limit >= INT32_MAX) {
    rate.reset();
  } else if (!rate || window_changed) {
    rate.emplace(window);
  }
}

}  // namespace

void ConnectionLimits::configure(ConnectionLimitConfig config) {
  std::lock_guard lock(mutex_);
  bool window_changed = config.window.samples != config_.window.samples ||
                        config.window.window_ms != config_.window.window_ms;
  reconfigure_rate(creations_, config.max_creation_rate, window_changed, config.window);
  for (const auto& [name, limits] : config.listeners) listeners_[name];
  for (auto& [name, listener] : listeners_) {
    auto it = config.listeners.find(name);
    listener.limits = it != config.listeners.end() ? it->second : ListenerLimitConfig{};
    reconfigure_rate(listener.creations, listener.limits.max_creation_rate, window_changed,
                     config.window);
  }
  config_ = std::move(config);
}

ConnectionLimits::Listener& ConnectionLimits::listener_locked(const std::string& name) {
  return listeners_[ascii_lower(name)];
}

int64_t ConnectionLimits::creation_delay_locked(std::optional<SampledRate>& rate, int64_t limit,
                                                int64_t now_ms) {
  if (!rate) return 0;
  rate->record(1, now_ms);
  double measured = rate->per_second(now_ms);
  auto allowed = static_cast<double>(limit);
  if (measured <= allowed) return 0;
  if (allowed <= 0) return config_.window.window_ms;
  auto delay = static_cast<int64_t>(
      std::llround((measured - allowed) / allowed * static_cast<double>(rate->span_ms(now_ms))));
  return std::min(delay, config_.window.window_ms);
}

bool ConnectionLimits::is_protected(const std::string& name) const {
  return !config_.protected_listener.empty() && ascii_lower(name) == config_.protected_listener;
}

int64_t ConnectionLimits::record_creation(const std::string& listener, int64_t now_ms) {
  std::lock_guard lock(mutex_);
  auto& own = listener_locked(listener);
  int64_t broker_delay = is_protected(listener)
                             ? 0
                             : creation_delay_locked(creations_, config_.max_creation_rate, now_ms);
  int64_t listener_delay =
      creation_delay_locked(own.creations, own.limits.max_creation_rate, now_ms);
  return std::max(broker_delay, listener_delay);
}

bool ConnectionLimits::admit(const std::string& listener, const std::string& ip, int64_t& limit) {
  std::lock_guard lock(mutex_);
  auto it = config_.per_ip_overrides.find(ip);
  limit = it != config_.per_ip_overrides.end() ? it->second : config_.max_per_ip;
  auto& count = per_ip_[ip];
  if (count >= limit) {
    if (count == 0) per_ip_.erase(ip);
    return false;
  }
  ++count;
  ++total_;
  ++listener_locked(listener).count;
  return true;
}

void ConnectionLimits::release(const std::string& listener, const std::string& ip) {
  std::lock_guard lock(mutex_);
  auto it = per_ip_.find(ip);
  if (it == per_ip_.end()) return;
  if (--it->second <= 0) per_ip_.erase(it);
  --total_;
  --listener_locked(listener).count;
}

bool ConnectionLimits::at_capacity(const std::string& listener) const {
  std::lock_guard lock(mutex_);
  auto it = listeners_.find(ascii_lower(listener));
  if (it != listeners_.end() && it->second.count >= it->second.limits.max_connections) return true;
  return !is_protected(listener) && total_ >= config_.max_total;
}

std::string protected_listener(const std::vector<std::string>& listener_names,
                               const std::optional<std::string>& inter_broker_listener,
                               const std::string& inter_broker_protocol) {
  if (listener_names.size() < 2) return {};
  std::string name = ascii_lower(inter_broker_listener.value_or(inter_broker_protocol));
  for (const auto& listener : listener_names) {
    if (ascii_lower(listener) == name) return name;
  }
  return {};
}

}  // namespace oxbow::broker
