#pragma once
// Windowed and cogrouped forms of a grouped stream (KGroupedStream::windowedBy and cogroup), and
// their aggregations into tables. Included at the end of kstream.h, which declares them.
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "oxbow/streams/kstream.h"

namespace oxbow::streams {

// A grouped stream cut into time windows: each aggregation keeps one result per key and window
// and gives a table keyed by Windowed<K>, whose key serde is Kafka's time-windowed one. The
// Materialized key serde, if given, is the key's (K's) own.
template <class K, class V>
class TimeWindowedKStream {
 public:
  // KIP-825: onWindowClose emits each window's final result once, when it closes.
  TimeWindowedKStream emitStrategy(const EmitStrategy& strategy) const {
    TimeWindowedKStream out(*this);
    out.emit_on_close_ = strategy.onClose();
    return out;
  }

  KTable<Windowed<K>, int64_t> count(
      const Materialized<K, int64_t>& materialized = Materialized<K, int64_t>(),
      const Named& named = Named::as("")) const {
    auto store = detail::aggregate_store(materialized, grouping_);
    if (!detail::options_of(materialized).value_serde)
      store.value_serde = detail::erase(serdes::Int64());
    auto node =
        aggregate_core(detail::count_init, detail::count_add, store, named.name(), "AGGREGATE");
    return table<int64_t>(std::move(node), store);
  }
  // reducer(aggregate, value) -> V
  template <class R>
  KTable<Windowed<K>, V> reduce(R reducer,
                                const Materialized<K, V>& materialized = Materialized<K, V>(),
                                const Named& named = Named::as("")) const {
    auto store = detail::aggregate_store(materialized, grouping_);
    if (!detail::options_of(materialized).value_serde)
      store.value_serde = grouping_.options.value_serde;
    auto erased = [r = std::move(reducer)](const Datum& agg, const Datum& v) {
      return detail::to_datum(V(r(detail::as<V>(agg), detail::as<V>(v))));
    };
    if (sliding_) {
      // A reduce is an aggregate whose first value is the first record's.
      auto node = aggregate_core([] { return Datum(); },
                                 [erased](const Datum&, const Datum& v, const Datum& agg) {
                                   return agg.has_value() ? erased(agg, v) : v;
                                 },
                                 store, named.name(), "REDUCE");
      return table<V>(std::move(node), store);
    }
    return table<V>(
        detail::windowed_reduce(grouping_, windows_, erased, store, named.name(), emit_on_close_),
        store);
  }
  // initializer() -> VA; aggregator(key, value, aggregate) -> VA
  template <class VA, class I, class A>
  KTable<Windowed<K>, VA> aggregate(I initializer, A aggregator,
                                    const Materialized<K, VA>& materialized = Materialized<K, VA>(),
                                    const Named& named = Named::as("")) const {
    auto store = detail::aggregate_store(materialized, grouping_);
    auto node = aggregate_core(
        [i = std::move(initializer)] { return detail::to_datum(VA(i())); },
        [a = std::move(aggregator)](const Datum& k, const Datum& v, const Datum& agg) {
          return detail::to_datum(VA(a(detail::as<K>(k), detail::as<V>(v), detail::as<VA>(agg))));
        },
        store, named.name(), "AGGREGATE");
    return table<VA>(std::move(node), store);
  }

 private:
  friend struct detail::Access;
  TimeWindowedKStream(detail::Grouping grouping, TimeWindows windows)
      : grouping_(std::move(grouping)), windows_(windows) {}
  TimeWindowedKStream(detail::Grouping grouping, SlidingWindows sliding)
      : grouping_(std::move(grouping)),
        windows_(TimeWindows::ofSizeWithNoGrace(std::chrono::milliseconds(1))),
        sliding_(sliding) {}

  detail::Node aggregate_core(detail::Initializer init, detail::Aggregator adder,
                              const detail::StoreOptions& store, const std::string& name,
                              const char* kind) const {
    if (sliding_)
      return detail::sliding_aggregate(grouping_, *sliding_, std::move(init), std::move(adder),
                                       store, name, kind, emit_on_close_);
    return detail::windowed_aggregate(grouping_, windows_, std::move(init), std::move(adder), store,
                                      name, emit_on_close_);
  }
  template <class VA>
  static KTable<Windowed<K>, VA> table(detail::Node node, const detail::StoreOptions& store) {
    node.value_serde = store.value_serde;  // the key serde is the windowed one the node has
    return detail::shell<KTable<Windowed<K>, VA>>(std::move(node));
  }

