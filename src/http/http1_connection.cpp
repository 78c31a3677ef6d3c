// HTTP/1.1 connections of the stream server (Boost.Beast's parser), and the choice between
// HTTP/1.1 and HTTP/2 on a new connection.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <limits>
#include <utility>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http.hpp>

#include "common/base64.h"
#include "http/connection.h"
#include "http/websocket_session.h"

namespace oxbow::http {

namespace asio = boost::asio;
namespace bhttp = boost::beast::http;
using asio::ip::tcp;

namespace {

constexpr std::string_view kHttp2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
// Response bytes gathered into one socket write.
constexpr size_t kWriteBatchBytes = 64 << 10;

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool has_token(std::string_view list, std::string_view token) {
  std::string haystack = lower(list);
  size_t at = 0;
  while (at <= haystack.size()) {
    size_t comma = haystack.find(',', at);
    if (comma == std::string::npos) comma = haystack.size();
    std::string_view item(haystack.data() + at, comma - at);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (item == token) return true;
    at = comma + 1;
  }
  return false;
}

// HTTP2-Settings is base64url without padding (RFC 7540 3.2.1).
std::optional<std::string> decode_base64url(std::string_view text) {
  std::string padded(text);
  for (char& c : padded) {
    if (c == '-') c = '+';
    if (c == '_') c = '/';
  }
  while (padded.size() % 4 != 0) padded += '=';
  return unbase64(padded);
}

// A header value must not end the header line early.
bool safe_header(std::string_view name, std::string_view value) {
  auto bad = [](char c) { return c == '\r' || c == '\n' || c == '\0'; };
  return !name.empty() && std::none_of(name.begin(), name.end(), bad) &&
         std::none_of(value.begin(), value.end(), bad);
}

bool framing_header(std::string_view name) {
  return name == "content-length" || name == "transfer-encoding" || name == "connection" ||
         name == "keep-alive";
}

std::string error_response(int status, std::string_view message,
                           std::string_view extra_header = {}) {
  std::string body = "{\"error_code\":" + std::to_string(status) + ",\"message\":\"" +
                     std::string(message) + "\"}";
  return "HTTP/1.1 " + std::to_string(status) + " " +
         std::string(bhttp::obsolete_reason(static_cast<bhttp::status>(status))) +
         "\r\nServer: oxbow\r\n" + std::string(extra_header) +
         "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n\r\n" + body;
}

class Http1Connection : public Connection {
 public:
  Http1Connection(tcp::socket socket, std::shared_ptr<ServerCore> core)
      : Connection(std::move(socket), std::move(core)), response_done_(socket_.get_executor()) {}

  asio::awaitable<void> run();

  void exchange_ready(std::shared_ptr<StreamExchange> exchange) override {
    asio::post(socket_.get_executor(), [self = shared(), exchange] {
      if (self->closed_ || exchange != self->current_) return;
      if (exchange->websocket()) {
        self->response_done_.cancel();  // upgrade_websocket hands the socket over
        return;
      }
      if (self->writing_) return;
      self->writing_ = true;
      asio::co_spawn(
          self->socket_.get_executor(), [self] { return self->write_response(); }, asio::detached);
    });
  }

 protected:
  void shut() override {
    close_socket();
    response_done_.cancel();
    if (current_) current_->mark_gone();
  }
  size_t open_exchanges() const override { return current_ && !current_->sent() ? 1 : 0; }

 private:
  std::shared_ptr<Http1Connection> shared() {
    return std::static_pointer_cast<Http1Connection>(shared_from_this());
  }
  asio::awaitable<bool> read_request();
  asio::awaitable<void> write_response();
  asio::awaitable<void> fail(int status, std::string_view message,
                             std::string_view extra_header = {});
  asio::awaitable<bool> upgrade_websocket(StreamRequest request, bool has_body);

