#pragma once
// The graph a StreamsBuilder records: nodes (sources, processors, sinks) in creation order, the
// stores they use, and the application's internal topics; split into sub-topologies on demand.
//
// Names follow Kafka's: an operation without a Named gets PREFIX-NNNNNNNNNN from one counter per
// builder (stores draw from it too), so a topology ported from Java describes the same way.
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "oxbow/streams/detail/dsl.h"
#include "oxbow/streams/detail/user_processor.h"
#include "oxbow/streams/topology.h"
#include "streams/processor/processor.h"

namespace oxbow::streams::detail {

// What flows along a node's edges: stream records (Processor::process) or a table's changes
// (Processor::process_change). A node is connected only to parents that forward what it takes.
enum class Flow : unsigned char { kRecords, kChanges };

struct NodeSpec {
  std::string name;
  NodeDescription::Kind kind = NodeDescription::Kind::kProcessor;
  std::vector<std::string> parents, children;
  ProcessorFactory factory;  // processors and sinks
  std::vector<std::string> stores;
  std::vector<std::string> topics;  // a source's topics, a sink's fixed topic
  bool internal = false;            // topics are the application's own: named <application.id>-...
  bool dynamic_topic = false;       // a sink choosing its topic per record
  ConsumedOptions consumed;         // sources
  Flow takes = Flow::kRecords;      // processors and sinks
  Flow forwards = Flow::kRecords;   // sources and processors
  ChangeReader read_change;         // a source of table changes: how its values read
};

// Why `child` may not follow `parent`: one forwards what the other does not take.
std::string flow_mismatch(const NodeSpec& parent, const NodeSpec& child);

struct StoreSpec {
  std::string name;
  StoreOptions options;
  // A table source's store: this topic is its changelog, so no other is written.
  std::string source_topic;
};

// A GlobalKTable: its topic, read whole on every instance into `store`.
struct GlobalTableSpec {
  std::string topic;
  std::string store;
  ConsumedOptions consumed;
  // Topology::addGlobalStore: the processor that updates the store; unset for a GlobalKTable.
  UserProcessorFactory updater;
  // For describe(): the names of its source and processor, and how many nodes the graph had
  // when it was added (its place in Kafka's numbering of sub-topologies).
  std::string source_name, processor_name;
  size_t position = 0;
};

struct InternalTopicSpec {
  std::string name;        // without the application id
  int32_t partitions = 0;  // 0: the most of the source topics upstream
  std::vector<std::string> upstream_topics;
};

struct Subtopology {
  // Numbered as Kafka (2.5 on) numbers node groups: in the order of each one's first node, nodes
  // being added in topology order (Kafka's graph is written out in build-priority order, which is
  // the order our DSL adds nodes in).
  int id = 0;
  std::vector<size_t> nodes;               // indexes into GraphBuilder::nodes(), creation order
  std::vector<std::string> source_topics;  // as named in the graph (internal ones unprefixed)
  std::set<std::string> stores;
};

class GraphBuilder {
 public:
  std::string new_name(const std::string& prefix);
  // `name` if given, otherwise a new PREFIX-NNNNNNNNNN.
  std::string name_or_new(const std::string& name, const std::string& prefix);

  NodeSpec& add_node(NodeSpec spec);
  void add_store(StoreSpec spec);
  void add_internal_topic(InternalTopicSpec spec);
  // Topics whose partitions a join pairs up: they must have as many partitions (internal ones
  // without a count of their own are given the others'). Internal topics without the app id.
  void add_copartition_group(std::vector<std::string> topics) {
    copartition_groups_.push_back(std::move(topics));
  }
  const std::vector<std::vector<std::string>>& copartition_groups() const {
    return copartition_groups_;
  }
  void add_global_table(GlobalTableSpec spec) {
    spec.position = nodes_.size();
    global_tables_.push_back(std::move(spec));
  }
  const std::vector<GlobalTableSpec>& global_tables() const { return global_tables_; }
  const GlobalTableSpec* global_table_of(std::string_view topic) const {
    for (const auto& g : global_tables_)
      if (g.topic == topic) return &g;
    return nullptr;
  }
  const GlobalTableSpec* global_table_of_store(const std::string& store) const {
    for (const auto& g : global_tables_)
      if (g.store == store) return &g;
    return nullptr;
  }
  void connect(const std::string& parent, const std::string& child);
  // Gives a processor access to a store (Topology.connectProcessorAndStateStores).
  void connect_store(const std::string& processor, const std::string& store);

  const std::vector<NodeSpec>& nodes() const { return nodes_; }
  const NodeSpec& node(const std::string& name) const;
  size_t index_of(const std::string& name) const;
  const std::map<std::string, StoreSpec>& stores() const { return stores_; }
  const StoreSpec* store(const std::string& name) const;
  const std::vector<InternalTopicSpec>& internal_topics() const { return internal_topics_; }
  bool is_internal_topic(const std::string& topic) const;

  // Sub-topologies, numbered with the global tables among them (global_table_id()).
  std::vector<Subtopology> subtopologies() const;
  int global_table_id(size_t index) const;
  // What Kafka 3.x's Topology#describe() gives for the same graph: nodes ordered as its
  // NodeComparator orders them, successors and predecessors, topics and stores in the orders its
  // sets iterate.
  TopologyDescription describe() const;
  // Throws TopologyException for a graph that cannot run.
  void validate() const;

 private:
  size_t globals_before(size_t node) const;
  int counter_ = 0;
  std::vector<NodeSpec> nodes_;
  std::map<std::string, size_t> index_;
  std::map<std::string, StoreSpec> stores_;
  std::vector<InternalTopicSpec> internal_topics_;
  std::vector<std::vector<std::string>> copartition_groups_;
  std::vector<GlobalTableSpec> global_tables_;
};

}  // namespace oxbow::streams::detail
