// KafkaStreams::Impl's side of interactive queries: stores, where state lives, and lags.
#include "streams/app/kafka_streams_impl.h"

namespace oxbow::streams {

using detail::Config;

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

void KafkaStreams::Impl::require_running_or_rebalancing() const {
  State s = state();
  if (s == State::CREATED)
    throw StreamsNotStartedException(
        "KafkaStreams has not been started, you can retry after calling start()");
  if (s != State::RUNNING && s != State::REBALANCING)
    throw InvalidStateStoreException(std::string("KafkaStreams is not running. State is ") +
                                     to_string(s) + ".");
}

const detail::NamedGraph* KafkaStreams::Impl::topology_named(const std::string& topology) const {
  for (const auto& t : *current_topologies())
    if (t.name == topology) return &t;
  return nullptr;
}

std::shared_ptr<const detail::StoreAccess> KafkaStreams::Impl::store_access(
    const std::string& topology, const std::string& name, detail::StoreKind kind, bool timestamped,
    std::optional<int32_t> partition, bool stale, const std::type_info& key_type,
    const std::type_info& value_type) const {
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

void KafkaStreams::Impl::read_store(const std::string& topology, const std::string& name,
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

void KafkaStreams::Impl::read_global_store(
    const std::string& name, const std::function<bool(detail::KeyValueStore&)>& read) {
  read(task_.globals->store(name));  // made on first use: empty before its topic's first record
}

int32_t KafkaStreams::Impl::topic_partitions(const std::string& topic) {
  std::lock_guard lock(metadata_client_mutex_);
  return detail::partition_count(metadata_client().get(), topic);
}

detail::RdKafkaHandle& KafkaStreams::Impl::metadata_client() {
  if (!metadata_client_)
    metadata_client_ = detail::make_client(
        RD_KAFKA_PRODUCER, detail::client_conf(config_, detail::ClientRole::kAdmin,
                                               {{"allow.auto.create.topics", "false"}}));
  return metadata_client_;
}

std::vector<StreamsMetadata> KafkaStreams::Impl::metadata_for_all() const {
  require_running_or_rebalancing();
  return metadata_->all();
}

std::vector<StreamsMetadata> KafkaStreams::Impl::metadata_for_store(
    const std::string& store) const {
  require_running_or_rebalancing();
  return metadata_->for_store(store);
}

std::optional<KeyQueryMetadata> KafkaStreams::Impl::metadata_for_key(
    const std::string& store,
    const std::function<std::string(std::string_view)>& serialize_key) const {
  require_running_or_rebalancing();
  return metadata_->for_key(store, serialize_key);
}

std::map<std::string, std::map<int32_t, LagInfo>> KafkaStreams::Impl::local_lags() {
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

int64_t KafkaStreams::Impl::changelog_end(const std::string& topic, int32_t partition) {
  std::lock_guard lock(metadata_client_mutex_);
  int64_t low = 0, high = 0;
  auto err =
      detail::query_watermarks(metadata_client().get(), topic, partition, &low, &high, 10000);
  if (err)
    throw StreamsException("end offset of " + topic + "-" + std::to_string(partition) + ": " +
                           rd_kafka_err2str(err));
  return high;
}

}  // namespace oxbow::streams
