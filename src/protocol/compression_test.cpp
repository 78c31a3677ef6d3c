#include "protocol/compression.h"

#include <gtest/gtest.h>
#include <lz4frame.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

namespace oxbow::protocol {

namespace {

std::string sample() {
  std::string text;
  for (int i = 0; i < 2000; ++i) text += "record-" + std::to_string(i) + ";";
  return text;
}

std::span<const uint8_t> bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

}  // namespace

TEST(Compression, EveryCodecRoundTrips) {
  std::string input = sample();
  std::string out;

  std::string gz(compressBound(input.size()), '\0');
  uLongf gz_size = gz.size();
  ASSERT_EQ(compress2(reinterpret_cast<Bytef*>(gz.data()), &gz_size,
                      reinterpret_cast<const Bytef*>(input.data()), input.size(), 6),
            Z_OK);
  gz.resize(gz_size);
  ASSERT_TRUE(decompress(1, bytes(gz), out));
  EXPECT_EQ(out, input);

  std::string sn(snappy_max_compressed_length(input.size()), '\0');
  size_t sn_size = sn.size();
  ASSERT_EQ(snappy_compress(input.data(), input.size(), sn.data(), &sn_size), SNAPPY_OK);
  sn.resize(sn_size);
  out.clear();
  ASSERT_TRUE(decompress(2, bytes(sn), out));
  EXPECT_EQ(out, input);
  // The xerial framing Java clients use: magic, versions, then (length, block) pairs.
  std::string framed("\x82SNAPPY\0\0\0\0\1\0\0\0\1", 16);
  for (int i = 0; i < 4; ++i) framed += static_cast<char>(sn.size() >> (24 - 8 * i));
  framed += sn;
  out.clear();
  ASSERT_TRUE(decompress(2, bytes(framed), out));
  EXPECT_EQ(out, input);

  std::string lz(LZ4F_compressFrameBound(input.size(), nullptr), '\0');
  size_t lz_size = LZ4F_compressFrame(lz.data(), lz.size(), input.data(), input.size(), nullptr);
  ASSERT_FALSE(LZ4F_isError(lz_size));
  lz.resize(lz_size);
  out.clear();
  ASSERT_TRUE(decompress(3, bytes(lz), out));
  EXPECT_EQ(out, input);

  std::string zs(ZSTD_compressBound(input.size()), '\0');
  size_t zs_size = ZSTD_compress(zs.data(), zs.size(), input.data(), input.size(), 3);
  ASSERT_FALSE(ZSTD_isError(zs_size));
  zs.resize(zs_size);
  out.clear();
  ASSERT_TRUE(decompress(4, bytes(zs), out));
  EXPECT_EQ(out, input);
}

TEST(Compression, CorruptInputIsRefused) {
  std::string garbage(100, 'x');
  for (int codec = 1; codec <= 4; ++codec) {
    std::string out;
    EXPECT_FALSE(decompress(codec, bytes(garbage), out)) << codec;
  }
  std::string out;
  EXPECT_FALSE(decompress(7, bytes(garbage), out));
}

}  // namespace oxbow::protocol

namespace oxbow::protocol {

TEST(Compression, OwnCompressionDecompressesForEveryCodec) {
  std::string input = sample();
  for (int codec = 1; codec <= 4; ++codec) {
    std::string packed = "prefix";  // appended to, not replaced
    ASSERT_TRUE(compress(codec, bytes(input), packed)) << codec;
    ASSERT_EQ(packed.substr(0, 6), "prefix");
    EXPECT_LT(packed.size(), input.size()) << codec;
    std::string out;
    ASSERT_TRUE(decompress(codec, bytes(packed).subspan(6), out)) << codec;
    EXPECT_EQ(out, input) << codec;
  }
  std::string unused;
  EXPECT_FALSE(compress(5, bytes(input), unused));
}

TEST(Compression, LevelsAreKafkas) {
  std::string input;
  for (int i = 0; i < 20000; ++i) input += "key-" + std::to_string(i * 7919 % 1000) + "=value;";
  auto packed_size = [&](int codec, int level) {
    std::string packed;
    EXPECT_TRUE(compress(codec, bytes(input), packed, level)) << codec << " " << level;
    std::string out;
    EXPECT_TRUE(decompress(codec, bytes(packed), out)) << codec << " " << level;
    EXPECT_EQ(out, input) << codec << " " << level;
    return packed.size();
  };
  // Kafka's defaults are the libraries' defaults: gzip -1, zstd 3, and lz4 9 is lz4's fast mode.
  EXPECT_EQ(packed_size(1, -1), packed_size(1, kDefaultCompressionLevel));
  EXPECT_EQ(packed_size(3, 9), packed_size(3, kDefaultCompressionLevel));
  EXPECT_EQ(packed_size(4, 3), packed_size(4, kDefaultCompressionLevel));
  EXPECT_LT(packed_size(1, 9), packed_size(1, 1));
  EXPECT_LT(packed_size(3, 12), packed_size(3, 9));  // another level: lz4's HC mode
  EXPECT_LT(packed_size(4, 19), packed_size(4, -5));
}

TEST(Compression, Lz4FramesHaveIndependentBlocks) {
  // Over one 64 KB block, so that a linked block would have something to refer back to.
  std::string input;
  while (input.size() < 300 * 1024) input += sample();
  std::string packed;
  ASSERT_TRUE(compress(3, bytes(input), packed));
  ASSERT_GT(packed.size(), 5u);
  EXPECT_TRUE(static_cast<uint8_t>(packed[4]) & 0x20)
      << "FLG must set block independence (Kafka's Java clients)";
  std::string out;
  ASSERT_TRUE(decompress(3, bytes(packed), out));
  EXPECT_EQ(out, input);
}

}  // namespace oxbow::protocol
