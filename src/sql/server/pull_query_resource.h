#pragma once
// Pull queries (a SELECT without EMIT) on /query-stream and /query, as ksqlDB serves them: the
// rows the table's store holds now, then the end of the response. Planned under the engine's lock
// (sql/engine/pull_query.h), read from the materializing query's KafkaStreams without any lock of
// the server's (pull_query_reader.h) by a pool of ksql.query.pull.thread.pool.size workers
// (ksqlDB's setting, 50 by default), so that a long scan never holds up the server's other
// requests.
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "sql/server/push_query_resource.h"

namespace oxbow::http {
class StreamExchange;
}

namespace oxbow::sql::server {

class KsqlResource;
class QueryRunner;

class PullQueries {
 public:
  // `client`: how pull queries on streams read their topics; `properties`: the server's (its
  // ksql.query.pull.thread.pool.size).
  PullQueries(KsqlResource& ksql, const QueryRunner& runner, ClientConfig client,
              const std::map<std::string, std::string>& properties = {});
  // Waits for the queries being read (the server stopping); those not started yet get no answer.
  ~PullQueries();

  // The statement of a request, parsed once: what handle() answers.
  struct Request;
  // The pull query `body` (of `endpoint`) asks for: one SELECT without EMIT. Null for anything
  // else, a body that does not read included: that is the push queries' to answer.
  static std::shared_ptr<const Request> pull_request_of(PushEndpoint endpoint,
                                                        std::string_view body);
  static bool is_pull_query(PushEndpoint endpoint, std::string_view body) {
    return pull_request_of(endpoint, body) != nullptr;
  }
  // Answers `exchange`, whose body asked for `request`: an error at once, or the rows from a
  // worker once one is free.
  void handle(std::shared_ptr<http::StreamExchange> exchange, PushEndpoint endpoint,
              std::shared_ptr<const Request> request);

 private:
  KsqlResource& ksql_;
  const QueryRunner& runner_;
  const ClientConfig client_;
  class Workers;
  std::unique_ptr<Workers> workers_;
};

}  // namespace oxbow::sql::server
