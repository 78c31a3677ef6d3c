#pragma once
// The network side: one single-threaded io_context per I/O thread, listeners (with their TLS
// setup) accepting on the first, connections (connection.h) spread round-robin over all.
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "broker/config/config.h"

namespace boost::asio {
class io_context;
}

namespace oxbow::broker {

class Broker;

class Server {
 public:
  Server(Broker& broker, int threads);
  ~Server();

  // Binds the listeners; connections are accepted only from accept() on.
  bool listen(const std::vector<Endpoint>& endpoints, std::string& error);
  // Starts the I/O threads (which also watch for SIGINT/SIGTERM).
  void start();
  // Listens on every bound listener and accepts from then on; false with `error` when one cannot
  // listen (its address taken since it was bound).
  bool accept(std::string& error);
  // Blocks until stop() or a signal ends the I/O threads.
  void wait();
  void stop();
  bool stopping() const;
  // The first I/O thread's context, which also serves the admin HTTP API.
  boost::asio::io_context& main_context();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace oxbow::broker
