#pragma once
// A blocking Kafka protocol client for the few admin requests librdkafka has no API for
// (DescribeTransactions, ListTransactions): one connection to the first bootstrap server that
// answers, requests encoded with the broker's own generated codecs.
#include <cstdint>
#include <string>
#include <vector>

#include "protocol/wire.h"

namespace oxbow::cli {

class WireClient {
 public:
  // Connects to the first reachable "host:port" of the comma-separated list; fails the command
  // (throws CLI::RuntimeError) when none is.
  explicit WireClient(const std::string& bootstrap_servers);
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
  void send_all(const uint8_t* data, size_t size);
  void receive_all(uint8_t* data, size_t size);

  int fd_ = -1;
  std::string server_;
  int32_t next_correlation_id_ = 1;
};

}  // namespace oxbow::cli
