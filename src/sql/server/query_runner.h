#pragma once
// Runs the engine's persistent queries against a cluster: one KafkaStreams per query, as ksqlDB
// runs them, or with ksql.runtime.feature.shared.enabled each query a named topology of a shared
// KafkaStreams (docs/sql/server.md, "Shared runtimes"). The runner follows the engine: sync()
// starts the queries it does not run yet, stops those TERMINATE removed or PAUSE paused, and
// restarts those CREATE OR REPLACE changed.
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "oxbow/streams/errors.h"
#include "oxbow/streams/streams_metadata.h"
#include "sql/engine/engine.h"

namespace oxbow::streams {
class KafkaStreams;
}

namespace oxbow::sql::server {

// How long stopping every query may take at shutdown when ksql.streams.shutdown.timeout.ms is not
// set. ksqlDB waits up to 300 s for each query; one bound for all keeps a stop within what
// service managers allow (systemd's 90 s) when the cluster is gone.
inline constexpr std::chrono::milliseconds kDefaultShutdownTimeout{30000};

struct RunnerSettings {
  // Every query's Streams settings on top of the engine's: bootstrap.servers, state.dir and
  // ksql.streams.* (without the prefix).
  std::map<std::string, std::string> streams_config;
  // ksql.service.id: in each query's application id, as ksqlDB names them
  // (_confluent-ksql-<service id>query_<query id>).
  std::string service_id = "default_";
  // ksql.runtime.feature.shared.enabled: queries share KafkaStreams instances (named topologies).
  bool shared_runtimes = false;
};

// What placing a query in a shared runtime looks at: the Streams settings it runs with (without
// application.id), the topics it reads from outside itself, and those of them one of its
// sub-topologies reads beside another topic (a join's, a merge's).
struct RuntimeNeeds {
  std::map<std::string, std::string> config;
  std::set<std::string> topics;
  std::set<std::string> read_beside_others;
};

// The index of the first of `runtimes` (each what its queries need together) with the query's
// settings where no topic the query reads is one that the runtime's queries read beside others,
// or the query does (Streams' named topologies share a source topic where each sub-topology reads
// it alone: each keeps its own positions; ksqlDB's RuntimeAssignor refuses any shared topic);
// runtimes.size() when there is none (a new runtime).
size_t place_query(const std::vector<RuntimeNeeds>& runtimes, const RuntimeNeeds& query);

// What `topology` reads that it does not write itself (its repartition topics excluded): topics
// and read_beside_others; config empty.
RuntimeNeeds source_topics_of(const streams::Topology& topology);

// Where a query runs: its KafkaStreams and, in a shared runtime, its named topology (for
// store(topology, params)); "" when it runs alone.
struct QueryStreams {
  std::shared_ptr<streams::KafkaStreams> streams;
  std::string topology;
};

// The Streams setting a ksqlDB property names, or "" when it names none: ksql.streams.X is X, and
// Streams' and its clients' own names (auto.offset.reset, ...) stand for themselves.
std::string streams_property_name(const std::string& property);

class QueryRunner {
 public:
  explicit QueryRunner(RunnerSettings settings);
  ~QueryRunner();
  QueryRunner(const QueryRunner&) = delete;
  QueryRunner& operator=(const QueryRunner&) = delete;

  // Brings the running set in line with `queries`; `restart` names queries whose topology was
  // replaced. `overrides` (ksqlDB property names) apply to the queries started by this call, as a
  // request's streamsProperties do. Throws std::invalid_argument for settings Streams refuses.
  void sync(const std::vector<PersistentQuery>& queries,
            const std::vector<std::string>& restart = {},
            const std::map<std::string, std::string>& overrides = {});
  // Starts `query` unless it runs or is paused (a server replaying its command topic starts each
  // with its own request's properties). Throws std::invalid_argument as sync() does.
  void start(const PersistentQuery& query, const std::map<std::string, std::string>& overrides);
  // The ids of the queries running, and whether one of them has failed (Streams' ERROR state).
  std::vector<std::string> running() const;
  bool any_failed() const;
  // ksqlDB's status of a running query: ERROR when its Streams application failed, else RUNNING;
  // "" for a query not running here.
  std::string status(const std::string& query_id) const;
  // The KafkaStreams running `query_id`, for interactive queries of its stores (pull queries);
  // null when it does not run here. Shared: a query stopped meanwhile is closed, not freed, under
  // a reader, whose next read then throws InvalidStateStoreException.
  std::shared_ptr<streams::KafkaStreams> streams(const std::string& query_id) const;
  // The same with its topology's name, which a shared runtime's stores are looked up by.
  QueryStreams query_streams(const std::string& query_id) const;
  // Per running query, where its Streams application's state lives (each instance's stores and
  // partitions, streams_metadata.h); empty before its first assignment (/clusterStatus).
  std::map<std::string, std::vector<streams::StreamsMetadata>> streams_metadata() const;
  // This server's application.server (host:port), as every query's Streams metadata names it.
  std::string endpoint() const;
  // Stops every query (each commits and leaves its group) within `timeout` in all, by default
  // ksql.streams.shutdown.timeout.ms (kDefaultShutdownTimeout): false when one did not stop in
  // time (the cluster gone), which is then left running to the process's exit, not waited for.
  bool close();
  bool close(std::chrono::milliseconds timeout);
  std::chrono::milliseconds shutdown_timeout() const;

 private:
  void start_locked(const PersistentQuery& query,
                    const std::map<std::string, std::string>& overrides);
  std::map<std::string, std::string> config_of(
      const PersistentQuery& query, const std::map<std::string, std::string>& overrides) const;
  // Shared mode: adds `query` to a runtime that can take it (a new one when none can); false
  // when Streams refuses it as a named topology, for the caller to run it alone.
  bool start_shared(const PersistentQuery& query, std::map<std::string, std::string> config);
  // The key of the runtime `id` goes to: where it ran before (placed_) when it fits there still,
  // else place_query's choice, else the smallest number no runtime or placement has.
  int choose_runtime(const std::string& id, const RuntimeNeeds& needs) const;
  std::string placements_path() const;
  void save_placements() const;
  // Stops a running query; `terminated`: its group offsets go too (a shared runtime's TERMINATE).
  void stop_locked(const std::string& query_id, bool terminated);

  struct Handlers;  // a shared runtime's processing-error handler per query
  struct SharedRuntime {
    std::shared_ptr<streams::KafkaStreams> streams;
    std::string application_id;
    RuntimeNeeds needs;
    std::map<std::string, RuntimeNeeds> topics;  // per query it runs (config empty)
    std::shared_ptr<Handlers> handlers;
  };
  struct Running {
    std::shared_ptr<streams::KafkaStreams> streams;
    int runtime = -1;  // the key of runtimes_ in shared mode, -1 when it runs alone
  };
  // Takes a query's topology out of its running runtime (logged, not thrown, when that fails).
  static void remove_topology(SharedRuntime& runtime, const std::string& id, bool reset);

  RunnerSettings settings_;
  // sync() runs on a request's thread, close() on the server's at shutdown.
  mutable std::mutex mutex_;
  std::map<std::string, Running> running_;
  std::map<int, SharedRuntime> runtimes_;
  // Shared mode: each query's runtime number, kept in a file of the state directory so that a
  // restart (the command topic replayed without what TERMINATE removed) puts every query back in
  // the runtime whose group holds its positions.
  std::map<std::string, int> placed_;
};

}  // namespace oxbow::sql::server
