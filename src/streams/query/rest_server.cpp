#include "oxbow/streams/rest_server.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <nlohmann/json.hpp>

#include "http/admin_server.h"
#include "http/client.h"

namespace oxbow::streams::rest {

namespace {

// What forward() adds to Via: HTTP's "protocol-version pseudonym".
constexpr const char* kPseudonym = "oxbow-streams";
constexpr const char* kVia = "1.1 oxbow-streams";

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::vector<std::string> segments(const std::string& path) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (end > start) out.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

struct Segment {
  std::string text;
  bool param = false;
};

struct Route {
  std::string method;
  std::vector<Segment> pattern;
  Handler handler;

  bool matches(const std::vector<std::string>& path,
               std::map<std::string, std::string>& params) const {
    if (path.size() != pattern.size()) return false;
    std::map<std::string, std::string> found;
    for (size_t i = 0; i < path.size(); ++i) {
      std::string decoded = percent_decode(path[i]);
      if (pattern[i].param)
        found[pattern[i].text] = std::move(decoded);
      else if (decoded != pattern[i].text)
        return false;
    }
    params = std::move(found);
    return true;
  }
};

http::Response to_http(Response r) {
  return http::Response{r.status, std::move(r.content_type), std::move(r.body)};
}

}  // namespace

std::string percent_decode(const std::string& text, bool plus_as_space) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '%' && i + 2 < text.size()) {
      int hi = hex_value(text[i + 1]), lo = hex_value(text[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        continue;
      }
    }
    out.push_back(plus_as_space && c == '+' ? ' ' : c);
  }
  return out;
}

std::string json_escape(const std::string& text) {
  // Bytes that are not UTF-8 become U+FFFD, so that the answer stays valid JSON.
  std::string quoted =
      nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return quoted.substr(1, quoted.size() - 2);
}

Response Response::error(int status, const std::string& message) {
  return json("{\"error_code\":" + std::to_string(status) + ",\"message\":\"" +
                  json_escape(message) + "\"}",
              status);
}

bool Request::forwarded() const {
  return via.find(kPseudonym) != std::string::npos;
}

const std::string& Request::param(const std::string& name) const {
  static const std::string kEmpty;
  auto it = params.find(name);
  return it == params.end() ? kEmpty : it->second;
}

std::optional<std::string> Request::query_param(const std::string& name) const {
  size_t start = 0;
  while (start <= query.size()) {
    size_t end = query.find('&', start);
    if (end == std::string::npos) end = query.size();
    std::string pair = query.substr(start, end - start);
    size_t eq = pair.find('=');
    if (percent_decode(pair.substr(0, eq), true) == name)
      return eq == std::string::npos ? std::string() : percent_decode(pair.substr(eq + 1), true);
    start = end + 1;
  }
  return std::nullopt;
}

struct RestServer::Impl {
  Impl(size_t min, size_t max) : min_threads(std::max<size_t>(min, 1)), max_threads(max) {
    if (max_threads < min_threads) max_threads = min_threads;
  }

  http::Response handle(const http::Request& in) {
    Busy busy(*this);
    auto path = segments(in.path);
    Request request;
    const Route* route = nullptr;
    bool other_method = false;
    for (const auto& r : routes) {
      std::map<std::string, std::string> params;
      if (!r.matches(path, params)) continue;
      if (r.method != in.method) {
        other_method = true;
        continue;
      }
      route = &r;
      request.params = std::move(params);
      break;
    }
    if (!route) {
      if (other_method)
        return to_http(Response::error(405, "method " + in.method + " not allowed on " + in.path));
      return to_http(Response::error(404, "no resource at " + in.path));
    }
    request.method = in.method;
    request.path = in.path;
    request.query = in.query;
    request.body = in.body;
    request.content_type = in.content_type;
    request.accept = in.accept;
    request.via = in.via;
    try {
      return to_http(route->handler(request));
    } catch (const std::exception& e) {
      return to_http(Response::error(500, std::string("internal error: ") + e.what()));
    }
  }

  // Counts the threads inside handlers; the last free one entering adds another, so that
  // connections still waiting are picked up while every thread is blocked.
  struct Busy {
    explicit Busy(Impl& i) : impl(i) {
      if (impl.busy.fetch_add(1) + 1 >= impl.thread_count.load()) impl.add_thread();
    }
    ~Busy() { impl.busy.fetch_sub(1); }
    Impl& impl;
  };

