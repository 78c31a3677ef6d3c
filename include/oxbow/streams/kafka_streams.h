#pragma once
// KafkaStreams: runs a topology against Kafka brokers (Oxbow, Apache Kafka, Redpanda), with
// Kafka Streams' configuration names, states and shutdown.
//
// Required: application.id and bootstrap.servers. Also read: num.stream.threads (1),
// processing.guarantee (at_least_once), commit.interval.ms (30000), statestore.cache.max.bytes
// (10485760), state.dir, replication.factor (-1: the broker's default),
// default.deserialization.exception.handler, processing.exception.handler
// (LogAndFailProcessingExceptionHandler, the default, or LogAndContinueProcessingExceptionHandler:
// what a processor throws fails the thread, or drops that record and is counted),
// default.production.exception.handler
// (DefaultProductionExceptionHandler fails; Oxbow's LogAndContinueProductionExceptionHandler skips
// and counts an output record the broker rejects, at least once only), default.dsl.store (rocksDB),
// and Oxbow's own
// rocksdb.memory.max.bytes (268435456: one budget for every RocksDB store of the instance) and
// metrics.listener (HOST:PORT for Prometheus text at /metrics; off when unset). group.instance.id
// makes the threads static group members "<id>-<n>" (KIP-345). The group (Kafka Streams' own
// protocol, spoken by Oxbow): application.server (HOST:PORT, carried to every instance for
// interactive queries), num.standby.replicas (0), acceptable.recovery.lag (10000),
// max.warmup.replicas (2), probing.rebalance.interval.ms (600000, at least 60000),
// session.timeout.ms (45000), heartbeat.interval.ms (3000), max.poll.interval.ms (300000).
// Properties prefixed consumer., producer. or admin. go, without the prefix, to those librdkafka
// clients; security.protocol, sasl.* and ssl.* go to all of them (and to the group member).
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "oxbow/streams/errors.h"
#include "oxbow/streams/queryable.h"
#include "oxbow/streams/serde.h"
#include "oxbow/streams/streams_metadata.h"
#include "oxbow/streams/topology.h"

namespace oxbow::streams {

class KafkaStreams {
 public:
  enum class State {
    CREATED,
    REBALANCING,
    RUNNING,
    PENDING_SHUTDOWN,
    NOT_RUNNING,
    PENDING_ERROR,
    ERROR
  };
  using StateListener = std::function<void(State new_state, State old_state)>;
  enum class StreamThreadExceptionResponse {
    REPLACE_THREAD,
    SHUTDOWN_CLIENT,
    SHUTDOWN_APPLICATION
  };
  using UncaughtExceptionHandler =
      std::function<StreamThreadExceptionResponse(const std::exception& error)>;

  // Throws std::invalid_argument for a configuration it cannot run with.
  KafkaStreams(const Topology& topology, std::map<std::string, std::string> config);
  // An instance for named topologies (Kafka's internal KafkaStreamsNamedTopologyWrapper): it runs
  // the topologies addNamedTopology() gives it, in its threads, clients and group (group id,
  // transactional ids and process id from application.id, as any instance's).
  explicit KafkaStreams(std::map<std::string, std::string> config);
  ~KafkaStreams();
  KafkaStreams(const KafkaStreams&) = delete;
  KafkaStreams& operator=(const KafkaStreams&) = delete;

  // Adds a named topology to an instance made without one: before start(), or while RUNNING or
  // REBALANCING (its internal topics are created, every thread takes it in and rejoins the group,
  // and the next assignment hands out its tasks; every instance of the application must be given
  // it). Its tasks are "<name>__<sub-topology>_<partition>", their state under
  // state.dir/<application.id>/__<name>__/, and its internal topics are named after
  // internalTopicPrefix as an application's are after application.id ("<prefix>-<store>-changelog",
  // "<prefix>-<name>-repartition"), the prefix being "<application.id>-<name>" when none is given
  // (as Kafka names a named topology's). ProcessorContext::applicationId() is that prefix. Throws
  // TopologyException for a name that is not a topic name's characters or is taken, a prefix
  // another topology has, a global table, or a source topic another named topology reads (each
  // partition has one committed position in the group; sharing a source is a later step); start()
  // throws std::logic_error without any.
  void addNamedTopology(const std::string& name, const Topology& topology,
                        const std::string& internalTopicPrefix = "");
  // Removes a named topology: before start(), or while running, when every thread has committed
  // and closed its tasks (active and standby) and rejoined the group; then its local state is
  // deleted and, with `resetOffsets`, the group's committed offsets of its source and repartition
  // topics. Its internal topics are left to the caller. Throws std::invalid_argument for a name
  // it does not have.
  void removeNamedTopology(const std::string& name, bool resetOffsets = false);
  // The named topology added as `name` (valid until it is removed); null when there is none.
  const Topology* getTopologyByName(const std::string& name) const;

