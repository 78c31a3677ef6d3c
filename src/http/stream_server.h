#pragma once
// An HTTP server whose responses (and, when asked, request bodies) stream: HTTP/1.1 and cleartext
// HTTP/2 (prior knowledge or `Upgrade: h2c`) on one port, over Boost.Asio and libnghttp2. A
// handler gets an StreamExchange as soon as a request is in (its head, for a streamed request
// body), and answers on it from any thread: a status and headers, then body pieces over time, then
// finish(). HTTP/1.1 sends pieces as chunks, HTTP/2 each piece as its own DATA frame(s). See
// docs/http.md.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace boost::asio {
class io_context;
}

namespace oxbow::http {

enum class Protocol { http1, http2 };

struct StreamRequest {
  Protocol protocol = Protocol::http1;
  std::string method;
  std::string path;   // without the query string
  std::string query;  // after '?', or empty
  // Names in lower case, in arrival order; HTTP/2's :authority appears as "host".
  std::vector<std::pair<std::string, std::string>> headers;
  // The whole body, unless the server's stream_request_body chose to stream it (then empty, and
  // the pieces arrive through StreamExchange::on_body).
  std::string body;

  // The first header of that name (case-insensitive), empty when absent.
  std::string_view header(std::string_view name) const;
};

class Connection;
class WebSocketSession;

// One request and its response. Shared by the server and the handler; every method may be called
// from any thread. The server runs the handler, the body callback and the gone callback of one
// exchange one at a time, in order, on its handler threads.
class StreamExchange : public std::enable_shared_from_this<StreamExchange> {
 public:
  using BodyCallback = std::function<void(std::string piece, bool last)>;

  const StreamRequest& request() const { return request_; }

  // The response's head; ignored once the head went out (at the first write or at finish).
  void set_status(int status);
  void set_header(std::string name, std::string value);

  // Queues a body piece. False when the response is already finished or the client has gone.
  bool write(std::string piece);
  // Ends the response (sending the head if nothing was written). Later calls do nothing.
  void finish();
  // A whole response at once: status, content type and body (with Content-Length on HTTP/1.1).
  void respond(int status, std::string content_type, std::string body);

  // Bytes written by the handler that have not yet been handed to the socket: a client reading
  // slower than the handler writes makes this grow, and the handler may then give up.
  size_t unsent_bytes() const { return unsent_bytes_.load(std::memory_order_relaxed); }
  bool finished() const;
  // True once the client closed the connection, reset the stream or the server shut it, before
  // the response was fully sent.
  bool client_gone() const { return gone_.load(std::memory_order_acquire); }
  // Called once when the client goes away before the response was fully sent (at once, when it
  // already has); dropped unused once the response is sent.
  void on_client_gone(std::function<void()> callback);

  // True for an `Upgrade: websocket` request on a path StreamServerOptions::offer_websocket
  // chose: the handler may accept it (accept_websocket) or answer it as any request (a refusal).
  bool websocket_requested() const { return websocket_requested_; }
  // Answers `101 Switching Protocols` (with the headers set so far) and hands over the session;
  // null when the request is no WebSocket upgrade or a response was already started. The exchange
  // is done then: its write, finish and respond do nothing.
  std::shared_ptr<WebSocketSession> accept_websocket();

  // For a streamed request body: pieces in arrival order, the last call with `last` true (its
  // piece possibly empty). Pieces that arrived before this call are delivered first. Not called
  // for a buffered body (it is in request().body).
  void on_body(BodyCallback callback);

  // --- for the server's connections ---
  StreamExchange(StreamRequest request, std::weak_ptr<Connection> connection, int32_t stream_id,
                 std::function<void(std::function<void()>)> run_serially);
  int32_t stream_id() const { return stream_id_; }
  // The head, once (true) and only after the handler wrote or finished; `complete` when the
  // response was already finished then, so that all of its body is queued.
  bool take_head(int& status, std::vector<std::pair<std::string, std::string>>& headers,
                 bool& complete);
  // Moves queued pieces into `out` while under `max_bytes` (at least one); true when finished
  // and nothing is left. Counts the bytes as sent.
  bool take_pieces(std::vector<std::string>& out, size_t max_bytes);
  // HTTP/2's data source: copies at most one piece (or its front part) into `buffer`.
  size_t take_into(uint8_t* buffer, size_t length, bool& eof, bool& deferred);
  void deliver_body(std::string piece, bool last);
  void mark_gone();
  // Runs `callback` after every earlier callback of this exchange, on a handler thread.
  void run_serially(std::function<void()> callback) { serial_(std::move(callback)); }
  void mark_sent();
  bool sent() const { return sent_.load(std::memory_order_acquire); }
  // Before the handler runs: the request may become a WebSocket.
  void mark_websocket_request() { websocket_requested_ = true; }
  std::shared_ptr<WebSocketSession> websocket() const;
  std::vector<std::pair<std::string, std::string>> response_headers() const;

 private:
  void notify_connection();
  // Under mutex_: hands one body piece to the body callback on the handler strand.
  void post_piece(std::string piece, bool last);

  const StreamRequest request_;
  const std::weak_ptr<Connection> connection_;
  const int32_t stream_id_;
  const std::function<void(std::function<void()>)> serial_;

  mutable std::mutex mutex_;
  int status_ = 200;
  std::vector<std::pair<std::string, std::string>> headers_;
  bool head_ready_ = false, head_taken_ = false, finished_ = false;
  std::deque<std::string> pieces_;  // queued, front first
  size_t front_offset_ = 0;         // bytes of pieces_.front() already taken
  // Held until the body's last piece or the client leaving, and then dropped: a callback holding
  // its exchange would otherwise keep both alive.
  std::shared_ptr<BodyCallback> body_callback_;
  std::vector<std::pair<std::string, bool>> early_body_;
  std::function<void()> gone_callback_;
  std::atomic<size_t> unsent_bytes_{0};
  std::atomic<bool> gone_{false}, sent_{false};
  bool websocket_requested_ = false;
  std::shared_ptr<WebSocketSession> websocket_;
};

using StreamHandler = std::function<void(std::shared_ptr<StreamExchange>)>;

struct StreamServerOptions {
  size_t max_header_bytes = 16 << 10;              // a request's header block; larger gets 431
  size_t max_body_bytes = 16 << 20;                // a buffered request body; larger gets 413
  std::chrono::milliseconds idle_timeout{60'000};  // no request open and nothing received
  uint32_t max_concurrent_streams = 100;           // per HTTP/2 connection
  unsigned handler_threads = 2;                    // threads running handlers and callbacks
  // Given a request's head, whether its body streams to the handler (StreamExchange::on_body)
  // instead of being read whole first. Null: every body is read whole.
  std::function<bool(const StreamRequest&)> stream_request_body;
  // Given the head of an HTTP/1.1 request with `Upgrade: websocket`, whether the handler may take
  // it as a WebSocket (StreamExchange::websocket_requested). Null, or false: the upgrade header
  // is ignored and the request is an ordinary one.
  std::function<bool(const StreamRequest&)> offer_websocket;
};

class StreamServer {
 public:
  StreamServer(boost::asio::io_context& context, StreamHandler handler,
               StreamServerOptions options = {});
  ~StreamServer();
  StreamServer(const StreamServer&) = delete;
  StreamServer& operator=(const StreamServer&) = delete;

  // Binds and starts accepting; `port` 0 picks a free one (see port()).
  bool listen(const std::string& host, uint16_t port, std::string& error);
  uint16_t port() const;
  // Stops accepting and closes every connection (their open exchanges see the client gone).
  void close();

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace oxbow::http
