#include "group/offset_records.h"

#include <vector>

#include "common/keyed_log.h"
#include "protocol/wire.h"

namespace oxbow::group {

namespace pr = oxbow::protocol;

namespace {}  // namespace

std::string encode_offset_key(const OffsetRecordKey& key) {
  pr::Writer w;
  w.i16(1);
  w.string(key.group, false);
  w.string(key.topic, false);
  w.i32(key.partition);
  return w.str();
}

std::string encode_offset_value(const OffsetRecordValue& value) {
  pr::Writer w;
  w.i16(3);
  w.i64(value.offset);
  w.i32(value.leader_epoch);
  w.string(value.metadata, false);
  w.i64(value.commit_timestamp_ms);
  return w.str();
}

std::optional<OffsetRecordKey> decode_offset_key(std::string_view bytes) {
  std::vector<uint8_t> copy(bytes.begin(), bytes.end());
  pr::Reader r(copy);
  try {
    int16_t version = r.i16();
    if (version != 0 && version != 1) return std::nullopt;
    OffsetRecordKey key;
    key.group = r.string(false);
    key.topic = r.string(false);
    key.partition = r.i32();
    return key;
  } catch (const pr::DecodeError&) {
    return std::nullopt;
  }
}

std::optional<OffsetRecordValue> decode_offset_value(std::string_view bytes) {
  std::vector<uint8_t> copy(bytes.begin(), bytes.end());
  pr::Reader r(copy);
  try {
    int16_t version = r.i16();
    OffsetRecordValue value;
    value.offset = r.i64();
    if (version >= 3) value.leader_epoch = r.i32();
    value.metadata = r.string(false);
    value.commit_timestamp_ms = r.i64();
    return value;
  } catch (const pr::DecodeError&) {
    return std::nullopt;
  }
}

int32_t offsets_partition_for(const std::string& group, int32_t partitions) {
  return partition_for_key(group, partitions);
}

}  // namespace oxbow::group
