#include "cli/wire_client.h"

#include <netdb.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstring>

#include "cli/client_config.h"
#include "protocol/headers.h"

namespace oxbow::cli {

namespace {

int connect_to(const std::string& host, const std::string& port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0) return -1;
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) continue;
    timeval timeout{kRequestTimeoutMs / 1000, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
    if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  return fd;
}

}  // namespace

WireClient::WireClient(const std::string& bootstrap_servers) {
  size_t start = 0;
  while (start <= bootstrap_servers.size() && fd_ < 0) {
    size_t end = bootstrap_servers.find(',', start);
    if (end == std::string::npos) end = bootstrap_servers.size();
    std::string server = bootstrap_servers.substr(start, end - start);
    size_t colon = server.rfind(':');
    if (colon != std::string::npos) {
      fd_ = connect_to(server.substr(0, colon), server.substr(colon + 1));
      server_ = server;
    }
    start = end + 1;
  }
  if (fd_ < 0) fail(fmt::format("cannot connect to {}", bootstrap_servers));
}

WireClient::~WireClient() {
  if (fd_ >= 0) ::close(fd_);
}

void WireClient::send_all(const uint8_t* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::send(fd_, data, size, MSG_NOSIGNAL);
    if (n <= 0) fail(fmt::format("{}: send failed: {}", server_, std::strerror(errno)));
    data += n;
    size -= static_cast<size_t>(n);
  }
}

void WireClient::receive_all(uint8_t* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::recv(fd_, data, size, 0);
    if (n == 0) fail(fmt::format("{}: connection closed by the broker", server_));
    if (n < 0) fail(fmt::format("{}: no answer: {}", server_, std::strerror(errno)));
    data += n;
    size -= static_cast<size_t>(n);
  }
}

std::vector<uint8_t> WireClient::call(int16_t api_key, int16_t api_version, const protocol::Writer& body) {
  bool flexible = protocol::is_flexible(api_key, api_version);
  int32_t correlation_id = next_correlation_id_++;
  protocol::Writer frame;
  frame.i32(0);  // size, patched below
  frame.i16(api_key);
  frame.i16(api_version);
  frame.i32(correlation_id);
  frame.nullable_string(std::string("oxbow-cli"), false);
  if (flexible) frame.uvarint(0);  // no tagged fields
  frame.raw(body.buffer().data(), body.buffer().size());
  auto& bytes = frame.buffer();
  uint32_t size = static_cast<uint32_t>(bytes.size() - 4);
  for (int i = 0; i < 4; ++i) bytes[i] = static_cast<uint8_t>(size >> (24 - 8 * i));
  send_all(bytes.data(), bytes.size());

  uint8_t size_bytes[4];
  receive_all(size_bytes, 4);
  uint32_t response_size = (uint32_t{size_bytes[0]} << 24) | (uint32_t{size_bytes[1]} << 16) |
                           (uint32_t{size_bytes[2]} << 8) | size_bytes[3];
  std::vector<uint8_t> response(response_size);
  receive_all(response.data(), response.size());
  protocol::Reader reader(response);
  try {
    if (reader.i32() != correlation_id) fail(fmt::format("{}: response out of order", server_));
    if (flexible) reader.skip_tagged_fields();
  } catch (const protocol::DecodeError&) {
    fail(fmt::format("{}: malformed response", server_));
  }
  return {response.begin() + static_cast<std::ptrdiff_t>(reader.position()), response.end()};
}

}  // namespace oxbow::cli
