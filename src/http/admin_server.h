#pragma once
// A small HTTP/1.1 server (Boost.Beast) for the admin API: it accepts on the broker's own
// io_context and hands every request to one handler function.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace boost::asio {
class io_context;
}

namespace oxbow::http {

struct Request {
  std::string method;
  std::string path;   // without the query string
  std::string query;  // after '?', or empty
  std::string body;
  std::string accept, content_type;  // the headers, empty when absent
  std::string via;  // the Via header: set by a proxy (or a registry forwarding to its primary)
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

using Handler = std::function<Response(const Request&)>;

class AdminServer {
 public:
  AdminServer(boost::asio::io_context& context, Handler handler);
  ~AdminServer();

  // Binds and starts accepting; `port` 0 picks a free one (see port()).
  bool listen(const std::string& host, uint16_t port, std::string& error);
  uint16_t port() const;
  void close();

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace oxbow::http
