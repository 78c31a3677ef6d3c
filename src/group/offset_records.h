#pragma once
// Committed offsets as records of the internal topic `__consumer_offsets`, in Kafka's formats, so
// the log stays readable by Kafka tooling:
//   key   (version 1): version int16, group string, topic string, partition int32
//   value (version 3): version int16, offset int64, leader_epoch int32, metadata string,
//                      commit_timestamp int64
// A record with a null value (tombstone) deletes the key. Keys of other versions are the groups'
// own records (classic_group_records.h, consumer_group_records.h).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace oxbow::group {

struct OffsetRecordKey {
  std::string group;
  std::string topic;
  int32_t partition = 0;
};

struct OffsetRecordValue {
  int64_t offset = -1;
  int32_t leader_epoch = -1;
  std::string metadata;
  int64_t commit_timestamp_ms = -1;
};

std::string encode_offset_key(const OffsetRecordKey& key);
std::string encode_offset_value(const OffsetRecordValue& value);
std::optional<OffsetRecordKey> decode_offset_key(std::string_view bytes);
std::optional<OffsetRecordValue> decode_offset_value(std::string_view bytes);

// Kafka's partition for a group: abs(Java String.hashCode(group)) % partitions.
int32_t offsets_partition_for(const std::string& group, int32_t partitions);

}  // namespace oxbow::group