  detail::Grouping grouping_;
  TimeWindows windows_;
  std::optional<SlidingWindows> sliding_;
  bool emit_on_close_ = false;
};

// Several grouped streams with the same key type, each with its aggregator, aggregated into one
// table (Kafka's CogroupedKStream).
template <class K, class VOut>
class CogroupedKStream {
 public:
  // aggregator(key, value, aggregate) -> VOut
  template <class V, class A>
  CogroupedKStream cogroup(const KGroupedStream<K, V>& grouped, A aggregator) const {
    auto inputs = inputs_;
    inputs.emplace_back(detail::grouping_of(grouped), [a = std::move(aggregator)](
                                                          const Datum& k, const Datum& v,
                                                          const Datum& agg) {
      return detail::to_datum(VOut(a(detail::as<K>(k), detail::as<V>(v), detail::as<VOut>(agg))));
    });
    return CogroupedKStream(std::move(inputs));
  }
  // initializer() -> VOut
  template <class I>
  KTable<K, VOut> aggregate(I initializer,
                            const Materialized<K, VOut>& materialized = Materialized<K, VOut>(),
                            const Named& named = Named::as("")) const {
    auto store = detail::options_of(materialized);
    store =
        detail::fill_serdes<K, VOut>(std::move(store), inputs_.front().first.options.key_serde, {});
    auto node = detail::cogroup_aggregate(
        inputs_, [i = std::move(initializer)] { return detail::to_datum(VOut(i())); }, store,
        named.name());
    return detail::shell<KTable<K, VOut>>(std::move(node));
  }
  // Windowed cogroups: one aggregate per key and window (or session), as KGroupedStream's.
  TimeWindowedCogroupedKStream<K, VOut> windowedBy(const TimeWindows& windows) const {
    return detail::shell<TimeWindowedCogroupedKStream<K, VOut>>(inputs_, windows);
  }
  TimeWindowedCogroupedKStream<K, VOut> windowedBy(const SlidingWindows& windows) const {
    return detail::shell<TimeWindowedCogroupedKStream<K, VOut>>(inputs_, windows);
  }
  SessionWindowedCogroupedKStream<K, VOut> windowedBy(const SessionWindows& windows) const {
    return detail::shell<SessionWindowedCogroupedKStream<K, VOut>>(inputs_, windows);
  }

 private:
  friend struct detail::Access;
  explicit CogroupedKStream(std::vector<std::pair<detail::Grouping, detail::Aggregator>> inputs)
      : inputs_(std::move(inputs)) {}

  std::vector<std::pair<detail::Grouping, detail::Aggregator>> inputs_;
};

namespace detail {
template <class K, class VOut>
StoreOptions cogroup_store(const Materialized<K, VOut>& materialized,
                           const std::vector<std::pair<Grouping, Aggregator>>& inputs) {
  auto store = detail::options_of(materialized);
  store =
      detail::fill_serdes<K, VOut>(std::move(store), inputs.front().first.options.key_serde, {});
  return store;
}
template <class K, class VOut>
KTable<Windowed<K>, VOut> windowed_table(Node node, const StoreOptions& store) {
  node.value_serde = store.value_serde;  // the key serde is the windowed one the node has
  return detail::shell<KTable<Windowed<K>, VOut>>(std::move(node));
}
}  // namespace detail

// A cogroup cut into time or sliding windows (Kafka's TimeWindowedCogroupedKStream).
template <class K, class VOut>
class TimeWindowedCogroupedKStream {
 public:
  using Inputs = std::vector<std::pair<detail::Grouping, detail::Aggregator>>;
  // initializer() -> VOut
  template <class I>
  KTable<Windowed<K>, VOut> aggregate(
      I initializer, const Materialized<K, VOut>& materialized = Materialized<K, VOut>(),
      const Named& named = Named::as("")) const {
    auto store = detail::cogroup_store(materialized, inputs_);
    detail::Initializer init = [i = std::move(initializer)] { return detail::to_datum(VOut(i())); };
    auto node =
        sliding_ ? detail::cogroup_sliding_aggregate(inputs_, *sliding_, init, store, named.name())
                 : detail::cogroup_windowed_aggregate(inputs_, windows_, init, store, named.name());
    return detail::windowed_table<K, VOut>(std::move(node), store);
  }

 private:
  friend struct detail::Access;
  TimeWindowedCogroupedKStream(Inputs inputs, TimeWindows windows)
      : inputs_(std::move(inputs)), windows_(windows) {}
  TimeWindowedCogroupedKStream(Inputs inputs, SlidingWindows sliding)
      : inputs_(std::move(inputs)),
        windows_(TimeWindows::ofSizeWithNoGrace(std::chrono::milliseconds(1))),
        sliding_(sliding) {}

