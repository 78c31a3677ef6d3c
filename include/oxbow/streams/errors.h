#pragma once
// The library's exceptions, named as Kafka Streams' are, and the production- and
// processing-exception handlers' types.
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "oxbow/streams/record.h"

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

// Where a processing error happened (Kafka's ErrorHandlerContext, KIP-1033): the input record the
// task was processing (its topic, partition, offset, headers and timestamp), the node whose
// processor threw and the task ("<sub-topology>_<partition>"). For a punctuator there is no input
// record: the topic is empty, partition and offset -1, no headers, and the timestamp is the
// punctuation's time. Views of the task's own data, valid during the handler's call only.
class ErrorHandlerContext {
 public:
  ErrorHandlerContext(std::string_view topic, int32_t partition, int64_t offset,
                      const Headers* headers, std::string_view processor_node_id,
                      std::string_view task_id, int64_t timestamp)
      : topic_(topic),
        partition_(partition),
        offset_(offset),
        headers_(headers),
        processor_node_id_(processor_node_id),
        task_id_(task_id),
        timestamp_(timestamp) {}

  std::string_view topic() const { return topic_; }
  int32_t partition() const { return partition_; }
  int64_t offset() const { return offset_; }
  const Headers& headers() const {
    static const Headers kNone;
    return headers_ ? *headers_ : kNone;
  }
  std::string_view processorNodeId() const { return processor_node_id_; }
  std::string_view taskId() const { return task_id_; }
  int64_t timestamp() const { return timestamp_; }

 private:
  std::string_view topic_;
  int32_t partition_;
  int64_t offset_;
  const Headers* headers_;
  std::string_view processor_node_id_;
  std::string_view task_id_;
  int64_t timestamp_;
};

enum class ProcessingExceptionHandlerResponse { FAIL, CONTINUE };

// Asked, on the stream thread, about an exception a processor threw (a DSL callable such as a
// mapValues lambda or an aggregator, a Processor's process, a punctuator), as Kafka's
// processing.exception.handler. `record` is the record as the failing node received it (a table
// node's: the key and the change's new value), null for a punctuator; its key and value are the
// untyped Datums the node took. CONTINUE drops that record at that node (counted in the task's
// dropped-records) and goes on with the next; FAIL fails the thread as an exception in user code
// always did. An exception the handler itself throws counts as FAIL. Deserialization and
// production errors have handlers of their own and never come here.
using ProcessingExceptionHandler = std::function<ProcessingExceptionHandlerResponse(
    const ErrorHandlerContext& context, const Record* record, const std::exception& exception)>;

// The built-ins, as processing.exception.handler names them: both log the error (with its node,
// task and input record's position); the first answers FAIL (the default), the second CONTINUE.
ProcessingExceptionHandlerResponse LogAndFailProcessingExceptionHandler(
    const ErrorHandlerContext& context, const Record* record, const std::exception& exception);
ProcessingExceptionHandlerResponse LogAndContinueProcessingExceptionHandler(
    const ErrorHandlerContext& context, const Record* record, const std::exception& exception);

}  // namespace oxbow::streams
