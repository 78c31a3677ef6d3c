#pragma once
// A small HTTP/1.1 server for applications that serve their stores over REST, the way Kafka
// Streams applications answer interactive queries (Kafka leaves the transport to them; its
// examples use Jetty): routes by method and path, handlers that may block, and forward() to pass
// a request on to the instance that holds the key (KafkaStreams::queryMetadataForKey).
//
//   rest::RestServer server;
//   server.route("GET", "/counts/{word}", [&](const rest::Request& r) {
//     auto where = streams.queryMetadataForKey("counts", r.param("word"), serdes::String());
//     if (!r.forwarded() && where && where->activeHost() != me &&
//         where->activeHost() != HostInfo::unavailable())
//       return rest::forward(where->activeHost(), r);
//     ... read the local store ...
//   });
//   server.start("0.0.0.0", 7070);
//
// It is the project's own HTTP server and client (Boost.Beast) underneath; this header keeps them
// out of the application's includes.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "oxbow/streams/streams_metadata.h"

namespace oxbow::streams::rest {

struct Request {
  std::string method;
  std::string path;   // as sent (still percent-encoded), without the query string
  std::string query;  // after '?', or empty
  std::string body;
  std::string content_type, accept;  // the headers, empty when absent
  // The Via header: the proxies this request came through. forward() adds its own entry
  // ("1.1 oxbow-streams") and refuses to pass on a request that has it, so that two instances
  // with different views of the group's assignment never bounce a request between them.
  std::string via;
  // The route's {name} segments, percent-decoded.
  std::map<std::string, std::string> params;

  // A {name} segment's value; empty when the route has none of that name.
  const std::string& param(const std::string& name) const;
  // A query-string parameter, percent-decoded ('+' as a space), or nothing.
  std::optional<std::string> query_param(const std::string& name) const;
  // Whether another instance forwarded it (Via names oxbow-streams; other proxies do not
  // count): answer it from local state.
  bool forwarded() const;
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;

  static Response json(std::string body, int status = 200) {
    return Response{status, "application/json", std::move(body)};
  }
  // {"error_code": status, "message": message}, the shape Confluent's REST services answer
  // errors in.
  static Response error(int status, const std::string& message);
};

using Handler = std::function<Response(const Request&)>;

class RestServer {
 public:
  // Handlers run on a pool of threads that starts with `min_threads` and grows by one whenever
  // every thread is inside a handler, up to `max_threads`: a handler may block (a store read, a
  // forward() to an instance that is itself waiting on this one) without holding up the others.
  explicit RestServer(size_t min_threads = 4, size_t max_threads = 256);
  ~RestServer();
  RestServer(const RestServer&) = delete;
  RestServer& operator=(const RestServer&) = delete;

  // Adds a route; before start(). Literal segments match exactly (after percent-decoding), a
  // "{name}" segment matches any one segment; empty segments (a trailing slash) are ignored. The
  // first route added that matches wins. A path that matches with another method answers 405;
  // none, 404.
  RestServer& route(std::string method, std::string pattern, Handler handler);

  // Listens on host:port (a name is resolved, to its first IPv4 address if it has one; port 0
  // picks a free one) and
  // starts serving. Throws std::runtime_error when it cannot listen, std::logic_error when
  // started twice.
  void start(const std::string& host, uint16_t port);
  // The port it listens on; 0 before start().
  uint16_t port() const;
  // Stops listening, drops open connections and joins the threads; not from a handler.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Sends `request` (method, path, query, body, content type, accept) to `target` and returns its
// answer; also for requests a handler makes up itself (a lookup on another instance). The
// request goes out with this hop added to its Via header, so the receiver answers it locally
// (Request::forwarded()).
// Answers made here instead: 508 for a request that was forwarded already (no second hop), 503
// for HostInfo::unavailable() (no instance holds the key now, e.g. during a rebalance), 502 when
// the target cannot be reached or does not answer within `timeout`.
Response forward(const HostInfo& target, const Request& request,
                 std::chrono::milliseconds timeout = std::chrono::seconds(10));

// Percent-decoding as URLs use it: %XX to its byte (a malformed escape stays as it is), and,
// with `plus_as_space` (query strings), '+' to a space.
std::string percent_decode(const std::string& text, bool plus_as_space = false);

// `text` as the contents of a JSON string literal (quotes not included).
std::string json_escape(const std::string& text);

}  // namespace oxbow::streams::rest
