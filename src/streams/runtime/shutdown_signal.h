#pragma once
// SHUTDOWN_APPLICATION across the instances of an application. Kafka Streams carries the request
// in its assignor's data at the next rebalance; librdkafka 2.0.2 gives no hook for that data, so
// instances signal through a topic of their own, `<application.id>-shutdown-requests` (one
// partition, records kept a day): a request is a record (key: the requesting process id, value:
// the failure's text), and every instance watches the topic's end offset, which moves past what
// it was when the instance started. Plain produce and ListOffsets: any Kafka broker serves it.
#include <cstdint>
#include <string>

#include "streams/runtime/kafka_clients.h"

namespace oxbow::streams::detail {

class ShutdownSignal {
 public:
  // Creates the topic when missing and notes its end offset; throws when the cluster cannot.
  ShutdownSignal(const Config& app, const std::string& application_id, int32_t replication_factor);

  const std::string& topic() const { return topic_; }
  // Writes a request and waits for its acknowledgement (up to 10 s); false when it failed.
  bool request(const std::string& process_id, const std::string& reason);
  // Whether a request was written since this instance started (one ListOffsets round trip).
  bool requested();

 private:
  RdKafkaHandle client_;
  std::string topic_;
  int64_t end_at_start_ = 0;
};

}  // namespace oxbow::streams::detail
