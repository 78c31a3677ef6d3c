#include "broker/net/server.h"

#include <spdlog/spdlog.h>

#include <atomic>

#include "broker/asio.h"
#include "broker/broker.h"
#include "broker/net/connection.h"
#include "broker/net/tls.h"
#include "broker/probe.h"
#include "broker/quotas/connection_limits.h"
#include "common/clock.h"
#include "common/properties.h"

namespace oxbow::broker {

using asio::ip::tcp;

struct Server::Impl {
  Broker& broker;
  std::vector<std::unique_ptr<asio::io_context>> contexts;
  std::vector<std::unique_ptr<tcp::acceptor>> acceptors;
  std::vector<std::thread> threads;
  std::atomic<size_t> next{0};
  std::vector<Endpoint> acceptor_endpoints;
  std::vector<std::optional<TlsListener>> acceptor_tls;
  std::chrono::milliseconds max_idle{0};
  int send_buffer_bytes = -1;  // socket.send.buffer.bytes; -1: the kernel's own sizing
  int receive_buffer_bytes = -1;
  asio::signal_set signals;
  std::atomic<bool> stopping{false};

  Impl(Broker& b, int n)
      : broker(b), contexts(make_contexts(n)), signals(*contexts[0], SIGINT, SIGTERM) {}

  static std::vector<std::unique_ptr<asio::io_context>> make_contexts(int n) {
    std::vector<std::unique_ptr<asio::io_context>> out;
    for (int i = 0; i < n; ++i) out.push_back(std::make_unique<asio::io_context>(1));
    return out;
  }

  asio::awaitable<void> accept_loop(tcp::acceptor& acceptor, Endpoint listener,
                                    const TlsListener* tls) {
    asio::steady_timer pause(acceptor.get_executor());
    while (acceptor.is_open()) {
      auto& context = *contexts[next++ % contexts.size()];
      boost::system::error_code ec;
      tcp::socket socket =
          co_await acceptor.async_accept(context, asio::redirect_error(asio::use_awaitable, ec));
      if (ec) {
        if (ec == asio::error::operation_aborted) co_return;
        spdlog::warn("accept on {} failed: {}", listener.name, ec.message());
        continue;
      }
      // max.connections, the broker's or this listener's: as Kafka's acceptor, hold the connection
      // just accepted unserved until one closes, and leave the next ones in the kernel's backlog.
      // Checked after the accept, not before it, so that a limit lowered while the listener
      // waited for a connection holds that connection too.
      if (broker.connection_limits().at_capacity(listener.name)) {
        int64_t since = steady_now_ms();
        while (broker.connection_limits().at_capacity(listener.name) && acceptor.is_open()) {
          pause.expires_after(std::chrono::milliseconds(20));
          boost::system::error_code ignored;
          co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
        }
        probe().connection_limit_wait_ms.add(static_cast<uint64_t>(steady_now_ms() - since));
      }
      if (!acceptor.is_open()) co_return;
      if (send_buffer_bytes >= 0) {
        socket.set_option(asio::socket_base::send_buffer_size(send_buffer_bytes), ec);
      }
      start_connection(broker, std::move(socket), listener, tls, max_idle);
      // max.connection.creation.rate, the broker's or this listener's: the listener waits before
      // it accepts the next one.
      if (int64_t delay =
              broker.connection_limits().record_creation(listener.name, steady_now_ms());
          delay > 0) {
        probe().connection_creation_throttle_ms.add(static_cast<uint64_t>(delay));
        pause.expires_after(std::chrono::milliseconds(delay));
        boost::system::error_code ignored;
        co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
      }
    }
  }

