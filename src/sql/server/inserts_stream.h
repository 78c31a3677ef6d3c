#pragma once
// ksqlDB's POST /inserts-stream (docs/sql/server.md): the request body streams a JSON object
// {"target": "<stream or table>", "properties": {...}} and then one JSON object per row, each on
// its own line; the response streams one ack per row once the cluster has it
// ({"status":"ok","seq":N}), or the error that ends it. Rows are written as INSERT VALUES writes
// them (the target's formats), by a producer of the request's own with acks from all in-sync
// replicas; its delivery reports, on a thread of the request's own, write the acks.
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "sql/server/ksql_resource.h"

namespace oxbow::http {
class StreamExchange;
}

namespace oxbow::sql::server {

class InsertsStream;

struct InsertsSettings {
  ClientConfig client;
  std::string registry_url;  // ksql.schema.registry.url
};

class InsertsEndpoint {
 public:
  InsertsEndpoint(KsqlResource& ksql, InsertsSettings settings);
  ~InsertsEndpoint();

  // Takes `exchange`, whose request body streams (StreamServerOptions::stream_request_body).
  void handle(std::shared_ptr<http::StreamExchange> exchange);
  // Ends every open request and waits for its producer (the server stopping).
  void close_all();

 private:
  KsqlResource& ksql_;
  const InsertsSettings settings_;
  std::mutex mutex_;
  std::vector<std::weak_ptr<InsertsStream>> open_;
};

}  // namespace oxbow::sql::server
