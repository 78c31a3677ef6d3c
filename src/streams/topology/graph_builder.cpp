#include "streams/topology/graph_builder.h"

#include "streams/topology/kafka_description.h"

#include "oxbow/streams/streams_builder.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>
#include <numeric>

namespace oxbow::streams::detail {

std::string GraphBuilder::new_name(const std::string& prefix) {
  return fmt::format("{}{:010d}", prefix, counter_++);
}

std::string GraphBuilder::name_or_new(const std::string& name, const std::string& prefix) {
  return name.empty() ? new_name(prefix) : name;
}

std::string flow_mismatch(const NodeSpec& parent, const NodeSpec& child) {
  auto what = [](Flow f) { return f == Flow::kChanges ? "a table's changes" : "stream records"; };
  return fmt::format(
      "{} forwards {} but {} takes {}{}", parent.name, what(parent.forwards), child.name,
      what(child.takes),
      parent.forwards == Flow::kChanges ? " (a table becomes a stream by toStream())" : "");
}

NodeSpec& GraphBuilder::add_node(NodeSpec spec) {
  if (index_.count(spec.name) || stores_.count(spec.name))
    throw TopologyException("name " + spec.name + " is already used by another node or store");
  // Refused before it is added, so that the graph stays as it was.
  for (const auto& p : spec.parents)
    if (node(p).forwards != spec.takes) throw TopologyException(flow_mismatch(node(p), spec));
  index_[spec.name] = nodes_.size();
  auto parents = spec.parents;
  spec.parents.clear();
  nodes_.push_back(std::move(spec));
  std::string name = nodes_.back().name;
  for (const auto& p : parents) connect(p, name);
  return nodes_[index_.at(name)];
}

void GraphBuilder::add_store(StoreSpec spec) {
  if (stores_.count(spec.name))
    throw TopologyException("store " + spec.name + " is already defined");
  std::string name = spec.name;
  stores_.emplace(std::move(name), std::move(spec));
}

void GraphBuilder::add_internal_topic(InternalTopicSpec spec) {
  internal_topics_.push_back(std::move(spec));
}

void GraphBuilder::connect_store(const std::string& processor, const std::string& store) {
  auto& n = nodes_.at(index_of(processor));
  if (n.kind != NodeDescription::Kind::kProcessor)
    throw TopologyException(processor + " is not a processor: only processors use stores");
  if (!stores_.count(store)) throw TopologyException("no store named " + store);
  if (std::find(n.stores.begin(), n.stores.end(), store) == n.stores.end())
    n.stores.push_back(store);
}

void GraphBuilder::connect(const std::string& parent, const std::string& child) {
  auto& p = nodes_.at(index_of(parent));
  auto& c = nodes_.at(index_of(child));
  if (p.kind == NodeDescription::Kind::kSink)
    throw TopologyException("sink " + parent + " cannot have children");
  if (p.forwards != c.takes) throw TopologyException(flow_mismatch(p, c));
  p.children.push_back(child);
  c.parents.push_back(parent);
}

const NodeSpec& GraphBuilder::node(const std::string& name) const {
  return nodes_.at(index_of(name));
}

size_t GraphBuilder::index_of(const std::string& name) const {
  auto it = index_.find(name);
  if (it == index_.end()) throw TopologyException("no node named " + name);
  return it->second;
}

const StoreSpec* GraphBuilder::store(const std::string& name) const {
  auto it = stores_.find(name);
  return it == stores_.end() ? nullptr : &it->second;
}

bool GraphBuilder::is_internal_topic(const std::string& topic) const {
  return std::any_of(internal_topics_.begin(), internal_topics_.end(),
                     [&](const auto& t) { return t.name == topic; });
}

size_t GraphBuilder::globals_before(size_t node) const {
  return static_cast<size_t>(
      std::count_if(global_tables_.begin(), global_tables_.end(),
                    [node](const GlobalTableSpec& g) { return g.position <= node; }));
}

int GraphBuilder::global_table_id(size_t index) const {
  // The sub-topologies whose first node came before it, and the global tables before it.
  size_t position = global_tables_.at(index).position;
  std::set<size_t> groups_before;
  for (const auto& sub : subtopologies())
    if (sub.nodes.front() < position) groups_before.insert(sub.nodes.front());
  return static_cast<int>(groups_before.size() + index);
}

std::vector<Subtopology> GraphBuilder::subtopologies() const {
  // Nodes joined by an edge or a shared store run in one task.
  std::vector<size_t> parent(nodes_.size());
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  auto unite = [&](size_t a, size_t b) { parent[find(a)] = find(b); };
  std::map<std::string, size_t> store_owner;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    for (const auto& c : nodes_[i].children) unite(i, index_of(c));
    for (const auto& s : nodes_[i].stores) {
      auto [it, inserted] = store_owner.emplace(s, i);
      if (!inserted) unite(i, it->second);
    }
  }
  std::map<size_t, size_t> group_of_root;
  std::vector<Subtopology> out;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    size_t root = find(i);
    auto [it, inserted] = group_of_root.emplace(root, out.size());
    if (inserted) {
      out.emplace_back();
      out.back().id = static_cast<int>(out.size() - 1);
    }
    auto& sub = out[it->second];
    if (inserted) sub.id += globals_before(i);
    sub.nodes.push_back(i);
    const auto& n = nodes_[i];
    if (n.kind == NodeDescription::Kind::kSource)
      sub.source_topics.insert(sub.source_topics.end(), n.topics.begin(), n.topics.end());
    sub.stores.insert(n.stores.begin(), n.stores.end());
  }
  return out;
}

