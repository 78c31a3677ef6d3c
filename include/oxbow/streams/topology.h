#pragma once
// Topology: the processing graph a StreamsBuilder made, split into sub-topologies (the parts
// connected through processors and stores; repartition topics separate them), and its description
// in the layout of Kafka's TopologyDescription.
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "oxbow/streams/errors.h"
#include "oxbow/streams/processor.h"

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

// A global table or store: its source and the processor that fills its store. It numbers among
// the sub-topologies, as in Kafka, but makes no tasks.
struct GlobalStoreDescription {
  int id = 0;
  NodeDescription source, processor;
};

class TopologyDescription {
 public:
  explicit TopologyDescription(std::vector<SubtopologyDescription> subtopologies,
                               std::vector<GlobalStoreDescription> global_stores = {})
      : subtopologies_(std::move(subtopologies)), global_stores_(std::move(global_stores)) {}
  const std::vector<SubtopologyDescription>& subtopologies() const { return subtopologies_; }
  const std::vector<GlobalStoreDescription>& globalStores() const { return global_stores_; }
  // As Kafka prints it: "Topologies:", then each sub-topology with its nodes, arrows and stores,
  // global stores among them in the order of their ids.
  std::string toString() const;

 private:
  std::vector<SubtopologyDescription> subtopologies_;
  std::vector<GlobalStoreDescription> global_stores_;
};

inline std::ostream& operator<<(std::ostream& out, const TopologyDescription& d) {
  return out << d.toString();
}

class Topology {
 public:
  // An empty topology, to build by hand (or to extend what a StreamsBuilder built).
  Topology();

  // A source node reading `topics` with the serdes given.
  template <class K, class V>
  Topology& addSource(const std::string& name, std::vector<std::string> topics,
                      Serde<K> key = DefaultSerde<K>::get(),
                      Serde<V> value = DefaultSerde<V>::get()) {
    detail::add_source(graph_, name, std::move(topics), detail::erase(std::move(key)),
                       detail::erase(std::move(value)));
    return *this;
  }
  // A processor node after `parents`: supplier() -> std::unique_ptr<P>, P an api::Processor.
  template <class S, class P = detail::SuppliedProcessor<S>>
  Topology& addProcessor(const std::string& name, S supplier,
                         const std::vector<std::string>& parents) {
    detail::add_user_processor(
        graph_, name,
        detail::processor_factory<typename P::KeyIn, typename P::ValueIn, typename P::KeyOut,
                                  typename P::ValueOut>(std::move(supplier)),
        parents);
    return *this;
  }
  // A store, connected to the processors named.
  template <class K, class V>
  Topology& addStateStore(const StoreBuilder<K, V>& store,
                          const std::vector<std::string>& processors = {}) {
    detail::add_state_store(graph_, detail::options_of(store));
    for (const auto& p : processors) detail::connect_store(graph_, p, store.name());
    return *this;
  }
  Topology& connectProcessorAndStateStores(const std::string& processor,
                                           const std::vector<std::string>& stores) {
    for (const auto& s : stores) detail::connect_store(graph_, processor, s);
    return *this;
  }
  // A global store: every partition of `topic`, on every instance, through the processor
  // supplier() makes (an api::Processor<KS, VS, ...> that writes the records it wants into the
  // store, which it reaches with getStateStore). The store's logging must be disabled: the topic
  // is its changelog. Tasks read it by name.
  template <class K, class V, class KS, class VS, class S>
  Topology& addGlobalStore(const StoreBuilder<K, V>& store, const std::string& sourceName,
                           Serde<KS> key, Serde<VS> value, const std::string& topic,
                           const std::string& processorName, S supplier) {
    using P = detail::SuppliedProcessor<S>;
    detail::add_global_store(
        graph_, detail::options_of(store), sourceName, topic, detail::erase(std::move(key)),
        detail::erase(std::move(value)), processorName,
        detail::processor_factory<KS, VS, typename P::KeyOut, typename P::ValueOut>(
            std::move(supplier)));
    return *this;
  }
  // A sink node writing what `parents` forward to `topic`.
  template <class K, class V>
  Topology& addSink(const std::string& name, const std::string& topic, Serde<K> key, Serde<V> value,
                    const std::vector<std::string>& parents) {
    detail::add_sink(graph_, name, topic, detail::erase(std::move(key)),
                     detail::erase(std::move(value)), parents);
    return *this;
  }

  TopologyDescription describe() const;

 private:
  friend struct detail::Access;
  explicit Topology(std::shared_ptr<detail::GraphBuilder> graph) : graph_(std::move(graph)) {}
  const std::shared_ptr<detail::GraphBuilder>& graph() const { return graph_; }
  std::shared_ptr<detail::GraphBuilder> graph_;
};

}  // namespace oxbow::streams