  // Creates the internal topics and starts the stream threads; from CREATED only.
  void start();
  // Commits, flushes and leaves the group; true when every thread stopped within the timeout.
  bool close(std::chrono::milliseconds timeout = std::chrono::milliseconds::max());
  State state() const;
  // Set before start().
  void setStateListener(StateListener listener);
  // What a thread's failure does: SHUTDOWN_CLIENT by default.
  void setUncaughtExceptionHandler(UncaughtExceptionHandler handler);
  // Decides on output and repartition records the producer could not write; set before start(),
  // in place of default.production.exception.handler. At least once only: under exactly-once a
  // failed write aborts its transaction and fails the thread (its input is processed again), and
  // changelog writes are never skipped.
  void setProductionExceptionHandler(ProductionExceptionHandler handler);
  // Decides on what processors and punctuators throw (errors.h); set before start(), in place of
  // processing.exception.handler. Called on each stream thread, possibly at once from several.
  void setProcessingExceptionHandler(ProcessingExceptionHandler handler);
  // Deletes this application's local state (state.dir/<application.id>); not while running.
  void cleanUp();
  // Starts one more stream thread; its name, or nothing unless RUNNING or REBALANCING.
  std::optional<std::string> addStreamThread();
  // Stops one stream thread (it commits and leaves the group; its tasks move to the others) and
  // returns its name; nothing when only one is left, unless RUNNING or REBALANCING, or when it
  // did not stop within the timeout.
  std::optional<std::string> removeStreamThread(
      std::chrono::milliseconds timeout = std::chrono::milliseconds::max());

  // Interactive queries (queryable.h, queryable_windows.h): a read-only view of this instance's
  // local stores named `params.storeName()`. Throws StreamsNotStartedException in CREATED,
  // InvalidStateStoreException unless RUNNING or REBALANCING (Kafka throws IllegalStateException
  // there; "KafkaStreams is not running. State is <state>."), UnknownStateStoreException for a
  // name no queryable store of the topology has, InvalidStateStoreException for a store of
  // another kind than asked for (key-value, window, session), a timestamped view of a plain
  // store, or other key or value types than its serdes'.
  template <class Store>
  Store store(const StoreQueryParameters<Store>& params) const {
    return store(std::string(), params);
  }
  // The store of the named topology `topologyName` (store names are unique per topology); as
  // store(params) otherwise, and UnknownStateStoreException for a topology it does not run.
  template <class Store>
  Store store(const std::string& topologyName, const StoreQueryParameters<Store>& params) const {
    return Store(store_access(topologyName, params.storeName(), Store::kKind, Store::kTimestamped,
                              params.partition(), params.staleStoresEnabled(),
                              typeid(typename Store::key_type), value_type_of<Store>()));
  }

  // Where the application's state lives (streams_metadata.h), known on every instance from the
  // group's last assignment; each throws as store() does outside RUNNING and REBALANCING.
  // Every instance with active or standby tasks, sorted by host and port.
  std::vector<StreamsMetadata> metadataForAllStreamsClients() const;
  // The instances holding `storeName` (active or standby); empty for a store that has no source
  // topic or before the first assignment.
  std::vector<StreamsMetadata> streamsMetadataForStore(const std::string& storeName) const;
  // Which instance holds `key` of `storeName`: its partition is murmur2 of the serialized key
  // modulo the partition count of the store's widest source topic, as the default partitioner
  // writes it. Nothing for an unknown store; KeyQueryMetadata::notAvailable() before the first
  // assignment.
  template <class K>
  std::optional<KeyQueryMetadata> queryMetadataForKey(const std::string& storeName, const K& key,
                                                      const Serde<K>& keySerializer) const {
    return query_metadata_for_key(
        storeName, [&](std::string_view topic) { return keySerializer.serialize(topic, key); });
  }
  // For each local store, active or standby, its partitions' positions against their changelogs'
  // ends (one ListOffsets round trip per call).
  std::map<std::string, std::map<int32_t, LagInfo>> allLocalStorePartitionLags() const;

 private:
  std::optional<KeyQueryMetadata> query_metadata_for_key(
      const std::string& store,
      const std::function<std::string(std::string_view topic)>& serialize_key) const;
  template <class Store>
  static const std::type_info& value_type_of() {
    using V = typename Store::value_type;
    if constexpr (detail::IsValueAndTimestamp<V>::value)
      return typeid(decltype(std::declval<V>().value));
    else
      return typeid(V);
  }
  std::shared_ptr<const detail::StoreAccess> store_access(
      const std::string& topology, const std::string& name, detail::StoreKind kind,
      bool timestamped, std::optional<int32_t> partition, bool stale,
      const std::type_info& key_type, const std::type_info& value_type) const;

  class Impl;
  std::unique_ptr<Impl> impl_;
};

const char* to_string(KafkaStreams::State state);

}  // namespace oxbow::streams
