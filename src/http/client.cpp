#include "http/client.h"

#include <sys/socket.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdint>
#include <limits>

namespace oxbow::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;

namespace {

struct Target {
  std::string authority, host, port;
};

// http://host:port[/...] to its parts; nullopt (and `error` set) without a port.
std::optional<Target> parse_url(const std::string& url, std::string& error) {
  const std::string scheme = "http://";
  Target target;
  target.authority = url.rfind(scheme, 0) == 0 ? url.substr(scheme.size()) : url;
  target.authority = target.authority.substr(0, target.authority.find('/'));
  auto colon = target.authority.rfind(':');
  if (colon == std::string::npos) {
    error = "no port in " + url;
    return std::nullopt;
  }
  target.host = target.authority.substr(0, colon);
  target.port = target.authority.substr(colon + 1);
  return target;
}

bhttp::request<bhttp::string_body> beast_request(const Target& target, const Request& request) {
  bhttp::request<bhttp::string_body> req{
      bhttp::string_to_verb(request.method),
      request.path + (request.query.empty() ? "" : "?") + request.query, 11};
  req.set(bhttp::field::host, target.authority);
  if (!request.via.empty()) req.set(bhttp::field::via, request.via);
  if (!request.accept.empty()) req.set(bhttp::field::accept, request.accept);
  if (!request.content_type.empty()) req.set(bhttp::field::content_type, request.content_type);
  req.body() = request.body;
  req.prepare_payload();
  return req;
}

// Resolves, connects and writes `req` on `stream` within its deadline, then runs `then` (which
// may chain reads); the first failure ends up in `failure`.
template <typename Then>
void connect_and_send(asio::io_context& context, beast::tcp_stream& stream, const Target& target,
                      bhttp::request<bhttp::string_body>& req, beast::error_code& failure,
                      Then then) {
  asio::ip::tcp::resolver resolver(context);
  resolver.async_resolve(target.host, target.port, [&](beast::error_code ec, auto results) {
    if (ec) return void(failure = ec);
    stream.async_connect(results, [&](beast::error_code ec, auto) {
      if (ec) return void(failure = ec);
      bhttp::async_write(stream, req, [&](beast::error_code ec, size_t) {
        if (ec) return void(failure = ec);
        then();
      });
    });
  });
  context.run();
}

}  // namespace

Exchange send_request(const std::string& url, const Request& request, int timeout_ms) {
  Exchange out;
  auto target = parse_url(url, out.error);
  if (!target) return out;
  asio::io_context context;
  beast::tcp_stream stream(context);
  auto req = beast_request(*target, request);
  bhttp::response<bhttp::string_body> res;
  beast::flat_buffer buffer;
  beast::error_code failure;
  stream.expires_after(std::chrono::milliseconds(timeout_ms));  // one deadline for every step
  connect_and_send(context, stream, *target, req, failure, [&] {
    bhttp::async_read(stream, buffer, res, [&](beast::error_code ec, size_t) { failure = ec; });
  });
  if (failure) {
    out.error = failure.message();
    return out;
  }
  Response response;
  response.status = static_cast<int>(res.result_int());
  response.content_type = std::string(res[bhttp::field::content_type]);
  response.body = res.body();
  out.response = std::move(response);
  return out;
}

Exchange StreamingRequest::run(const std::string& url, const Request& request,
                               int connect_timeout_ms, const PieceCallback& on_piece) {
  Exchange out;
  auto target = parse_url(url, out.error);
  if (!target) return out;
  asio::io_context context;
  beast::tcp_stream stream(context);
  auto req = beast_request(*target, request);
  beast::error_code failure;
  stream.expires_after(std::chrono::milliseconds(connect_timeout_ms));
  connect_and_send(context, stream, *target, req, failure, [] {});
  if (failure) {
    out.error = failure.message();
    return out;
  }
  stream.expires_never();
  auto& socket = stream.socket();
  socket_ = socket.native_handle();
  if (cancelled_) ::shutdown(socket.native_handle(), SHUT_RDWR);  // cancelled while connecting

  // Blocking reads from here: cancel() shuts the socket down to end them.
  beast::flat_buffer buffer;
  bhttp::response_parser<bhttp::buffer_body> parser;
  // No limit; not boost::none, which Boost 1.74 compares as below any Content-Length.
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());
  beast::error_code ec;
  bhttp::read_header(socket, buffer, parser, ec);
  if (ec) {
    socket_ = -1;
    out.error = cancelled_ ? "cancelled" : ec.message();
    return out;
  }
  Response response;
  response.status = static_cast<int>(parser.get().result_int());
  status_ = response.status;
  response.content_type = std::string(parser.get()[bhttp::field::content_type]);
  out.response = std::move(response);
  char piece[16 * 1024];
  while (!parser.is_done()) {
    parser.get().body().data = piece;
    parser.get().body().size = sizeof piece;
    bhttp::read_some(socket, buffer, parser, ec);
    if (ec == bhttp::error::need_buffer) ec = {};
    size_t got = sizeof piece - parser.get().body().size;
    if (got > 0) on_piece(std::string_view(piece, got));
    if (ec) break;
  }
  socket_ = -1;
  if (ec && !cancelled_) out.error = ec.message();
  return out;
}

void StreamingRequest::cancel() {
  cancelled_ = true;
  int fd = socket_.load();
  if (fd >= 0) ::shutdown(fd, SHUT_RDWR);
}

}  // namespace oxbow::http
