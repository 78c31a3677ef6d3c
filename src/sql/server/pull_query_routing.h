#pragma once
// A pull query on a table served by several servers of one service id (docs/sql/server.md,
// "Several servers"): the table's store is split over the servers as its query's Streams group
// assigned its partitions, so what this server does not hold is asked of the servers that do, as
// ksqlDB's HA routing forwards to the owners. The request goes to their POST /query marked as
// internal (ksqlDB's request.ksql.internal.request and request.ksql.query.pull.skip.forwarding
// request properties): they answer from their own partitions and forward nothing further.
#include <functional>
#include <string>
#include <string_view>

#include "sql/engine/pull_query.h"

namespace oxbow::streams {
class KafkaStreams;
}

namespace oxbow::sql::server {

struct PullRoute {
  std::string self;       // this server's application.server (host:port)
  bool forward = true;    // false for a request another server forwarded here
  std::string statement;  // the pull query, its variables substituted: what is forwarded
};

// Whether a /query or /query-stream body came from another server (its requestProperties mark it
// internal, or ask not to forward).
bool forwarded_request(std::string_view body);

// The plan's rows from this server's partitions of the store, then (unless route.forward is
// false) from each other server holding partitions of it, the LIMIT applied to them all. Throws
// what the local read throws, or std::runtime_error when another server does not answer.
void read_routed_rows(const streams::KafkaStreams& streams, const std::string& topology,
                      PullPlan& plan, const PullRoute& route,
                      const std::function<bool(const Row&)>& emit);

}  // namespace oxbow::sql::server
