// WebSocket sessions of the stream server: Boost.Beast's websocket stream on the socket of an
// accepted HTTP/1.1 upgrade, and the session object handlers use from any thread.
#include <utility>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/websocket.hpp>

#include "http/connection.h"
#include "http/websocket_session.h"

namespace oxbow::http {

namespace asio = boost::asio;
namespace bhttp = boost::beast::http;
namespace websocket = boost::beast::websocket;
using asio::ip::tcp;

// One upgraded socket. Runs on the socket's strand, as every Connection.
class WebSocketConnection : public Connection {
 public:
  WebSocketConnection(tcp::socket socket, std::shared_ptr<ServerCore> core,
                      std::shared_ptr<StreamExchange> exchange)
      : Connection(std::move(socket), std::move(core)),
        ws_(socket_),
        exchange_(std::move(exchange)),
        session_(exchange_->websocket()) {}

  // Serves the socket from the handshake on.
  void start() {
    session_->attach(shared());
    asio::co_spawn(
        socket_.get_executor(), [self = shared()] { return self->run(); }, asio::detached);
  }
  void exchange_ready(std::shared_ptr<StreamExchange>) override {}
  // Any thread: the session has messages or its close to send.
  void session_ready() {
    asio::post(socket_.get_executor(), [self = shared()] { self->start_writing(); });
  }

 protected:
  void shut() override {
    close_socket();
    session_->end(true, std::nullopt);
  }
  // Beast's own timeout watches an open session.
  size_t open_exchanges() const override { return 1; }

 private:
  std::shared_ptr<WebSocketConnection> shared() {
    return std::static_pointer_cast<WebSocketConnection>(shared_from_this());
  }
  void start_writing() {
    if (closed_ || !accepted_ || writing_ || close_sent_) return;
    writing_ = true;
    asio::co_spawn(
        socket_.get_executor(), [self = shared()] { return self->write_loop(); }, asio::detached);
  }
  asio::awaitable<void> run();
  asio::awaitable<void> write_loop();

