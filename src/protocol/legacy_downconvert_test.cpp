// Down-conversion of v2 batches for Fetch v0-v3 (legacy_messages.h).
#include <gtest/gtest.h>
#include <zlib.h>

#include <optional>
#include <string>

#include "protocol/batch_builder.h"
#include "protocol/compression.h"
#include "protocol/legacy_messages.h"
#include "protocol/record_batch.h"
#include "protocol/wire.h"

namespace oxbow::protocol {
namespace {

struct Message {
  int64_t offset;
  int8_t magic;
  int8_t attributes;
  int64_t timestamp;
  std::optional<std::string> key;
  std::optional<std::string> value;
};

std::optional<std::string> take_bytes(Reader& r) {
  int32_t n = r.i32();
  if (n < 0) return std::nullopt;
  auto bytes = r.take_span(static_cast<size_t>(n));
  return std::string(bytes.begin(), bytes.end());
}

// The entries of a message set, as an old client reads them (checking each CRC).
std::vector<Message> parse(std::span<const uint8_t> set) {
  std::vector<Message> out;
  Reader r(std::span(const_cast<uint8_t*>(set.data()), set.size()));
  while (r.remaining() > 0) {
    Message m;
    m.offset = r.i64();
    auto body = r.take_span(static_cast<size_t>(r.i32()));
    Reader b(body);
    uint32_t crc = b.u32();
    EXPECT_EQ(crc, static_cast<uint32_t>(::crc32(0, body.data() + 4, body.size() - 4)));
    m.magic = b.i8();
    m.attributes = b.i8();
    m.timestamp = m.magic == 1 ? b.i64() : -1;
    m.key = take_bytes(b);
    m.value = take_bytes(b);
    EXPECT_EQ(b.remaining(), 0u);
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<Message> unwrap(const Message& wrapper) {
  std::string inner;
  EXPECT_TRUE(decompress(
      wrapper.attributes & 0x07,
      {reinterpret_cast<const uint8_t*>(wrapper.value->data()), wrapper.value->size()}, inner));
  return parse({reinterpret_cast<const uint8_t*>(inner.data()), inner.size()});
}

std::vector<uint8_t> compressed(const std::vector<uint8_t>& batch, int codec) {
  std::vector<uint8_t> out;
  EXPECT_TRUE(recompress_batches(batch, codec, out));
  return out;
}

std::vector<uint8_t> three_records(int64_t base_offset) {
  return build_batch({{"k0", "v0", 0}, {std::nullopt, "v1", 5}, {"k2", std::nullopt, 9}}, 1000,
                     base_offset);
}

std::vector<uint8_t> downconvert(const std::vector<uint8_t>& batches, int8_t magic,
                                 size_t max_bytes = SIZE_MAX, int64_t first_offset = 0) {
  std::vector<uint8_t> out;
  EXPECT_EQ(downconvert_batches(batches, magic, first_offset, max_bytes, out), ErrorCode::kNone);
  return out;
}

TEST(LegacyDownconvert, FetchVersionsPickTheirMagic) {
  EXPECT_EQ(fetch_magic(0), 0);
  EXPECT_EQ(fetch_magic(1), 0);
  EXPECT_EQ(fetch_magic(2), 1);
  EXPECT_EQ(fetch_magic(3), 1);
  EXPECT_EQ(fetch_magic(4), 2);
}

TEST(LegacyDownconvert, UncompressedRecordsBecomeOneMessageEach) {
  auto messages = parse(downconvert(three_records(40), 1));
  ASSERT_EQ(messages.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(messages[i].offset, 40 + static_cast<int64_t>(i));
    EXPECT_EQ(messages[i].magic, 1);
    EXPECT_EQ(messages[i].attributes, 0);
  }
  EXPECT_EQ(messages[0].key, "k0");
  EXPECT_EQ(messages[0].value, "v0");
  EXPECT_EQ(messages[0].timestamp, 1000);
  EXPECT_FALSE(messages[1].key);
  EXPECT_EQ(messages[1].timestamp, 1005);
  EXPECT_FALSE(messages[2].value);

  auto old = parse(downconvert(three_records(40), 0));
  ASSERT_EQ(old.size(), 3u);
  EXPECT_EQ(old[2].magic, 0);
  EXPECT_EQ(old[2].timestamp, -1);  // magic 0 has none
  EXPECT_EQ(old[2].key, "k2");
}

TEST(LegacyDownconvert, CompressedBatchesBecomeOneWrapper) {
  for (int codec : {1, 2, 3}) {
    auto set = parse(downconvert(compressed(three_records(100), codec), 1));
    ASSERT_EQ(set.size(), 1u) << codec;
    EXPECT_EQ(set[0].offset, 102) << "a wrapper carries its last record's offset";
    EXPECT_EQ(set[0].attributes & 0x07, codec);
    EXPECT_FALSE(set[0].key);
    EXPECT_EQ(set[0].timestamp, 1009);
    auto inner = unwrap(set[0]);
    ASSERT_EQ(inner.size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(inner[i].offset, static_cast<int64_t>(i)) << "magic 1 offsets are relative";
      EXPECT_EQ(inner[i].attributes, 0);
    }
    EXPECT_EQ(inner[0].value, "v0");
    EXPECT_EQ(inner[1].timestamp, 1005);
  }
  // Magic 0: absolute inner offsets; lz4 goes uncompressed, as magic 0's lz4 framing was broken.
  auto gzip0 = parse(downconvert(compressed(three_records(100), 1), 0));
  ASSERT_EQ(gzip0.size(), 1u);
  EXPECT_EQ(unwrap(gzip0[0])[1].offset, 101);
  auto lz4_0 = parse(downconvert(compressed(three_records(100), 3), 0));
  ASSERT_EQ(lz4_0.size(), 3u);
  EXPECT_EQ(lz4_0[2].offset, 102);
  EXPECT_EQ(lz4_0[2].attributes, 0);
}

TEST(LegacyDownconvert, UncompressedMessagesBeforeTheFetchOffsetAreLeftOut) {
  auto from_middle = parse(downconvert(three_records(10), 1, SIZE_MAX, 11));
  ASSERT_EQ(from_middle.size(), 2u);
  EXPECT_EQ(from_middle[0].offset, 11);
  // A wrapper goes whole: its reader skips what it did not ask for.
  auto wrapper = parse(downconvert(compressed(three_records(10), 1), 1, SIZE_MAX, 11));
  ASSERT_EQ(wrapper.size(), 1u);
  EXPECT_EQ(unwrap(wrapper[0]).size(), 3u);
}

TEST(LegacyDownconvert, LogAppendTimeStampsEveryMessage) {
  auto batch = compressed(three_records(0), 1);
  auto attributes = static_cast<int16_t>(1 | kTimestampTypeBit);
  write_i16(batch.data() + kAttributesOffset, attributes);
  write_i64(batch.data() + kMaxTimestampOffset, 777777);
  auto set = parse(downconvert(batch, 1));
  ASSERT_EQ(set.size(), 1u);
  EXPECT_EQ(set[0].attributes, 1 | 0x08);
  EXPECT_EQ(set[0].timestamp, 777777);
  for (const auto& m : unwrap(set[0])) EXPECT_EQ(m.timestamp, 777777);
}

TEST(LegacyDownconvert, ControlBatchesPartialBatchesAndTheLimit) {
  auto marker = build_control_batch({7, 0, -1, true}, ControlType::kCommit, 0, 2000);
  write_i64(marker.data(), 3);
  auto second = three_records(4);
  std::vector<uint8_t> log;
  for (const auto& part : {three_records(0), marker, second})
    log.insert(log.end(), part.begin(), part.end());
  auto all = parse(downconvert(log, 1));
  ASSERT_EQ(all.size(), 6u) << "the marker is not a message";
  EXPECT_EQ(all[3].offset, 4);

  // A batch cut short by the read's limit is left out.
  std::vector<uint8_t> cut(log.begin(), log.end() - 5);
  EXPECT_EQ(parse(downconvert(cut, 1)).size(), 3u);

  // Past max_bytes only the first batch's messages go out, however large.
  EXPECT_EQ(parse(downconvert(log, 1, 10)).size(), 3u);
  size_t first_batch = downconvert(three_records(0), 1).size();
  EXPECT_EQ(parse(downconvert(log, 1, first_batch * 2)).size(), 6u);
}

TEST(LegacyDownconvert, ZstdHasNoOlderFormat) {
  std::vector<uint8_t> out;
  EXPECT_EQ(downconvert_batches(compressed(three_records(0), 4), 1, 0, SIZE_MAX, out),
            ErrorCode::kUnsupportedCompressionType);
  auto garbage = three_records(0);
  garbage.back() ^= 0x55;
  write_i16(garbage.data() + kAttributesOffset, 1);  // "gzip" that is not
  EXPECT_EQ(downconvert_batches(garbage, 1, 0, SIZE_MAX, out), ErrorCode::kCorruptMessage);
}

}  // namespace
}  // namespace oxbow::protocol
