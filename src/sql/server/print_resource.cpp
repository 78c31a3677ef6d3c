#include "sql/server/print_resource.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <thread>

#include <nlohmann/json.hpp>

#include "http/stream_server.h"
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
  {
    std::lock_guard lock(mutex_);
    ++running_;
  }
  exchange->set_status(200);
  exchange->set_header("content-type", "application/json");
  spdlog::info("sql-server: printing topic '{}'", topic);
  std::thread([this, exchange, access, topic, print = request.print] {
    stream(exchange, *access, topic, print);
    {
      std::lock_guard lock(mutex_);
      --running_;
    }
    ended_.notify_all();
  }).detach();
}

void PrintTopics::stream(const std::shared_ptr<http::StreamExchange>& exchange, TopicAccess& access,
                         const std::string& topic, const parser::Print& print) {
  auto last_write = Clock::now();
  PrintOutput output;
  output.registry = registry_;
  output.end_when_caught_up = false;  // as ksqlDB's: until the LIMIT or the client leaves
  output.line = [&](const std::string& line) {
    exchange->write(line + "\n");
    last_write = Clock::now();
  };
  output.stop = [&] {
    if (Clock::now() - last_write >= kIdleLine) output.line("");
    // ksqlDB's writes wait for a slow client; so does the reading here.
    while (exchange->unsent_bytes() > kMaxUnsentBytes && !exchange->client_gone() && !closing_)
      std::this_thread::sleep_for(kSlowClientCheck);
    return exchange->client_gone() || closing_.load();
  };
  try {
    print_records(access, topic, print, output);
  } catch (const std::exception& e) {
    // As ksqlDB ends a PRINT that fails: its message on a line of its own.
    spdlog::warn("sql-server: printing topic '{}': {}", topic, e.what());
    exchange->write(std::string(e.what()) + "\n");
  }
  exchange->finish();
}

void PrintTopics::close_all() {
  closing_ = true;
  std::unique_lock lock(mutex_);
  // Each PRINT looks at closing_ after every read of at most a tenth of a second.
  if (!ended_.wait_for(lock, std::chrono::seconds(30), [this] { return running_ == 0; }))
    spdlog::warn("sql-server: {} PRINT statements did not end", running_);
}

}  // namespace oxbow::sql::server
