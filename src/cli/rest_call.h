#pragma once
// One JSON request of the CLI's REST tools (`oxbow schema` to a schema registry, `oxbow connector`
// to a Connect worker), whose services answer errors alike: {"error_code": .., "message": ..}.
#include <string>

#include "http/admin_server.h"

namespace oxbow::cli {

struct RestService {
  std::string url;         // http://host:port
  std::string name;        // what an error calls it: "the registry"
  std::string media_type;  // of the request's body and the wanted answer
};

// Sends `path` (with its query after '?') and `body` (none when empty). Returns the response of
// a status below 400; otherwise fails with one line: the service's message and error code, or
// why it could not be reached.
http::Response rest_call(const RestService& service, const std::string& method,
                         const std::string& path, const std::string& body);

}  // namespace oxbow::cli
