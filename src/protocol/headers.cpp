#include "protocol/headers.h"

#include "protocol/messages/api_table.h"

namespace oxbow::protocol {

namespace {
constexpr int16_t kProduceKey = 0;
constexpr int16_t kApiVersionsKey = 18;
}  // namespace

const ApiDescriptor* find_api(int16_t api_key) {
  for (const auto& api : kApiTable) {
    if (api.key == api_key) return &api;
  }
  return nullptr;
}

bool is_flexible(int16_t api_key, int16_t api_version) {
  const auto* api = find_api(api_key);
  return api && api->first_flexible >= 0 && api_version >= api->first_flexible;
}

bool version_supported(int16_t api_key, int16_t api_version) {
  const auto* api = find_api(api_key);
  return api && api_version >= api->min_version && api_version <= api->max_version;
}

RequestHeader decode_request_header(Reader& reader) {
  RequestHeader header;
  header.api_key = reader.i16();
  header.api_version = reader.i16();
  header.correlation_id = reader.i32();
  header.client_id = reader.nullable_string(false);
  // An unsupported version is answered with an error and never has its body read, so a wrong
  // guess about its header form does no harm.
  if (version_supported(header.api_key, header.api_version) &&
      is_flexible(header.api_key, header.api_version)) {
    reader.skip_tagged_fields();
  }
  return header;
}

void encode_response_header(Writer& writer, const RequestHeader& request) {
  writer.i32(request.correlation_id);
  if (request.api_key != kApiVersionsKey &&
      version_supported(request.api_key, request.api_version) &&
      is_flexible(request.api_key, request.api_version)) {
    writer.empty_tagged_fields();
  }
}

std::optional<size_t> throttle_time_position(int16_t api_key, int16_t api_version,
                                             size_t body_start, size_t response_size) {
  if (api_key == kProduceKey) {
    size_t from_end = api_version >= 9 ? 5 : 4;
    if (api_version < 1 || response_size < body_start + from_end) return std::nullopt;
    return response_size - from_end;
  }
  const auto* api = find_api(api_key);
  if (!api || api->throttle_since < 0 || api_version < api->throttle_since ||
      api->throttle_offset < 0)
    return std::nullopt;
  size_t at = body_start + static_cast<size_t>(api->throttle_offset);
  if (at + 4 > response_size) return std::nullopt;
  return at;
}

}  // namespace oxbow::protocol