  // Over Connection::socket_, which outlives it (a base member).
  websocket::stream<tcp::socket&> ws_;
  const std::shared_ptr<StreamExchange> exchange_;
  const std::shared_ptr<WebSocketSession> session_;
  bool accepted_ = false, writing_ = false, close_sent_ = false;
};

asio::awaitable<void> WebSocketConnection::run() {
  auto self = shared();
  const auto idle = core_->options.idle_timeout;
  // A client that sends nothing for half the idle timeout is pinged; one that does not answer by
  // the end of it is dropped.
  ws_.set_option(websocket::stream_base::timeout{idle, idle, true});
  ws_.set_option(websocket::stream_base::decorator(
      [headers = exchange_->response_headers()](websocket::response_type& response) {
        response.set(bhttp::field::server, "oxbow");
        for (const auto& [name, value] : headers) response.set(name, value);
      }));
  ws_.read_message_max(core_->options.max_body_bytes);

  const StreamRequest& request = session_->request();
  std::string target = request.path + (request.query.empty() ? "" : "?" + request.query);
  bhttp::request<bhttp::empty_body> upgrade(bhttp::verb::get, target, 11);
  for (const auto& [name, value] : request.headers) upgrade.insert(name, value);
  boost::system::error_code ec;
  co_await ws_.async_accept(upgrade, asio::redirect_error(asio::use_awaitable, ec));
  if (ec || closed_) {
    if (!closed_) shut();
    co_return;
  }
  accepted_ = true;
  start_writing();

  boost::beast::flat_buffer buffer;
  while (!closed_) {
    co_await ws_.async_read(buffer, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) break;
    session_->deliver_message(boost::beast::buffers_to_string(buffer.data()));
    buffer.consume(buffer.size());
  }
  // Beast answered a client's Close frame already; after ours, the client's reply ends the read.
  std::optional<uint16_t> client_code;
  if (ec == websocket::error::closed && !close_sent_) client_code = ws_.reason().code;
  session_->end(!close_sent_, client_code);
  if (!closed_) close_socket();
}

asio::awaitable<void> WebSocketConnection::write_loop() {
  auto self = shared();
  boost::system::error_code ec;
  for (;;) {
    std::string message, reason;
    uint16_t code = 0;
    auto next = session_->take_next(message, code, reason);
    if (next == WebSocketSession::Next::none || closed_) break;
    if (next == WebSocketSession::Next::close) {
      close_sent_ = true;
      co_await ws_.async_close(
          websocket::close_reason(static_cast<websocket::close_code>(code), reason),
          asio::redirect_error(asio::use_awaitable, ec));
      break;
    }
    ws_.text(true);
    co_await ws_.async_write(asio::buffer(message), asio::redirect_error(asio::use_awaitable, ec));
    session_->sent(message.size());
    if (ec) break;  // the read loop sees the connection end too
  }
  writing_ = false;
}

void serve_websocket(tcp::socket socket, std::shared_ptr<ServerCore> core,
                     std::shared_ptr<StreamExchange> exchange) {
  auto connection =
      std::make_shared<WebSocketConnection>(std::move(socket), core, std::move(exchange));
  core->track(connection);
  connection->start();
}

// --- the session ---

WebSocketSession::WebSocketSession(StreamRequest request,
                                   std::function<void(std::function<void()>)> run_serially)
    : request_(std::move(request)), serial_(std::move(run_serially)) {}

void WebSocketSession::attach(std::weak_ptr<WebSocketConnection> connection) {
  std::lock_guard lock(mutex_);
  connection_ = std::move(connection);
}

bool WebSocketSession::send(std::string text) {
  {
    std::lock_guard lock(mutex_);
    if (closing_ || ended_) return false;
    unsent_bytes_.fetch_add(text.size(), std::memory_order_relaxed);
    messages_.push_back(std::move(text));
  }
  notify_connection();
  return true;
}

void WebSocketSession::close(uint16_t code, std::string reason) {
  {
    std::lock_guard lock(mutex_);
    if (closing_ || ended_) return;
    closing_ = true;
    close_code_ = code;
    // A control frame's payload is at most 125 bytes, two of them the code.
    if (reason.size() > 123) reason.resize(123);
    close_reason_ = std::move(reason);
  }
  notify_connection();
}

std::optional<uint16_t> WebSocketSession::client_close_code() const {
  std::lock_guard lock(mutex_);
  return client_close_code_;
}

void WebSocketSession::on_message(MessageCallback callback) {
  std::lock_guard lock(mutex_);
  if (ended_) return;
  message_callback_ = std::make_shared<MessageCallback>(std::move(callback));
  // Posted under the lock, so that messages arriving meanwhile queue behind these.
  for (auto& message : early_messages_) post_message(std::move(message));
  early_messages_.clear();
}

void WebSocketSession::on_client_gone(std::function<void()> callback) {
  std::lock_guard lock(mutex_);
  if (client_gone())
    serial_(std::move(callback));
  else if (!ended_)
    gone_callback_ = std::move(callback);
}

WebSocketSession::Next WebSocketSession::take_next(std::string& message, uint16_t& code,
                                                   std::string& reason) {
  std::lock_guard lock(mutex_);
  if (!messages_.empty()) {
    message = std::move(messages_.front());
    messages_.pop_front();
    return Next::message;
  }
  if (!closing_ || close_taken_) return Next::none;
  close_taken_ = true;
  code = close_code_;
  reason = close_reason_;
  return Next::close;
}

void WebSocketSession::sent(size_t bytes) {
  std::lock_guard lock(mutex_);
  if (!ended_) unsent_bytes_.fetch_sub(bytes, std::memory_order_relaxed);
}

void WebSocketSession::deliver_message(std::string message) {
  std::lock_guard lock(mutex_);
  if (ended_) return;
  if (message_callback_)
    post_message(std::move(message));
  else
    early_messages_.push_back(std::move(message));
}

void WebSocketSession::post_message(std::string message) {
  serial_([callback = message_callback_, message = std::move(message)]() mutable {
    (*callback)(std::move(message));
  });
}

void WebSocketSession::end(bool client_left, std::optional<uint16_t> client_code) {
  std::lock_guard lock(mutex_);
  if (ended_) return;
  ended_ = true;
  client_close_code_ = client_code;
  if (client_left && !closing_) {
    gone_.store(true, std::memory_order_release);
    if (gone_callback_) serial_(std::move(gone_callback_));
  }
  // Callbacks that hold their session would otherwise keep it alive.
  gone_callback_ = nullptr;
  message_callback_.reset();
  early_messages_.clear();
  messages_.clear();
  unsent_bytes_.store(0, std::memory_order_relaxed);
}

void WebSocketSession::notify_connection() {
  std::shared_ptr<WebSocketConnection> connection;
  {
    std::lock_guard lock(mutex_);
    connection = connection_.lock();
  }
  if (connection) connection->session_ready();
}

}  // namespace oxbow::http
