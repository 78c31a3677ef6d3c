#include "protocol/testing/batch_builder.h"

#include "common/crc32c.h"
#include "protocol/record_batch.h"
#include "protocol/wire.h"

namespace oxbow::protocol::testing {

std::vector<uint8_t> build_batch(const std::vector<TestRecord>& records, int64_t base_timestamp,
                                 int64_t base_offset) {
  Writer body;
  int64_t max_ts = base_timestamp;
  for (size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    Writer rec;
    rec.i8(0);  // attributes
    rec.varlong(r.timestamp_delta);
    rec.varint(static_cast<int32_t>(i));
    rec.varint(static_cast<int32_t>(r.key.size()));
    rec.raw(r.key.data(), r.key.size());
    rec.varint(static_cast<int32_t>(r.value.size()));
    rec.raw(r.value.data(), r.value.size());
    rec.varint(0);  // headers
    body.varint(static_cast<int32_t>(rec.buffer().size()));
    body.raw(rec.buffer().data(), rec.buffer().size());
    max_ts = std::max(max_ts, base_timestamp + r.timestamp_delta);
  }
  Writer batch;
  batch.i64(base_offset);
  batch.i32(static_cast<int32_t>(kBatchHeaderSize - kBatchLogOverhead + body.buffer().size()));
  batch.i32(0);   // leader epoch
  batch.i8(2);    // magic
  batch.u32(0);   // crc, patched below
  batch.i16(0);   // attributes
  batch.i32(static_cast<int32_t>(records.size()) - 1);
  batch.i64(base_timestamp);
  batch.i64(max_ts);
  batch.i64(-1);  // producer id
  batch.i16(-1);
  batch.i32(-1);
  batch.i32(static_cast<int32_t>(records.size()));
  batch.raw(body.buffer().data(), body.buffer().size());
  auto& bytes = batch.buffer();
  uint32_t crc = crc32c(bytes.data() + kAttributesOffset, bytes.size() - kAttributesOffset);
  for (int i = 0; i < 4; ++i) bytes[kCrcOffset + i] = static_cast<uint8_t>(crc >> (24 - 8 * i));
  return bytes;
}

}  // namespace oxbow::protocol::testing