  void stop() {
    stopping = true;
    for (auto& a : acceptors) {
      boost::system::error_code ec;
      a->close(ec);
    }
    for (auto& c : contexts) c->stop();
  }
};

Server::Server(Broker& broker, int threads) : impl_(std::make_unique<Impl>(broker, threads)) {
  auto idle = parse_int64(broker.config().value_of("connections.max.idle.ms").value_or("600000"));
  impl_->max_idle = std::chrono::milliseconds(idle.value_or(600000));
  auto buffer_bytes = [&](const char* key) {
    auto value = parse_int64(broker.config().value_of(key).value_or("-1"));
    return static_cast<int>(value.value_or(-1));
  };
  impl_->send_buffer_bytes = buffer_bytes("socket.send.buffer.bytes");
  impl_->receive_buffer_bytes = buffer_bytes("socket.receive.buffer.bytes");
}

Server::~Server() {
  stop();
}

bool Server::listen(const std::vector<Endpoint>& endpoints, std::string& error) {
  for (const auto& e : endpoints) {
    std::optional<TlsListener> tls;
    if (uses_tls(e.security_protocol)) {
      tls = make_tls_listener(impl_->broker.config(), e, error);
      if (!tls) return false;
    } else if (e.security_protocol != "PLAINTEXT" && e.security_protocol != "SASL_PLAINTEXT") {
      error = "listener " + e.name + ": unknown security protocol " + e.security_protocol;
      return false;
    }
    boost::system::error_code ec;
    auto address = e.host.empty() ? asio::ip::address(asio::ip::address_v6::any())
                                  : asio::ip::make_address(e.host, ec);
    if (ec) {
      // A host name: resolve it.
      tcp::resolver resolver(*impl_->contexts[0]);
      auto results = resolver.resolve(e.host, std::to_string(e.port), ec);
      if (ec || results.empty()) {
        error = "listeners: cannot resolve host '" + e.host + "'";
        return false;
      }
      address = results.begin()->endpoint().address();
    }
    auto acceptor = std::make_unique<tcp::acceptor>(*impl_->contexts[0]);
    tcp::endpoint endpoint(address, e.port);
    acceptor->open(endpoint.protocol(), ec);
    if (!ec) acceptor->set_option(tcp::acceptor::reuse_address(true), ec);
    // On the listening socket, as Kafka sets it, so that accepted connections start with it and
    // the TCP window scale their handshake agrees on fits it.
    if (!ec && impl_->receive_buffer_bytes >= 0) {
      acceptor->set_option(asio::socket_base::receive_buffer_size(impl_->receive_buffer_bytes), ec);
    }
    // Bound now, so that a taken port fails the start; listening only once the logs are loaded,
    // so that clients are refused rather than left waiting meanwhile.
    if (!ec) acceptor->bind(endpoint, ec);
    if (ec) {
      error = "listener " + e.name + " on " + e.host + ":" + std::to_string(e.port) + ": " +
              ec.message();
      return false;
    }
    impl_->acceptors.push_back(std::move(acceptor));
    impl_->acceptor_endpoints.push_back(e);
    impl_->acceptor_tls.push_back(std::move(tls));
  }
  return true;
}

void Server::start() {
  impl_->signals.async_wait([this](const boost::system::error_code& ec, int signal) {
    if (!ec) {
      spdlog::info("received signal {}, shutting down", signal);
      impl_->stop();
    }
  });
  for (auto& context : impl_->contexts) {
    impl_->threads.emplace_back([ctx = context.get()] {
      auto guard = asio::make_work_guard(*ctx);
      ctx->run();
    });
  }
}

bool Server::accept(std::string& error) {
  for (size_t i = 0; i < impl_->acceptors.size(); ++i) {
    auto& acceptor = *impl_->acceptors[i];
    const auto& listener = impl_->acceptor_endpoints[i];
    const auto& name = listener.name;
    boost::system::error_code ec;
    acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      error = "cannot listen on " + name + " (" + listener.host + ":" +
              std::to_string(listener.port) + "): " + ec.message();
      return false;
    }
    auto endpoint = acceptor.local_endpoint(ec);
    spdlog::info("accepting on {}://{}:{}", name, endpoint.address().to_string(), endpoint.port());
    const auto& tls = impl_->acceptor_tls[i];
    asio::co_spawn(*impl_->contexts[0],
                   impl_->accept_loop(acceptor, listener, tls ? &*tls : nullptr), asio::detached);
  }
  return true;
}

void Server::wait() {
  for (auto& t : impl_->threads) t.join();
  impl_->threads.clear();
}

bool Server::stopping() const {
  return impl_->stopping;
}

asio::io_context& Server::main_context() {
  return *impl_->contexts[0];
}

void Server::stop() {
  if (impl_) impl_->stop();
}

}  // namespace oxbow::broker
