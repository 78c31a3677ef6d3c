#pragma once
// Binding a listening socket, as both HTTP servers do.
#include <cstdint>
#include <string>
#include <string_view>

#include <boost/asio/ip/tcp.hpp>

namespace oxbow::http {

// Opens, binds and listens on host:port (0: a free port; empty host: every address). False with
// `error` ("<name>: bad address 'x'" or "<name> host:port: reason") when it cannot.
inline bool open_listener(boost::asio::ip::tcp::acceptor& acceptor, const std::string& host,
                          uint16_t port, std::string_view name, std::string& error) {
  using boost::asio::ip::tcp;
  boost::system::error_code ec;
  auto address = boost::asio::ip::make_address(host.empty() ? "0.0.0.0" : host, ec);
  if (ec) {
    error = std::string(name) + ": bad address '" + host + "'";
    return false;
  }
  tcp::endpoint endpoint(address, port);
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(boost::asio::socket_base::max_listen_connections, ec);
  if (ec) {
    error = std::string(name) + " " + host + ":" + std::to_string(port) + ": " + ec.message();
    return false;
  }
  return true;
}

// The port `acceptor` listens on, 0 when it does not.
inline uint16_t listening_port(const boost::asio::ip::tcp::acceptor& acceptor) {
  boost::system::error_code ec;
  auto endpoint = acceptor.local_endpoint(ec);
  return ec ? 0 : endpoint.port();
}

}  // namespace oxbow::http
