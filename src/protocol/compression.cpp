#include "protocol/compression.h"

#include <lz4frame.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include <cstring>
#include <memory>

namespace oxbow::protocol {

namespace {

bool gunzip(std::span<const uint8_t> in, std::string& out, size_t max_output) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 32) != Z_OK) return false;  // 32: accept a gzip or zlib header
  z.next_in = const_cast<Bytef*>(in.data());
  z.avail_in = static_cast<uInt>(in.size());
  char buffer[64 * 1024];
  int status = Z_OK;
  while (status == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buffer);
    z.avail_out = sizeof(buffer);
    status = inflate(&z, Z_NO_FLUSH);
    out.append(buffer, sizeof(buffer) - z.avail_out);
    if (out.size() > max_output) status = Z_DATA_ERROR;
    if (status == Z_BUF_ERROR && z.avail_in == 0) break;
  }
  inflateEnd(&z);
  return status == Z_STREAM_END;
}

bool unsnappy_raw(const uint8_t* in, size_t size, std::string& out, size_t max_output) {
  size_t length = 0;
  if (snappy_uncompressed_length(reinterpret_cast<const char*>(in), size, &length) != SNAPPY_OK ||
      out.size() + length > max_output) {
    return false;
  }
  size_t start = out.size();
  out.resize(start + length);
  return snappy_uncompress(reinterpret_cast<const char*>(in), size, out.data() + start, &length) ==
         SNAPPY_OK;
}

// Kafka's Java clients frame snappy the xerial way: an 8-byte magic, two int32 versions, then
// blocks of (int32 length, raw snappy). librdkafka may send plain raw snappy instead.
bool unsnappy(std::span<const uint8_t> in, std::string& out, size_t max_output) {
  static const uint8_t kMagic[8] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};
  if (in.size() < 16 || std::memcmp(in.data(), kMagic, 8) != 0) {
    return unsnappy_raw(in.data(), in.size(), out, max_output);
  }
  size_t pos = 16;
  while (pos + 4 <= in.size()) {
    uint32_t block = (uint32_t{in[pos]} << 24) | (uint32_t{in[pos + 1]} << 16) |
                     (uint32_t{in[pos + 2]} << 8) | in[pos + 3];
    pos += 4;
    if (block > in.size() - pos || !unsnappy_raw(in.data() + pos, block, out, max_output))
      return false;
    pos += block;
  }
  return pos == in.size();
}

bool unlz4(std::span<const uint8_t> in, std::string& out, size_t max_output) {
  LZ4F_dctx* raw = nullptr;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&raw, LZ4F_VERSION))) return false;
  std::unique_ptr<LZ4F_dctx, decltype(&LZ4F_freeDecompressionContext)> ctx(
      raw, LZ4F_freeDecompressionContext);
  char buffer[64 * 1024];
  size_t pos = 0;
  while (pos < in.size()) {
    size_t src = in.size() - pos;
    size_t dst = sizeof(buffer);
    size_t hint = LZ4F_decompress(ctx.get(), buffer, &dst, in.data() + pos, &src, nullptr);
    if (LZ4F_isError(hint)) return false;
    out.append(buffer, dst);
    if (out.size() > max_output) return false;
    pos += src;
    if (hint == 0) return true;  // frame complete
    if (src == 0 && dst == 0) return false;
  }
  return true;
}

bool unzstd(std::span<const uint8_t> in, std::string& out, size_t max_output) {
  std::unique_ptr<ZSTD_DStream, decltype(&ZSTD_freeDStream)> stream(ZSTD_createDStream(),
                                                                    ZSTD_freeDStream);
  if (!stream) return false;
  ZSTD_inBuffer input{in.data(), in.size(), 0};
  char buffer[64 * 1024];
  while (input.pos < input.size) {
    ZSTD_outBuffer output{buffer, sizeof(buffer), 0};
    size_t status = ZSTD_decompressStream(stream.get(), &output, &input);
    if (ZSTD_isError(status)) return false;
    out.append(buffer, output.pos);
    if (out.size() > max_output) return false;
    if (status == 0 && input.pos == input.size) break;
  }
  return true;
}

bool gzip(std::span<const uint8_t> in, std::string& out, int level) {
  if (level == kDefaultCompressionLevel) level = Z_DEFAULT_COMPRESSION;
  z_stream z{};
  // 15 + 16: a gzip header and trailer, as Kafka's clients write and read.
  if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return false;
  size_t start = out.size();
  out.resize(start + deflateBound(&z, static_cast<uLong>(in.size())));
  z.next_in = const_cast<Bytef*>(in.data());
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data() + start);
  z.avail_out = static_cast<uInt>(out.size() - start);
  int status = deflate(&z, Z_FINISH);
  out.resize(status == Z_STREAM_END ? start + z.total_out : start);
  deflateEnd(&z);
  return status == Z_STREAM_END;
}

bool snappy(std::span<const uint8_t> in, std::string& out) {
  size_t start = out.size();
  size_t length = snappy_max_compressed_length(in.size());
  out.resize(start + length);
  bool ok = snappy_compress(reinterpret_cast<const char*>(in.data()), in.size(), out.data() + start,
                            &length) == SNAPPY_OK;
  out.resize(ok ? start + length : start);
  return ok;
}

bool lz4(std::span<const uint8_t> in, std::string& out, int level) {
  // Kafka's Java clients decode each block on its own: blocks must not refer to earlier ones.
  LZ4F_preferences_t preferences{};
  preferences.frameInfo.blockMode = LZ4F_blockIndependent;
  // Kafka's default level 9 means lz4's fast compressor; any other level its HC compressor.
  constexpr int kKafkaLz4Default = 9;
  if (level != kDefaultCompressionLevel && level != kKafkaLz4Default)
    preferences.compressionLevel = level;
  size_t start = out.size();
  out.resize(start + LZ4F_compressFrameBound(in.size(), &preferences));
  size_t n = LZ4F_compressFrame(out.data() + start, out.size() - start, in.data(), in.size(),
                                &preferences);
  out.resize(LZ4F_isError(n) ? start : start + n);
  return !LZ4F_isError(n);
}

bool zstd(std::span<const uint8_t> in, std::string& out, int level) {
  if (level == kDefaultCompressionLevel) level = ZSTD_CLEVEL_DEFAULT;
  size_t start = out.size();
  out.resize(start + ZSTD_compressBound(in.size()));
  size_t n = ZSTD_compress(out.data() + start, out.size() - start, in.data(), in.size(), level);
  out.resize(ZSTD_isError(n) ? start : start + n);
  return !ZSTD_isError(n);
}

}  // namespace

bool compress(int codec, std::span<const uint8_t> input, std::string& out, int level) {
  switch (codec) {
    case kGzipCodec:
      return gzip(input, out, level);
    case kSnappyCodec:
      return snappy(input, out);
    case kLz4Codec:
      return lz4(input, out, level);
    case kZstdCodec:
      return zstd(input, out, level);
    default:
      return false;
  }
}

bool decompress(int codec, std::span<const uint8_t> input, std::string& out, size_t max_output) {
  switch (codec) {
    case kGzipCodec:
      return gunzip(input, out, max_output);
    case kSnappyCodec:
      return unsnappy(input, out, max_output);
    case kLz4Codec:
      return unlz4(input, out, max_output);
    case kZstdCodec:
      return unzstd(input, out, max_output);
    default:
      return false;
  }
}

}  // namespace oxbow::protocol
