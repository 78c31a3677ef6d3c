#pragma once
// A push query (SELECT ... EMIT CHANGES) running: its own KafkaStreams, as ksqlDB runs each
// transient query, whose topology ends in a callback (the planner's RowCallback, as ksqlDB's
// transient queries end in a foreach) instead of a topic. The Streams threads hand each row to
// the query's RowSink, which queues it for the client without waiting (the HTTP response's own
// queue of unsent pieces is the query's bounded buffer). The query stops at its LIMIT, on stop()
// (POST /close-query, the client gone, the server stopping), or when the client reads so slowly
// that more than kMaxUnsentBytes of rows wait for it (then it ends with an error).
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
#include "sql/execution/value.h"
#include "sql/server/kafka_cluster.h"
#include "sql/types/sql_type.h"

namespace oxbow::sql::server {

class KsqlResource;

// What a push query's stream holds back for a slow client before the query is closed.
constexpr size_t kMaxUnsentBytes = 4 << 20;

// Where a running query's rows go, called from its Streams threads, one row at a time.
struct RowSink {
  // One row; `tombstone` when a table's row for its key is gone (its value columns then null).
  // Returns "" when taken, else why no more can be (the client gone or too far behind).
  std::function<std::string(const nlohmann::json& row, bool tombstone)> row;
  // The end: "" after the LIMIT or stop(), else why the query failed.
  std::function<void(const std::string& error)> end;
};

// The rows a query's topology hands over (its RowCallback), made JSON and passed to the sink
// until the LIMIT or the sink refuses one; every call after that is dropped.
class RowFeed {
 public:
  struct Column {
    bool key = false;
    SqlTypePtr type;
  };
  RowFeed(std::vector<Column> columns, std::optional<int64_t> limit)
      : columns_(std::move(columns)), limit_(limit) {}

  // Before the topology runs: where rows go, and who to tell when no more are wanted.
  void attach(RowSink* sink, std::function<void()> done);
  // On the Streams threads: `key` the result's key columns, `value` its value columns (null for
  // a tombstone).
  void accept(const Row& key, const Row* value);
  // True once the LIMIT was reached or the sink refused a row; `error` says why, if it did.
  bool done(std::string& error);
  // The row as ksqlDB sends it: the columns' values in order (a tombstone's value columns null).
  nlohmann::json row_of(const Row& key, const Row* value) const;

 private:
  const std::vector<Column> columns_;
  const std::optional<int64_t> limit_;
  std::mutex mutex_;
  RowSink* sink_ = nullptr;
  std::function<void()> on_done_;
  int64_t rows_ = 0;
  bool done_ = false;
  std::string error_;
};

struct TransientPlan {
  std::string query_id;  // transient_<SOURCE>_<random>, as ksqlDB names them
  std::vector<std::string> column_names, column_types;
  std::optional<int64_t> limit;
  std::shared_ptr<RowFeed> feed;  // where the topology's rows arrive
  streams::Topology topology;
};

// Plans `statement` (a SELECT the engine accepted) for running; throws with the engine's message.
TransientPlan plan_transient_query(KsqlResource& ksql, const std::string& statement);

class TransientQuery : public std::enable_shared_from_this<TransientQuery> {
 public:
  TransientQuery(TransientPlan plan, std::map<std::string, std::string> streams_config,
                 ClientConfig client, RowSink sink);
  ~TransientQuery();

  const std::string& id() const { return plan_.query_id; }
  // Starts its Streams application on a thread of its own.
  void start();
  // Asks it to end; returns at once.
  void stop();
  // Waits until it has ended and freed its resources (false when `timeout_ms` passed first).
  bool wait(int timeout_ms);

 private:
  void run();
  // Until stop(), the feed done, or the Streams application failed: the query's error, if any.
  std::string wait_for_end();

  TransientPlan plan_;
  std::map<std::string, std::string> streams_config_;
  ClientConfig client_;
  RowSink sink_;
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::condition_variable cv_;  // stop(), the feed done, the end
  bool ended_ = false;
  std::string streams_error_;  // a stream thread's failure
};

}  // namespace oxbow::sql::server
