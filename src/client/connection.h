#pragma once
// A blocking Kafka protocol connection for what librdkafka has no API for (the CLI's admin
// requests, Streams' own group membership): one connection to one broker, requests encoded with
// the project's generated codecs. It honours the librdkafka properties that secure a connection:
// security.protocol, sasl.mechanism(s) PLAIN / SCRAM-SHA-256 / SCRAM-SHA-512, sasl.username,
// sasl.password, ssl.ca.location, ssl.certificate.location, ssl.key.location, ssl.key.password,
// enable.ssl.certificate.verification and ssl.endpoint.identification.algorithm.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "protocol/wire.h"

namespace oxbow::client {

// The connection failed (cannot connect, TLS or SASL refused, closed, no answer in time): it is
// unusable afterwards.
struct ConnectionError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A response's error as tools print it: "NAME: message" (the message when there is one).
std::string error_text(int16_t code, const std::optional<std::string>& message = std::nullopt);

using Settings = std::map<std::string, std::string>;  // librdkafka property names

class Connection {
 public:
  // Connects (and secures and authenticates the connection as configured) to the first reachable
  // "host:port" of the comma-separated `servers`; throws ConnectionError when none is.
  // `timeout_ms` bounds connecting and each call's wait for its answer.
  Connection(const std::string& servers, const Settings& settings, std::string client_id,
             int timeout_ms);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Sends one request and returns its response body (the response header stripped).
  std::vector<uint8_t> call(int16_t api_key, int16_t api_version, const protocol::Writer& body);

  template <typename Response, typename Request>
  Response call(int16_t api_key, int16_t api_version, const Request& request) {
    protocol::Writer body;
    request.encode(body, api_version);
    auto bytes = call(api_key, api_version, body);
    protocol::Reader reader(bytes);
    Response response;
    try {
      response.decode(reader, api_version);
    } catch (const protocol::DecodeError&) {
      throw ConnectionError(server_ + ": malformed response");
    }
    return response;
  }

  // The broker this connection reached ("host:port").
  const std::string& server() const { return server_; }
  // How long a call waits for its answer from now on (a JoinGroup may wait a rebalance long).
  void set_timeout(int timeout_ms);

 private:
  struct Tls;

  [[noreturn]] void fail(const std::string& why) const;
  void start_tls(const Settings& settings, const std::string& host);
  void authenticate(const Settings& settings);
  std::vector<uint8_t> sasl_step(const std::string& token);
  void send_all(const uint8_t* data, size_t size);
  void receive_all(uint8_t* data, size_t size);

  int fd_ = -1;
  std::unique_ptr<Tls> tls_;
  std::string server_;
  std::string client_id_;
  int32_t next_correlation_id_ = 1;
};

}  // namespace oxbow::client
