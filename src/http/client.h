#pragma once
// A small HTTP/1.1 client (Boost.Beast) for one request at a time: a registry instance forwarding
// a write to its primary, and the CLI's registry tool.
#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "http/admin_server.h"

namespace oxbow::http {

struct Exchange {
  std::optional<Response> response;  // the answer
  std::string error;                 // why there is none
};

// `url` is http://host:port; the request goes there with its method, path, query, body and
// headers (Via too, when set), on a connection of its own, within `timeout_ms` in all.
Exchange send_request(const std::string& url, const Request& request, int timeout_ms);

// One request whose response body is handed over piece by piece as it arrives, for a body that
// may never end (the SQL CLI's push queries). cancel() ends it from any thread, and from a signal
// handler: it only shuts the socket down, which wakes the blocked read.
class StreamingRequest {
 public:
  using PieceCallback = std::function<void(std::string_view piece)>;

  // Connects and sends within `connect_timeout_ms`, then reads without a deadline until the body
  // ends, the connection fails or cancel() is called. The response carries the status and
  // content type (its body went to `on_piece`); none when the request could not be sent.
  Exchange run(const std::string& url, const Request& request, int connect_timeout_ms,
               const PieceCallback& on_piece);
  void cancel();
  bool cancelled() const { return cancelled_.load(); }
  // The response's status, once its head is in (0 before): what the pieces are.
  int status() const { return status_.load(); }

 private:
  std::atomic<int> status_{0};
  std::atomic<int> socket_{-1};
  std::atomic<bool> cancelled_{false};
};

}  // namespace oxbow::http