TopologyDescription GraphBuilder::describe() const {
  std::vector<SubtopologyDescription> subs;
  for (const auto& sub : subtopologies()) subs.push_back(describe_subtopology(nodes_, sub));
  std::vector<GlobalStoreDescription> globals;
  for (size_t i = 0; i < global_tables_.size(); ++i) {
    const auto& g = global_tables_[i];
    GlobalStoreDescription d;
    d.id = global_table_id(i);
    d.source.kind = NodeDescription::Kind::kSource;
    d.source.name = g.source_name;
    d.source.topics = {g.topic};
    d.source.successors = {g.processor_name};
    d.processor.name = g.processor_name;
    d.processor.stores = {g.store};
    d.processor.predecessors = {g.source_name};
    globals.push_back(std::move(d));
  }
  return TopologyDescription(std::move(subs), std::move(globals));
}

void GraphBuilder::validate() const {
  for (const auto& n : nodes_) {
    for (const auto& s : n.stores)
      if (!stores_.count(s)) throw TopologyException("node " + n.name + " uses unknown store " + s);
    if (n.kind == NodeDescription::Kind::kSource && n.topics.empty())
      throw TopologyException("source " + n.name + " reads no topic");
  }
  std::map<std::string, std::string> reader;
  for (const auto& n : nodes_) {
    if (n.kind != NodeDescription::Kind::kSource) continue;
    for (const auto& t : n.topics) {
      auto [it, inserted] = reader.emplace(t, n.name);
      if (!inserted)
        throw TopologyException("topic " + t + " is read by both " + it->second + " and " + n.name);
    }
  }
}

}  // namespace oxbow::streams::detail

namespace oxbow::streams {

// A sink that picks its topic per record: Kafka prints its TopicNameExtractor's toString() (for a
// lambda, a JVM-made class name and an identity hash, stable nowhere). This stands in for it: the
// C++ type every extractor is held as.
constexpr const char* kExtractorClass = "oxbow::streams::detail::TopicNameExtractor";

namespace {

std::string node_text(const NodeDescription& n) {
  auto set = [](const std::vector<std::string>& v) {
    return fmt::format("[{}]", fmt::join(v, ", "));
  };
  auto names = [](const std::vector<std::string>& v) {
    return v.empty() ? std::string("none") : fmt::format("{}", fmt::join(v, ", "));
  };
  switch (n.kind) {
    case NodeDescription::Kind::kSource:
      return fmt::format("    Source: {} (topics: {})\n      --> {}\n", n.name, set(n.topics),
                         names(n.successors));
    case NodeDescription::Kind::kProcessor:
      return fmt::format("    Processor: {} (stores: {})\n      --> {}\n      <-- {}\n", n.name,
                         set(n.stores), names(n.successors), names(n.predecessors));
    case NodeDescription::Kind::kSink:
      break;
  }
  std::string out =
      n.topics.empty()
          ? fmt::format("    Sink: {} (extractor class: {})\n", n.name, kExtractorClass)
          : fmt::format("    Sink: {} (topic: {})\n", n.name, n.topics.front());
  return out + fmt::format("      <-- {}\n", names(n.predecessors));
}

}  // namespace

std::string TopologyDescription::toString() const {
  // Sub-topologies and global stores by id; each sub-topology ends with a blank line, a global
  // store does not.
  std::map<int, std::string> parts;
  for (const auto& sub : subtopologies_) {
    std::string text = fmt::format("Sub-topology: {}\n", sub.id);
    for (const auto& n : sub.nodes) text += node_text(n);
    parts.emplace(sub.id, text + "\n");
  }
  for (const auto& g : global_stores_)
    parts.emplace(
        g.id, fmt::format("Sub-topology: {} for global store (will not generate tasks)\n", g.id) +
                  node_text(g.source) + node_text(g.processor));
  // Kafka's spacing: one space after the heading, then two before each sub-topology, so the first
  // is indented by three and the others by two.
  std::string out = "Topologies:\n ";
  for (const auto& [id, text] : parts) out += "  " + text;
  return out;
}

Topology::Topology() : graph_(std::make_shared<detail::GraphBuilder>()) {}

TopologyDescription Topology::describe() const {
  return graph_->describe();
}

StreamsBuilder::StreamsBuilder() : graph_(std::make_shared<detail::GraphBuilder>()) {}

Topology StreamsBuilder::build() {
  graph_->validate();
  return detail::shell<Topology>(graph_);
}

}  // namespace oxbow::streams