  Inputs inputs_;
  TimeWindows windows_;
  std::optional<SlidingWindows> sliding_;
};

// A cogroup cut into sessions (Kafka's SessionWindowedCogroupedKStream).
template <class K, class VOut>
class SessionWindowedCogroupedKStream {
 public:
  using Inputs = std::vector<std::pair<detail::Grouping, detail::Aggregator>>;
  // initializer() -> VOut; merger(key, agg1, agg2) -> VOut when sessions merge
  template <class I, class M>
  KTable<Windowed<K>, VOut> aggregate(
      I initializer, M merger, const Materialized<K, VOut>& materialized = Materialized<K, VOut>(),
      const Named& named = Named::as("")) const {
    auto store = detail::cogroup_store(materialized, inputs_);
    auto node = detail::cogroup_session_aggregate(
        inputs_, windows_, [i = std::move(initializer)] { return detail::to_datum(VOut(i())); },
        [m = std::move(merger)](const Datum& k, const Datum& one, const Datum& two) {
          return detail::to_datum(
              VOut(m(detail::as<K>(k), detail::as<VOut>(one), detail::as<VOut>(two))));
        },
        store, named.name());
    return detail::windowed_table<K, VOut>(std::move(node), store);
  }

 private:
  friend struct detail::Access;
  SessionWindowedCogroupedKStream(Inputs inputs, SessionWindows windows)
      : inputs_(std::move(inputs)), windows_(windows) {}

  Inputs inputs_;
  SessionWindows windows_;
};

// A grouped stream cut into sessions: each aggregation keeps one result per key and session
// and gives a table keyed by Windowed<K> (Kafka's session-windowed key serde). When sessions
// merge, the merged-away ones are deleted from the table (tombstones downstream).
template <class K, class V>
class SessionWindowedKStream {
 public:
  KTable<Windowed<K>, int64_t> count(
      const Materialized<K, int64_t>& materialized = Materialized<K, int64_t>(),
      const Named& named = Named::as("")) const {
    auto store = detail::aggregate_store(materialized, grouping_);
    if (!detail::options_of(materialized).value_serde)
      store.value_serde = detail::erase(serdes::Int64());
    auto node = detail::session_aggregate(
        grouping_, windows_, detail::count_init, detail::count_add,
        [](const Datum&, const Datum& a, const Datum& b) {
          return Datum(detail::as<int64_t>(a) + detail::as<int64_t>(b));
        },
        store, named.name(), "AGGREGATE");
    return table<int64_t>(std::move(node), store);
  }
  // reducer(aggregate, value) -> V; also merges two sessions' aggregates.
  template <class R>
  KTable<Windowed<K>, V> reduce(R reducer,
                                const Materialized<K, V>& materialized = Materialized<K, V>(),
                                const Named& named = Named::as("")) const {
    auto store = detail::aggregate_store(materialized, grouping_);
    if (!detail::options_of(materialized).value_serde)
      store.value_serde = grouping_.options.value_serde;
    auto reduce = [r = std::move(reducer)](const Datum& agg, const Datum& v) {
      if (!agg.has_value()) return v;
      return detail::to_datum(V(r(detail::as<V>(agg), detail::as<V>(v))));
    };
    auto node = detail::session_aggregate(
        grouping_, windows_, [] { return Datum(); },
        [reduce](const Datum&, const Datum& v, const Datum& agg) { return reduce(agg, v); },
        [reduce](const Datum&, const Datum& a, const Datum& b) { return reduce(a, b); }, store,
        named.name(), "REDUCE");
    return table<V>(std::move(node), store);
  }
  // initializer() -> VA; aggregator(key, value, aggregate) -> VA; merger(key, agg1, agg2) -> VA
  template <class VA, class I, class A, class M>
  KTable<Windowed<K>, VA> aggregate(I initializer, A aggregator, M merger,
                                    const Materialized<K, VA>& materialized = Materialized<K, VA>(),
                                    const Named& named = Named::as("")) const {
    auto store = detail::aggregate_store(materialized, grouping_);
    auto node = detail::session_aggregate(
        grouping_, windows_, [i = std::move(initializer)] { return detail::to_datum(VA(i())); },
        [a = std::move(aggregator)](const Datum& k, const Datum& v, const Datum& agg) {
          return detail::to_datum(VA(a(detail::as<K>(k), detail::as<V>(v), detail::as<VA>(agg))));
        },
        [m = std::move(merger)](const Datum& k, const Datum& one, const Datum& two) {
          return detail::to_datum(
              VA(m(detail::as<K>(k), detail::as<VA>(one), detail::as<VA>(two))));
        },
        store, named.name(), "AGGREGATE");
    return table<VA>(std::move(node), store);
  }

 private:
  friend struct detail::Access;
  SessionWindowedKStream(detail::Grouping grouping, SessionWindows windows)
      : grouping_(std::move(grouping)), windows_(windows) {}

  template <class VA>
  static KTable<Windowed<K>, VA> table(detail::Node node, const detail::StoreOptions& store) {
    node.value_serde = store.value_serde;
    return detail::shell<KTable<Windowed<K>, VA>>(std::move(node));
  }

  detail::Grouping grouping_;
  SessionWindows windows_;
};

}  // namespace oxbow::streams
