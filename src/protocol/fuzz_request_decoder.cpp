// libFuzzer target: a request frame body (header + message) as a client would send it.
// Decoding must never crash, hang or over-allocate, and whatever decodes must encode to bytes that
// decode and encode to the same bytes again. The same bytes are also taken for record batches and
// message sets, through every conversion between them.
#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

#include "common/crc32c.h"
#include "protocol/batch_builder.h"
#include "protocol/headers.h"
#include "protocol/legacy_messages.h"
#include "protocol/messages/any_request.h"
#include "protocol/record_batch.h"

using namespace oxbow::protocol;

namespace {

// Rewrites the CRC-32 of each whole entry of a magic 0/1 message set.
void fix_legacy_crcs(std::vector<uint8_t>& set) {
  size_t pos = 0;
  while (pos + 16 <= set.size()) {
    uint32_t length = uint32_t{set[pos + 8]} << 24 | uint32_t{set[pos + 9]} << 16 |
                      uint32_t{set[pos + 10]} << 8 | set[pos + 11];
    if (length < 4 || length > set.size() - pos - 12) return;
    uint8_t* message = set.data() + pos + 12;
    auto crc = static_cast<uint32_t>(::crc32(0, message + 4, static_cast<uInt>(length - 4)));
    for (int i = 0; i < 4; ++i) message[i] = static_cast<uint8_t>(crc >> (24 - 8 * i));
    pos += 12 + length;
  }
}

// Rewrites the CRC-32C of each whole v2 batch, so that random bytes reach what follows validation.
void fix_batch_crcs(std::vector<uint8_t>& batches) {
  size_t pos = 0;
  while (batches.size() - pos >= kBatchHeaderSize) {
    auto h = read_batch_header(batches.data() + pos);
    if (h.total_size() < kBatchHeaderSize || h.total_size() > batches.size() - pos) return;
    uint32_t crc =
        oxbow::crc32c(batches.data() + pos + kAttributesOffset, h.total_size() - kAttributesOffset);
    for (int i = 0; i < 4; ++i)
      batches[pos + kCrcOffset + static_cast<size_t>(i)] =
          static_cast<uint8_t>(crc >> (24 - 8 * i));
    pos += h.total_size();
  }
}

// Stored batches as Fetch v0-v3 get them, and as a topic's compression.type stores them: whatever
// converts must read back.
void convert_batches(std::span<const uint8_t> batches) {
  for (int8_t magic : {0, 1}) {
    std::vector<uint8_t> legacy;
    if (downconvert_batches(batches, magic, 0, SIZE_MAX, legacy) == ErrorCode::kNone &&
        !legacy.empty()) {
      std::vector<uint8_t> back;
      if (upconvert_legacy_message_set(legacy, back) != ErrorCode::kNone) std::abort();
    }
  }
  for (int codec : {0, 1}) {
    std::vector<uint8_t> recompressed;
    BatchesSummary summary;
    if (recompress_batches(batches, codec, recompressed) &&
        validate_batches(recompressed, summary) != ErrorCode::kNone) {
      std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> frame(data, data + size);
  try {
    Reader reader(frame);
    RequestHeader header = decode_request_header(reader);
    if (!version_supported(header.api_key, header.api_version)) return 0;
    Writer first;
    if (!reencode_request(header.api_key, header.api_version, reader, first)) return 0;
    auto bytes = first.buffer();
    Reader again(bytes);
    Writer second;
    reencode_request(header.api_key, header.api_version, again, second);
    if (second.buffer() != first.buffer()) std::abort();
  } catch (const DecodeError&) {
  }
  // The same bytes as an old client's message set, as they are and with every entry's CRC made
  // right (random bytes never pass it): what converts must be a valid v2 batch.
  std::span<const uint8_t> input(data, size);
  if (is_legacy_message_set(input)) {
    std::vector<uint8_t> fixed(data, data + size);
    fix_legacy_crcs(fixed);
    for (std::span<const uint8_t> set : {input, std::span<const uint8_t>(fixed)}) {
      std::vector<uint8_t> converted;
      BatchesSummary converted_summary;
      if (upconvert_legacy_message_set(set, converted) == ErrorCode::kNone &&
          validate_batches(converted, converted_summary) != ErrorCode::kNone) {
        std::abort();
      }
    }
  }
  // The same bytes as stored batches, through what the log cleaner and recovery do with them.
  std::vector<uint8_t> crc_fixed(data, data + size);
  fix_batch_crcs(crc_fixed);
  BatchesSummary summary;
  std::span<const uint8_t> batches(crc_fixed);
  if (validate_batches(batches, summary) == ErrorCode::kNone) {
    convert_batches(batches);
    std::string scratch;
    std::vector<RawRecord> records;
    for (size_t pos = 0; pos < batches.size();) {
      auto h = read_batch_header(batches.data() + pos);
      auto batch = batches.subspan(pos, h.total_size());
      control_type(batch.data(), batch.size());
      records.clear();
      if (parse_raw_records(batch, scratch, records) && !records.empty()) {
        records.pop_back();
        auto rebuilt = rebuild_batch(batch, records);
        std::vector<RawRecord> kept;
        if (!parse_raw_records(rebuilt, scratch, kept) || kept.size() != records.size())
          std::abort();
      }
      pos += h.total_size();
    }
  }
  return 0;
}
