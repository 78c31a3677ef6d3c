#pragma once
// Source offsets kept in a file (a standalone worker's offset.storage.file.filename). Each entry
// is keyed as Connect keys offsets, ["CONNECTOR", {partition}], with the offset map as its value,
// both as JsonConverter writes them without schemas. Kafka's file holds the same keys and values
// inside Java serialization; this one is a JSON document, rewritten whole (to a temporary file
// renamed over the old one) at each flush, so a crash leaves the old offsets or the new ones.
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "oxbow/connect/source.h"

namespace oxbow::connect::runtime {

// Where source offsets are kept: a file (standalone) or the offsets topic (distributed).
class OffsetBackingStore {
 public:
  virtual ~OffsetBackingStore() = default;
  virtual std::optional<ValueMap> offset(const std::string& connector,
                                         const ValueMap& partition) const = 0;
  // Keeps the offsets durably before it returns; ConnectException when it cannot.
  virtual void commit(const std::string& connector,
                      const std::vector<std::pair<ValueMap, ValueMap>>& offsets) = 0;
  // Every partition of the connector with its offset (GET /connectors/NAME/offsets).
  virtual std::vector<std::pair<ValueMap, ValueMap>> connectorOffsets(
      const std::string& connector) const = 0;
  // Sets the offsets, removing a partition's when its offset is nullopt (KIP-875's alter and
  // reset).
  virtual void alter(const std::string& connector, const SourceOffsets& offsets) = 0;
};

class FileOffsetStore : public OffsetBackingStore {
 public:
  // Reads the file when it exists; ConnectException when it exists and cannot be read.
  explicit FileOffsetStore(std::string path);

  std::optional<ValueMap> offset(const std::string& connector,
                                 const ValueMap& partition) const override;
  // Sets the offsets and writes the whole file.
  void commit(const std::string& connector,
              const std::vector<std::pair<ValueMap, ValueMap>>& offsets) override;
  std::vector<std::pair<ValueMap, ValueMap>> connectorOffsets(
      const std::string& connector) const override;
  // Writes the whole file.
  void alter(const std::string& connector, const SourceOffsets& offsets) override;
  size_t size() const;

 private:
  void load();
  void save() const;
  std::string path_;
  mutable std::mutex mutex_;
  std::map<std::string, std::string> entries_;  // key bytes -> value bytes
};

// What a connector's source tasks read their committed offsets through.
class StoreOffsetReader : public OffsetStorageReader {
 public:
  StoreOffsetReader(const OffsetBackingStore& store, std::string connector)
      : store_(store), connector_(std::move(connector)) {}
  std::optional<ValueMap> offset(const ValueMap& partition) override {
    return store_.offset(connector_, partition);
  }

 private:
  const OffsetBackingStore& store_;
  std::string connector_;
};

}  // namespace oxbow::connect::runtime
