#include "broker/config/host_addresses.h"

#include <arpa/inet.h>
#include <netdb.h>

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

}  // namespace oxbow::broker
