// libFuzzer target: records of `__consumer_offsets` as a broker reads them back at start-up,
// where a damaged or foreign log must give a refused record, never a crash, a hang or an
// allocation the bytes do not justify. The input is a list of (key, value) records; each is
// taken as an offset commit, a classic group and a consumer-group record. Whatever decodes is
// restored into a group, snapshotted, encoded and decoded again, which must succeed.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdlib>

#include "group/classic_group_records.h"
#include "group/consumer_group_records.h"
#include "group/offset_records.h"

using namespace oxbow::group;

namespace {

void require(bool condition) {
  if (!condition) std::abort();
}

void take_offset_record(const std::string& key, const std::string& value) {
  if (auto decoded = decode_offset_key(key))
    require(decode_offset_key(encode_offset_key(*decoded)).has_value());
  if (auto decoded = decode_offset_value(value)) {
    require(decode_offset_value(encode_offset_value(*decoded)).has_value());
  }
}

void take_classic_group(const std::string& key, const std::string& value) {
  auto group_id = classic_group_of_key(key);
  auto snapshot = decode_classic_group_value(value);
  if (!group_id || !snapshot) return;
  auto group = Group::restore(*group_id, 0, *snapshot, 0);
  if (auto again = group.snapshot()) {
    require(decode_classic_group_value(encode_classic_group_value(*again)).has_value());
  }
}

void take_consumer_group(const GroupRecords& records) {
  auto snapshot = consumer_group_from_records(records);
  if (!snapshot) return;
  auto group = ConsumerGroup::restore("group", *snapshot, ConsumerGroupOptions{}, 0);
  require(
      consumer_group_from_records(consumer_group_records(group.snapshot(), "group")).has_value());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider input(data, size);
  GroupRecords consumer_records;
  while (input.remaining_bytes() > 0) {
    auto key = input.ConsumeRandomLengthString(256);
    auto value = input.ConsumeRandomLengthString(4096);
    take_offset_record(key, value);
    take_classic_group(key, value);
    if (consumer_group_of_key(key)) consumer_records[key] = value;
  }
  take_consumer_group(consumer_records);
  return 0;
}
