#include "broker/connection_limits.h"

#include <arpa/inet.h>
#include <netdb.h>

#include <cmath>

#include <boost/asio/ip/address.hpp>

#include "common/properties.h"

namespace oxbow::broker {

std::optional<std::string> resolve_address(const std::string& host) {
  boost::system::error_code ec;
  auto address = boost::asio::ip::make_address(host, ec);
  if (!ec) {
    if (address.is_v6() && address.to_v6().is_v4_mapped())
      return boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, address.to_v6())
          .to_string();
    return address.to_string();
  }
  // IPv4 first, as Java's InetAddress.getByName prefers it.
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  for (int family : {AF_INET, AF_UNSPEC}) {
    hints.ai_family = family;
    if (::getaddrinfo(host.c_str(), nullptr, &hints, &found) == 0 && found) break;
    found = nullptr;
  }
  if (!found) return std::nullopt;
  char text[INET6_ADDRSTRLEN] = {};
  const void* raw =
      found->ai_family == AF_INET
          ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(found->ai_addr)->sin_addr)
          : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(found->ai_addr)->sin6_addr);
  bool ok = ::inet_ntop(found->ai_family, raw, text, sizeof(text)) != nullptr;
  ::freeaddrinfo(found);
  if (!ok) return std::nullopt;
  return std::string(text);
}

std::optional<std::map<std::string, int64_t>> parse_per_ip_overrides(const std::string& text,
                                                                     std::string& error) {
  std::map<std::string, int64_t> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string entry = text.substr(start, end - start);
    start = end + 1;
    while (!entry.empty() && entry.front() == ' ') entry.erase(0, 1);
    while (!entry.empty() && entry.back() == ' ') entry.pop_back();
    if (entry.empty()) continue;
    size_t colon = entry.rfind(':');
    auto count = colon == std::string::npos ? std::nullopt : parse_int64(entry.substr(colon + 1));
    if (colon == 0 || !count || *count < 0) {
      error = "max.connections.per.ip.overrides: '" + entry + "' is not host:count";
      return std::nullopt;
    }
    auto address = resolve_address(entry.substr(0, colon));
    if (!address) {
      error = "max.connections.per.ip.overrides: '" + entry.substr(0, colon) +
              "' is not a valid IP or resolvable host";
      return std::nullopt;
    }
    out[*address] = *count;
  }
  return out;
}

void ConnectionLimits::configure(ConnectionLimitConfig config) {
  std::lock_guard lock(mutex_);
  if (config.max_creation_rate >= INT32_MAX) {
    creations_.reset();
  } else if (!creations_ || config.window.samples != config_.window.samples ||
             config.window.window_ms != config_.window.window_ms) {
    creations_.emplace(config.window);
  }
  config_ = std::move(config);
}

int64_t ConnectionLimits::record_creation(int64_t now_ms) {
  std::lock_guard lock(mutex_);
  if (!creations_) return 0;
  creations_->record(1, now_ms);
  double rate = creations_->per_second(now_ms);
  auto limit = static_cast<double>(config_.max_creation_rate);
  if (rate <= limit) return 0;
  if (limit <= 0) return config_.window.window_ms;
  auto delay = static_cast<int64_t>(
      std::llround((rate - limit) / limit * static_cast<double>(creations_->span_ms(now_ms))));
  return std::min(delay, config_.window.window_ms);
}

bool ConnectionLimits::admit(const std::string& ip, int64_t& limit) {
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
  return true;
}

void ConnectionLimits::release(const std::string& ip) {
  std::lock_guard lock(mutex_);
  auto it = per_ip_.find(ip);
  if (it == per_ip_.end()) return;
  if (--it->second <= 0) per_ip_.erase(it);
  --total_;
}

bool ConnectionLimits::at_capacity() const {
  std::lock_guard lock(mutex_);
  return total_ >= config_.max_total;
}

}  // namespace oxbow::broker
