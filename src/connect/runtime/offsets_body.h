#pragma once
// KIP-875's offsets bodies, {"offsets":[{"partition":{...},"offset":{...}},...]}, read and written
// as Connect's ConnectorOffsets entity does, and a sink's partitions and offsets as Connect's
// SinkUtils spells them ({"kafka_topic","kafka_partition"} and {"kafka_offset"}).
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "oxbow/connect/sink.h"
#include "oxbow/connect/source.h"

namespace oxbow::connect::runtime {

// One entry of a request: nullopt for a partition given as null or not at all, and for an offset
// given so (which asks to remove the partition's offset).
struct OffsetEntry {
  std::optional<ValueMap> partition;
  std::optional<ValueMap> offset;
};

// The entries of a PATCH body: BadRequestException (400) when it is not that shape or has no
// entries; DataException when a partition or offset holds a non-primitive value, as Connect's
// OffsetUtils refuses them.
std::vector<OffsetEntry> parseOffsetsBody(const std::string& body);

// A source connector's entries; BadRequestException for a null partition.
SourceOffsets sourceOffsets(const std::vector<OffsetEntry>& entries);

// A sink connector's entries, as consumer group offsets (nullopt: delete the partition's);
// BadRequestException with SinkUtils' messages for a partition or offset not in its shape.
std::map<TopicPartition, std::optional<int64_t>> sinkOffsets(
    const std::vector<OffsetEntry>& entries);

// GET's body from a source connector's stored offsets.
nlohmann::ordered_json offsetsJson(const std::vector<std::pair<ValueMap, ValueMap>>& offsets);
// GET's body from a sink connector's group offsets.
nlohmann::ordered_json sinkOffsetsJson(const std::map<TopicPartition, int64_t>& offsets);

}  // namespace oxbow::connect::runtime
