#pragma once
// A blocking Kafka protocol client for the admin requests librdkafka has no API for
// (DescribeTransactions, ListTransactions, the SCRAM credential and client quota APIs, ACLs on
// transactional ids):
// one connection to the first bootstrap server that answers, requests encoded with the broker's
// own generated codecs. It honours the librdkafka properties (-X) that secure a connection:
// security.protocol, sasl.mechanism(s) PLAIN / SCRAM-SHA-256 / SCRAM-SHA-512, sasl.username,
// sasl.password, ssl.ca.location, ssl.certificate.location, ssl.key.location, ssl.key.password,
// enable.ssl.certificate.verification and ssl.endpoint.identification.algorithm.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "protocol/wire.h"

namespace oxbow::cli {

struct ClientOptions;

// A response's error as the tools print it: "NAME: message" (the message when there is one).
std::string error_text(int16_t code, const std::optional<std::string>& message = std::nullopt);

class WireClient {
 public:
  // Connects (and secures and authenticates the connection as configured) to the first reachable
  // "host:port" of the bootstrap list; fails the command (throws CLI::RuntimeError) when none is.
  explicit WireClient(const ClientOptions& options);
  ~WireClient();
  WireClient(const WireClient&) = delete;
  WireClient& operator=(const WireClient&) = delete;

  // Sends one request and returns its response body (the response header stripped).
  std::vector<uint8_t> call(int16_t api_key, int16_t api_version, const protocol::Writer& body);

  template <typename Response, typename Request>
  Response call(int16_t api_key, int16_t api_version, const Request& request) {
    protocol::Writer body;
    request.encode(body, api_version);
    auto bytes = call(api_key, api_version, body);
    protocol::Reader reader(bytes);
    Response response;
    response.decode(reader, api_version);
    return response;
  }

 private:
  using Settings = std::map<std::string, std::string>;
  struct Tls;

  void start_tls(const Settings& settings, const std::string& host);
  void authenticate(const Settings& settings);
  std::vector<uint8_t> sasl_step(const std::string& token);
  void send_all(const uint8_t* data, size_t size);
  void receive_all(uint8_t* data, size_t size);

  int fd_ = -1;
  std::unique_ptr<Tls> tls_;
  std::string server_;
  int32_t next_correlation_id_ = 1;
};

}  // namespace oxbow::cli