  boost::beast::flat_buffer buffer_;
  std::shared_ptr<StreamExchange> current_;
  int version_ = 11;
  bool head_only_ = false, keep_alive_ = true;
  // State of the current response's writing.
  bool writing_ = false, head_sent_ = false, chunked_ = false, done_ = false;
  asio::steady_timer response_done_;  // cancelled when the response has gone out
};

asio::awaitable<void> Http1Connection::fail(int status, std::string_view message,
                                            std::string_view extra_header) {
  std::string response = error_response(status, message, extra_header);
  boost::system::error_code ec;
  co_await asio::async_write(socket_, asio::buffer(response),
                             asio::redirect_error(asio::use_awaitable, ec));
  if (!closed_) shut();
}

asio::awaitable<void> Http1Connection::run() {
  auto self = shared();
  start_watchdog();
  boost::system::error_code ec;
  // HTTP/2 with prior knowledge: the client's preface, before anything else.
  while (buffer_.size() < kHttp2Preface.size()) {
    std::string_view seen(static_cast<const char*>(buffer_.data().data()), buffer_.size());
    if (kHttp2Preface.substr(0, seen.size()) != seen) break;
    size_t n = co_await socket_.async_read_some(buffer_.prepare(4096),
                                                asio::redirect_error(asio::use_awaitable, ec));
    if (ec || closed_) {
      if (!closed_) shut();
      co_return;
    }
    buffer_.commit(n);
    touch();
  }
  std::string_view start(static_cast<const char*>(buffer_.data().data()), buffer_.size());
  if (start.substr(0, kHttp2Preface.size()) == kHttp2Preface) {
    closed_ = true;  // the socket moves on
    watchdog_.cancel();
    serve_http2(std::move(socket_), std::string(start), core_, std::nullopt);
    co_return;
  }
  while (!closed_ && co_await read_request()) {
  }
  if (!closed_) shut();
}

// Reads one request, hands it to the handler and waits for its response to go out. False when
// the connection is to close.
asio::awaitable<bool> Http1Connection::read_request() {
  boost::system::error_code ec;
  bhttp::request_parser<bhttp::buffer_body> parser;
  parser.header_limit(static_cast<uint32_t>(core_->options.max_header_bytes));
  // Not boost::none: Beast 1.74 compares a Content-Length with an empty limit as over it.
  parser.body_limit(std::numeric_limits<uint64_t>::max());
  co_await bhttp::async_read_header(socket_, buffer_, parser,
                                    asio::redirect_error(asio::use_awaitable, ec));
  touch();
  if (ec == bhttp::error::header_limit) {
    co_await fail(431, "Request header fields too large");
    co_return false;
  }
  if (ec == bhttp::error::end_of_stream || ec == asio::error::eof ||
      ec == asio::error::operation_aborted || ec == asio::error::connection_reset || closed_)
    co_return false;
  if (ec) {
    co_await fail(400, "Malformed request: " + ec.message());
    co_return false;
  }
  auto& head = parser.get();
  StreamRequest request;
  request.protocol = Protocol::http1;
  request.method = std::string(head.method_string());
  std::string target(head.target());
  auto question = target.find('?');
  request.path = target.substr(0, question);
  if (question != std::string::npos) request.query = target.substr(question + 1);
  for (const auto& field : head)
    request.headers.emplace_back(
        lower(std::string_view(field.name_string().data(), field.name_string().size())),
        std::string(field.value()));
  version_ = head.version();
  keep_alive_ = head.keep_alive();
  head_only_ = request.method == "HEAD";

  // h2c upgrade, for a request without a body (one with a body stays HTTP/1.1, as RFC 7540
  // lets a server choose).
  if (has_token(request.header("upgrade"), "h2c") && parser.is_done() && version_ == 11) {
    if (auto settings = decode_base64url(request.header("http2-settings"))) {
      static constexpr std::string_view kSwitching =
          "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n";
      co_await asio::async_write(socket_, asio::buffer(kSwitching),
                                 asio::redirect_error(asio::use_awaitable, ec));
      if (ec || closed_) co_return false;
      closed_ = true;
      watchdog_.cancel();
      std::string rest(static_cast<const char*>(buffer_.data().data()), buffer_.size());
      request.protocol = Protocol::http2;
      serve_http2(std::move(socket_), std::move(rest), core_,
                  H2cUpgrade{std::move(request), std::move(*settings)});
      co_return false;
    }
  }

  if (has_token(request.header("connection"), "upgrade") &&
      has_token(request.header("upgrade"), "websocket") && core_->options.offer_websocket &&
      core_->options.offer_websocket(request))
    co_return co_await upgrade_websocket(std::move(request), !parser.is_done());

  bool streamed = core_->options.stream_request_body && core_->options.stream_request_body(request);
  if (!streamed) {
    const size_t limit = core_->options.max_body_bytes;
    if (parser.content_length() && *parser.content_length() > limit) {
      co_await fail(413, "Request body larger than " + std::to_string(limit) + " bytes");
      co_return false;
    }
    parser.body_limit(limit);
  }
  // A client that asked waits for this before it sends the body (curl, a second at most).
  if (!parser.is_done() && has_token(request.header("expect"), "100-continue")) {
    static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    co_await asio::async_write(socket_, asio::buffer(kContinue),
                               asio::redirect_error(asio::use_awaitable, ec));
    if (ec || closed_) co_return false;
  }
  std::shared_ptr<StreamExchange> exchange;
  if (streamed) {
    exchange = core_->make_exchange(std::move(request), weak_from_this(), 0);
    current_ = exchange;
    core_->dispatch(exchange);
  }
  std::string body;
  bool body_ended = false;
  char chunk[16 << 10];
  while (!parser.is_done()) {
    head.body().data = chunk;
    head.body().size = sizeof chunk;
    // Some bytes at a time, so that a streamed body's pieces are handed on as they arrive.
    co_await bhttp::async_read_some(socket_, buffer_, parser,
                                    asio::redirect_error(asio::use_awaitable, ec));
    if (ec == bhttp::error::need_buffer) ec = {};
    touch();
    if (ec == bhttp::error::body_limit) {
      co_await fail(413, "Request body larger than " +
                             std::to_string(core_->options.max_body_bytes) + " bytes");
      co_return false;
    }
    if (ec || closed_) {
      if (exchange) exchange->mark_gone();
      if (!closed_ && ec != asio::error::eof && ec != bhttp::error::partial_message)
        co_await fail(400, "Malformed request body: " + ec.message());
      co_return false;
    }
    std::string piece(chunk, sizeof chunk - head.body().size);
    body_ended = parser.is_done();
    if (exchange)
      exchange->deliver_body(std::move(piece), body_ended);
    else
      body += piece;
  }
  if (!exchange) {
    request.body = std::move(body);
    exchange = core_->make_exchange(std::move(request), weak_from_this(), 0);
    current_ = exchange;
    core_->dispatch(exchange);
  } else if (!body_ended) {
    exchange->deliver_body({}, true);  // a request without a body
  }

  // Until the response is out, read on: a closed connection means the client has gone. Once
  // bytes of a next (pipelined) request are in, wait for the response without reading more.
  while (!exchange->sent() && !closed_) {
    if (buffer_.size() > 0) {
      response_done_.expires_at(asio::steady_timer::time_point::max());
      co_await response_done_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    size_t n = co_await socket_.async_read_some(buffer_.prepare(4096),
                                                asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      exchange->mark_gone();
      co_return false;
    }
    buffer_.commit(n);
  }
  current_.reset();
  head_sent_ = chunked_ = done_ = false;
  co_return !closed_ && keep_alive_;
}

// An `Upgrade: websocket` request the options offer to the handler: checked as RFC 6455 4.2.1
// asks (Beast's handshake would refuse it too, but only after the handler had accepted), then the
// handler either accepts it, and the socket becomes the WebSocket's, or answers it as any request.
// The client may not send before the 101, so nothing is read meanwhile.
asio::awaitable<bool> Http1Connection::upgrade_websocket(StreamRequest request, bool has_body) {
  if (request.method != "GET" || version_ != 11 || has_body ||
      request.header("sec-websocket-key").empty() || request.header("host").empty()) {
    co_await fail(400, "Malformed WebSocket upgrade request");
    co_return false;
  }
  if (request.header("sec-websocket-version") != "13") {
    co_await fail(426, "Unsupported WebSocket version", "Sec-WebSocket-Version: 13\r\n");
    co_return false;
  }
  auto exchange = core_->make_exchange(std::move(request), weak_from_this(), 0);
  exchange->mark_websocket_request();
  current_ = exchange;
  core_->dispatch(exchange);
  boost::system::error_code ec;
  while (!exchange->sent() && !closed_ && !exchange->websocket()) {
    response_done_.expires_at(asio::steady_timer::time_point::max());
    co_await response_done_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  if (closed_) {
    // Accepted as the connection closed: the session ends before it began.
    if (auto session = exchange->websocket()) session->end(true, std::nullopt);
    co_return false;
  }
  current_.reset();
  if (exchange->websocket()) {
    exchange->mark_sent();
    closed_ = true;  // the socket moves on
    watchdog_.cancel();
    serve_websocket(std::move(socket_), core_, std::move(exchange));
    co_return false;
  }
  head_sent_ = chunked_ = done_ = false;
  co_return keep_alive_;
}

asio::awaitable<void> Http1Connection::write_response() {
  auto self = shared();
  auto exchange = current_;
  while (!closed_ && exchange == current_ && !done_) {
    std::string out;
    if (!head_sent_) {
      int status = 200;
      std::vector<std::pair<std::string, std::string>> headers;
      bool complete = false;
      if (!exchange->take_head(status, headers, complete)) break;
      head_sent_ = true;
      std::vector<std::string> pieces;
      size_t length = 0;
      if (complete) {
        done_ = exchange->take_pieces(pieces, SIZE_MAX);
        for (const auto& piece : pieces) length += piece.size();
      }
      // HTTP/1.0 has no chunks: a streamed body ends with the connection.
      chunked_ = !complete && version_ >= 11;
      if (!complete && !chunked_) keep_alive_ = false;
      out = "HTTP/1." + std::to_string(version_ % 10) + " " + std::to_string(status) + " " +
            std::string(bhttp::obsolete_reason(static_cast<bhttp::status>(status))) +
            "\r\nServer: oxbow\r\n";
      for (const auto& [name, value] : headers)
        if (!framing_header(name) && safe_header(name, value)) out += name + ": " + value + "\r\n";
      if (complete) out += "Content-Length: " + std::to_string(length) + "\r\n";
      if (chunked_) out += "Transfer-Encoding: chunked\r\n";
      if (!keep_alive_) out += "Connection: close\r\n";
      out += "\r\n";
      if (!head_only_)
        for (const auto& piece : pieces) out += piece;
    }
    if (!done_) {
      std::vector<std::string> pieces;
      done_ = exchange->take_pieces(pieces, kWriteBatchBytes);
      for (const auto& piece : pieces) {
        if (head_only_) continue;
        if (chunked_) {
          char size[20];
          out.append(size, std::snprintf(size, sizeof size, "%zx\r\n", piece.size()));
          out += piece;
          out += "\r\n";
        } else {
          out += piece;
        }
      }
      if (done_ && chunked_ && !head_only_) out += "0\r\n\r\n";
    }
    if (out.empty()) break;
    boost::system::error_code ec;
    co_await asio::async_write(socket_, asio::buffer(out),
                               asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      exchange->mark_gone();
      if (!closed_) shut();
      break;
    }
  }
  writing_ = false;
  if (done_ && exchange == current_ && !closed_) {
    exchange->mark_sent();
    response_done_.cancel();
    if (!keep_alive_) {
      boost::system::error_code ec;
      socket_.shutdown(tcp::socket::shutdown_send, ec);
    }
  }
}

}  // namespace

void serve_connection(tcp::socket socket, std::shared_ptr<ServerCore> core) {
  auto connection = std::make_shared<Http1Connection>(std::move(socket), core);
  core->track(connection);
  // The lambda owns the connection until its coroutine (which holds it too) has started.
  asio::co_spawn(
      connection->executor(), [connection] { return connection->run(); }, asio::detached);
}

}  // namespace oxbow::http
