#include "protocol/record_batch.h"

#include <gtest/gtest.h>

#include "common/crc32c.h"
#include "protocol/batch_builder.h"

namespace oxbow::protocol {

using oxbow::protocol::build_batch;

TEST(RecordBatch, ValidBatchesAreSummarised) {
  auto a = build_batch({{"k1", "v1"}, {"k2", "v2", 5}}, 1000);
  auto b = build_batch({{"k3", "v3", 0}}, 2000);
  std::vector<uint8_t> both = a;
  both.insert(both.end(), b.begin(), b.end());
  BatchesSummary s;
  ASSERT_EQ(validate_batches(both, s), ErrorCode::kNone);
  EXPECT_EQ(s.batch_count, 2);
  EXPECT_EQ(s.record_count, 3);
  EXPECT_EQ(s.max_timestamp, 2000);
}

TEST(RecordBatch, CorruptCrcIsRejected) {
  auto a = build_batch({{"k", "value"}});
  a.back() ^= 0x01;
  BatchesSummary s;
  EXPECT_EQ(validate_batches(a, s), ErrorCode::kCorruptMessage);
}

TEST(RecordBatch, TruncatedBatchIsRejected) {
  auto a = build_batch({{"k", "value"}});
  a.pop_back();
  BatchesSummary s;
  EXPECT_EQ(validate_batches(a, s), ErrorCode::kCorruptMessage);
  a.resize(20);
  EXPECT_EQ(validate_batches(a, s), ErrorCode::kCorruptMessage);
}

TEST(RecordBatch, OldMagicIsUnsupported) {
  auto a = build_batch({{"k", "value"}});
  a[kMagicOffset] = 1;
  BatchesSummary s;
  EXPECT_EQ(validate_batches(a, s), ErrorCode::kUnsupportedForMessageFormat);
}

TEST(RecordBatch, InconsistentCountIsInvalidRecord) {
  auto a = build_batch({{"k", "value"}});
  write_i32(a.data() + 57, 1000);  // record_count
  uint32_t crc = crc32c(a.data() + kAttributesOffset, a.size() - kAttributesOffset);
  for (int i = 0; i < 4; ++i) a[kCrcOffset + i] = static_cast<uint8_t>(crc >> (24 - 8 * i));
  BatchesSummary s;
  EXPECT_EQ(validate_batches(a, s), ErrorCode::kInvalidRecord);
}

TEST(RecordBatch, AssignOffsetsKeepsCrcValid) {
  auto a = build_batch({{"k1", "v1"}, {"k2", "v2"}});
  auto b = build_batch({{"k3", "v3"}});
  std::vector<uint8_t> both = a;
  both.insert(both.end(), b.begin(), b.end());
  assign_offsets(both, 100, 3, -1);
  BatchesSummary s;
  ASSERT_EQ(validate_batches(both, s), ErrorCode::kNone);
  auto h1 = read_batch_header(both.data());
  auto h2 = read_batch_header(both.data() + a.size());
  EXPECT_EQ(h1.base_offset, 100);
  EXPECT_EQ(h1.partition_leader_epoch, 3);
  EXPECT_EQ(h2.base_offset, 102);
}

TEST(RecordBatch, LogAppendTimeRewritesTimestampAndCrc) {
  auto a = build_batch({{"k1", "v1"}}, 5);
  assign_offsets(a, 0, 0, 123456);
  BatchesSummary s;
  ASSERT_EQ(validate_batches(a, s), ErrorCode::kNone);
  auto h = read_batch_header(a.data());
  EXPECT_TRUE(h.log_append_time());
  EXPECT_EQ(h.max_timestamp, 123456);
}

TEST(RecordBatch, RebuiltBatchKeepsItsCodec) {
  // A zstd batch of three records, made from an uncompressed one.
  auto plain = build_batch({{"k1", "v1"}, {"k2", std::nullopt, 1}, {"k3", "v3", 2}}, 1000);
  std::string scratch;
  std::vector<RawRecord> records;
  ASSERT_TRUE(parse_raw_records(plain, scratch, records));
  // rebuild_batch reads only the original's header: flagged zstd, it compresses all three.
  std::vector<uint8_t> header(plain.begin(), plain.begin() + kBatchHeaderSize);
  header[kAttributesOffset + 1] |= 4;
  auto zstd_batch = rebuild_batch(header, records);
  ASSERT_EQ(read_batch_header(zstd_batch.data()).codec(), 4);
  EXPECT_LT(zstd_batch.size(), plain.size() + 64);

  std::vector<RawRecord> all;
  ASSERT_TRUE(parse_raw_records(zstd_batch, scratch, all));
  ASSERT_EQ(all.size(), 3u);
  auto rebuilt = rebuild_batch(zstd_batch, {all[0], all[2]});
  EXPECT_EQ(read_batch_header(rebuilt.data()).codec(), 4);
  EXPECT_EQ(read_batch_header(rebuilt.data()).crc,
            crc32c(rebuilt.data() + kAttributesOffset, rebuilt.size() - kAttributesOffset));
  std::string scratch2;
  std::vector<RawRecord> kept;
  ASSERT_TRUE(parse_raw_records(rebuilt, scratch2, kept));
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[0].view.key, "k1");
  EXPECT_EQ(kept[1].view.key, "k3");
  EXPECT_EQ(kept[1].view.offset, 2);
  EXPECT_EQ(kept[1].view.value, "v3");
}

