#pragma once
// Base64 (RFC 4648, padded) over OpenSSL's coder: SCRAM's attributes, and ksqlDB's BYTES columns
// in JSON and DELIMITED.
#include <optional>
#include <string>
#include <string_view>

namespace oxbow {

std::string base64(std::string_view bytes);
// nullopt when `text` is not padded base64.
std::optional<std::string> unbase64(std::string_view text);

}  // namespace oxbow
