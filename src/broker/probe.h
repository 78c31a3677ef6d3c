#pragma once
// Broker metrics: per-API request counts, errors and latencies, request sizes, connections, and
// per-topic traffic. Updated on the request path with sharded counters; read by /metrics.
#include <array>
#include <atomic>

#include "common/metrics.h"

namespace oxbow::broker {

struct ApiProbe {
  metrics::Counter requests;
  metrics::Counter errors;
  metrics::Histogram queue_seconds{metrics::latency_buckets()};  // read -> handler start
  metrics::Histogram local_seconds{metrics::latency_buckets()};  // handler, long polls included
  metrics::Histogram send_seconds{metrics::latency_buckets()};   // response ready -> written
  metrics::Counter authorization_denials;                        // resources refused by ACLs
  metrics::Counter throttled;                                    // over a client quota
  metrics::Counter throttle_ms;                                  // the time they were told
};

struct BrokerProbe {
  static constexpr size_t kMaxApiKey = 70;
  std::array<ApiProbe, kMaxApiKey> apis;
  metrics::Histogram produce_request_bytes{metrics::size_buckets()};
  metrics::Histogram fetch_response_bytes{metrics::size_buckets()};
  metrics::Counter fetch_down_conversions;  // partitions converted for Fetch v0-v3
  metrics::Counter incremental_fetches;     // fetches of a KIP-227 session's partitions
  metrics::Counter fetch_session_errors;    // unknown session, stale epoch, topic ids mismatch
  std::atomic<int64_t> connections{0};
  metrics::Counter connections_accepted;
  metrics::Counter connections_rejected;   // over max.connections.per.ip
  metrics::Counter connections_throttled;  // over their address's connection_creation_rate
  metrics::Counter
      connection_creation_throttle_ms;        // acceptors' waits, max.connection.creation.rate
  metrics::Counter connection_limit_wait_ms;  // acceptors' waits for a slot, max.connections
  metrics::Counter sasl_authentication_failures;
  metrics::Counter tls_handshake_failures;

  ApiProbe* api(int16_t key) {
    return key >= 0 && static_cast<size_t>(key) < kMaxApiKey ? &apis[key] : nullptr;
  }
};

BrokerProbe& probe();

struct TopicStats {
  metrics::Counter bytes_in;
  metrics::Counter records_in;
  metrics::Counter bytes_out;
};

}  // namespace oxbow::broker
