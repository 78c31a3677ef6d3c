#include "oxbow/registry/client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <mutex>
#include <optional>
#include <tuple>

#include <nlohmann/json.hpp>

#include "registry/serde/http_util.h"

namespace oxbow::registry {

namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;
using Json = nlohmann::json;

RegistryClientError::RegistryClientError(int http_status, int error_code, std::string message)
    : std::runtime_error(http_status == 0 ? "schema registry unreachable: " + message
                                          : "schema registry error " + std::to_string(error_code) +
                                                ": " + message),
      http_status_(http_status),
      error_code_(error_code),
      message_(std::move(message)) {}

ClientConfig ClientConfig::from_properties(const std::map<std::string, std::string>& properties) {
  ClientConfig config;
  if (auto it = properties.find("schema.registry.url"); it != properties.end())
    config.urls = serde::split_list(it->second);
  auto source = properties.find("basic.auth.credentials.source");
  auto info = properties.find("basic.auth.user.info");
  if (info != properties.end() && (source == properties.end() || source->second == "USER_INFO"))
    config.basic_auth_user_info = info->second;
  if (auto it = properties.find("schema.registry.request.timeout.ms"); it != properties.end())
    config.timeout = std::chrono::milliseconds(std::stoll(it->second));
  return config;
}

namespace {

struct Response {
  int status = 0;
  std::string body;
};

SchemaInfo schema_info(const Json& body) {
  SchemaInfo info;
  info.schema = body.value("schema", "");
  info.type = body.value("schemaType", "AVRO");
  if (auto refs = body.find("references"); refs != body.end() && refs->is_array())
    for (const auto& r : *refs)
      info.references.push_back(
          {r.value("name", ""), r.value("subject", ""), r.value("version", 0)});
  return info;
}

Json schema_body(const SchemaInfo& info) {
  Json body = {{"schema", info.schema}};
  if (info.type != "AVRO") body["schemaType"] = info.type;
  if (!info.references.empty()) {
    Json refs = Json::array();
    for (const auto& r : info.references)
      refs.push_back({{"name", r.name}, {"subject", r.subject}, {"version", r.version}});
    body["references"] = refs;
  }
  return body;
}

RegisteredSchema registered(const Json& body) {
  RegisteredSchema out;
  out.subject = body.value("subject", "");
  out.id = body.value("id", 0);
  out.version = body.value("version", 0);
  out.info = schema_info(body);
  return out;
}

}  // namespace

struct SchemaRegistryClient::Impl {
  ClientConfig config;
  std::vector<serde::Url> urls;
  std::string authorization;

  std::mutex connection_mutex;  // one request at a time on the one connection
  boost::asio::io_context io;
  std::optional<beast::tcp_stream> stream;
  size_t current = 0;  // index into urls

  std::mutex cache_mutex;
  std::map<int, SchemaInfo> by_id;
  std::map<std::tuple<std::string, std::string, std::string, bool>, RegisteredSchema> by_schema;

  explicit Impl(ClientConfig c) : config(std::move(c)) {
    if (config.urls.empty()) throw RegistryClientError(0, 0, "no schema registry URL");
    for (const auto& u : config.urls) urls.push_back(serde::parse_url(u));
    if (!config.basic_auth_user_info.empty())
      authorization = "Basic " + serde::base64(config.basic_auth_user_info);
  }

  void close() {
    if (!stream) return;
    beast::error_code ignored;
    stream->socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream.reset();
  }

  // Runs one asynchronous operation to its end: tcp_stream's timeouts apply to asynchronous
  // operations only, and a registry that hangs must not hang its client.
  template <class Start>
  void run(Start&& start) {
    beast::error_code result;
    start([&result](beast::error_code ec, auto&&...) { result = ec; });
    io.restart();
    io.run();
    if (result) throw beast::system_error(result);
  }

  Response exchange(const serde::Url& url, http::verb verb, const std::string& target,
                    const std::string& body) {
    if (!stream) {
      stream.emplace(io);
      tcp::resolver resolver(io);
      auto endpoints = resolver.resolve(url.host, url.port);
      stream->expires_after(config.timeout);
      run([&](auto handler) { stream->async_connect(endpoints, handler); });
    }
    http::request<http::string_body> req{verb, url.base_path + target, 11};
    req.set(http::field::host, url.host + ":" + url.port);
    req.set(http::field::user_agent, "oxbow-registry-client");
    req.set(http::field::accept, "application/vnd.schemaregistry.v1+json, application/json");
    if (!authorization.empty()) req.set(http::field::authorization, authorization);
    req.keep_alive(true);
    if (verb == http::verb::post) {
      req.set(http::field::content_type, "application/vnd.schemaregistry.v1+json");
      req.body() = body;
    }
    req.prepare_payload();
    stream->expires_after(config.timeout);
    run([&](auto handler) { http::async_write(*stream, req, handler); });
    beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(64 * 1024 * 1024);
    run([&](auto handler) { http::async_read(*stream, buffer, parser, handler); });
    auto res = parser.release();
    if (!res.keep_alive()) close();
    return {static_cast<int>(res.result_int()), std::move(res.body())};
  }

