#pragma once
// ksqlDB's PRINT on POST /query (HTTP/1.1, chunked): a topic's records as the lines the engine's
// PRINT writes (sql/engine/print_topic.h), each followed by "\n", from the topic's end or its
// beginning, until the LIMIT or the client leaves. Each PRINT reads on a thread of its own, with a
// consumer of its own and no group, as ksqlDB's TopicStreamWriter does.
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "sql/engine/topic_access.h"
#include "sql/parser/ast.h"
#include "sql/server/kafka_cluster.h"

namespace oxbow::http {
class StreamExchange;
class WebSocketSession;
}  // namespace oxbow::http

namespace oxbow::sql::server {

class PrintTopics {
 public:
  // `registry_url`: the registry of the AVRO, PROTOBUF and JSON_SR formats; empty: none.
  PrintTopics(ClientConfig client, const std::string& registry_url);
  // Ends the PRINTs still running and waits for them.
  ~PrintTopics();

  struct Request {
    std::string statement;  // its session variables substituted
    parser::Print print;
  };
  // The PRINT a /query `body` asks for; none for anything else (the queries' to answer).
  static std::optional<Request> request_of(std::string_view body);

  // Answers `exchange`: ksqlDB's 400 for a topic the cluster does not have, else the lines as
  // they come.
  void handle(std::shared_ptr<http::StreamExchange> exchange, const Request& request);
  // The same over /ws/query, as ksqlDB's: each line a text message holding it as a JSON string,
  // then `end` ("" after the LIMIT, else why it failed). Throws SqlError with ksqlDB's message for
  // a topic the cluster does not have.
  void handle(std::shared_ptr<http::WebSocketSession> session, const Request& request,
              std::function<void(const std::string& error)> end);
  // Ends every PRINT and waits for them (the server stopping).
  void close_all();

 private:
  // Where a PRINT's lines go, over HTTP or a WebSocket.
  struct Client {
    std::function<void(const std::string& line)> write;
    std::function<size_t()> unsent_bytes;
    std::function<bool()> gone;
    std::function<void(const std::string& error)> finish;  // error: empty after the LIMIT
    bool idle_lines = false;  // an empty line after each idle second, as /query's
  };
  void start(Client client, std::shared_ptr<TopicAccess> access, const std::string& topic,
             const parser::Print& print);
  void stream(const Client& client, TopicAccess& access, const std::string& topic,
              const parser::Print& print);

  const ClientConfig client_;
  const RegistryDecoders registry_;
  std::atomic<bool> closing_{false};
  std::mutex mutex_;
  std::condition_variable ended_;
  size_t running_ = 0;
};

}  // namespace oxbow::sql::server
