#include "protocol/wire.h"

#include <gtest/gtest.h>

namespace oxbow::protocol {

std::vector<uint8_t> encoded(auto&& write) {
  Writer w;
  write(w);
  return w.buffer();
}

TEST(Wire, VarintsMatchProtobufEncoding) {
  EXPECT_EQ(encoded([](Writer& w) { w.uvarint(300); }), (std::vector<uint8_t>{0xac, 0x02}));
  EXPECT_EQ(encoded([](Writer& w) { w.varint(-1); }), (std::vector<uint8_t>{0x01}));
  EXPECT_EQ(encoded([](Writer& w) { w.varint(1); }), (std::vector<uint8_t>{0x02}));
  EXPECT_EQ(encoded([](Writer& w) { w.varlong(-64); }), (std::vector<uint8_t>{0x7f}));
  auto bytes = encoded([](Writer& w) { w.varlong(INT64_MIN); });
  Reader r(bytes);
  EXPECT_EQ(r.varlong(), INT64_MIN);
}

TEST(Wire, ClassicAndCompactStrings) {
  EXPECT_EQ(encoded([](Writer& w) { w.string("ab", false); }),
            (std::vector<uint8_t>{0x00, 0x02, 'a', 'b'}));
  EXPECT_EQ(encoded([](Writer& w) { w.string("ab", true); }),
            (std::vector<uint8_t>{0x03, 'a', 'b'}));
  EXPECT_EQ(encoded([](Writer& w) { w.nullable_string(std::nullopt, false); }),
            (std::vector<uint8_t>{0xff, 0xff}));
  EXPECT_EQ(encoded([](Writer& w) { w.nullable_string(std::nullopt, true); }),
            (std::vector<uint8_t>{0x00}));
  std::vector<uint8_t> in{0x00, 0x03, 'x', 'y', 'z', 0x04, 'a', 'b', 'c'};
  Reader r(in);
  EXPECT_EQ(r.string(false), "xyz");
  EXPECT_EQ(r.string(true), "abc");
  EXPECT_EQ(r.remaining(), 0u);
}

TEST(Wire, TruncatedInputThrows) {
  std::vector<uint8_t> in{0x00, 0x05, 'a'};
  Reader r(in);
  EXPECT_THROW(r.string(false), DecodeError);
  std::vector<uint8_t> huge_array{0x7f, 0xff, 0xff, 0xff};
  Reader r2(huge_array);
  EXPECT_THROW(r2.array_length(false), DecodeError);
  std::vector<uint8_t> endless_varint(12, 0xff);
  Reader r3(endless_varint);
  EXPECT_THROW(r3.uvarlong(), DecodeError);
}

TEST(Wire, TaggedFieldsAreSkipped) {
  // two tagged fields: tag 0 with 2 bytes, tag 5 with 1 byte; then an int8
  std::vector<uint8_t> in{0x02, 0x00, 0x02, 0xaa, 0xbb, 0x05, 0x01, 0xcc, 0x07};
  Reader r(in);
  r.skip_tagged_fields();
  EXPECT_EQ(r.i8(), 7);
}

TEST(Wire, RecordsWithFileSlicesCountTowardsLength) {
  Writer w;
  Records records;
  records.slices.push_back(FileSlice{3, 100, 50, nullptr});
  w.records(records, false);
  EXPECT_EQ(w.buffer(), (std::vector<uint8_t>{0, 0, 0, 50}));
  ASSERT_EQ(w.splices().size(), 1u);
  EXPECT_EQ(w.splices()[0].at, 4u);
  EXPECT_EQ(w.total_size(), 54u);
}

}  // namespace oxbow::protocol
