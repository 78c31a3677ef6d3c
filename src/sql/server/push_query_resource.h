#pragma once
// ksqlDB's push-query endpoints: POST /query-stream (its HTTP/2 API, also over HTTP/1.1), POST
// /query (the older chunked one, HTTP/1.1 only) and POST /close-query. What is here today is the
// requests' part: their bodies read and the SELECT checked by the engine, with ksqlDB's errors.
// Running the query (a transient Streams topology whose rows stream to the client) is not done
// yet: a valid push query is answered 501 (docs/sql/server.md).
#include <string_view>

#include "sql/server/ksql_resource.h"

namespace oxbow::sql::server {

enum class PushEndpoint { kQueryStream, kQuery };

// The answer to a push query's request body on `endpoint`.
RestResponse push_query(KsqlResource& ksql, PushEndpoint endpoint, std::string_view body);

// The answer to /close-query's body ({"queryId": "..."}): no push query runs here, so every id
// is unknown.
RestResponse close_query(std::string_view body);

}  // namespace oxbow::sql::server
