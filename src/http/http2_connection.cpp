// HTTP/2 connections of the stream server: libnghttp2's server session fed from and drained to
// the socket on the connection's strand. Each response piece is read out of its exchange as its
// own DATA frame(s).
#include <map>
#include <utility>

#include <nghttp2/nghttp2.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include "http/connection.h"

namespace oxbow::http {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

// Frames gathered into one socket write.
constexpr size_t kFrameBatchBytes = 64 << 10;

bool hop_by_hop(std::string_view name) {
  return name == "connection" || name == "keep-alive" || name == "transfer-encoding" ||
         name == "upgrade" || name == "proxy-connection" || name == "content-length";
}

std::string_view view(const uint8_t* data, size_t length) {
  return {reinterpret_cast<const char*>(data), length};
}

class Http2Connection : public Connection {
 public:
  Http2Connection(tcp::socket socket, std::shared_ptr<ServerCore> core)
      : Connection(std::move(socket), std::move(core)) {}
  ~Http2Connection() override {
    if (session_) nghttp2_session_del(session_);
  }

  asio::awaitable<void> run(std::string received, std::optional<H2cUpgrade> upgrade);

  void exchange_ready(std::shared_ptr<StreamExchange> exchange) override {
    asio::post(socket_.get_executor(), [self = shared(), exchange] {
      if (!self->closed_) self->send_exchange(exchange);
    });
  }

 protected:
  void shut() override {
    close_socket();
    for (auto& [id, stream] : streams_)
      if (stream.exchange) stream.exchange->mark_gone();
    streams_.clear();
  }
  size_t open_exchanges() const override { return streams_.size(); }
  // A GOAWAY first, so that the client knows no request was lost; closed at once if that was
  // sent before (write_frames closes after it once nghttp2 wants nothing more).
  void close_idle() override {
    if (said_goodbye_) return shut();
    said_goodbye_ = true;
    nghttp2_session_terminate_session(session_, NGHTTP2_NO_ERROR);
    flush();
  }

 private:
  struct Stream {
    StreamRequest request;
    size_t header_bytes = 0;
    bool rejected = false;   // answered with an error; its body is dropped
    bool streamed = false;   // the body goes to the handler piece by piece
    bool submitted = false;  // the response's HEADERS were submitted
    std::shared_ptr<StreamExchange> exchange;
  };

  std::shared_ptr<Http2Connection> shared() {
    return std::static_pointer_cast<Http2Connection>(shared_from_this());
  }
  static Http2Connection& self(void* user_data) {
    return *static_cast<Http2Connection*>(user_data);
  }
  Stream* find(int32_t id) {
    auto it = streams_.find(id);
    return it == streams_.end() ? nullptr : &it->second;
  }

  bool start_session(const std::optional<H2cUpgrade>& upgrade);
  void request_complete_head(int32_t id, Stream& stream, bool end_stream);
  void reject(int32_t id, Stream& stream, int status, std::string message);
  void send_exchange(const std::shared_ptr<StreamExchange>& exchange);
  void flush();
  asio::awaitable<void> write_frames();

  static int on_begin_headers(nghttp2_session*, const nghttp2_frame* frame, void* user_data);
  static int on_header(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name,
                       size_t name_length, const uint8_t* value, size_t value_length, uint8_t,
                       void* user_data);
  static int on_frame_recv(nghttp2_session*, const nghttp2_frame* frame, void* user_data);
  static int on_data_chunk_recv(nghttp2_session*, uint8_t, int32_t id, const uint8_t* data,
                                size_t length, void* user_data);
  static int on_stream_close(nghttp2_session*, int32_t id, uint32_t, void* user_data);
  static ssize_t read_data(nghttp2_session*, int32_t id, uint8_t* buffer, size_t length,
                           uint32_t* flags, nghttp2_data_source*, void* user_data);

  nghttp2_session* session_ = nullptr;
  std::map<int32_t, Stream> streams_;
  bool writing_ = false, said_goodbye_ = false;
};

bool Http2Connection::start_session(const std::optional<H2cUpgrade>& upgrade) {
  nghttp2_session_callbacks* callbacks;
  nghttp2_session_callbacks_new(&callbacks);
  nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, on_begin_headers);
  nghttp2_session_callbacks_set_on_header_callback(callbacks, on_header);
  nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, on_frame_recv);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, on_data_chunk_recv);
  nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, on_stream_close);
  int rv = nghttp2_session_server_new(&session_, callbacks, this);
  nghttp2_session_callbacks_del(callbacks);
  if (rv != 0) return false;
  const auto& options = core_->options;
  nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, options.max_concurrent_streams},
      {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, static_cast<uint32_t>(options.max_header_bytes)},
  };
  if (nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, settings, std::size(settings)) != 0)
    return false;
  if (upgrade) {
    const auto& payload = upgrade->settings;
    if (nghttp2_session_upgrade2(session_, reinterpret_cast<const uint8_t*>(payload.data()),
                                 payload.size(), upgrade->request.method == "HEAD", nullptr) != 0)
      return false;
    Stream& stream = streams_[1];
    stream.request = upgrade->request;
    request_complete_head(1, stream, true);
  }
  return true;
}

