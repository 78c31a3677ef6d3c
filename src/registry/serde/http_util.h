#pragma once
// Small pieces of the registry client's HTTP: URLs, Basic credentials, path segments.
#include <string>
#include <string_view>
#include <vector>

#include "oxbow/registry/client.h"

namespace oxbow::registry::serde {

struct Url {
  std::string text, host, port, base_path;  // base_path without a trailing '/'
};

inline Url parse_url(const std::string& text) {
  constexpr std::string_view kScheme = "http://";
  if (text.rfind("https://", 0) == 0)
    throw RegistryClientError(0, 0, text + ": https is not supported yet");
  std::string_view rest = text;
  if (rest.rfind(kScheme, 0) == 0) rest.remove_prefix(kScheme.size());
  Url url{text, {}, "80", {}};
  const auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  if (slash != std::string_view::npos) url.base_path = std::string(rest.substr(slash));
  while (!url.base_path.empty() && url.base_path.back() == '/') url.base_path.pop_back();
  if (const auto at = authority.rfind('@'); at != std::string_view::npos)
    authority.remove_prefix(at + 1);
  const auto colon = authority.rfind(':');
  const bool bracketed = !authority.empty() && authority.front() == '[';
  if (colon != std::string_view::npos && (!bracketed || authority[colon - 1] == ']')) {
    url.port = std::string(authority.substr(colon + 1));
    authority = authority.substr(0, colon);
  }
  if (bracketed && authority.size() >= 2) authority = authority.substr(1, authority.size() - 2);
  url.host = std::string(authority);
  if (url.host.empty() || url.port.empty()) throw RegistryClientError(0, 0, text + ": not a URL");
  return url;
}

inline std::string base64(std::string_view in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const unsigned v = static_cast<unsigned char>(in[i]) << 16 |
                       static_cast<unsigned char>(in[i + 1]) << 8 |
                       static_cast<unsigned char>(in[i + 2]);
    for (int shift = 18; shift >= 0; shift -= 6) out += kAlphabet[(v >> shift) & 63];
  }
  if (i < in.size()) {
    unsigned v = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<unsigned char>(in[i + 1]) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < in.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

// A subject as one path segment: everything but RFC 3986's unreserved characters escaped.
inline std::string percent_encode(std::string_view in) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : in) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// "a, b,c" as {"a", "b", "c"}.
inline std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    auto item = text.substr(start, end - start);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) out.emplace_back(item);
    start = end + 1;
  }
  return out;
}

}  // namespace oxbow::registry::serde
