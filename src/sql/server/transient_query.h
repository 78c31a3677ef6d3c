#pragma once
// A push query (SELECT ... EMIT CHANGES) running: its own KafkaStreams, as ksqlDB runs each
// transient query, whose topology writes the rows as JSON into a topic of the query's own, read
// back by a consumer and handed to the client one row at a time. The planner ends every query in
// its sink's topic (no step hands rows to a callback), hence the topic; it is deleted with the
// query. The query stops at its LIMIT, on stop() (POST /close-query, the client gone, the server
// stopping), or when the client reads so slowly that more than kMaxUnsentBytes of rows wait
// for it (then it ends with an error): the Streams threads never wait for a client.
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "oxbow/streams/topology.h"
#include "sql/server/kafka_cluster.h"

namespace oxbow::sql::server {

class KsqlResource;

// What a push query's stream holds back for a slow client before the query is closed.
constexpr size_t kMaxUnsentBytes = 4 << 20;

struct TransientPlan {
  std::string query_id;  // transient_<SOURCE>_<random>, as ksqlDB names them
  std::string topic;     // where its topology writes the rows
  std::vector<std::string> column_names, column_types;
  std::vector<bool> key_columns;
  std::optional<int64_t> limit;
  streams::Topology topology;
};

// Plans `statement` (a SELECT the engine accepted) for running; throws with the engine's message.
TransientPlan plan_transient_query(KsqlResource& ksql, const std::string& statement,
                                   const std::string& service_id);

// Where a running query's rows go, called from its reader thread.
struct RowSink {
  // One row; "" when taken, else why no more can be (the client gone or too far behind).
  std::function<std::string(const nlohmann::json& row)> row;
  // The end: "" after the LIMIT or stop(), else why the query failed.
  std::function<void(const std::string& error)> end;
};

class TransientQuery : public std::enable_shared_from_this<TransientQuery> {
 public:
  TransientQuery(TransientPlan plan, std::map<std::string, std::string> streams_config,
                 ClientConfig client, RowSink sink);
  ~TransientQuery();

  const std::string& id() const { return plan_.query_id; }
  // Creates its topic and starts its Streams application and its reader thread.
  void start();
  // Asks it to end; returns at once.
  void stop() { stopping_ = true; }
  // Waits until it has ended and freed its resources (false when `timeout_ms` passed first).
  bool wait(int timeout_ms);

 private:
  void run();
  void read_rows();
  std::optional<nlohmann::json> row_of(const char* key, size_t key_size, const char* value,
                                       size_t value_size) const;

  TransientPlan plan_;
  std::map<std::string, std::string> streams_config_;
  ClientConfig client_;
  RowSink sink_;
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::condition_variable ended_cv_;
  bool ended_ = false;
  std::string error_;
};

}  // namespace oxbow::sql::server
