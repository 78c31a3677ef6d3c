#pragma once
// The state behind KafkaStreams' facade (oxbow/streams/kafka_streams.h): its configuration, the
// topologies its threads run, the threads, the group's shared settings and what queries reach
// through. Its methods live by concern: kafka_streams_impl.cpp (settings, lifecycle, threads and
// the monitor), kafka_streams_topologies.cpp (named topologies added and removed while running)
// and kafka_streams_queries.cpp (interactive queries: stores, metadata and lags).
#include "oxbow/streams/kafka_streams.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <random>
#include <set>
#include <shared_mutex>
#include <stdexcept>
#include <thread>

#include "common/properties.h"
#include "common/shared_mutex.h"
#include "oxbow/streams/errors.h"
#include "streams/app/internal_topics.h"
#include "streams/app/metrics_server.h"
#include "streams/app/streams_config.h"
#include "streams/query/metadata_state.h"
#include "streams/query/queryable_core.h"
#include "streams/runtime/global_thread.h"
#include "streams/runtime/shutdown_signal.h"
#include "streams/runtime/stream_thread.h"
#include "streams/runtime/topology_positions.h"
#include "streams/state/state_directory.h"

namespace oxbow::streams {

// What the facades of KafkaStreams::store() reach the instance through; the instance detaches it
// when it goes (after that every read throws), waiting for reads under way.
struct QueryHub {
  WriterPreferringSharedMutex mutex;
  // The instance's read_store(); unset once it is gone.
  std::function<void(const std::string& topology, const std::string& store, std::optional<int32_t>,
                     bool stale, const std::function<bool(detail::KeyValueStore&)>&)>
      read;
};

class KafkaStreams::Impl {
 public:
  // Without a topology: one for named topologies (addNamedTopology).
  Impl(const Topology* topology, detail::Config config);

  // Before start() the topology joins those start() runs; while running, its internal topics
  // are created and every thread takes it in and rejoins the group, whose next assignment hands
  // out its tasks.
  void add_named_topology(const std::string& name, const Topology& topology,
                          const std::string& prefix);

  // While running: every thread commits and closes the topology's tasks (standbys too) and
  // rejoins the group; then its local state is deleted and, with `reset_offsets`, the group's
  // committed offsets of its source and repartition topics. Its internal topics stay (the
  // caller's to delete).
  void remove_named_topology(const std::string& name, bool reset_offsets);

  const Topology* topology_by_name(const std::string& name) const;

  void require_named_instance(const char* call) const;

  std::shared_ptr<const detail::Topologies> current_topologies() const;

  // named_ becomes what the threads run (under change_mutex_).
  void publish_topologies();

  void wait_for_threads_to_apply();

  // The topology's own group (its positions, topology_positions.h), and the instance's group's
  // committed offsets of the inputs no other topology reads. The broker may refuse those while
  // members still subscribe to them, until the rebalance the removal started is done: retried
  // for 30 s.
  void reset_offsets_of(const detail::NamedGraph& removed);

  // The stream threads' destructors would wait for them anyway; the monitor must be joined.
  ~Impl();

  void start();

  // As Kafka's close(Duration): false when the threads have not stopped within `timeout`; they
  // go on shutting down, the state stays PENDING_SHUTDOWN, and a later close() waits again.
  bool close(std::chrono::milliseconds timeout);

  std::optional<std::string> add_stream_thread();

  std::optional<std::string> remove_stream_thread(std::chrono::milliseconds timeout);

  // Kafka's validateIsRunningOrRebalancing().
  void require_running_or_rebalancing() const;

  // The running topology named so (empty: the unnamed one); null when there is none.
  const detail::NamedGraph* topology_named(const std::string& topology) const;

  std::shared_ptr<const detail::StoreAccess> store_access(
      const std::string& topology, const std::string& name, detail::StoreKind kind,
      bool timestamped, std::optional<int32_t> partition, bool stale,
      const std::type_info& key_type, const std::type_info& value_type) const;

  // Reads the store of every local task that has it, thread after thread (Kafka's
  // WrappingStoreProvider), each under its task's lock.
  void read_store(const std::string& topology, const std::string& name,
                  std::optional<int32_t> partition, bool stale,
                  const std::function<bool(detail::KeyValueStore&)>& read);

  // A global table's store: the instance's one copy of every partition, whatever the query's
  // partition or staleness (as Kafka's QueryableStoreProvider looks for a global store first).
  void read_global_store(const std::string& name,
                         const std::function<bool(detail::KeyValueStore&)>& read);

