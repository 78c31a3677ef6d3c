#pragma once
// The library's exceptions, named as Kafka Streams' are, and the production-exception handler's
// types.
#include <cstdint>
#include <functional>
#include <optional>
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

// Interactive queries (Kafka's org.apache.kafka.streams.errors): a store that cannot be queried
// now. Kafka throws the base class for most causes (not RUNNING or REBALANCING, a store migrated
// or restoring, a type that does not match); its subclasses for the three below.
class InvalidStateStoreException : public StreamsException {
 public:
  using StreamsException::StreamsException;
};
// KafkaStreams::store() before start().
class StreamsNotStartedException : public InvalidStateStoreException {
 public:
  using InvalidStateStoreException::InvalidStateStoreException;
};
// No queryable store of that name in the topology.
class UnknownStateStoreException : public InvalidStateStoreException {
 public:
  using InvalidStateStoreException::InvalidStateStoreException;
};
// StoreQueryParameters::withPartition names a partition this instance does not host.
class InvalidStateStorePartitionException : public InvalidStateStoreException {
 public:
  using InvalidStateStoreException::InvalidStateStoreException;
};

// An output or repartition record the producer could not write (too large, rejected by the
// broker, timed out), as a ProductionExceptionHandler sees it.
struct ProductionError {
  std::string topic;
  int32_t partition = -1;                 // -1 when it failed before a partition was chosen
  std::optional<std::string> key, value;  // the serialized bytes
  std::string error;                      // the client's text
};

enum class ProductionExceptionHandlerResponse { FAIL, CONTINUE };

// Called on the stream thread for each record it could not write (with several threads, from
// each of them); CONTINUE skips the record (logged and counted), FAIL fails the thread. An
// exception it throws counts as FAIL.
using ProductionExceptionHandler =
    std::function<ProductionExceptionHandlerResponse(const ProductionError& error)>;

}  // namespace oxbow::streams
