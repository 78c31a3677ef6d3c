#pragma once
// A small HTTP/1.1 client (Boost.Beast) for one request at a time: a registry instance forwarding
// a write to its primary, and the CLI's registry tool.
#include <optional>
#include <string>

#include "http/admin_server.h"

namespace oxbow::http {

struct Exchange {
  std::optional<Response> response;  // the answer
  std::string error;                 // why there is none
};

// `url` is http://host:port; the request goes there with its method, path, query, body and
// headers (Via too, when set), on a connection of its own, within `timeout_ms` in all.
Exchange send_request(const std::string& url, const Request& request, int timeout_ms);

}  // namespace oxbow::http
