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

using detail::Config;

const char* to_string(KafkaStreams::State state) {
  switch (state) {
    case KafkaStreams::State::CREATED:
      return "CREATED";
    case KafkaStreams::State::REBALANCING:
      return "REBALANCING";
    case KafkaStreams::State::RUNNING:
      return "RUNNING";
    case KafkaStreams::State::PENDING_SHUTDOWN:
      return "PENDING_SHUTDOWN";
    case KafkaStreams::State::NOT_RUNNING:
      return "NOT_RUNNING";
    case KafkaStreams::State::PENDING_ERROR:
      return "PENDING_ERROR";
    case KafkaStreams::State::ERROR:
      return "ERROR";
  }
  return "?";
}

namespace {

// Whether the application named the store (Materialized::as and the like): the library names
// the others "<prefix>STATE-STORE-<10 digits>", and those are not queryable, as in Kafka.
bool named_by_application(const std::string& name) {
  static const std::string kGenerated = "STATE-STORE-";
  auto at = name.rfind(kGenerated);
  if (at == std::string::npos || name.size() != at + kGenerated.size() + 10) return true;
  return !std::all_of(name.begin() + static_cast<long>(at + kGenerated.size()), name.end(),
                      [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

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
  Impl(const Topology* topology, Config config)
      : named_instance_(!topology),
        config_(std::move(config)),
        task_(detail::task_config_from(config_)) {
    if (!config_.count("application.id") || config_.at("application.id").empty())
      throw std::invalid_argument(
          "application.id: missing (it names the group and internal topics)");
    if (!config_.count("bootstrap.servers"))
      throw std::invalid_argument("bootstrap.servers: missing");
    threads_ = int_setting("num.stream.threads", 1, 1);
    std::string guarantee = value_or("processing.guarantee", "at_least_once");
    if (guarantee == "exactly_once_v2" || guarantee == "exactly_once_beta")
      exactly_once_ = true;
    else if (guarantee != "at_least_once")
      throw std::invalid_argument("processing.guarantee: '" + guarantee +
                                  "' is not one of at_least_once, exactly_once_v2");
    std::string production =
        value_or("default.production.exception.handler", "DefaultProductionExceptionHandler");
    auto ends_with = [&](const std::string& suffix) {
      return production.size() >= suffix.size() &&
             production.compare(production.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    if (ends_with("LogAndContinueProductionExceptionHandler"))
      production_handler_ = [](const ProductionError&) {
        return ProductionExceptionHandlerResponse::CONTINUE;
      };
    else if (!ends_with("DefaultProductionExceptionHandler"))
      throw std::invalid_argument("default.production.exception.handler: unknown handler '" +
                                  production +
                                  "' (DefaultProductionExceptionHandler or "
                                  "LogAndContinueProductionExceptionHandler)");
    // Kafka's defaults: 30 s, or 100 ms under exactly-once.
    commit_interval_ms_ = int_setting("commit.interval.ms", exactly_once_ ? 100 : 30000, 0);
    replication_factor_ = static_cast<int32_t>(int_setting("replication.factor", -1, -1));
    state_dir_ =
        value_or("state.dir", (std::filesystem::temp_directory_path() / "kafka-streams").string());
    task_.state_root = (std::filesystem::path(state_dir_) / task_.application_id).string();
    identity_ = detail::ProcessIdentity::claim(task_.state_root);
    process_id_ = identity_->id();
    configure_group();
    if (topology) {
      topologies_ = detail::single_topology(detail::graph_of(*topology), task_.application_id);
      metadata_->add_topology(*detail::graph_of(*topology), task_.application_id);
    }
    task_.exactly_once = exactly_once_;
    task_.rocksdb_memory = std::make_shared<detail::RocksDbMemory>(
        int_setting(detail::kRocksDbMemoryMaxBytes, detail::kRocksDbMemoryDefault, 8 << 20));
    // Made here rather than in start(): queries look for global stores from any thread.
    if (topology && !detail::graph_of(*topology)->global_tables().empty())
      task_.globals = std::make_shared<detail::GlobalStores>();
    hub_->read = [this](const std::string& topology, const std::string& name,
                        std::optional<int32_t> partition, bool stale,
                        const std::function<bool(detail::KeyValueStore&)>& read) {
      read_store(topology, name, partition, stale, read);
    };
  }

  // Before start() the topology joins those start() runs; while running, its internal topics
  // are created and every thread takes it in and rejoins the group, whose next assignment hands
  // out its tasks.
  void add_named_topology(const std::string& name, const Topology& topology,
                          const std::string& prefix) {
    require_named_instance("addNamedTopology");
    std::lock_guard change(change_mutex_);
    detail::NamedGraph added{
        name, detail::graph_of(topology),
        prefix.empty() ? detail::default_prefix(task_.application_id, name) : prefix};
    detail::Topologies next = named_;
    next.push_back(added);
    detail::check_named_topologies(next);
    State s = state();
    bool running = s != State::CREATED;
    if (running && s != State::RUNNING && s != State::REBALANCING)
      throw std::logic_error(std::string("addNamedTopology(): the instance is ") + to_string(s));
    if (running) detail::prepare_internal_topics(config_, {added}, internal_topic_settings());
    metadata_->add_topology(*added.graph, added.prefix);
    named_ = std::move(next);
    {
      std::lock_guard lock(mutex_);
      named_topologies_.insert_or_assign(name, topology);
    }
    if (running) publish_topologies();
  }

  // While running: every thread commits and closes the topology's tasks (standbys too) and
  // rejoins the group; then its local state is deleted and, with `reset_offsets`, the group's
  // committed offsets of its source and repartition topics. Its internal topics stay (the
  // caller's to delete).
  void remove_named_topology(const std::string& name, bool reset_offsets) {
    require_named_instance("removeNamedTopology");
    std::lock_guard change(change_mutex_);
    auto it = std::find_if(named_.begin(), named_.end(),
                           [&](const detail::NamedGraph& t) { return t.name == name; });
    if (it == named_.end())
      throw std::invalid_argument("removeNamedTopology(): no named topology " + name);
    detail::NamedGraph removed = *it;
    State s = state();
    if (s != State::CREATED && s != State::RUNNING && s != State::REBALANCING)
      throw std::logic_error(std::string("removeNamedTopology(): the instance is ") + to_string(s));
    named_.erase(it);
    if (s != State::CREATED) {
      publish_topologies();
      wait_for_threads_to_apply();
      std::filesystem::remove_all(std::filesystem::path(task_.state_root) / ("__" + name + "__"));
      if (reset_offsets) reset_offsets_of(removed);
    }
    std::lock_guard lock(mutex_);
    named_topologies_.erase(name);
  }

  const Topology* topology_by_name(const std::string& name) const {
    std::lock_guard lock(mutex_);
    auto it = named_topologies_.find(name);
    return it == named_topologies_.end() ? nullptr : &it->second;
  }

  void require_named_instance(const char* call) const {
    if (!named_instance_)
      throw std::logic_error(std::string(call) +
                             "(): this instance runs the topology it was made with; named "
                             "topologies go to an instance made without one, KafkaStreams(config)");
  }

  std::shared_ptr<const detail::Topologies> current_topologies() const {
    std::lock_guard lock(topologies_mutex_);
    return topologies_;
  }

  // named_ becomes what the threads run (under change_mutex_).
  void publish_topologies() {
    auto next = std::make_shared<const detail::Topologies>(named_);
    {
      std::lock_guard lock(topologies_mutex_);
      topologies_ = next;
    }
    std::lock_guard threads_lock(threads_mutex_);
    for (auto& t : threads_list_) t->set_topologies(next);
  }

  void wait_for_threads_to_apply() {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (;;) {
      bool applied = true;
      {
        std::shared_lock lock(threads_mutex_);
        for (auto& t : threads_list_) applied = applied && t->topologies_applied();
      }
      if (applied) return;
      if (std::chrono::steady_clock::now() >= deadline)
        throw StreamsException("the stream threads did not take the new topologies within 60 s");
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  // The topology's own group (its positions, topology_positions.h), and the instance's group's
  // committed offsets of the inputs no other topology reads. The broker may refuse those while
  // members still subscribe to them, until the rebalance the removal started is done: retried
  // for 30 s.
  void reset_offsets_of(const detail::NamedGraph& removed) {
    {
      std::lock_guard lock(metadata_client_mutex_);
      detail::delete_position_groups(metadata_client().get(), {removed.prefix});
    }
    std::set<std::string> topics, still_read;
    for (const auto& t : named_)
      for (const auto& sub : t.graph->subtopologies())
        for (const auto& topic : sub.source_topics) still_read.insert(t.wire(topic));
    for (const auto& sub : removed.graph->subtopologies())
      for (const auto& t : sub.source_topics)
        if (!still_read.count(removed.wire(t))) topics.insert(removed.wire(t));
    auto* list = rd_kafka_topic_partition_list_new(0);
    for (const auto& t : topics)
      for (int32_t p = 0, n = topic_partitions(t); p < n; ++p)
        rd_kafka_topic_partition_list_add(list, t.c_str(), p);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    for (;;) {
      try {
        std::lock_guard lock(metadata_client_mutex_);
        detail::delete_group_offsets(metadata_client().get(), task_.application_id, list);
        break;
      } catch (const std::exception& e) {
        if (std::chrono::steady_clock::now() >= deadline) {
          rd_kafka_topic_partition_list_destroy(list);
          throw StreamsException(std::string("removeNamedTopology(): ") + e.what());
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    rd_kafka_topic_partition_list_destroy(list);
  }

  // The stream threads' destructors would wait for them anyway; the monitor must be joined.
  ~Impl() {
    {
      std::unique_lock lock(hub_->mutex);
      hub_->read = nullptr;
    }
    if (!close(std::chrono::milliseconds(60000))) close(std::chrono::milliseconds::max());
  }

  void start() {
    // Named topologies added or removed meanwhile wait until the threads run.
    std::lock_guard change(change_mutex_);
    {
      std::lock_guard lock(mutex_);
      if (state_ != State::CREATED)
        throw std::logic_error("start() is allowed only once, from CREATED");
      if (named_instance_) {
        if (named_.empty())
          throw std::logic_error("start(): no named topology was added (addNamedTopology)");
        detail::check_named_topologies(named_);
        std::lock_guard topologies_lock(topologies_mutex_);
        topologies_ = std::make_shared<const detail::Topologies>(named_);
      }
    }
    // Whether set by default.production.exception.handler or setProductionExceptionHandler.
    if (production_handler_ && exactly_once_)
      spdlog::info(
          "{}: under exactly_once_v2 the production exception handler is asked about records the "
          "producer refuses before sending; a write the broker fails aborts its transaction and "
          "fails the thread",
          task_.application_id);
    set_state(State::REBALANCING);
    try {
      if (auto it = config_.find("metrics.listener"); it != config_.end() && !it->second.empty()) {
        metrics_server_ =
            std::make_unique<detail::MetricsServer>(it->second, [this] { return metrics_text(); });
        spdlog::info("stream-client [{}] metrics on port {}", task_.application_id,
                     metrics_server_->port());
      }
      prepare_topics();
      if (task_.globals) {
        // Global tables are read to their end before any stream thread starts, as Kafka does.
        global_thread_ = std::make_unique<detail::GlobalThread>(
            topologies_->front().graph, config_, exactly_once_, task_.on_deserialization_error,
            task_.globals);
        global_thread_->start();
      }
      shutdown_signal_ = std::make_unique<detail::ShutdownSignal>(config_, task_.application_id,
                                                                  replication_factor_);
      std::lock_guard lock(threads_mutex_);
      for (int i = 0; i < threads_; ++i) add_thread_locked();
    } catch (...) {
      set_state(State::ERROR);
      throw;
    }
    monitor_ = std::thread([this] { monitor(); });
  }

  // As Kafka's close(Duration): false when the threads have not stopped within `timeout`; they
  // go on shutting down, the state stays PENDING_SHUTDOWN, and a later close() waits again.
  bool close(std::chrono::milliseconds timeout) {
    bool first = false;
    {
      std::lock_guard lock(mutex_);
      if (state_ == State::NOT_RUNNING) return true;
      first = !closing_;
      closing_ = true;
    }
    if (first && state() != State::ERROR && state() != State::CREATED)
      set_state(State::PENDING_SHUTDOWN);
    std::unique_lock threads_lock(threads_mutex_);
    if (state() == State::NOT_RUNNING) return true;  // another close() finished meanwhile
    for (auto& t : threads_list_) t->request_stop();
    auto deadline = timeout == std::chrono::milliseconds::max()
                        ? std::chrono::steady_clock::time_point::max()
                        : std::chrono::steady_clock::now() + timeout;
    bool stopped = true;
    for (auto& t : threads_list_) {
      while (t->running() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      if (t->running()) stopped = false;
    }
    if (!stopped) return false;
    {
      std::lock_guard lock(mutex_);
      stop_monitor_ = true;
    }
    cv_.notify_all();
    threads_lock.unlock();  // the monitor may be waiting for it
    // The monitor may be in a request to a cluster that is gone: the timeout bounds it too.
    while (monitor_.joinable() && !monitor_exited_ && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (monitor_.joinable() && !monitor_exited_) return false;
    if (monitor_.joinable()) monitor_.join();
    threads_lock.lock();
    threads_list_.clear();
    if (global_thread_) global_thread_->stop();
    if (state() != State::ERROR) set_state(State::NOT_RUNNING);
    metrics_server_.reset();
    return stopped;
  }

  std::optional<std::string> add_stream_thread() {
    auto s = state();
    if (s != State::RUNNING && s != State::REBALANCING) return std::nullopt;
    std::lock_guard lock(threads_mutex_);
    add_thread_locked();
    return threads_list_.back()->name();
  }

  std::optional<std::string> remove_stream_thread(std::chrono::milliseconds timeout) {
    auto s = state();
    if (s != State::RUNNING && s != State::REBALANCING) return std::nullopt;
    std::unique_ptr<detail::StreamThread> victim;
    {
      std::lock_guard lock(threads_mutex_);
      // The last thread stays: an instance with none would process nothing.
      if (threads_list_.size() <= 1) return std::nullopt;
      victim = std::move(threads_list_.back());
      threads_list_.pop_back();
      resize_caches_locked();
    }
    std::string name = victim->name();
    victim->request_stop();  // commits and leaves the group; its tasks move to the others
    auto deadline = timeout == std::chrono::milliseconds::max()
                        ? std::chrono::steady_clock::time_point::max()
                        : std::chrono::steady_clock::now() + timeout;
    while (victim->running() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (victim->running()) {
      std::lock_guard lock(threads_mutex_);
      threads_list_.push_back(std::move(victim));  // still stopping; close() will wait for it
      resize_caches_locked();
      return std::nullopt;
    }
    victim->join();
    return name;
  }

  // Kafka's validateIsRunningOrRebalancing().
  void require_running_or_rebalancing() const {
    State s = state();
    if (s == State::CREATED)
      throw StreamsNotStartedException(
          "KafkaStreams has not been started, you can retry after calling start()");
    if (s != State::RUNNING && s != State::REBALANCING)
      throw InvalidStateStoreException(std::string("KafkaStreams is not running. State is ") +
                                       to_string(s) + ".");
  }

  // The running topology named so (empty: the unnamed one); null when there is none.
  const detail::NamedGraph* topology_named(const std::string& topology) const {
    for (const auto& t : *current_topologies())
      if (t.name == topology) return &t;
    return nullptr;
  }

  std::shared_ptr<const detail::StoreAccess> store_access(
      const std::string& topology, const std::string& name, detail::StoreKind kind,
      bool timestamped, std::optional<int32_t> partition, bool stale,
      const std::type_info& key_type, const std::type_info& value_type) const {
    require_running_or_rebalancing();
    const detail::NamedGraph* graph = topology_named(topology);
    if (!graph && !topology.empty())
      throw UnknownStateStoreException("Cannot get state store " + name +
                                       " because the named topology " + topology +
                                       " does not exist.");
    const detail::StoreSpec* spec = graph ? graph->graph->store(name) : nullptr;
    if (!spec || !named_by_application(name))
      throw UnknownStateStoreException("Cannot get state store " + name +
                                       " because no such store is registered in the topology.");
    struct Access : detail::StoreAccess {
      std::shared_ptr<QueryHub> hub;
      std::string topology;
      std::optional<int32_t> partition;
      bool stale = false;
      void visit(const std::function<bool(detail::KeyValueStore&)>& read) const override {
        std::shared_lock lock(hub->mutex);
        if (!hub->read)
          throw InvalidStateStoreException("KafkaStreams is not running. State is NOT_RUNNING.");
        hub->read(topology, name, partition, stale, read);
      }
    };
    auto access = std::make_shared<Access>();
    access->name = name;
    access->topology = topology;
    detail::describe_store(*access, spec->options, kind, timestamped, key_type, value_type);
    access->hub = hub_;
    access->partition = partition;
    access->stale = stale;
    return access;
  }

  // Reads the store of every local task that has it, thread after thread (Kafka's
  // WrappingStoreProvider), each under its task's lock.
  void read_store(const std::string& topology, const std::string& name,
                  std::optional<int32_t> partition, bool stale,
                  const std::function<bool(detail::KeyValueStore&)>& read) {
    require_running_or_rebalancing();
    if (task_.globals && current_topologies()->front().graph->global_table_of_store(name))
      return read_global_store(name, read);
    int found = 0, restoring = 0;
    bool stop = false;
    {
      // Threads are added, removed or replaced under it; a close() holding it has already left
      // RUNNING, which the check below then reports.
      std::shared_lock lock(threads_mutex_);
      require_running_or_rebalancing();
      for (auto& t : threads_list_) {
        found += t->read_store(topology, name, partition, stale, read, restoring, stop);
        if (stop || (partition && found > 0)) break;
      }
    }
    if (found > 0) return;
    if (restoring > 0)
      // Kafka's stream thread is not RUNNING until its tasks are restored.
      throw InvalidStateStoreException("Cannot get state store " + name +
                                       " because the stream thread is PARTITIONS_ASSIGNED, not "
                                       "RUNNING");
    if (partition)
      throw InvalidStateStorePartitionException("The specified partition " +
                                                std::to_string(*partition) + " for store " + name +
                                                " does not exist.");
    throw InvalidStateStoreException("The state store, " + name +
                                     ", may have migrated to another instance.");
  }

  // A global table's store: the instance's one copy of every partition, whatever the query's
  // partition or staleness (as Kafka's QueryableStoreProvider looks for a global store first).
  void read_global_store(const std::string& name,
                         const std::function<bool(detail::KeyValueStore&)>& read) {
    read(task_.globals->store(name));  // made on first use: empty before its topic's first record
  }

  // What the threads share in the group: the process id, application.server, the assignor's
  // settings, and the metadata every assignment updates.
  void configure_group() {
    group_.process_id = process_id_;
    std::string server = value_or("application.server", "");
    HostInfo self = HostInfo::unavailable();
    if (!server.empty()) {
      size_t colon = server.rfind(':');
      auto port = colon == std::string::npos ? std::nullopt : parse_int64(server.substr(colon + 1));
      if (colon == std::string::npos || colon == 0)
        throw std::invalid_argument(
            "Config application.server isn't in the correct format. "
            "Expected a host:port pair but received " +
            server);
      if (!port || *port < 0 || *port > 65535)
        throw std::invalid_argument("Invalid port supplied in " + server +
                                    " for config application.server");
      self = HostInfo(server.substr(0, colon), static_cast<int32_t>(*port));
    }
    group_.endpoint = server;
    group_.assignor.num_standby_replicas =
        static_cast<int32_t>(int_setting("num.standby.replicas", 0, 0));
    group_.assignor.acceptable_recovery_lag = int_setting("acceptable.recovery.lag", 10000, 0);
    group_.assignor.max_warmup_replicas =
        static_cast<int32_t>(int_setting("max.warmup.replicas", 2, 1));
    group_.probing_rebalance_interval_ms =
        int_setting("probing.rebalance.interval.ms", 600000, 60000);
    metadata_ = std::make_shared<detail::MetadataState>(
        self, [this](const std::string& topic) { return topic_partitions(topic); });
    group_.on_hosts = [metadata = metadata_](const detail::AssignmentInfo& info, int) {
      metadata->update(info);
    };
  }

  // A topic's partition count, on a client made at the first question.
  int32_t topic_partitions(const std::string& topic) {
    std::lock_guard lock(metadata_client_mutex_);
    return detail::partition_count(metadata_client().get(), topic);
  }
  // Under metadata_client_mutex_.
  detail::RdKafkaHandle& metadata_client() {
    if (!metadata_client_)
      metadata_client_ = detail::make_client(
          RD_KAFKA_PRODUCER, detail::client_conf(config_, detail::ClientRole::kAdmin,
                                                 {{"allow.auto.create.topics", "false"}}));
    return metadata_client_;
  }

  std::vector<StreamsMetadata> metadata_for_all() const {
    require_running_or_rebalancing();
    return metadata_->all();
  }
  std::vector<StreamsMetadata> metadata_for_store(const std::string& store) const {
    require_running_or_rebalancing();
    return metadata_->for_store(store);
  }
  std::optional<KeyQueryMetadata> metadata_for_key(
      const std::string& store,
      const std::function<std::string(std::string_view)>& serialize_key) const {
    require_running_or_rebalancing();
    return metadata_->for_key(store, serialize_key);
  }
  // Each local store copy's position (as its thread last published it, within a second) against
  // its changelog's end, asked now. A running active task's copy is current (Kafka reports it at
  // the end too).
  std::map<std::string, std::map<int32_t, LagInfo>> local_lags() {
    require_running_or_rebalancing();
    std::vector<detail::StorePosition> positions;
    {
      std::lock_guard lock(threads_mutex_);
      for (auto& t : threads_list_) {
        auto m = t->metrics();
        std::lock_guard metrics_lock(m->mutex);
        positions.insert(positions.end(), m->positions.begin(), m->positions.end());
      }
    }
    std::map<std::string, std::map<int32_t, LagInfo>> out;
    for (const auto& p : positions) {
      int64_t end = changelog_end(p.changelog, p.partition);
      int64_t current = p.position < 0 ? end : std::min(p.position, end);
      out[p.store].insert_or_assign(p.partition, LagInfo(current, end));
    }
    return out;
  }

  int64_t changelog_end(const std::string& topic, int32_t partition) {
    std::lock_guard lock(metadata_client_mutex_);
    int64_t low = 0, high = 0;
    auto err =
        detail::query_watermarks(metadata_client().get(), topic, partition, &low, &high, 10000);
    if (err)
      throw StreamsException("end offset of " + topic + "-" + std::to_string(partition) + ": " +
                             rd_kafka_err2str(err));
    return high;
  }

  std::string metrics_text() {
    detail::MetricsView view;
    view.application_id = task_.application_id;
    view.state = to_string(state());
    view.rocksdb_memory = task_.rocksdb_memory.get();
    {
      std::lock_guard lock(threads_mutex_);
      for (auto& t : threads_list_)
        if (t->running()) view.threads.push_back(t->metrics());
    }
    return detail::prometheus_text(view);
  }

  // Without mutex_: queries ask it twice per read, from many threads at once.
  State state() const { return state_seen_.load(std::memory_order_acquire); }
  void set_listener(StateListener l) { listener_ = std::move(l); }
  void set_handler(UncaughtExceptionHandler h) { handler_ = std::move(h); }
  void set_production_handler(ProductionExceptionHandler h) { production_handler_ = std::move(h); }
  void set_processing_handler(ProcessingExceptionHandler h) {
    task_.on_processing_error = std::move(h);
  }

  void clean_up() {
    auto s = state();
    if (s != State::CREATED && s != State::NOT_RUNNING && s != State::ERROR)
      throw std::logic_error("cleanUp() is not allowed while the application runs");
    std::filesystem::remove_all(std::filesystem::path(state_dir_) / config_.at("application.id"));
  }

 private:
  std::string value_or(const std::string& key, const std::string& fallback) const {
    auto it = config_.find(key);
    return it == config_.end() ? fallback : it->second;
  }
  int64_t int_setting(const std::string& key, int64_t fallback, int64_t min) const {
    auto it = config_.find(key);
    if (it == config_.end()) return fallback;
    auto n = parse_int64(it->second);
    if (!n || *n < min)
      throw std::invalid_argument(key + ": '" + it->second +
                                  "' is not a number >= " + std::to_string(min));
    return *n;
  }

  void set_state(State next) {
    State old;
    {
      std::lock_guard lock(mutex_);
      old = state_;
      if (old == next) return;
      state_ = next;
      state_seen_.store(next, std::memory_order_release);
    }
    spdlog::info("stream-client [{}] State transition from {} to {}", task_.application_id,
                 to_string(old), to_string(next));
    if (listener_) listener_(next, old);
  }

  void prepare_topics() {
    detail::prepare_internal_topics(config_, *current_topologies(), internal_topic_settings());
  }

  detail::InternalTopicSettings internal_topic_settings() const {
    detail::InternalTopicSettings settings;
    settings.replication_factor = replication_factor_;
    settings.window_changelog_extra_retention_ms =
        int_setting("windowstore.changelog.additional.retention.ms", 86400000, 0);
    return settings;
  }

  void add_thread_locked() {
    detail::ThreadConfig tc;
    tc.app = config_;
    tc.group = group_;
    tc.task = task_;
    tc.commit_interval_ms = commit_interval_ms_;
    tc.repartition_purge_interval_ms = int_setting("repartition.purge.interval.ms", 30000, 0);
    tc.exactly_once = exactly_once_;
    tc.production_handler = production_handler_;
    tc.client_id = task_.application_id + "-StreamThread-" + std::to_string(++thread_counter_);
    tc.thread_index = thread_counter_;
    tc.transactional_id =
        task_.application_id + "-" + process_id_ + "-" + std::to_string(thread_counter_);
    tc.task.cache_budget = std::make_shared<detail::CacheBudget>();
    auto thread = std::make_unique<detail::StreamThread>(current_topologies(), tc);
    thread->start();
    threads_list_.push_back(std::move(thread));
    resize_caches_locked();
    // The new member makes the group rebalance: REBALANCING until its first assignment is done
    // (the monitor's next look may come after that), as Kafka's thread state listener reports.
    if (state() == State::RUNNING) set_state(State::REBALANCING);
  }

  // statestore.cache.max.bytes is the instance's: each thread gets an equal share, re-divided
  // whenever a thread comes or goes, as Kafka resizes its thread caches.
  void resize_caches_locked() {
    if (threads_list_.empty()) return;
    int64_t share = task_.cache_max_bytes / static_cast<int64_t>(threads_list_.size());
    for (auto& t : threads_list_) t->cache_budget().max_bytes = share;
  }

  // Every 50 ms: failed threads and the client's state; every second: a shutdown request from
  // another instance.
  void monitor() {
    auto next_signal_check = std::chrono::steady_clock::now();
    std::unique_lock lock(mutex_);
    while (!stop_monitor_) {
      cv_.wait_for(lock, std::chrono::milliseconds(50));
      if (stop_monitor_) break;
      lock.unlock();
      bool shutdown_requested = false;
      if (std::chrono::steady_clock::now() >= next_signal_check) {
        next_signal_check = std::chrono::steady_clock::now() + std::chrono::seconds(1);
        shutdown_requested = shutdown_signal_->requested();
      }
      {
        std::lock_guard threads_lock(threads_mutex_);
        check_threads(shutdown_requested);
      }
      lock.lock();
    }
    monitor_exited_ = true;
  }

  void check_threads(bool shutdown_requested) {
    {
      std::lock_guard lock(mutex_);
      if (closing_) return;
    }
    if (shutdown_requested) {
      spdlog::error("stream-client [{}] an instance of the application asked all to shut down",
                    task_.application_id);
      shut_down_on_error_locked();
      return;
    }
    if (global_thread_ && global_thread_->failed()) {
      spdlog::error("stream-client [{}] the global thread failed: {}", task_.application_id,
                    global_thread_->failure());
      shut_down_on_error_locked();
      return;
    }
    bool rebalancing = false;
    for (size_t i = 0; i < threads_list_.size(); ++i) {
      auto& t = threads_list_[i];
      if (t->failed() && !t->running()) {
        auto response = StreamThreadExceptionResponse::SHUTDOWN_CLIENT;
        if (handler_) response = handler_(StreamsException(t->failure()));
        if (response == StreamThreadExceptionResponse::REPLACE_THREAD) {
          t->join();
          threads_list_.erase(threads_list_.begin() + static_cast<long>(i));
          add_thread_locked();
          return;
        }
        if (response == StreamThreadExceptionResponse::SHUTDOWN_APPLICATION)
          shutdown_signal_->request(process_id_, t->failure());
        shut_down_on_error_locked();
        return;
      }
      rebalancing = rebalancing || t->rebalancing();
    }
    auto s = state();
    if (s == State::REBALANCING || s == State::RUNNING)
      set_state(rebalancing ? State::REBALANCING : State::RUNNING);
  }

  // Kafka: PENDING_ERROR while every thread stops, then ERROR.
  void shut_down_on_error_locked() {
    set_state(State::PENDING_ERROR);
    for (auto& other : threads_list_) other->request_stop();
    for (auto& other : threads_list_) other->join();
    set_state(State::ERROR);
    std::lock_guard lock(mutex_);
    stop_monitor_ = true;
  }

  // What the threads run: the single topology from construction, or the named ones from start(),
  // replaced as they are added and removed (under topologies_mutex_).
  std::shared_ptr<const detail::Topologies> topologies_;
  mutable std::mutex topologies_mutex_;
  bool named_instance_ = false;  // made without a topology
  // One addition or removal at a time, and none while start() runs; named_ is what they made.
  std::mutex change_mutex_;
  detail::Topologies named_;
  std::map<std::string, Topology> named_topologies_;  // as added, for getTopologyByName
  Config config_;
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

KafkaStreams::KafkaStreams(const Topology& topology, std::map<std::string, std::string> config)
    : impl_(std::make_unique<Impl>(&topology, std::move(config))) {}
KafkaStreams::KafkaStreams(std::map<std::string, std::string> config)
    : impl_(std::make_unique<Impl>(nullptr, std::move(config))) {}
void KafkaStreams::removeNamedTopology(const std::string& name, bool resetOffsets) {
  impl_->remove_named_topology(name, resetOffsets);
}
void KafkaStreams::addNamedTopology(const std::string& name, const Topology& topology,
                                    const std::string& internalTopicPrefix) {
  impl_->add_named_topology(name, topology, internalTopicPrefix);
}
const Topology* KafkaStreams::getTopologyByName(const std::string& name) const {
  return impl_->topology_by_name(name);
}
std::shared_ptr<const detail::StoreAccess> KafkaStreams::store_access(
    const std::string& topology, const std::string& name, detail::StoreKind kind, bool timestamped,
    std::optional<int32_t> partition, bool stale, const std::type_info& key_type,
    const std::type_info& value_type) const {
  return impl_->store_access(topology, name, kind, timestamped, partition, stale, key_type,
                             value_type);
}
KafkaStreams::~KafkaStreams() = default;
std::vector<StreamsMetadata> KafkaStreams::metadataForAllStreamsClients() const {
  return impl_->metadata_for_all();
}
std::vector<StreamsMetadata> KafkaStreams::streamsMetadataForStore(
    const std::string& storeName) const {
  return impl_->metadata_for_store(storeName);
}
std::optional<KeyQueryMetadata> KafkaStreams::query_metadata_for_key(
    const std::string& store,
    const std::function<std::string(std::string_view topic)>& serialize_key) const {
  return impl_->metadata_for_key(store, serialize_key);
}
std::map<std::string, std::map<int32_t, LagInfo>> KafkaStreams::allLocalStorePartitionLags() const {
  return impl_->local_lags();
}
void KafkaStreams::start() {
  impl_->start();
}
bool KafkaStreams::close(std::chrono::milliseconds timeout) {
  return impl_->close(timeout);
}
KafkaStreams::State KafkaStreams::state() const {
  return impl_->state();
}
void KafkaStreams::setStateListener(StateListener l) {
  impl_->set_listener(std::move(l));
}
void KafkaStreams::setUncaughtExceptionHandler(UncaughtExceptionHandler h) {
  impl_->set_handler(std::move(h));
}
void KafkaStreams::setProductionExceptionHandler(ProductionExceptionHandler h) {
  impl_->set_production_handler(std::move(h));
}
void KafkaStreams::setProcessingExceptionHandler(ProcessingExceptionHandler h) {
  impl_->set_processing_handler(std::move(h));
}
void KafkaStreams::cleanUp() {
  impl_->clean_up();
}
std::optional<std::string> KafkaStreams::addStreamThread() {
  return impl_->add_stream_thread();
}
std::optional<std::string> KafkaStreams::removeStreamThread(std::chrono::milliseconds timeout) {
  return impl_->remove_stream_thread(timeout);
}

}  // namespace oxbow::streams
