#pragma once
// Source offsets in the offsets topic (offset.storage.topic), as Kafka's KafkaOffsetBackingStore
// keeps them: keyed ["CONNECTOR",{partition}] with the offset map as the value, both as
// JsonConverter writes them without schemas; a tombstone removes a partition's offset.
#include <map>
#include <mutex>
#include <string>

#include "connect/runtime/distributed/kafka_based_log.h"
#include "connect/runtime/offset_store.h"

namespace oxbow::connect::runtime::distributed {

namespace offset_records {

std::string key(const std::string& connector, const ValueMap& partition);
std::string value(const ValueMap& offset);
// The same bytes our converter writes for the JSON `text` (a Java worker may order a map's
// entries otherwise), or nullopt when it is not JSON.
std::optional<std::string> canonical(const std::string& text);
// The partition of a ["CONNECTOR",{partition}] key, nullopt for any other key or connector.
std::optional<ValueMap> partitionOf(const std::string& key, const std::string& connector);
// An offset map, nullopt when the value is not a JSON object.
std::optional<ValueMap> offsetOf(const std::string& value);

}  // namespace offset_records

class KafkaOffsetBackingStore : public OffsetBackingStore {
 public:
  KafkaOffsetBackingStore(const WorkerConfig& worker, TopicSettings topic);
  void start();
  void stop();

  // Read to the topic's end first, as Kafka's store reads (ConnectException on timeout).
  std::optional<ValueMap> offset(const std::string& connector,
                                 const ValueMap& partition) const override;
  // Returns once the broker acknowledged every record.
  void commit(const std::string& connector,
              const std::vector<std::pair<ValueMap, ValueMap>>& offsets) override;
  std::vector<std::pair<ValueMap, ValueMap>> connectorOffsets(
      const std::string& connector) const override;
  // Acknowledged and read back.
  void alter(const std::string& connector, const SourceOffsets& offsets) override;

 private:
  void consumed(const std::string& key, const std::optional<std::string>& value);

  mutable KafkaBasedLog log_;
  mutable std::mutex mutex_;
  std::map<std::string, std::string> entries_;  // canonical key bytes -> value bytes
};

}  // namespace oxbow::connect::runtime::distributed
