#include "streams/query/metadata_state.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>

#include "streams/topology/graph_builder.h"

namespace oxbow::streams::detail {

MetadataState::MetadataState(HostInfo self,
                             std::function<int32_t(const std::string&)> partitions_of)
    : self_(std::move(self)), partitions_of_(std::move(partitions_of)) {}

void MetadataState::add_topology(const GraphBuilder& graph, const std::string& prefix) {
  std::lock_guard lock(mutex_);  // queries may be under way (a topology added while running)
  for (const auto& sub : graph.subtopologies())
    for (const auto& store : sub.stores)
      for (const auto& t : sub.source_topics)
        sources_of_store_[store].insert(graph.is_internal_topic(t) ? prefix + "-" + t : t);
  for (const auto& g : graph.global_tables()) global_stores_.insert(g.store);
}

void MetadataState::update(const AssignmentInfo& info) {
  std::lock_guard lock(mutex_);
  active_ = info.active_by_host;
  standby_ = info.standby_by_host;
  initialised_ = true;
}

bool MetadataState::has_store(const std::string& store) const {
  std::lock_guard lock(mutex_);
  return sources_of_store_.count(store) || global_stores_.count(store);
}

std::vector<StreamsMetadata> MetadataState::build_locked() const {
  std::map<Endpoint, std::pair<std::set<TopicPartition>, std::set<TopicPartition>>> hosts;
  for (const auto& [e, list] : active_)
    for (const auto& [t, p] : list) hosts[e].first.insert({t, p});
  for (const auto& [e, list] : standby_)
    for (const auto& [t, p] : list) hosts[e].second.insert({t, p});
  std::vector<StreamsMetadata> out;
  for (const auto& [e, parts] : hosts) {
    if (parts.first.empty() && parts.second.empty()) continue;
    auto stores_of = [&](const std::set<TopicPartition>& held) {
      std::set<std::string> stores;
      for (const auto& [store, sources] : sources_of_store_)
        for (const auto& tp : held)
          if (sources.count(tp.topic)) stores.insert(store);
      return stores;
    };
    std::set<std::string> active_stores = stores_of(parts.first);
    active_stores.insert(global_stores_.begin(), global_stores_.end());
    out.emplace_back(HostInfo(e.host, e.port), active_stores, parts.first, stores_of(parts.second),
                     parts.second);
  }
  return out;  // sorted by host and port: the map's order
}

std::vector<StreamsMetadata> MetadataState::all() const {
  std::lock_guard lock(mutex_);
  return build_locked();
}

std::vector<StreamsMetadata> MetadataState::for_store(const std::string& store) const {
  std::lock_guard lock(mutex_);
  if (!initialised_) return {};
  auto all = build_locked();
  if (global_stores_.count(store)) return all;
  if (!sources_of_store_.count(store)) return {};
  std::vector<StreamsMetadata> out;
  for (auto& m : all)
    if (m.stateStoreNames().count(store) || m.standbyStateStoreNames().count(store))
      out.push_back(std::move(m));
  return out;
}

std::optional<KeyQueryMetadata> MetadataState::for_key(
    const std::string& store,
    const std::function<std::string(std::string_view topic)>& serialize_key) const {
  std::lock_guard lock(mutex_);
  if (global_stores_.count(store)) {
    if (!initialised_) return KeyQueryMetadata::notAvailable();
    return KeyQueryMetadata(self_, {}, -1);
  }
  auto sources = sources_of_store_.find(store);
  if (sources == sources_of_store_.end()) return std::nullopt;
  if (!initialised_) return KeyQueryMetadata::notAvailable();
  // The widest source topic decides the partition, as Kafka's.
  std::string widest;
  int32_t count = 0;
  for (const auto& t : sources->second) {
    auto it = partition_counts_.find(t);
    if (it == partition_counts_.end() || it->second <= 0)
      it = partition_counts_.insert_or_assign(t, partitions_of_(t)).first;
    if (it->second > count) count = it->second, widest = t;
  }
  if (count <= 0) return KeyQueryMetadata::notAvailable();
  // librdkafka's murmur2 partitioner is Java's default one (its topic handle is not needed for a
  // key that is not null).
  std::string key = serialize_key(widest);
  int32_t partition =
      rd_kafka_msg_partitioner_murmur2(nullptr, key.data(), key.size(), count, nullptr, nullptr);
  HostInfo active = HostInfo::unavailable();
  std::set<HostInfo> standbys;
  auto holds = [&](const PartitionList& list) {
    for (const auto& [t, p] : list)
      if (p == partition && sources->second.count(t)) return true;
    return false;
  };
  for (const auto& [e, list] : active_)
    if (holds(list)) active = HostInfo(e.host, e.port);
  for (const auto& [e, list] : standby_)
    if (holds(list)) standbys.insert(HostInfo(e.host, e.port));
  return KeyQueryMetadata(active, standbys, partition);
}

}  // namespace oxbow::streams::detail
