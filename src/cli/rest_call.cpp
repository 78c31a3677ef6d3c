#include "cli/rest_call.h"

#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "cli/client_config.h"
#include "http/client.h"

namespace oxbow::cli {

namespace {

constexpr int kTimeoutMs = 30000;

// An error is one line, however long the text it quotes (a stack trace, an HTML page).
std::string first_line(const std::string& text) {
  return text.substr(0, text.find_first_of("\r\n"));
}

}  // namespace

http::Response rest_call(const RestService& service, const std::string& method,
                         const std::string& path, const std::string& body) {
  http::Request request;
  request.method = method;
  auto question = path.find('?');
  request.path = path.substr(0, question);
  if (question != std::string::npos) request.query = path.substr(question + 1);
  request.accept = service.media_type;
  if (!body.empty()) request.content_type = service.media_type;
  request.body = body;
  auto exchange = http::send_request(service.url, request, kTimeoutMs);
  if (!exchange.response)
    fail(fmt::format("cannot reach {} at {}: {}", service.name, service.url,
                     first_line(exchange.error)));
  http::Response& response = *exchange.response;
  if (response.status < 400) return std::move(response);
  auto answer = nlohmann::json::parse(response.body, nullptr, false);
  if (answer.is_object() && answer.contains("message") && answer["message"].is_string())
    fail(fmt::format("{} (error code {})", first_line(answer["message"].get<std::string>()),
                     answer.value("error_code", response.status)));
  fail(fmt::format("HTTP {}: {}", response.status, first_line(response.body)));
}

}  // namespace oxbow::cli
