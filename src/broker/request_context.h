#pragma once
// What a request handler gets besides the request body: the broker and who is asking.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "protocol/headers.h"

namespace oxbow::broker {

class Broker;
struct SecurityState;

struct RequestContext {
  Broker& broker;
  const protocol::RequestHeader& header;
  const std::string& listener_name;   // picks the advertised endpoint for Metadata
  const std::string& client_host;     // the peer's address
  bool respond = true;                // cleared by produce with acks=0
  SecurityState* security = nullptr;  // the connection's authentication state
  // Time spent waiting by design (a fetch's long poll, a rebalance): not counted as slowness.
  std::chrono::steady_clock::duration parked{};
  // Time spent waiting for other work (a produce's fsync): not the request's own, for
  // request_percentage quotas, though it is latency.
  std::chrono::steady_clock::duration waited{};
  size_t request_bytes = 0;  // the whole request as read, for produce quotas
  // Set by a handler whose client went over its quota (quotas/client_quotas.h): the connection then
  // holds the client's next request back for this long, as Kafka mutes a throttled channel.
  int32_t throttle_ms = 0;
};

}  // namespace oxbow::broker
