#pragma once
// Pull queries (a SELECT without EMIT) on /query-stream and /query, as ksqlDB serves them: the
// rows the table's store holds now, then the end of the response. Planned under the engine's lock
// (sql/engine/pull_query.h), read from the materializing query's KafkaStreams without any lock of
// the server's (pull_query_reader.h), each on a thread of its own so that a long scan never holds
// up the server's other requests.
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
  // `client`: how pull queries on streams read their topics.
  PullQueries(KsqlResource& ksql, const QueryRunner& runner, ClientConfig client)
      : ksql_(ksql), runner_(runner), client_(std::move(client)) {}

  // Whether `body` (of `endpoint`) asks for a pull query: one SELECT without EMIT. Anything
  // else, a body that does not read included, is the push queries' to answer.
  static bool is_pull_query(PushEndpoint endpoint, std::string_view body);
  // Answers `exchange`: an error at once, or the rows from a thread of the query's own.
  void handle(std::shared_ptr<http::StreamExchange> exchange, PushEndpoint endpoint);

 private:
  KsqlResource& ksql_;
  const QueryRunner& runner_;
  const ClientConfig client_;
};

}  // namespace oxbow::sql::server
