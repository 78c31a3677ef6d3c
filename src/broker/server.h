#pragma once
// The network side: one single-threaded io_context per I/O thread, listeners accepting on the
// first, connections spread round-robin over all. A connection reads requests in order, handles
// up to kMaxInFlight of them concurrently (so that one client's pipelined produces share an fsync)
// and writes the responses back in request order.
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "broker/config.h"

namespace oxbow::broker {

class Broker;

class Server {
 public:
  Server(Broker& broker, int threads);
  ~Server();

  bool listen(const std::vector<Endpoint>& endpoints, std::string& error);
  // Runs the I/O threads until stop() or SIGINT/SIGTERM.
  void run();
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace oxbow::broker