  void add_thread() {
    std::lock_guard lock(threads_mutex);
    if (stopped || threads.size() >= max_threads) return;
    threads.emplace_back([this] { context.run(); });
    thread_count.store(threads.size());
  }

  size_t min_threads, max_threads;
  std::vector<Route> routes;
  boost::asio::io_context context;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work{
      context.get_executor()};
  // Declared after the context: destroyed before it, as its acceptor lives on the context.
  std::unique_ptr<http::AdminServer> server;
  std::mutex threads_mutex;  // guards threads and stopped
  std::vector<std::thread> threads;
  bool started = false, stopped = false;
  std::atomic<size_t> busy{0}, thread_count{0};
};

RestServer::RestServer(size_t min_threads, size_t max_threads)
    : impl_(std::make_unique<Impl>(min_threads, max_threads)) {}

RestServer::~RestServer() {
  stop();
}

RestServer& RestServer::route(std::string method, std::string pattern, Handler handler) {
  if (impl_->started) throw std::logic_error("RestServer: routes are added before start()");
  Route r;
  r.method = std::move(method);
  for (auto& s : segments(pattern)) {
    Segment segment;
    segment.param = s.size() >= 2 && s.front() == '{' && s.back() == '}';
    segment.text = segment.param ? s.substr(1, s.size() - 2) : std::move(s);
    r.pattern.push_back(std::move(segment));
  }
  r.handler = std::move(handler);
  impl_->routes.push_back(std::move(r));
  return *this;
}

void RestServer::start(const std::string& host, uint16_t port) {
  if (impl_->started) throw std::logic_error("RestServer: already started");
  std::string address = host.empty() ? "0.0.0.0" : host;
  boost::system::error_code ec;
  boost::asio::ip::make_address(address, ec);
  if (ec) {
    // AdminServer listens on an address; a name (localhost) is resolved here first.
    boost::asio::ip::tcp::resolver resolver(impl_->context);
    auto results = resolver.resolve(address, std::to_string(port), ec);
    if (ec || results.empty())
      throw std::runtime_error("REST server: cannot resolve '" + host + "': " + ec.message());
    // IPv4 first: "localhost" is 127.0.0.1 to most clients, even where it also resolves to ::1.
    auto chosen = results.begin();
    for (auto it = results.begin(); it != results.end(); ++it)
      if (it->endpoint().address().is_v4()) {
        chosen = it;
        break;
      }
    address = chosen->endpoint().address().to_string();
  }
  impl_->server = std::make_unique<http::AdminServer>(
      impl_->context, [impl = impl_.get()](const http::Request& r) { return impl->handle(r); });
  std::string error;
  if (!impl_->server->listen(address, port, error)) {
    impl_->server.reset();
    throw std::runtime_error("REST server: cannot listen on " + host + ":" + std::to_string(port) +
                             ": " + error);
  }
  impl_->started = true;
  for (size_t i = 0; i < impl_->min_threads; ++i) impl_->add_thread();
}

uint16_t RestServer::port() const {
  return impl_->server ? impl_->server->port() : 0;
}

void RestServer::stop() {
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(impl_->threads_mutex);
    if (impl_->stopped || !impl_->started) return;
    impl_->stopped = true;
    threads.swap(impl_->threads);
  }
  impl_->server->close();
  impl_->work.reset();
  impl_->context.stop();
  for (auto& t : threads) t.join();
}

Response forward(const HostInfo& target, const Request& request,
                 std::chrono::milliseconds timeout) {
  if (target.port() <= 0 || target == HostInfo::unavailable())
    return Response::error(503, "no instance holds this now (the group may be rebalancing)");
  std::string where = target.host() + ":" + std::to_string(target.port());
  if (request.forwarded())
    return Response::error(508, "not forwarding " + request.method + " " + request.path + " to " +
                                    where + ": it was forwarded already (Via: " + request.via +
                                    ")");
  http::Request out;
  out.method = request.method;
  out.path = request.path;
  out.query = request.query;
  out.body = request.body;
  out.accept = request.accept;
  out.content_type = request.content_type;
  out.via = request.via.empty() ? kVia : request.via + ", " + kVia;
  auto ms = timeout.count() < 1 ? 1 : timeout.count() > INT32_MAX ? INT32_MAX : timeout.count();
  auto exchange = http::send_request("http://" + where, out, static_cast<int>(ms));
  if (!exchange.response)
    return Response::error(502, "no answer from " + where + ": " + exchange.error);
  return Response{exchange.response->status, std::move(exchange.response->content_type),
                  std::move(exchange.response->body)};
}

}  // namespace oxbow::streams::rest
