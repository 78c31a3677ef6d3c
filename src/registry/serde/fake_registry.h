#pragma once
// For the serdes' tests only.
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace oxbow::registry::testing {

namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;

// An in-process stand-in for the registry's REST API: enough of it for the client (ids shared
// across subjects by schema text, versions per subject, Confluent's error bodies).
class FakeRegistry {
 public:
  using Json = nlohmann::json;

  FakeRegistry() : acceptor_(io_, {boost::asio::ip::make_address("127.0.0.1"), 0}) {
    thread_ = std::thread([this] { accept_loop(); });
  }
  ~FakeRegistry() {
    stopping_ = true;
    beast::error_code ec;
    tcp::socket wake(io_);
    wake.connect(acceptor_.local_endpoint(), ec);
    thread_.join();
    std::lock_guard lock(mutex_);
    for (auto& s : sockets_) s->shutdown(tcp::socket::shutdown_both, ec);
    for (auto& t : connections_) t.join();
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port()); }
  int port() const { return acceptor_.local_endpoint().port(); }
  int requests() const { return requests_; }
  std::string authorization() {
    std::lock_guard lock(mutex_);
    return authorization_;
  }

 private:
  struct Version {
    int id;
    Json schema;  // {"schema", and "schemaType" and "references" when given}
  };

  void accept_loop() {
    while (!stopping_) {
      auto socket = std::make_shared<tcp::socket>(io_);
      beast::error_code ec;
      acceptor_.accept(*socket, ec);
      if (ec || stopping_) return;
      std::lock_guard lock(mutex_);
      sockets_.push_back(socket);
      connections_.emplace_back([this, socket] { serve(*socket); });
    }
  }

  void serve(tcp::socket& socket) {
    beast::flat_buffer buffer;
    for (;;) {
      http::request<http::string_body> req;
      beast::error_code ec;
      http::read(socket, buffer, req, ec);
      if (ec) return;
      ++requests_;
      auto [status, body] = answer(req);
      http::response<http::string_body> res{static_cast<http::status>(status), 11};
      res.set(http::field::content_type, "application/vnd.schemaregistry.v1+json");
      res.keep_alive(req.keep_alive());
      res.body() = body.dump();
      res.prepare_payload();
      http::write(socket, res, ec);
      if (ec || !req.keep_alive()) return;
    }
  }

  static std::string decoded(std::string_view s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '%' && i + 2 < s.size()) {
        out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
        i += 2;
      } else {
        out += s[i];
      }
    }
    return out;
  }

  static std::pair<int, Json> error(int status, int code, const std::string& message) {
    return {status, {{"error_code", code}, {"message", message}}};
  }

  std::pair<int, Json> answer(const http::request<http::string_body>& req) {
    std::lock_guard lock(mutex_);
    authorization_ = std::string(req[http::field::authorization]);
    std::string target(req.target());
    const bool normalize = target.ends_with("?normalize=true");
    if (normalize) target.resize(target.size() - 15);
    if (target.rfind("/schemas/ids/", 0) == 0) {
      const int id = std::stoi(target.substr(13));
      if (!by_id_.count(id))
        return error(404, 40403, "Schema " + std::to_string(id) + " not found");
      return {200, by_id_[id]};
    }
    if (target.rfind("/subjects/", 0) != 0) return error(404, 404, "HTTP 404 Not Found");
    std::string rest = target.substr(10);
    const auto slash = rest.find('/');
    const std::string subject = decoded(rest.substr(0, slash));
    const std::string tail = slash == std::string::npos ? "" : rest.substr(slash);
    auto& versions = subjects_[subject];
    auto version_json = [&](size_t v) {
      Json out = versions[v].schema;
      out.update(Json{{"subject", subject}, {"version", v + 1}, {"id", versions[v].id}});
      return out;
    };
    if (req.method() == http::verb::post) {
      const Json request = Json::parse(req.body());
      Json schema = {{"schema", request.at("schema")}};
      for (const char* field : {"schemaType", "references"})
        if (request.contains(field)) schema[field] = request[field];
      for (size_t v = 0; v < versions.size(); ++v)
        if (versions[v].schema == schema)
          return {200, tail.empty() ? version_json(v) : Json{{"id", versions[v].id}}};
      if (tail.empty()) return error(404, 40403, "Schema not found");
      int id = 0;
      for (const auto& [known, text] : by_id_)
        if (text == schema) id = known;
      if (id == 0) by_id_[id = static_cast<int>(by_id_.size()) + 1] = schema;
      versions.push_back({id, schema});
      return {200, {{"id", id}}};
    }
    if (versions.empty()) return error(404, 40401, "Subject '" + subject + "' not found.");
    if (tail == "/versions/latest") return {200, version_json(versions.size() - 1)};
    const size_t v = std::stoul(tail.substr(10));
    if (v < 1 || v > versions.size()) return error(404, 40402, "Version not found.");
    return {200, version_json(v - 1)};
  }

  boost::asio::io_context io_;
  tcp::acceptor acceptor_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> requests_{0};
  std::mutex mutex_;
  std::vector<std::shared_ptr<tcp::socket>> sockets_;
  std::vector<std::thread> connections_;
  std::map<int, Json> by_id_;
  std::map<std::string, std::vector<Version>> subjects_;
  std::string authorization_;
};

}  // namespace oxbow::registry::testing
