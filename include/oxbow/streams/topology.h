#pragma once
// Topology: the processing graph a StreamsBuilder made, split into sub-topologies (the parts
// connected through processors and stores; repartition topics separate them), and its description
// in the layout of Kafka's TopologyDescription.
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "oxbow/streams/errors.h"

namespace oxbow::streams {

namespace detail {
class GraphBuilder;
}

struct NodeDescription {
  enum class Kind { kSource, kProcessor, kSink };
  Kind kind = Kind::kProcessor;
  std::string name;
  std::vector<std::string> topics;  // sources: the topics read; sinks: the topic written, if fixed
  std::vector<std::string> stores;  // processors
  std::vector<std::string> successors;
  std::vector<std::string> predecessors;
};

struct SubtopologyDescription {
  int id = 0;
  std::vector<NodeDescription> nodes;
};

class TopologyDescription {
 public:
  explicit TopologyDescription(std::vector<SubtopologyDescription> subtopologies)
      : subtopologies_(std::move(subtopologies)) {}
  const std::vector<SubtopologyDescription>& subtopologies() const { return subtopologies_; }
  // As Kafka prints it: "Topologies:", then each sub-topology with its nodes, arrows and stores.
  std::string toString() const;

 private:
  std::vector<SubtopologyDescription> subtopologies_;
};

inline std::ostream& operator<<(std::ostream& out, const TopologyDescription& d) {
  return out << d.toString();
}

class Topology {
 public:
  explicit Topology(std::shared_ptr<detail::GraphBuilder> graph) : graph_(std::move(graph)) {}
  TopologyDescription describe() const;
  const std::shared_ptr<detail::GraphBuilder>& graph() const { return graph_; }

 private:
  std::shared_ptr<detail::GraphBuilder> graph_;
};

}  // namespace oxbow::streams
