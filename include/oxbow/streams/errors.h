#pragma once
// The library's exceptions, named as Kafka Streams' are.
#include <stdexcept>
#include <string>

namespace oxbow::streams {

// A topology that cannot run as built (Kafka's TopologyException): a serde missing where bytes are
// written, a name used twice, a store that does not exist. The message names the node.
class TopologyException : public std::runtime_error {
 public:
  explicit TopologyException(const std::string& what)
      : std::runtime_error("Invalid topology: " + what) {}
};

// Processing failed (Kafka's StreamsException): a record the deserialization-exception handler
// chose to fail on, or an exception from user code, with the task and record named.
class StreamsException : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace oxbow::streams
