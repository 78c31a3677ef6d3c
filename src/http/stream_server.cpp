#include "http/stream_server.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "http/connection.h"
#include "http/listener.h"

namespace oxbow::http {

namespace asio = boost::asio;
using asio::ip::tcp;

ServerCore::ServerCore(StreamHandler h, StreamServerOptions o)
    : handler(std::move(h)), options(std::move(o)), pool(std::max(1u, options.handler_threads)) {}

std::shared_ptr<StreamExchange> ServerCore::make_exchange(StreamRequest request,
                                                          std::weak_ptr<Connection> connection,
                                                          int32_t stream_id) {
  // The strand holds the core, so that the handler threads outlive every exchange that may
  // still post to them.
  auto strand = asio::make_strand(pool.get_executor());
  auto run_serially = [strand, core = shared_from_this()](std::function<void()> callback) {
    asio::post(strand, std::move(callback));
  };
  return std::make_shared<StreamExchange>(std::move(request), std::move(connection), stream_id,
                                          std::move(run_serially));
}

void ServerCore::dispatch(const std::shared_ptr<StreamExchange>& exchange) {
  // On the exchange's strand, so that the handler runs before its body callbacks.
  exchange->run_serially([this, exchange] {
    try {
      handler(exchange);
    } catch (const std::exception& e) {
      exchange->respond(500, "text/plain", std::string("internal error: ") + e.what() + "\n");
    }
  });
}

void ServerCore::track(const std::shared_ptr<Connection>& connection) {
  std::lock_guard lock(mutex);
  std::erase_if(connections, [](const auto& weak) { return weak.expired(); });
  connections.push_back(connection);
}

void ServerCore::close_all() {
  std::vector<std::weak_ptr<Connection>> open;
  {
    std::lock_guard lock(mutex);
    open.swap(connections);
  }
  for (auto& weak : open)
    if (auto connection = weak.lock()) connection->close();
}

Connection::Connection(tcp::socket socket, std::shared_ptr<ServerCore> core)
    : socket_(std::move(socket)),
      core_(std::move(core)),
      watchdog_(socket_.get_executor()),
      last_activity_(std::chrono::steady_clock::now()) {}

void Connection::close() {
  asio::post(socket_.get_executor(), [self = shared_from_this()] {
    if (!self->closed_) self->shut();
  });
}

void Connection::close_socket() {
  closed_ = true;
  boost::system::error_code ec;
  socket_.shutdown(tcp::socket::shutdown_both, ec);
  socket_.close(ec);
  watchdog_.cancel();
}

void Connection::start_watchdog() {
  auto timeout = core_->options.idle_timeout;
  watchdog_.expires_after(std::max(timeout / 4, std::chrono::milliseconds(1)));
  watchdog_.async_wait([self = shared_from_this(), timeout](boost::system::error_code ec) {
    if (ec || self->closed_) return;
    if (self->open_exchanges() == 0 &&
        std::chrono::steady_clock::now() - self->last_activity_ >= timeout) {
      self->close_idle();
      if (self->closed_) return;
    }
    self->start_watchdog();
  });
}

struct StreamServer::Impl : std::enable_shared_from_this<Impl> {
  Impl(asio::io_context& c, StreamHandler h, StreamServerOptions o)
      : context(c), acceptor(c), core(std::make_shared<ServerCore>(std::move(h), std::move(o))) {}

  asio::awaitable<void> accept_loop() {
    auto self = shared_from_this();
    while (acceptor.is_open()) {
      boost::system::error_code ec;
      // Each connection on its own strand: handler threads post to it.
      tcp::socket socket(asio::make_strand(context));
      co_await acceptor.async_accept(socket, asio::redirect_error(asio::use_awaitable, ec));
      if (ec) {
        if (ec == asio::error::operation_aborted || !acceptor.is_open()) co_return;
        continue;
      }
      // Pieces of a stream go out as they are written, not held back for a fuller segment.
      socket.set_option(tcp::no_delay(true), ec);
      serve_connection(std::move(socket), core);
    }
  }

  asio::io_context& context;
  tcp::acceptor acceptor;
  std::shared_ptr<ServerCore> core;
};

StreamServer::StreamServer(asio::io_context& context, StreamHandler handler,
                           StreamServerOptions options)
    : impl_(std::make_shared<Impl>(context, std::move(handler), std::move(options))) {}

StreamServer::~StreamServer() {
  close();
  // Handlers and callbacks already queued run first (not stop(): dropping them unrun would leave
  // their exchanges, which hold the core, alive in the pool's queue).
  impl_->core->pool.join();
}

bool StreamServer::listen(const std::string& host, uint16_t port, std::string& error) {
  if (!open_listener(impl_->acceptor, host, port, "listener", error)) return false;
  asio::co_spawn(
      impl_->context, [impl = impl_] { return impl->accept_loop(); }, asio::detached);
  return true;
}

uint16_t StreamServer::port() const {
  return listening_port(impl_->acceptor);
}

void StreamServer::close() {
  // The acceptor belongs to the io_context's threads; closing it from here is what AdminServer
  // does too (Asio's acceptor close is safe against a pending accept on one io thread).
  boost::system::error_code ec;
  impl_->acceptor.close(ec);
  impl_->core->close_all();
}

}  // namespace oxbow::http
