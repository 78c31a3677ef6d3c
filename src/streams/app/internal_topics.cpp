#include "streams/app/internal_topics.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "oxbow/streams/errors.h"

namespace oxbow::streams::detail {

namespace {

// Partition counts by the topic names of one graph (internal ones unprefixed).
using Counts = std::map<std::string, int32_t>;

// Kafka's CopartitionedTopicsEnforcer, with the counts in the message.
void check_copartitioning(const NamedGraph& topology, const Counts& counts) {
  for (const auto& group : topology.graph->copartition_groups()) {
    std::set<int32_t> seen;
    std::string list;
    for (const auto& t : group) {
      int32_t n = counts.count(t) ? counts.at(t) : 0;
      seen.insert(n);
      list += fmt::format("{}{} ({} partitions)", list.empty() ? "" : ", ", topology.wire(t), n);
    }
    if (seen.size() > 1)
      throw TopologyException("Topics not co-partitioned: [" + list +
                              "]: joined inputs need as many partitions each");
  }
}

// Internal topics get the partition count of the sub-topology feeding them, changelogs that of
// their sub-topology (compacted). `counts` holds the source topics' counts.
void plan_topology(const NamedGraph& topology, Counts counts, const InternalTopicSettings& settings,
                   std::vector<NewTopic>& create) {
  const GraphBuilder& graph = *topology.graph;
  // A join's internal topics take the partition count of the user topics they pair with.
  Counts copartitioned;
  for (const auto& group : graph.copartition_groups()) {
    int32_t external = 0;
    for (const auto& t : group)
      if (!graph.is_internal_topic(t)) external = std::max(external, counts[t]);
    if (external > 0)
      for (const auto& t : group)
        if (graph.is_internal_topic(t)) copartitioned[t] = external;
  }
  // Internal topics in creation order: upstream counts are known before a topic is sized.
  for (const auto& spec : graph.internal_topics()) {
    // Repartitioned::withNumberOfPartitions decides alone, fewer than upstream included.
    int32_t n = spec.partitions;
    if (n == 0 && copartitioned.count(spec.name)) n = copartitioned[spec.name];
    if (n == 0)
      for (const auto& up : spec.upstream_topics) n = std::max(n, counts[up]);
    counts[spec.name] = std::max(n, 1);
    // Kafka's settings for repartition topics: kept until the application purges what it has
    // committed (never aged out while it is down), in segments small enough to purge.
    create.push_back(
        {topology.wire(spec.name),
         counts[spec.name],
         settings.replication_factor,
         {{"cleanup.policy", "delete"}, {"retention.ms", "-1"}, {"segment.bytes", "52428800"}}});
  }
  check_copartitioning(topology, counts);
  for (const auto& sub : graph.subtopologies()) {
    int32_t n = 1;
    for (const auto& t : sub.source_topics) n = std::max(n, counts[t]);
    for (const auto& store : sub.stores) {
      const auto* spec = graph.store(store);
      if (!spec->options.logging || !spec->source_topic.empty()) continue;
      std::map<std::string, std::string> configs{{"cleanup.policy", "compact"}};
      // Window stores expire windows locally without tombstones; their changelogs age them
      // out themselves, a margin later.
      if (spec->options.retention_ms > 0) {
        configs["cleanup.policy"] = "compact,delete";
        configs["retention.ms"] = std::to_string(spec->options.retention_ms +
                                                 settings.window_changelog_extra_retention_ms);
      }
      for (const auto& [k, v] : spec->options.changelog_configs) configs[k] = v;
      create.push_back({topology.changelog(store), n, settings.replication_factor, configs});
    }
  }
}

}  // namespace

void prepare_internal_topics(const Config& config, const Topologies& topologies,
                             const InternalTopicSettings& settings) {
  auto admin = make_client(RD_KAFKA_PRODUCER, client_conf(config, ClientRole::kAdmin,
                                                          {{"allow.auto.create.topics", "false"}}));
  Counts sources;
  std::vector<std::string> missing;
  for (const auto& topology : topologies)
    for (const auto& n : topology.graph->nodes()) {
      if (n.kind != NodeDescription::Kind::kSource || n.internal) continue;
      for (const auto& t : n.topics) {
        if (sources.count(t)) continue;
        int32_t c = partition_count(admin.get(), t);
        if (c == 0) missing.push_back(t);
        sources[t] = c;
      }
    }
  if (!missing.empty()) {
    std::string list;
    for (const auto& t : missing) list += (list.empty() ? "" : ", ") + t;
    throw StreamsException("MissingSourceTopicException: source topics do not exist: " + list);
  }
  std::vector<NewTopic> create;
  for (const auto& topology : topologies) plan_topology(topology, sources, settings, create);
  for (const auto& t : create) {
    int32_t existing = partition_count(admin.get(), t.name);
    if (existing != 0 && existing != t.partitions)
      throw StreamsException("internal topic " + t.name + " has " + std::to_string(existing) +
                             " partitions, expected " + std::to_string(t.partitions));
  }
  create_topics(admin.get(), create);
}

}  // namespace oxbow::streams::detail
