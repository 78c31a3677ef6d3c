#pragma once
// Source connectors and tasks (org.apache.kafka.connect.source): a source task polls its system
// for records, each carrying its source partition and offset, which the runtime stores so that a
// restarted task reads them back through the OffsetStorageReader and resumes where it was.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "oxbow/connect/connector.h"
#include "oxbow/connect/record.h"

namespace oxbow::connect {

// The source offsets the runtime has committed (storage.OffsetStorageReader). Partitions and
// offsets are maps of strings to primitive values, as Connect's.
class OffsetStorageReader {
 public:
  virtual ~OffsetStorageReader() = default;
  // The last committed offset of that source partition; nullopt when it has none.
  virtual std::optional<ValueMap> offset(const ValueMap& partition) = 0;
  // The offsets of those partitions that have one, as (partition, offset) pairs: a partition
  // whose offset could not be read is left out rather than failing the rest.
  virtual std::vector<std::pair<ValueMap, ValueMap>> offsets(
      const std::vector<ValueMap>& partitions);
};

// Transaction boundaries a connector defines itself (KIP-618's transaction.boundary=connector).
class TransactionContext {
 public:
  virtual ~TransactionContext() = default;
  // Commit after the next batch of records is sent / after this record.
  virtual void commitTransaction() = 0;
  virtual void commitTransaction(const SourceRecord& record) = 0;
  virtual void abortTransaction() = 0;
  virtual void abortTransaction(const SourceRecord& record) = 0;
};

class SourceConnectorContext : public ConnectorContext {
 public:
  virtual OffsetStorageReader& offsetStorageReader() = 0;
};

class SourceTaskContext {
 public:
  virtual ~SourceTaskContext() = default;
  // The task's latest config, which may differ from start()'s once secrets are re-resolved.
  virtual Props configs() const = 0;
  virtual OffsetStorageReader& offsetStorageReader() = 0;
  // Null unless the connector defines its own transaction boundaries.
  virtual TransactionContext* transactionContext() { return nullptr; }
};

// Where the producer wrote a record (the producer's RecordMetadata).
struct RecordMetadata {
  std::string topic{};
  int32_t partition = -1;
  std::optional<int64_t> offset{};
  std::optional<int64_t> timestamp{};
};

class SourceTask : public Task {
 public:
  static constexpr std::string_view TRANSACTION_BOUNDARY_CONFIG = "transaction.boundary";
  enum class TransactionBoundary { POLL, INTERVAL, CONNECTOR };
  static constexpr TransactionBoundary DEFAULT_TRANSACTION_BOUNDARY = TransactionBoundary::POLL;
  // Case-insensitive and trimmed, as Kafka's fromProperty; ConnectException for another word.
  static TransactionBoundary transactionBoundaryFromProperty(std::string_view property);
  // "poll", "interval", "connector".
  static std::string_view toString(TransactionBoundary boundary);

  virtual void initialize(SourceTaskContext& context) { context_ = &context; }
  // The records available now, perhaps after blocking a short while; empty when there are none.
  // Called repeatedly from one thread; stop() may be called from another to end a wait.
  virtual std::vector<SourceRecord> poll() = 0;
  // The offsets of the records polled so far have been committed (by default nothing to do).
  virtual void commit() {}
  // A record was written (metadata set) or dropped by a transform or error tolerance (nullopt).
  virtual void commitRecord(const SourceRecord& /*record*/,
                            const std::optional<RecordMetadata>& /*metadata*/) {}

 protected:
  // Null until initialize().
  SourceTaskContext* context() const { return context_; }

 private:
  SourceTaskContext* context_ = nullptr;
};

enum class ExactlyOnceSupport { SUPPORTED, UNSUPPORTED };
enum class ConnectorTransactionBoundaries { SUPPORTED, UNSUPPORTED };

// Source partitions with their new offsets, nullopt for a partition whose offset is reset.
using SourceOffsets = std::vector<std::pair<ValueMap, std::optional<ValueMap>>>;

class SourceConnector : public Connector {
 public:
  // Whether the connector can run exactly-once with that config; nullopt (the default) if it
  // does not say, which the runtime treats as unsupported.
  virtual std::optional<ExactlyOnceSupport> exactlyOnceSupport(const Props& /*connectorConfig*/) {
    return std::nullopt;
  }
  // Asked only when the config sets transaction.boundary=connector.
  virtual ConnectorTransactionBoundaries canDefineTransactionBoundaries(
      const Props& /*connectorConfig*/) {
    return ConnectorTransactionBoundaries::UNSUPPORTED;
  }
  // Told of offsets an operator alters or resets through the REST API (KIP-875), perhaps before
  // start(); throws ConnectException to refuse them. Returns whether the connector checked them:
  // false, the default, means it does not know how.
  virtual bool alterOffsets(const Props& /*connectorConfig*/, const SourceOffsets& /*offsets*/) {
    return false;
  }

 protected:
  // Null until initialize(), or when the runtime gave a context without offsets.
  SourceConnectorContext* sourceContext() const {
    return dynamic_cast<SourceConnectorContext*>(context());
  }
};

}  // namespace oxbow::connect