  // What the threads share in the group: the process id, application.server, the assignor's
  // settings, and the metadata every assignment updates.
  void configure_group();

  // A topic's partition count, on a client made at the first question.
  int32_t topic_partitions(const std::string& topic);
  // Under metadata_client_mutex_.
  detail::RdKafkaHandle& metadata_client();

  std::vector<StreamsMetadata> metadata_for_all() const;
  std::vector<StreamsMetadata> metadata_for_store(const std::string& store) const;
  std::optional<KeyQueryMetadata> metadata_for_key(
      const std::string& store,
      const std::function<std::string(std::string_view)>& serialize_key) const;
  // Each local store copy's position (as its thread last published it, within a second) against
  // its changelog's end, asked now. A running active task's copy is current (Kafka reports it at
  // the end too).
  std::map<std::string, std::map<int32_t, LagInfo>> local_lags();

  int64_t changelog_end(const std::string& topic, int32_t partition);

  std::string metrics_text();

  // Without mutex_: queries ask it twice per read, from many threads at once.
  State state() const { return state_seen_.load(std::memory_order_acquire); }
  void set_listener(StateListener l) { listener_ = std::move(l); }
  void set_handler(UncaughtExceptionHandler h) { handler_ = std::move(h); }
  void set_production_handler(ProductionExceptionHandler h) { production_handler_ = std::move(h); }
  void set_processing_handler(ProcessingExceptionHandler h);

  void clean_up();

 private:
  std::string value_or(const std::string& key, const std::string& fallback) const;
  int64_t int_setting(const std::string& key, int64_t fallback, int64_t min) const;

  void set_state(State next);

  void prepare_topics();

  detail::InternalTopicSettings internal_topic_settings() const;

  void add_thread_locked();

  // statestore.cache.max.bytes is the instance's: each thread gets an equal share, re-divided
  // whenever a thread comes or goes, as Kafka resizes its thread caches.
  void resize_caches_locked();

  // Every 50 ms: failed threads and the client's state; every second: a shutdown request from
  // another instance.
  void monitor();

  void check_threads(bool shutdown_requested);

  // Kafka: PENDING_ERROR while every thread stops, then ERROR.
  void shut_down_on_error_locked();

  // What the threads run: the single topology from construction, or the named ones from start(),
  // replaced as they are added and removed (under topologies_mutex_).
  std::shared_ptr<const detail::Topologies> topologies_;
  mutable std::mutex topologies_mutex_;
  bool named_instance_ = false;  // made without a topology
  // One addition or removal at a time, and none while start() runs; named_ is what they made.
  std::mutex change_mutex_;
  detail::Topologies named_;
  std::map<std::string, Topology> named_topologies_;  // as added, for getTopologyByName
  detail::Config config_;
  detail::TaskConfig task_;
  int64_t threads_ = 1;
  int64_t commit_interval_ms_ = 30000;
  bool exactly_once_ = false;
  ProductionExceptionHandler production_handler_;  // none: a failed write fails the thread
  std::unique_ptr<detail::ProcessIdentity> identity_;
  std::string process_id_;
  detail::GroupSettings group_;
  std::shared_ptr<detail::MetadataState> metadata_;
  std::mutex metadata_client_mutex_;
  detail::RdKafkaHandle metadata_client_;
  int32_t replication_factor_ = -1;
  std::string state_dir_;
  int thread_counter_ = 0;
  // Guards threads_list_; taken before mutex_ when both are. Queries hold it shared while they
  // read (several at once); adding, removing or replacing a thread waits for them.
  WriterPreferringSharedMutex threads_mutex_;
  std::vector<std::unique_ptr<detail::StreamThread>> threads_list_;
  std::unique_ptr<detail::MetricsServer> metrics_server_;
  std::unique_ptr<detail::ShutdownSignal> shutdown_signal_;
  std::unique_ptr<detail::GlobalThread> global_thread_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  State state_ = State::CREATED;                   // under mutex_
  std::atomic<State> state_seen_{State::CREATED};  // state_, for readers without mutex_
  bool closing_ = false, stop_monitor_ = false;
  std::atomic<bool> monitor_exited_{false};
  StateListener listener_;
  UncaughtExceptionHandler handler_;
  std::thread monitor_;
  std::shared_ptr<QueryHub> hub_ = std::make_shared<QueryHub>();
};

}  // namespace oxbow::streams