TEST(RecordBatch, ADeleteHorizonKeepsEveryRecordsTimestamp) {
  auto plain = build_batch({{"k1", "v1", 0}, {"k2", std::nullopt, 7}, {"k3", "v3", 30}}, 5000, 40,
                           {42, 3, 17, false});
  std::vector<uint8_t> header(plain.begin(), plain.begin() + kBatchHeaderSize);
  header[kAttributesOffset + 1] |= 4;  // zstd: the records are re-encoded, then compressed
  std::string scratch;
  std::vector<RawRecord> records;
  ASSERT_TRUE(parse_raw_records(plain, scratch, records));
  auto zstd_batch = rebuild_batch(header, records);
  std::vector<RawRecord> all;
  ASSERT_TRUE(parse_raw_records(zstd_batch, scratch, all));
  // A horizon far from the records' times, so that the deltas take more bytes than before.
  int64_t horizon = 5000 + 86'400'000;
  auto stamped = rebuild_batch_with_delete_horizon(zstd_batch, {all[1], all[2]}, horizon);
  auto h = read_batch_header(stamped.data());
  EXPECT_EQ(h.crc, crc32c(stamped.data() + kAttributesOffset, stamped.size() - kAttributesOffset));
  EXPECT_EQ(h.total_size(), stamped.size());
  EXPECT_TRUE(h.has_delete_horizon());
  EXPECT_EQ(h.base_timestamp, horizon);
  EXPECT_EQ(h.codec(), 4);
  EXPECT_EQ(h.max_timestamp, 5030);
  EXPECT_EQ(h.last_offset(), 42);
  EXPECT_EQ(h.producer_id, 42);
  EXPECT_EQ(h.base_sequence, 17);
  std::string scratch2;
  std::vector<RawRecord> kept;
  ASSERT_TRUE(parse_raw_records(stamped, scratch2, kept));
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[0].view.offset, 41);
  EXPECT_EQ(kept[0].view.timestamp, 5007);
  EXPECT_EQ(kept[0].view.key, "k2");
  EXPECT_FALSE(kept[0].view.value);
  EXPECT_EQ(kept[1].view.offset, 42);
  EXPECT_EQ(kept[1].view.timestamp, 5030);
  EXPECT_EQ(kept[1].view.value, "v3");
  EXPECT_EQ(find_record_by_timestamp(stamped, 5008).offset, 42);
  // A later rebuild keeps the horizon.
  auto again = rebuild_batch(stamped, {kept[1]});
  EXPECT_TRUE(read_batch_header(again.data()).has_delete_horizon());
  std::vector<RawRecord> last;
  ASSERT_TRUE(parse_raw_records(again, scratch2, last));
  ASSERT_EQ(last.size(), 1u);
  EXPECT_EQ(last[0].view.timestamp, 5030);
}

}  // namespace oxbow::protocol

namespace oxbow::protocol {

// compression.type: batches stored in the topic's codec keep their header fields and records.
TEST(RecordBatch, RecompressionKeepsHeadersAndRecords) {
  auto plain = build_batch({{"k1", "v1", 0}, {std::nullopt, std::string(500, 'x'), 7}}, 5000, 0,
                           {42, 3, 17, false});
  auto other = build_batch({{"k3", "v3", 0}}, 6000);
  std::vector<uint8_t> both = plain;
  both.insert(both.end(), other.begin(), other.end());
  EXPECT_TRUE(needs_recompression(both, 4));
  EXPECT_FALSE(needs_recompression(both, 0));
  std::vector<uint8_t> zstd;
  ASSERT_TRUE(recompress_batches(both, 4, zstd));
  BatchesSummary s;
  ASSERT_EQ(validate_batches(zstd, s), ErrorCode::kNone);
  EXPECT_EQ(s.batch_count, 2);
  EXPECT_EQ(s.record_count, 3);
  EXPECT_FALSE(needs_recompression(zstd, 4));
  auto h = read_batch_header(zstd.data());
  EXPECT_EQ(h.codec(), 4);
  EXPECT_EQ(h.producer_id, 42);
  EXPECT_EQ(h.producer_epoch, 3);
  EXPECT_EQ(h.base_sequence, 17);
  EXPECT_EQ(h.base_timestamp, 5000);
  EXPECT_LT(h.total_size(), plain.size()) << "500 x's compress";

  std::vector<uint8_t> back;
  ASSERT_TRUE(recompress_batches(zstd, 0, back));
  EXPECT_EQ(back, both) << "uncompressed again, byte for byte";

  std::vector<uint8_t> out;
  auto cut = both;
  cut.resize(both.size() - 3);
  EXPECT_FALSE(recompress_batches(cut, 1, out));
}

}  // namespace oxbow::protocol