  Response request(http::verb verb, const std::string& target, const std::string& body = {}) {
    std::lock_guard lock(connection_mutex);
    std::string last_error;
    for (size_t tried = 0; tried < urls.size(); ++tried) {
      const auto& url = urls[current];
      // The kept-alive connection may have been closed by the server: one retry, afresh.
      for (int attempt = 0; attempt < 2; ++attempt) {
        try {
          return exchange(url, verb, target, body);
        } catch (const std::exception& e) {
          last_error = url.text + ": " + e.what();
          close();
        }
      }
      current = (current + 1) % urls.size();
    }
    throw RegistryClientError(0, 0, last_error);
  }

  Json call(http::verb verb, const std::string& target, const std::string& body = {}) {
    auto res = request(verb, target, body);
    Json parsed = Json::parse(res.body, nullptr, false);
    if (res.status < 200 || res.status >= 300) {
      if (parsed.is_object() && parsed.contains("error_code"))
        throw RegistryClientError(res.status, parsed.value("error_code", res.status),
                                  parsed.value("message", std::string()));
      throw RegistryClientError(res.status, res.status, res.body.substr(0, 200));
    }
    if (parsed.is_discarded())
      throw RegistryClientError(res.status, 50000,
                                "the answer is not JSON: " + res.body.substr(0, 200));
    return parsed;
  }
};

SchemaRegistryClient::SchemaRegistryClient(ClientConfig config)
    : impl_(std::make_unique<Impl>(std::move(config))) {}
SchemaRegistryClient::~SchemaRegistryClient() = default;

int SchemaRegistryClient::register_schema(const std::string& subject, const SchemaInfo& schema,
                                          bool normalize) {
  auto key = std::make_tuple(subject, schema.schema, schema.type, normalize);
  {
    std::lock_guard lock(impl_->cache_mutex);
    if (auto it = impl_->by_schema.find(key); it != impl_->by_schema.end()) return it->second.id;
  }
  const Json body = impl_->call(http::verb::post,
                                "/subjects/" + serde::percent_encode(subject) + "/versions" +
                                    (normalize ? "?normalize=true" : ""),
                                schema_body(schema).dump());
  RegisteredSchema out;
  out.subject = subject;
  out.id = body.value("id", 0);
  out.info = schema;
  std::lock_guard lock(impl_->cache_mutex);
  impl_->by_schema.emplace(key, out);
  impl_->by_id.emplace(out.id, schema);
  return out.id;
}

SchemaInfo SchemaRegistryClient::schema_by_id(int id) {
  {
    std::lock_guard lock(impl_->cache_mutex);
    if (auto it = impl_->by_id.find(id); it != impl_->by_id.end()) return it->second;
  }
  SchemaInfo info = schema_info(impl_->call(http::verb::get, "/schemas/ids/" + std::to_string(id)));
  std::lock_guard lock(impl_->cache_mutex);
  impl_->by_id.emplace(id, info);
  return info;
}

RegisteredSchema SchemaRegistryClient::lookup(const std::string& subject, const SchemaInfo& schema,
                                              bool normalize) {
  auto key = std::make_tuple(subject, schema.schema, schema.type, normalize);
  {
    std::lock_guard lock(impl_->cache_mutex);
    if (auto it = impl_->by_schema.find(key); it != impl_->by_schema.end() && it->second.version)
      return it->second;
  }
  RegisteredSchema out = registered(impl_->call(
      http::verb::post,
      "/subjects/" + serde::percent_encode(subject) + (normalize ? "?normalize=true" : ""),
      schema_body(schema).dump()));
  std::lock_guard lock(impl_->cache_mutex);
  impl_->by_schema[key] = out;
  impl_->by_id.emplace(out.id, out.info);
  return out;
}

RegisteredSchema SchemaRegistryClient::latest(const std::string& subject) {
  RegisteredSchema out = registered(impl_->call(
      http::verb::get, "/subjects/" + serde::percent_encode(subject) + "/versions/latest"));
  std::lock_guard lock(impl_->cache_mutex);
  impl_->by_id.emplace(out.id, out.info);
  return out;
}

RegisteredSchema SchemaRegistryClient::version(const std::string& subject, int version) {
  RegisteredSchema out =
      registered(impl_->call(http::verb::get, "/subjects/" + serde::percent_encode(subject) +
                                                  "/versions/" + std::to_string(version)));
  std::lock_guard lock(impl_->cache_mutex);
  impl_->by_id.emplace(out.id, out.info);
  return out;
}

}  // namespace oxbow::registry
