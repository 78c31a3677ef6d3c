#pragma once
// A WebSocket (RFC 6455) session of the stream server: what StreamExchange::accept_websocket()
// hands a handler once it takes an `Upgrade: websocket` request. Boost.Beast does the framing,
// answers pings and enforces the idle timeout. See docs/http.md.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "http/stream_server.h"

namespace oxbow::http {

class WebSocketConnection;

// Every method may be called from any thread. Message and gone callbacks run one at a time, in
// order, on the server's handler threads (the strand of the exchange that was upgraded).
class WebSocketSession : public std::enable_shared_from_this<WebSocketSession> {
 public:
  using MessageCallback = std::function<void(std::string message)>;

  // The upgrade request: path, query string and headers.
  const StreamRequest& request() const { return request_; }

  // Queues a text message. False once the session is closing or the client has gone.
  bool send(std::string text);
  // Sends the queued messages, then a Close frame with `code` and `reason` (at most 123 bytes, the
  // control frame's room, longer is cut), and ends the session. Later calls do nothing.
  void close(uint16_t code = 1000, std::string reason = {});

  // Bytes of queued messages not yet handed to the socket, as StreamExchange::unsent_bytes().
  size_t unsent_bytes() const { return unsent_bytes_.load(std::memory_order_relaxed); }
  // True once the client closed (a Close frame or the connection), the idle timeout ended the
  // session or the server shut down, before close() was called.
  bool client_gone() const { return gone_.load(std::memory_order_acquire); }
  // The code of the client's Close frame, when it sent one.
  std::optional<uint16_t> client_close_code() const;

  // Each message the client sends (text or binary), in order; those that arrived before this
  // call are delivered first.
  void on_message(MessageCallback callback);
  // Called once when the client goes away (see client_gone()); at once when it already has.
  void on_client_gone(std::function<void()> callback);

  // --- for the server's connection ---
  WebSocketSession(StreamRequest request, std::function<void(std::function<void()>)> run_serially);
  void attach(std::weak_ptr<WebSocketConnection> connection);
  enum class Next { none, message, close };
  // The next queued message, else the close once close() was called (its code and reason).
  Next take_next(std::string& message, uint16_t& code, std::string& reason);
  // A taken message of `bytes` went to the socket.
  void sent(size_t bytes);
  void deliver_message(std::string message);
  // The connection ended; `client_left` unless the server closed it (a client's Close frame code
  // when there was one). Queued messages and callbacks are dropped.
  void end(bool client_left, std::optional<uint16_t> client_code);

 private:
  void notify_connection();
  // Under mutex_: hands one message to the message callback on the handler strand.
  void post_message(std::string message);

  const StreamRequest request_;
  const std::function<void(std::function<void()>)> serial_;

  mutable std::mutex mutex_;
  std::weak_ptr<WebSocketConnection> connection_;
  std::deque<std::string> messages_;
  bool closing_ = false, close_taken_ = false, ended_ = false;
  uint16_t close_code_ = 1000;
  std::string close_reason_;
  std::optional<uint16_t> client_close_code_;
  std::shared_ptr<MessageCallback> message_callback_;
  std::vector<std::string> early_messages_;
  std::function<void()> gone_callback_;
  std::atomic<size_t> unsent_bytes_{0};
  std::atomic<bool> gone_{false};
};

}  // namespace oxbow::http
