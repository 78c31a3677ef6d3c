#pragma once
// The topologies one KafkaStreams instance runs: its single unnamed topology, or named ones
// (Kafka's internal "named topologies") sharing its threads, clients and group. Each carries the
// prefix of its internal topics (repartition topics, changelogs): the application id for the
// unnamed one, so that its names stay what they always were.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "streams/assignment/streams_assignor.h"
#include "streams/topology/graph_builder.h"

namespace oxbow::streams::detail {

struct NamedGraph {
  std::string name;  // empty: the application's only topology
  std::shared_ptr<const GraphBuilder> graph;
  std::string prefix;  // internal topics are "<prefix>-<name>"
  // A topic as the graph names it, as it is on the wire.
  std::string wire(const std::string& topic) const {
    return graph->is_internal_topic(topic) ? prefix + "-" + topic : topic;
  }
  std::string changelog(const std::string& store) const {
    return prefix + "-" + store + "-changelog";
  }
};

using Topologies = std::vector<NamedGraph>;

// A topology's sub-topology: what the task manager and the group key tasks by, with the task's
// partition.
using SubtopologyKey = std::pair<std::string, int>;

// The unnamed topology alone.
std::shared_ptr<const Topologies> single_topology(std::shared_ptr<const GraphBuilder> graph,
                                                  const std::string& application_id);

// Kafka's prefix of a named topology's internal topics when none is given:
// "<application.id>-<name>".
std::string default_prefix(const std::string& application_id, const std::string& name);

// Throws TopologyException for what the named topologies cannot share yet: a name twice or not a
// valid topic name, a prefix twice, a global table, and a source topic read by two of them where
// one reads it beside other topics in a sub-topology. (Topologies reading one topic each keep
// their own positions: topology_positions.h.)
void check_named_topologies(const Topologies& topologies);

// What the group's leader assigns from: every sub-topology of every topology, with its source
// topics and changelogs as on the wire.
std::vector<SubtopologyTopics> group_topics(const Topologies& topologies);

}  // namespace oxbow::streams::detail
