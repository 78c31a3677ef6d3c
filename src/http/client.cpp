#include "http/client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>

namespace oxbow::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;

Exchange send_request(const std::string& url, const Request& request, int timeout_ms) {
  Exchange out;
  const std::string scheme = "http://";
  std::string authority = url.rfind(scheme, 0) == 0 ? url.substr(scheme.size()) : url;
  authority = authority.substr(0, authority.find('/'));
  auto colon = authority.rfind(':');
  if (colon == std::string::npos) {
    out.error = "no port in " + url;
    return out;
  }
  std::string host = authority.substr(0, colon), port = authority.substr(colon + 1);

  asio::io_context context;
  beast::tcp_stream stream(context);
  bhttp::request<bhttp::string_body> req{
      bhttp::string_to_verb(request.method),
      request.path + (request.query.empty() ? "" : "?") + request.query, 11};
  req.set(bhttp::field::host, authority);
  if (!request.via.empty()) req.set(bhttp::field::via, request.via);
  if (!request.accept.empty()) req.set(bhttp::field::accept, request.accept);
  if (!request.content_type.empty()) req.set(bhttp::field::content_type, request.content_type);
  req.body() = request.body;
  req.prepare_payload();
  bhttp::response<bhttp::string_body> res;
  beast::flat_buffer buffer;
  beast::error_code failure;

  // Each step chains the next; one deadline covers them all.
  asio::ip::tcp::resolver resolver(context);
  stream.expires_after(std::chrono::milliseconds(timeout_ms));
  resolver.async_resolve(host, port, [&](beast::error_code ec, auto results) {
    if (ec) return void(failure = ec);
    stream.async_connect(results, [&](beast::error_code ec, auto) {
      if (ec) return void(failure = ec);
      bhttp::async_write(stream, req, [&](beast::error_code ec, size_t) {
        if (ec) return void(failure = ec);
        bhttp::async_read(stream, buffer, res, [&](beast::error_code ec, size_t) { failure = ec; });
      });
    });
  });
  context.run();
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

}  // namespace oxbow::http
