#pragma once
// ksqlDB's older streaming endpoint, GET /ws/query over a WebSocket: the `request` query
// parameter carries {"ksql": "SELECT ... EMIT CHANGES;", "streamsProperties": {...}}; the server
// sends the result's columns (a JSON array of ksqlDB's FieldInfo), then each row as
// {"row":{"columns":[...]}}, and ends with a last message {"error": <why>} and a Close frame:
// 1000 "done" after a LIMIT, 1003 for a request or statement it refuses, 1011 when the query
// fails. PRINT sends each line as a JSON string in a message of its own (print_resource.h). A push
// query runs as /query-stream's do (PushQueries); a pull query (no EMIT) is read as /query-stream
// reads it (pull_query_reader.h; with several servers, pull_query_routing.h), its key columns
// marked KEY, then ends with "done".
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "sql/server/kafka_cluster.h"

namespace oxbow::http {
class StreamExchange;
class WebSocketSession;
}  // namespace oxbow::http

namespace oxbow::sql::server {

class KsqlResource;
class PrintTopics;
class PushQueries;
class QueryRunner;

// ksqlDB's close codes (Netty's WebSocketCloseStatus names).
constexpr uint16_t kWsNormalClosure = 1000;
constexpr uint16_t kWsInvalidMessageType = 1003;
constexpr uint16_t kWsInternalServerError = 1011;
constexpr uint16_t kWsTryAgainLater = 1013;

// What /ws/query's query string asks for, or why it cannot be served (ksqlDB's message).
struct WsQueryRequest {
  std::string statement;
  std::map<std::string, std::string> properties;
  std::string request;  // its JSON, whose commandSequenceNumber is waited for as on /query
  std::string error;    // empty when the request is good
};

// From the raw query string (`request=<percent-encoded JSON>&version=1`), its properties checked
// against the server's deny list.
WsQueryRequest parse_ws_query(std::string_view query_string,
                              const std::vector<std::string>& denied_properties);

// A Close frame's reason: at most 123 bytes, cut on a character boundary with "..." as ksqlDB
// cuts it.
std::string close_reason(const std::string& message);

class WsQueryEndpoint {
 public:
  // `runner` and `client`: where pull queries read tables' stores and streams' topics.
  WsQueryEndpoint(KsqlResource& ksql, PushQueries& push, PrintTopics& print,
                  const QueryRunner& runner, ClientConfig client, std::vector<std::string> denied)
      : ksql_(ksql),
        push_(push),
        print_(print),
        runner_(runner),
        client_(std::move(client)),
        denied_(std::move(denied)) {}
  // Waits for the pull queries still reading (their sessions end with the server's).
  ~WsQueryEndpoint();

  // A GET /ws/query exchange: the upgrade taken and the query run, or 400 when the request is
  // no WebSocket upgrade.
  void handle(const std::shared_ptr<http::StreamExchange>& exchange);

 private:
  void run(const std::shared_ptr<http::WebSocketSession>& session, const WsQueryRequest& request);
  void run_pull(const std::shared_ptr<http::WebSocketSession>& session,
                const std::string& statement);

  KsqlResource& ksql_;
  PushQueries& push_;
  PrintTopics& print_;
  const QueryRunner& runner_;
  const ClientConfig client_;
  const std::vector<std::string> denied_;
  std::mutex mutex_;
  std::condition_variable idle_;
  int reading_ = 0;  // pull queries reading on threads of their own
};

}  // namespace oxbow::sql::server
