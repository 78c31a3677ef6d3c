#pragma once
// StreamsBuilder: where a topology starts, from topics read as streams or as tables.
#include <memory>
#include <string>
#include <vector>

#include "oxbow/streams/kstream.h"
#include "oxbow/streams/topology.h"

namespace oxbow::streams {

class StreamsBuilder {
 public:
  StreamsBuilder();

  template <class K, class V>
  KStream<K, V> stream(const std::string& topic,
                       const Consumed<K, V>& consumed = Consumed<K, V>()) const {
    return stream<K, V>(std::vector<std::string>{topic}, consumed);
  }
  template <class K, class V>
  KStream<K, V> stream(std::vector<std::string> topics,
                       const Consumed<K, V>& consumed = Consumed<K, V>()) const {
    auto options = detail::fill_serdes<K, V>(detail::options_of(consumed), {}, {});
    auto node = detail::stream_source(graph_, std::move(topics), options);
    node = detail::with_serdes<K, V>(std::move(node), options.key_serde, options.value_serde);
    return detail::shell<KStream<K, V>>(std::move(node));
  }
  // The topic read as a changelog: its latest value per key, a null value deleting the key. The
  // topic itself is the store's changelog (no second copy is written), as Kafka does with
  // topology.optimization=all.
  template <class K, class V>
  KTable<K, V> table(const std::string& topic, const Consumed<K, V>& consumed = Consumed<K, V>(),
                     const Materialized<K, V>& materialized = Materialized<K, V>()) const {
    auto options = detail::fill_serdes<K, V>(detail::options_of(consumed), {}, {});
    auto store = detail::fill_serdes<K, V>(detail::options_of(materialized), options.key_serde,
                                           options.value_serde);
    auto table = detail::table_source(graph_, topic, options, std::move(store));
    table = detail::with_serdes<K, V>(std::move(table), options.key_serde, options.value_serde);
    return detail::shell<KTable<K, V>>(std::move(table));
  }
  template <class K, class V>
  KTable<K, V> table(const std::string& topic, const Materialized<K, V>& materialized) const {
    return table<K, V>(topic, Consumed<K, V>(), materialized);
  }

  // The whole topic, on every instance, as a table that streams join through a key selector.
  template <class K, class V>
  GlobalKTable<K, V> globalTable(
      const std::string& topic, const Consumed<K, V>& consumed = Consumed<K, V>(),
      const Materialized<K, V>& materialized = Materialized<K, V>()) const {
    auto options = detail::fill_serdes<K, V>(detail::options_of(consumed), {}, {});
    return detail::shell<GlobalKTable<K, V>>(
        detail::global_table(graph_, topic, std::move(options), detail::options_of(materialized)));
  }

  // A key-value store for processors of the Processor API, which name it in process().
  template <class K, class V>
  StreamsBuilder& addStateStore(const StoreBuilder<K, V>& store) {
    detail::add_state_store(graph_, detail::options_of(store));
    return *this;
  }

  // Checks the graph (serdes known wherever bytes are written, names unique) and freezes it;
  // throws TopologyException naming the problem.
  Topology build();

 private:
  std::shared_ptr<detail::GraphBuilder> graph_;
};

}  // namespace oxbow::streams