asio::awaitable<void> Http2Connection::run(std::string received,
                                           std::optional<H2cUpgrade> upgrade) {
  auto keep = shared();
  start_watchdog();
  if (!start_session(upgrade)) {
    shut();
    co_return;
  }
  std::vector<uint8_t> buffer(received.begin(), received.end());
  buffer.resize(std::max<size_t>(buffer.size(), 16 << 10));
  size_t filled = received.size();
  while (!closed_) {
    if (filled > 0) {
      ssize_t consumed = nghttp2_session_mem_recv(session_, buffer.data(), filled);
      // A bad preface or a protocol error: nghttp2 has queued its GOAWAY; send it and close.
      if (consumed < 0) {
        nghttp2_session_terminate_session(session_, NGHTTP2_PROTOCOL_ERROR);
        flush();
        break;
      }
      flush();
    }
    if (!nghttp2_session_want_read(session_) && !nghttp2_session_want_write(session_)) break;
    boost::system::error_code ec;
    filled = co_await socket_.async_read_some(asio::buffer(buffer),
                                              asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      if (!closed_) shut();
      co_return;
    }
    touch();
  }
  // What is queued (GOAWAY) goes out before the socket closes: write_frames closes it when
  // nothing is left to read or write.
  if (!closed_ && !writing_) shut();
}

void Http2Connection::flush() {
  if (writing_ || closed_) return;
  writing_ = true;
  asio::co_spawn(
      socket_.get_executor(), [self = shared()] { return self->write_frames(); }, asio::detached);
}

asio::awaitable<void> Http2Connection::write_frames() {
  auto keep = shared();
  while (!closed_) {
    std::string out;
    while (out.size() < kFrameBatchBytes) {
      const uint8_t* data = nullptr;
      ssize_t n = nghttp2_session_mem_send(session_, &data);
      if (n < 0) {
        writing_ = false;
        shut();
        co_return;
      }
      if (n == 0) break;
      out.append(reinterpret_cast<const char*>(data), static_cast<size_t>(n));
    }
    if (out.empty()) break;
    boost::system::error_code ec;
    co_await asio::async_write(socket_, asio::buffer(out),
                               asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      writing_ = false;
      if (!closed_) shut();
      co_return;
    }
  }
  writing_ = false;
  if (!closed_ && !nghttp2_session_want_read(session_) && !nghttp2_session_want_write(session_))
    shut();
}

void Http2Connection::request_complete_head(int32_t id, Stream& stream, bool end_stream) {
  StreamRequest& request = stream.request;
  request.protocol = Protocol::http2;
  if (request.method.empty() || (request.path.empty() && request.method != "CONNECT"))
    return reject(id, stream, 400, "Malformed request: missing :method or :path");
  const auto& predicate = core_->options.stream_request_body;
  stream.streamed = !end_stream && predicate && predicate(request);
  if (end_stream || stream.streamed) {
    stream.exchange = core_->make_exchange(std::move(request), weak_from_this(), id);
    core_->dispatch(stream.exchange);
    if (stream.streamed && end_stream) stream.exchange->deliver_body({}, true);
  }
}

void Http2Connection::reject(int32_t id, Stream& stream, int status, std::string message) {
  stream.rejected = true;
  stream.exchange = core_->make_exchange({}, weak_from_this(), id);
  stream.exchange->respond(
      status, "application/json",
      "{\"error_code\":" + std::to_string(status) + ",\"message\":\"" + message + "\"}");
}

void Http2Connection::send_exchange(const std::shared_ptr<StreamExchange>& exchange) {
  Stream* stream = find(exchange->stream_id());
  if (!stream || stream->exchange != exchange) return;
  if (!stream->submitted) {
    int status = 200;
    std::vector<std::pair<std::string, std::string>> headers;
    bool complete = false;
    if (!exchange->take_head(status, headers, complete)) return;
    stream->submitted = true;
    std::string status_text = std::to_string(status);
    std::vector<nghttp2_nv> fields;
    auto add = [&fields](const std::string& name, const std::string& value) {
      fields.push_back({reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
                        reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())), name.size(),
                        value.size(), NGHTTP2_NV_FLAG_NONE});
    };
    static const std::string kStatus = ":status", kServer = "server", kOxbow = "oxbow";
    add(kStatus, status_text);
    add(kServer, kOxbow);
    for (const auto& [name, value] : headers)
      if (!hop_by_hop(name) && !name.empty() && name[0] != ':') add(name, value);
    nghttp2_data_provider provider{};
    provider.read_callback = read_data;
    // nghttp2 copies the fields before returning.
    if (nghttp2_submit_response(session_, exchange->stream_id(), fields.data(), fields.size(),
                                &provider) != 0) {
      exchange->mark_gone();
      return;
    }
  } else {
    nghttp2_session_resume_data(session_, exchange->stream_id());
  }
  flush();
}

