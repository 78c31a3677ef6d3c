#include "http/admin_server.h"

#include <utility>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <vector>

#include "http/listener.h"

namespace oxbow::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using asio::ip::tcp;

namespace {

constexpr size_t kMaxBodyBytes = 16 << 20;

asio::awaitable<void> serve(tcp::socket socket, std::shared_ptr<Handler> handler) {
  beast::flat_buffer buffer;
  boost::system::error_code ec;
  while (true) {
    bhttp::request_parser<bhttp::string_body> parser;
    parser.body_limit(kMaxBodyBytes);
    co_await bhttp::async_read(socket, buffer, parser,
                               asio::redirect_error(asio::use_awaitable, ec));
    if (ec == bhttp::error::body_limit) {
      // Answered rather than dropped, so that the client sees why; the rest of the body is not
      // read, so the connection closes.
      bhttp::response<bhttp::string_body> res{bhttp::status::payload_too_large, 11};
      res.set(bhttp::field::server, "oxbow");
      res.set(bhttp::field::content_type, "application/json");
      res.body() = "{\"error_code\":413,\"message\":\"Request body larger than " +
                   std::to_string(kMaxBodyBytes) + " bytes\"}";
      res.keep_alive(false);
      res.prepare_payload();
      co_await bhttp::async_write(socket, res, asio::redirect_error(asio::use_awaitable, ec));
      // Reading on (and dropping) what the client still sends lets it finish sending and read
      // the answer; closing at once would reset the connection under it.
      socket.shutdown(tcp::socket::shutdown_send, ec);
      std::vector<char> sink(64 << 10);
      for (size_t drained = 0; !ec && drained < 4 * kMaxBodyBytes;)
        drained += co_await socket.async_read_some(asio::buffer(sink),
                                                   asio::redirect_error(asio::use_awaitable, ec));
      break;
    }
    if (ec) break;
    auto& req = parser.get();
    Request request;
    request.method = std::string(req.method_string());
    std::string target(req.target());
    auto question = target.find('?');
    request.path = target.substr(0, question);
    if (question != std::string::npos) request.query = target.substr(question + 1);
    request.body = req.body();
    request.accept = std::string(req[bhttp::field::accept]);
    request.content_type = std::string(req[bhttp::field::content_type]);
    request.via = std::string(req[bhttp::field::via]);
    Response response;
    try {
      response = (*handler)(request);
    } catch (const std::exception& e) {
      response = {500, "text/plain", std::string("internal error: ") + e.what() + "\n"};
    }
    bhttp::response<bhttp::string_body> res{static_cast<bhttp::status>(response.status),
                                            req.version()};
    res.set(bhttp::field::server, "oxbow");
    res.set(bhttp::field::content_type, response.content_type);
    res.keep_alive(req.keep_alive());
    res.body() = std::move(response.body);
    res.prepare_payload();
    co_await bhttp::async_write(socket, res, asio::redirect_error(asio::use_awaitable, ec));
    if (ec || !res.keep_alive()) break;
  }
  socket.shutdown(tcp::socket::shutdown_both, ec);
}

}  // namespace

struct AdminServer::Impl : std::enable_shared_from_this<Impl> {
  Impl(asio::io_context& c, Handler h)
      : context(c), acceptor(c), handler(std::make_shared<Handler>(std::move(h))) {}

  asio::awaitable<void> accept_loop() {
    auto self = shared_from_this();
    while (acceptor.is_open()) {
      boost::system::error_code ec;
      tcp::socket socket =
          co_await acceptor.async_accept(asio::redirect_error(asio::use_awaitable, ec));
      if (ec) {
        if (ec == asio::error::operation_aborted) co_return;
        continue;
      }
      asio::co_spawn(context, serve(std::move(socket), handler), asio::detached);
    }
  }

  asio::io_context& context;
  tcp::acceptor acceptor;
  std::shared_ptr<Handler> handler;
};

AdminServer::AdminServer(asio::io_context& context, Handler handler)
    : impl_(std::make_shared<Impl>(context, std::move(handler))) {}

AdminServer::~AdminServer() {
  close();
}

bool AdminServer::listen(const std::string& host, uint16_t port, std::string& error) {
  if (!open_listener(impl_->acceptor, host, port, "admin.listener", error)) return false;
  asio::co_spawn(
      impl_->context, [impl = impl_] { return impl->accept_loop(); }, asio::detached);
  return true;
}

uint16_t AdminServer::port() const {
  return listening_port(impl_->acceptor);
}

void AdminServer::close() {
  boost::system::error_code ec;
  if (impl_) impl_->acceptor.close(ec);
}

}  // namespace oxbow::http
