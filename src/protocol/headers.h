#pragma once
// Request headers (v0-v2) and response headers (v0-v1).
//
// A request is framed as int32 size + header + body. Header v1: api_key int16, api_version int16,
// correlation_id int32, client_id nullable string (int16 length). Header v2 (requests of a flexible
// version) adds a tagged-field section. Response header v0 is correlation_id; v1 (responses of a
// flexible version) adds a tagged-field section, except ApiVersions, which always answers with v0
// so that a client can parse it before it knows our version ranges.
#include <cstdint>
#include <optional>
#include <string>

#include "protocol/wire.h"

namespace oxbow::protocol {

struct ApiDescriptor;

struct RequestHeader {
  int16_t api_key = 0;
  int16_t api_version = 0;
  int32_t correlation_id = 0;
  std::optional<std::string> client_id;
};

// The API's descriptor, or nullptr when we do not implement the key.
const ApiDescriptor* find_api(int16_t api_key);
bool is_flexible(int16_t api_key, int16_t api_version);
bool version_supported(int16_t api_key, int16_t api_version);

// Decodes the header; the reader is left at the start of the body. Throws DecodeError.
RequestHeader decode_request_header(Reader& reader);
void encode_response_header(Writer& writer, const RequestHeader& request);

// Where throttle_time_ms sits in an encoded response of `response_size` bytes whose body starts at
// `body_start`, so that a throttle decided after encoding can be patched in; nullopt when that
// version has none. Produce has it last (before v9+'s tagged fields), the others at a fixed offset.
std::optional<size_t> throttle_time_position(int16_t api_key, int16_t api_version,
                                             size_t body_start, size_t response_size);

}  // namespace oxbow::protocol
