// libFuzzer target: a request frame body (header + message) as a client would send it.
// Decoding must never crash, hang or over-allocate, and whatever decodes must encode to bytes that
// decode and encode to the same bytes again.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "protocol/headers.h"
#include "protocol/messages/any_request.h"
#include "protocol/record_batch.h"

using namespace oxbow::protocol;

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
  BatchesSummary summary;
  validate_batches(std::span<const uint8_t>(data, size), summary);
  return 0;
}