int Http2Connection::on_begin_headers(nghttp2_session*, const nghttp2_frame* frame,
                                      void* user_data) {
  if (frame->hd.type == NGHTTP2_HEADERS && frame->headers.cat == NGHTTP2_HCAT_REQUEST)
    self(user_data).streams_[frame->hd.stream_id];
  return 0;
}

int Http2Connection::on_header(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name,
                               size_t name_length, const uint8_t* value, size_t value_length,
                               uint8_t, void* user_data) {
  auto& connection = self(user_data);
  Stream* stream = connection.find(frame->hd.stream_id);
  // Trailers (a second HEADERS) are not kept.
  if (!stream || frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST)
    return 0;
  // As SETTINGS_MAX_HEADER_LIST_SIZE counts: each field plus 32.
  stream->header_bytes += name_length + value_length + 32;
  if (stream->header_bytes > connection.core_->options.max_header_bytes) return 0;
  auto key = view(name, name_length);
  std::string text(view(value, value_length));
  auto& request = stream->request;
  if (key == ":method") {
    request.method = std::move(text);
  } else if (key == ":path") {
    auto question = text.find('?');
    request.path = text.substr(0, question);
    if (question != std::string::npos) request.query = text.substr(question + 1);
  } else if (key == ":authority") {
    request.headers.emplace_back("host", std::move(text));
  } else if (!key.empty() && key[0] != ':') {
    request.headers.emplace_back(std::string(key), std::move(text));
  }
  return 0;
}

int Http2Connection::on_frame_recv(nghttp2_session*, const nghttp2_frame* frame, void* user_data) {
  auto& connection = self(user_data);
  Stream* stream = connection.find(frame->hd.stream_id);
  if (!stream) return 0;
  bool end_stream = frame->hd.flags & NGHTTP2_FLAG_END_STREAM;
  int32_t id = frame->hd.stream_id;
  if (frame->hd.type == NGHTTP2_HEADERS && frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
    if (stream->header_bytes > connection.core_->options.max_header_bytes)
      connection.reject(id, *stream, 431, "Request header fields too large");
    else
      connection.request_complete_head(id, *stream, end_stream);
    return 0;
  }
  if ((frame->hd.type == NGHTTP2_DATA || frame->hd.type == NGHTTP2_HEADERS) && end_stream &&
      !stream->rejected) {
    if (stream->streamed) {
      stream->exchange->deliver_body({}, true);
    } else if (!stream->exchange) {
      stream->exchange = connection.core_->make_exchange(std::move(stream->request),
                                                         connection.weak_from_this(), id);
      connection.core_->dispatch(stream->exchange);
    }
  }
  return 0;
}

int Http2Connection::on_data_chunk_recv(nghttp2_session*, uint8_t, int32_t id, const uint8_t* data,
                                        size_t length, void* user_data) {
  auto& connection = self(user_data);
  Stream* stream = connection.find(id);
  if (!stream || stream->rejected) return 0;
  if (stream->streamed) {
    stream->exchange->deliver_body(std::string(view(data, length)), false);
    return 0;
  }
  if (stream->exchange) return 0;  // a body after END_STREAM cannot come; nghttp2 refuses it
  stream->request.body.append(view(data, length));
  if (stream->request.body.size() > connection.core_->options.max_body_bytes) {
    connection.reject(id, *stream, 413,
                      "Request body larger than " +
                          std::to_string(connection.core_->options.max_body_bytes) + " bytes");
  }
  return 0;
}

int Http2Connection::on_stream_close(nghttp2_session*, int32_t id, uint32_t, void* user_data) {
  auto& connection = self(user_data);
  auto it = connection.streams_.find(id);
  if (it == connection.streams_.end()) return 0;
  // A reset stream, or a response cut short: the handler's producer stops.
  if (it->second.exchange) it->second.exchange->mark_gone();
  connection.streams_.erase(it);
  return 0;
}

ssize_t Http2Connection::read_data(nghttp2_session*, int32_t id, uint8_t* buffer, size_t length,
                                   uint32_t* flags, nghttp2_data_source*, void* user_data) {
  Stream* stream = self(user_data).find(id);
  if (!stream || !stream->exchange) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
  bool eof = false, deferred = false;
  size_t n = stream->exchange->take_into(buffer, length, eof, deferred);
  if (deferred) return NGHTTP2_ERR_DEFERRED;
  if (eof) {
    *flags |= NGHTTP2_DATA_FLAG_EOF;
    stream->exchange->mark_sent();
  }
  return static_cast<ssize_t>(n);
}

}  // namespace

void serve_http2(tcp::socket socket, std::string received, std::shared_ptr<ServerCore> core,
                 std::optional<H2cUpgrade> upgrade) {
  auto connection = std::make_shared<Http2Connection>(std::move(socket), core);
  core->track(connection);
  // The lambda owns the connection until its coroutine (which holds it too) has started.
  asio::co_spawn(
      connection->executor(),
      [connection, received = std::move(received), upgrade = std::move(upgrade)]() mutable {
        return connection->run(std::move(received), std::move(upgrade));
      },
      asio::detached);
}

}  // namespace oxbow::http
