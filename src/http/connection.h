#pragma once
// The stream server's inside (not for users): what its HTTP/1.1 and HTTP/2 connections share.
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>  // before Boost.Asio's awaitable.hpp, which uses std::exchange
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core/flat_buffer.hpp>

#include "http/stream_server.h"

namespace oxbow::http {

// What every connection of one server reaches: the handler, the options and the handler threads.
struct ServerCore : std::enable_shared_from_this<ServerCore> {
  ServerCore(StreamHandler h, StreamServerOptions o);

  std::shared_ptr<StreamExchange> make_exchange(StreamRequest request,
                                                std::weak_ptr<Connection> connection,
                                                int32_t stream_id);
  // Runs the handler on the exchange's handler strand; a throwing handler answers 500.
  void dispatch(const std::shared_ptr<StreamExchange>& exchange);
  void track(const std::shared_ptr<Connection>& connection);
  void close_all();

  const StreamHandler handler;
  const StreamServerOptions options;
  boost::asio::thread_pool pool;
  std::mutex mutex;
  std::vector<std::weak_ptr<Connection>> connections;
};

// One accepted socket. Everything but exchange_ready() and close() runs on the socket's strand.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  virtual ~Connection() = default;
  // Any thread: the exchange has a new head, pieces or its end to send.
  virtual void exchange_ready(std::shared_ptr<StreamExchange> exchange) = 0;
  // Any thread: closes the connection; its unfinished exchanges see the client gone.
  void close();
  boost::asio::any_io_executor executor() { return socket_.get_executor(); }

 protected:
  Connection(boost::asio::ip::tcp::socket socket, std::shared_ptr<ServerCore> core);
  // On the strand: closes the socket, stops the watchdog, marks open exchanges gone.
  virtual void shut() = 0;
  // On the strand: the idle timeout passed. Closes, unless a protocol says goodbye first (then
  // the watchdog calls again a while later, and it closes).
  virtual void close_idle() { shut(); }
  // Marks the connection closed, closes its socket and stops the watchdog.
  void close_socket();
  void touch() { last_activity_ = std::chrono::steady_clock::now(); }
  // Closes the connection once it has had no open exchange and received nothing for the idle
  // timeout. `open_exchanges()` is asked on the strand.
  void start_watchdog();
  virtual size_t open_exchanges() const = 0;

  boost::asio::ip::tcp::socket socket_;
  std::shared_ptr<ServerCore> core_;
  boost::asio::steady_timer watchdog_;
  bool closed_ = false;

 private:
  std::chrono::steady_clock::time_point last_activity_;
};

// The first request of an `Upgrade: h2c` connection, which becomes HTTP/2's stream 1.
struct H2cUpgrade {
  StreamRequest request;
  std::string settings;  // the decoded HTTP2-Settings payload
};

// Serves one accepted socket: HTTP/2 when it opens with the client preface, else HTTP/1.1.
void serve_connection(boost::asio::ip::tcp::socket socket, std::shared_ptr<ServerCore> core);
// Serves HTTP/2 on a socket whose first `received` bytes were already read.
void serve_http2(boost::asio::ip::tcp::socket socket, std::string received,
                 std::shared_ptr<ServerCore> core, std::optional<H2cUpgrade> upgrade);

// Serves a WebSocket on a socket whose upgrade request `exchange` accepted (the 101 is not sent).
void serve_websocket(boost::asio::ip::tcp::socket socket, std::shared_ptr<ServerCore> core,
                     std::shared_ptr<StreamExchange> exchange);

}  // namespace oxbow::http
