#pragma once
// ksqlDB's push-query endpoints: POST /query-stream (its HTTP/2 API, also over HTTP/1.1), POST
// /query (the older chunked one, HTTP/1.1 only) and POST /close-query. Each push query runs as a
// TransientQuery whose rows stream to the client as they come (docs/sql/server.md).
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "sql/server/ksql_resource.h"
#include "sql/server/transient_query.h"

namespace oxbow::http {
class StreamExchange;
}

namespace oxbow::sql::server {

enum class PushEndpoint { kQueryStream, kQuery };

struct PushSettings {
  std::string service_id;
  std::map<std::string, std::string> streams_config;  // the server's, for every query
  ClientConfig client;
  // ksql.max.push.queries: how many push queries may run at once (ksqlDB's default, 100); each
  // is a Streams application of its own.
  size_t max_push_queries = 100;
};

class PushQueries {
 public:
  PushQueries(KsqlResource& ksql, PushSettings settings);
  ~PushQueries();

  // Answers `exchange` on `endpoint`: an error at once, or the query's rows as they come.
  void handle(std::shared_ptr<http::StreamExchange> exchange, PushEndpoint endpoint);
  // POST /close-query's answer.
  RestResponse close(std::string_view body);
  // Plans and starts `statement` as a push query whose rows go to the sink `make_sink` makes
  // from its plan (another transport than HTTP: /ws/query); its id. Throws the engine's message
  // when it cannot (nothing runs then).
  std::string start(const std::string& statement,
                    const std::map<std::string, std::string>& properties,
                    const std::function<RowSink(const TransientPlan&)>& make_sink);
  // Stops every query and waits for them (the server stopping).
  void close_all();

 private:
  // The request's checks: the statement and its properties, or the error to answer.
  RestResponse check(PushEndpoint endpoint, std::string_view body, std::string& statement,
                     std::map<std::string, std::string>& properties);
  std::map<std::string, std::string> config_of(
      const TransientPlan& plan, const std::map<std::string, std::string>& properties);
  void forget(const std::string& id);
  // ksqlDB's refusal when the server already runs max_push_queries, or "" when one more may run.
  std::string over_capacity(PushEndpoint endpoint);

  KsqlResource& ksql_;
  PushSettings settings_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<TransientQuery>> running_;
};

}  // namespace oxbow::sql::server
