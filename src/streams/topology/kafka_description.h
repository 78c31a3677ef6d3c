#pragma once
// Topology::describe() prints what Kafka Streams' TopologyDescription prints for the same
// topology (Kafka 3.x), node order and set order included. Kafka's order comes from JDK
// behaviours (String.hashCode over UTF-16, HashMap and HashSet iteration, the red-black tree of
// TreeSet, node sizes that change while nodes sit in sorted sets), which kafka_description.cpp
// re-creates from their documented algorithms, as far as the description needs.
#include <vector>

#include "oxbow/streams/topology.h"
#include "streams/topology/graph_builder.h"

namespace oxbow::streams::detail {

// One sub-topology as Kafka describes it: nodes by the number of paths below them, largest first,
// then by name; each node's successors and predecessors in the order Kafka's sets give them.
SubtopologyDescription describe_subtopology(const std::vector<NodeSpec>& all,
                                            const Subtopology& sub);

}  // namespace oxbow::streams::detail
