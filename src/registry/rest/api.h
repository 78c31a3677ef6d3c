#pragma once
// Confluent's REST API over the registry's operations: routes, query parameters, percent-decoded
// path segments, request bodies, response bodies and content types, and every error as
// {"error_code":N,"message":"..."} with Confluent's status (docs/registry/confluent.md, sections 1
// and 2). The handler is a plain function of the request, so it is tested without a socket; the
// server puts it behind the HTTP listener.
#include "http/admin_server.h"
#include "registry/service.h"

namespace oxbow::registry::rest {

class Api {
 public:
  explicit Api(RegistryService& service) : service_(service) {}
  http::Response handle(const http::Request& request);

 private:
  RegistryService& service_;
};

// A path segment with its %XX escapes decoded ("a%2Fb" is the subject "a/b").
std::string percent_decode(std::string_view segment);

}  // namespace oxbow::registry::rest
