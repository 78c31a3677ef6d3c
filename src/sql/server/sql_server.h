#pragma once
// `oxbow sql-server`: ksqlDB's REST API (/info, /healthcheck, /ksql) over the SQL engine, on the
// stream server of src/http/, its persistent queries run against the cluster by a QueryRunner.
// Settings by ksqlDB's names (docs/sql/server.md):
//   listeners                  http://127.0.0.1:8088 (ksqlDB binds 0.0.0.0)
//   bootstrap.servers          localhost:9092
//   ksql.service.id            default_
//   ksql.streams.<setting>     a Streams setting of every query (ksql.streams.state.dir: where
//                              their stores live, /tmp/oxbow-sql here; auto.offset.reset latest,
//                              ksqlDB's default)
//   ksql.schema.registry.url   the registry of AVRO, JSON_SR and PROTOBUF; none by default
//   ksql.persistence.default.format.key / .value
// Other properties are kept (SHOW PROPERTIES lists them) and otherwise ignored, as ksqlDB does.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace oxbow::sql::server {

struct SqlServerConfig {
  std::string host = "127.0.0.1";
  uint16_t port = 8088;
  std::string bootstrap_servers = "localhost:9092";
  std::string service_id = "default_";
  std::string registry_url;
  std::string default_key_format = "KAFKA", default_value_format;
  // host:port by which this server is known (ksql.advertised.listener, else the listener): its
  // /clusterStatus entry and every query's application.server, as ksqlDB wires them.
  std::string advertised;
  // ksql.worker.pool.size: threads answering requests (a /ksql statement may wait on the cluster
  // for seconds); ksql.max.push.queries: push queries running at once. ksqlDB's defaults.
  size_t worker_pool_size = 100, max_push_queries = 100;
  std::map<std::string, std::string> streams_config;  // ksql.streams.*, without the prefix
  std::map<std::string, std::string> properties;      // every setting, as given
};

// From properties; nullopt with `error` set for a setting that cannot be read.
std::optional<SqlServerConfig> make_sql_server_config(
    const std::map<std::string, std::string>& properties, std::string& error);

class SqlServer {
 public:
  explicit SqlServer(SqlServerConfig config);
  ~SqlServer();
  // Reaches the cluster (its id), creates the processing log's stream and topic, and listens;
  // false with `error` when it cannot.
  bool start(std::string& error);
  // Serves until SIGINT, SIGTERM or stop(), then stops the queries; the exit code.
  int run();
  // Ends run(); callable from any thread.
  void stop();
  uint16_t port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace oxbow::sql::server
