#include "sql/server/print_resource.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <thread>

#include <nlohmann/json.hpp>

#include "http/stream_server.h"
#include "http/websocket_session.h"
#include "sql/engine/print_topic.h"
#include "sql/kafka/kafka_topic_access.h"
#include "sql/kafka/registry_decoders.h"
#include "sql/parser/parser.h"
#include "sql/server/entities.h"
#include "sql/server/ksql_resource.h"
#include "sql/server/transient_query.h"

namespace oxbow::sql::server {

namespace {

using Clock = std::chrono::steady_clock;

// ksqlDB polls for a second (its disconnect check interval) and writes an empty line after a poll
// that found nothing: the client sees the connection alive, and the response's head goes out.
constexpr auto kIdleLine = std::chrono::seconds(1);
// While a client reads slowly, reading waits this long between looks at what it has not taken.
constexpr auto kSlowClientCheck = std::chrono::milliseconds(50);

}  // namespace

PrintTopics::PrintTopics(ClientConfig client, const std::string& registry_url)
    : client_(std::move(client)), registry_(registry_decoders(registry_url)) {}

PrintTopics::~PrintTopics() {
  close_all();
}

std::optional<PrintTopics::Request> PrintTopics::request_of(std::string_view body) {
  nlohmann::json request = nlohmann::json::parse(body, nullptr, false);
  if (!request.is_object()) return std::nullopt;
  auto ksql = request.find("ksql");
  if (ksql == request.end() || !ksql->is_string()) return std::nullopt;
  try {
    auto statements = parser::parse(with_session_variables(request, ksql->get<std::string>()));
    if (statements.size() != 1) return std::nullopt;
    const auto* print = std::get_if<parser::Print>(&statements.front().body);
    if (!print) return std::nullopt;
    return Request{statements.front().text, *print};
  } catch (const std::exception&) {
    return std::nullopt;  // not a statement: the queries' error answers it
  }
}

void PrintTopics::handle(std::shared_ptr<http::StreamExchange> exchange, const Request& request) {
  auto access = std::make_shared<KafkaTopicAccess>(client_);
  std::string topic;
  try {
    topic = checked_print_topic(*access, request.print, request.statement);
  } catch (const std::exception& e) {
    RestResponse r = generic_error(400, kBadRequest, e.what());
    return exchange->respond(r.status, "application/json", std::move(r.body));
  }
  exchange->set_status(200);
  exchange->set_header("content-type", "application/json");
  Client client;
  client.write = [exchange](const std::string& line) { exchange->write(line + "\n"); };
  client.unsent_bytes = [exchange] { return exchange->unsent_bytes(); };
  client.gone = [exchange] { return exchange->client_gone(); };
  // As ksqlDB ends a PRINT that fails: its message on a line of its own.
  client.finish = [exchange](const std::string& error) {
    if (!error.empty()) exchange->write(error + "\n");
    exchange->finish();
  };
  client.idle_lines = true;
  start(std::move(client), std::move(access), topic, request.print);
}

void PrintTopics::handle(std::shared_ptr<http::WebSocketSession> session, const Request& request,
                         std::function<void(const std::string& error)> end) {
  auto access = std::make_shared<KafkaTopicAccess>(client_);
  std::string topic = checked_print_topic(*access, request.print, request.statement);
  Client client;
  client.write = [session](const std::string& line) { session->send(nlohmann::json(line).dump()); };
  client.unsent_bytes = [session] { return session->unsent_bytes(); };
  client.gone = [session] { return session->client_gone(); };
  client.finish = std::move(end);
  start(std::move(client), std::move(access), topic, request.print);
}

void PrintTopics::start(Client client, std::shared_ptr<TopicAccess> access,
                        const std::string& topic, const parser::Print& print) {
  {
    std::lock_guard lock(mutex_);
    ++running_;
  }
  spdlog::info("sql-server: printing topic '{}'", topic);
  std::thread([this, client = std::move(client), access, topic, print] {
    stream(client, *access, topic, print);
    {
      std::lock_guard lock(mutex_);
      --running_;
    }
    ended_.notify_all();
  }).detach();
}

void PrintTopics::stream(const Client& client, TopicAccess& access, const std::string& topic,
                         const parser::Print& print) {
  auto last_write = Clock::now();
  PrintOutput output;
  output.registry = registry_;
  output.end_when_caught_up = false;  // as ksqlDB's: until the LIMIT or the client leaves
  output.line = [&](const std::string& line) {
    client.write(line);
    last_write = Clock::now();
  };
  output.stop = [&] {
    if (client.idle_lines && Clock::now() - last_write >= kIdleLine) output.line("");
    // ksqlDB's writes wait for a slow client; so does the reading here.
    while (client.unsent_bytes() > kMaxUnsentBytes && !client.gone() && !closing_)
      std::this_thread::sleep_for(kSlowClientCheck);
    return client.gone() || closing_.load();
  };
  std::string error;
  try {
    print_records(access, topic, print, output);
  } catch (const std::exception& e) {
    spdlog::warn("sql-server: printing topic '{}': {}", topic, e.what());
    error = e.what();
  }
  client.finish(error);
}

void PrintTopics::close_all() {
  closing_ = true;
  std::unique_lock lock(mutex_);
  // Each PRINT looks at closing_ after every read of at most a tenth of a second.
  if (!ended_.wait_for(lock, std::chrono::seconds(30), [this] { return running_ == 0; }))
    spdlog::warn("sql-server: {} PRINT statements did not end", running_);
}

}  // namespace oxbow::sql::server
