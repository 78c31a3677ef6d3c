#pragma once
// Sends a write that reached a secondary instance on to the primary (Confluent's followers
// forward writes to their leader the same way), marked with a Via header so that it is never
// forwarded again.
#include <optional>
#include <string>

#include "http/admin_server.h"

namespace oxbow::registry::server {

struct Forwarded {
  std::optional<http::Response> response;  // the primary's answer
  std::string error;                       // why there is none
};

// `url` is http://host:port; the request goes there with its path, query, body and headers.
Forwarded forward_request(const std::string& url, const http::Request& request, int timeout_ms);

}  // namespace oxbow::registry::server
