#include "protocol/legacy_messages.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <optional>
#include <string>

#include "protocol/batch_builder.h"
#include "protocol/compression.h"
#include "protocol/record_batch.h"
#include "protocol/wire.h"

namespace oxbow::protocol {
namespace {

void put_bytes(Writer& w, const std::optional<std::string>& bytes) {
  if (!bytes) {
    w.i32(-1);
    return;
  }
  w.i32(static_cast<int32_t>(bytes->size()));
  w.raw(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size());
}

// One message set entry as a pre-0.11 client writes it.
std::vector<uint8_t> entry(int8_t magic, int8_t attributes, int64_t timestamp,
                           const std::optional<std::string>& key,
                           const std::optional<std::string>& value) {
  Writer body;
  body.i8(magic);
  body.i8(attributes);
  if (magic == 1) body.i64(timestamp);
  put_bytes(body, key);
  put_bytes(body, value);
  const auto& b = body.buffer();
  Writer out;
  out.i64(0);
  out.i32(static_cast<int32_t>(b.size() + 4));
  out.u32(static_cast<uint32_t>(::crc32(0, b.data(), static_cast<uInt>(b.size()))));
  out.raw(b.data(), b.size());
  return out.buffer();
}

std::vector<uint8_t> concat(std::initializer_list<std::vector<uint8_t>> parts) {
  std::vector<uint8_t> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

struct Converted {
  BatchHeader header;
  std::vector<RawRecord> records;
  std::string scratch;
  std::vector<uint8_t> batch;
};

Converted convert(const std::vector<uint8_t>& set) {
  Converted c;
  EXPECT_EQ(upconvert_legacy_message_set(set, c.batch), ErrorCode::kNone);
  BatchesSummary summary;
  EXPECT_EQ(validate_batches(c.batch, summary), ErrorCode::kNone);
  c.header = read_batch_header(c.batch.data());
  EXPECT_TRUE(parse_raw_records(c.batch, c.scratch, c.records));
  return c;
}

TEST(LegacyMessages, MagicZeroBecomesOneBatchWithoutTimestamps) {
  auto set = concat({entry(0, 0, -1, "k1", "v1"), entry(0, 0, -1, std::nullopt, "v2"),
                     entry(0, 0, -1, "k3", std::nullopt)});
  EXPECT_TRUE(is_legacy_message_set(set));
  auto c = convert(set);
  EXPECT_EQ(c.header.magic, 2);
  EXPECT_EQ(c.header.codec(), 0);
  EXPECT_EQ(c.header.producer_id, -1);
  EXPECT_EQ(c.header.max_timestamp, -1);
  ASSERT_EQ(c.records.size(), 3u);
  EXPECT_EQ(c.records[0].view.key, "k1");
  EXPECT_EQ(c.records[0].view.value, "v1");
  EXPECT_FALSE(c.records[1].view.key);
  EXPECT_FALSE(c.records[2].view.value);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(c.records[static_cast<size_t>(i)].view.offset, i);
    EXPECT_EQ(c.records[static_cast<size_t>(i)].view.timestamp, -1);
  }
}

TEST(LegacyMessages, MagicOneKeepsItsTimestamps) {
  auto c = convert(concat(
      {entry(1, 0, 5000, "a", "1"), entry(1, 0, 4000, "b", "2"), entry(1, 0, 9000, "c", "3")}));
  EXPECT_EQ(c.header.base_timestamp, 5000);
  EXPECT_EQ(c.header.max_timestamp, 9000);
  ASSERT_EQ(c.records.size(), 3u);
  EXPECT_EQ(c.records[1].view.timestamp, 4000);
  EXPECT_EQ(c.records[2].view.timestamp, 9000);
}

TEST(LegacyMessages, CompressedWrappersKeepTheirCodec) {
  auto inner = concat({entry(1, 0, 7000, "x", "first"), entry(1, 0, 7001, "y", "second")});
  std::string packed;
  ASSERT_TRUE(compress(1, inner, packed));
  auto wrapper = entry(1, 1, 7001, std::nullopt, packed);
  auto c = convert(concat({wrapper, entry(1, 0, 7002, "z", "plain")}));
  EXPECT_EQ(c.header.codec(), 1);
  ASSERT_EQ(c.records.size(), 3u);
  EXPECT_EQ(c.records[0].view.value, "first");
  EXPECT_EQ(c.records[1].view.key, "y");
  EXPECT_EQ(c.records[2].view.value, "plain");
  EXPECT_EQ(c.records[2].view.timestamp, 7002);

  // A LogAppendTime wrapper stamps its records with its own time.
  auto stamped = entry(1, 1 | 0x08, 123456, std::nullopt, packed);
  auto s = convert(stamped);
  EXPECT_EQ(s.records[0].view.timestamp, 123456);
  EXPECT_EQ(s.records[1].view.timestamp, 123456);
}

TEST(LegacyMessages, BadInputIsRefused) {
  std::vector<uint8_t> out;
  auto good = entry(1, 0, 1, "k", "v");
  auto bad_crc = good;
  bad_crc.back() ^= 1;
  EXPECT_EQ(upconvert_legacy_message_set(bad_crc, out), ErrorCode::kCorruptMessage);
  auto truncated = std::vector<uint8_t>(good.begin(), good.end() - 3);
  EXPECT_EQ(upconvert_legacy_message_set(truncated, out), ErrorCode::kCorruptMessage);
  auto trailing = concat({good, {0, 0, 0}});
  EXPECT_EQ(upconvert_legacy_message_set(trailing, out), ErrorCode::kCorruptMessage);
  auto not_compressed = entry(1, 1, 1, std::nullopt, std::string("not gzip"));
  EXPECT_EQ(upconvert_legacy_message_set(not_compressed, out), ErrorCode::kCorruptMessage);

  std::string packed;
  auto inner_wrapper = entry(1, 1, 1, std::nullopt, std::string("x"));
  ASSERT_TRUE(compress(1, inner_wrapper, packed));
  EXPECT_EQ(upconvert_legacy_message_set(entry(1, 1, 1, std::nullopt, packed), out),
            ErrorCode::kUnsupportedForMessageFormat);  // nested compression
  EXPECT_EQ(upconvert_legacy_message_set(entry(0, 3, -1, std::nullopt, std::string("x")), out),
            ErrorCode::kUnsupportedForMessageFormat);  // magic 0 lz4
  EXPECT_EQ(upconvert_legacy_message_set(entry(1, 5, 1, std::nullopt, std::string("x")), out),
            ErrorCode::kUnsupportedForMessageFormat);  // no such codec

  // A compression bomb: more than a produce could honestly carry, once inflated.
  std::string bomb;
  ASSERT_TRUE(compress(1, entry(1, 0, 1, std::nullopt, std::string(65 << 20, 'a')), bomb));
  EXPECT_EQ(upconvert_legacy_message_set(entry(1, 1, 1, std::nullopt, bomb), out),
            ErrorCode::kCorruptMessage);

  EXPECT_FALSE(is_legacy_message_set(build_batch({{"k", "v", 0}})));
}

}  // namespace
}  // namespace oxbow::protocol
