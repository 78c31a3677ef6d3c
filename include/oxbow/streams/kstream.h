#pragma once
// KStream, KTable and their grouped forms: Kafka Streams' DSL with C++ callables.
//
// Each operation wraps the callable into an untyped one and adds a node to the graph; names follow
// Kafka's (KSTREAM-FILTER-0000000001, ...) unless a Named is given. Null keys and values reach
// typed callables as T{} (use std::optional<T> to see them); aggregations and tables skip or
// propagate nulls as Kafka does and never pass them to callables.
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "oxbow/streams/detail/dsl.h"
#include "oxbow/streams/detail/typed_joiner.h"
#include "oxbow/streams/processor.h"

namespace oxbow::streams {

template <class K, class V>
class KTable;
template <class K, class V>
class KGroupedStream;
template <class K, class V>
class KGroupedTable;
template <class K, class V>
class BranchedKStream;
template <class K, class V>
class TimeWindowedKStream;
template <class K, class V>
class SessionWindowedKStream;
template <class K, class VOut>
class CogroupedKStream;
template <class K, class VOut>
class TimeWindowedCogroupedKStream;
template <class K, class VOut>
class SessionWindowedCogroupedKStream;

// A table of a whole topic on every instance (all partitions), kept up to date apart from the
// tasks: streams of any partitioning can join it through a key selector.
template <class K, class V>
class GlobalKTable {
 public:
  const std::string& queryableStoreName() const { return node_.store; }

 private:
  friend struct detail::Access;
  explicit GlobalKTable(detail::Node node) : node_(std::move(node)) {}
  const detail::Node& node() const { return node_; }

  detail::Node node_;
};

namespace detail {
// The serdes of what an operation gives, of types K and V: the upstream's `key` or `value` where
// the operation keeps that type (null where it does not), else the type's DefaultSerde.
template <class K, class V>
Node with_serdes(Node node, const ErasedSerde& key, const ErasedSerde& value) {
  node.key_serde = key ? key : default_serde<K>();
  node.value_serde = value ? value : default_serde<V>();
  return node;
}
// The same for the serdes a user may have set in Consumed, Grouped, Materialized, ...: those set
// stay, the others are filled as with_serdes fills a node's.
template <class K, class V, class Options>
Options fill_serdes(Options options, const ErasedSerde& key, const ErasedSerde& value) {
  if (!options.key_serde) options.key_serde = key ? key : default_serde<K>();
  if (!options.value_serde) options.value_serde = value ? value : default_serde<V>();
  return options;
}
inline std::string name_of(const Named* named) {
  return named ? named->name() : std::string();
}

// Type arguments a caller may leave out: mapValues(f) takes its value type from what f returns,
// mapValues<T>(f) converts what f returns to T.
struct Deduced {};
template <class Given, class Found>
using given_or = std::conditional_t<std::is_same_v<Given, Deduced>, Found, Given>;
// What mapper(key, value) or mapper(value) returns.
template <class M, class K, class V, class = void>
struct ValueMapperResult {
  using type = std::invoke_result_t<const M&, const V&>;
};
template <class M, class K, class V>
struct ValueMapperResult<M, K, V,
                         std::enable_if_t<std::is_invocable_v<const M&, const K&, const V&>>> {
  using type = std::invoke_result_t<const M&, const K&, const V&>;
};
template <class M, class K, class V>
using value_mapper_result_t = std::decay_t<typename ValueMapperResult<M, K, V>::type>;
template <class M, class K, class V>
using key_value_mapper_result_t = std::decay_t<std::invoke_result_t<const M&, const K&, const V&>>;
template <class R>
using range_element_t = std::decay_t<decltype(*std::begin(std::declval<R&>()))>;
template <class KV>
using key_of_t = std::decay_t<decltype(std::declval<KV&>().key)>;
template <class KV>
using value_of_t = std::decay_t<decltype(std::declval<KV&>().value)>;
// An element of what a mapper returned: moved out when the mapper returned the range by value
// (the range is the caller's), copied when it returned a reference to a range it keeps.
template <class Range, class T>
decltype(auto) take_if_owned(T&& element) {
  using Element = std::remove_reference_t<T>;
  if constexpr (std::is_lvalue_reference_v<Range>)
    return static_cast<const Element&>(element);
  else
    return static_cast<Element&&>(element);
}

}  // namespace detail

template <class K, class V>
class KStream {
 public:
  template <class P>
  KStream filter(P predicate, const Named& named = Named::as("")) const {
    return KStream(
        detail::filter(node_, typed_predicate(std::move(predicate)), false, named.name()));
  }
  template <class P>
  KStream filterNot(P predicate, const Named& named = Named::as("")) const {
    return KStream(
        detail::filter(node_, typed_predicate(std::move(predicate)), true, named.name()));
  }
  // mapper(key, value) -> KeyValue<K1, V1>
  template <class KeyArg = detail::Deduced, class ValueArg = detail::Deduced, class M,
            class R = detail::key_value_mapper_result_t<M, K, V>,
            class K1 = detail::given_or<KeyArg, detail::key_of_t<R>>,
            class V1 = detail::given_or<ValueArg, detail::value_of_t<R>>>
  KStream<K1, V1> map(M mapper, const Named& named = Named::as("")) const {
    auto erased = [m = std::move(mapper)](const Datum& k, const Datum& v) {
      KeyValue<K1, V1> kv = m(detail::as<K>(k), detail::as<V>(v));
      return detail::KeyValue(detail::to_datum(std::move(kv.key)),
                              detail::to_datum(std::move(kv.value)));
    };
    return detail::shell<KStream<K1, V1>>(
        retyped<K1, V1>(detail::map(node_, erased, named.name()), false, false));
  }
  template <class KeyArg = detail::Deduced, class M,
            class K1 = detail::given_or<KeyArg, detail::key_value_mapper_result_t<M, K, V>>>
  KStream<K1, V> selectKey(M mapper, const Named& named = Named::as("")) const {
    auto erased = [m = std::move(mapper)](const Datum& k, const Datum& v) {
      return detail::to_datum(K1(m(detail::as<K>(k), detail::as<V>(v))));
    };
    return detail::shell<KStream<K1, V>>(
        retyped<K1, V>(detail::select_key(node_, erased, named.name()), false, true));
  }
  // mapper(value) -> V1, or mapper(key, value) -> V1
  template <class ValueArg = detail::Deduced, class M,
            class V1 = detail::given_or<ValueArg, detail::value_mapper_result_t<M, K, V>>>
  KStream<K, V1> mapValues(M mapper, const Named& named = Named::as("")) const {
    auto erased = [m = std::move(mapper)](const Datum& k, const Datum& v) {
      return detail::to_datum(V1(call_value_mapper(m, k, v)));
    };
    return detail::shell<KStream<K, V1>>(
        retyped<K, V1>(detail::map_values(node_, erased, named.name()), true, false));
  }
  // mapper(key, value) -> a range of KeyValue<K1, V1>
  template <class KeyArg = detail::Deduced, class ValueArg = detail::Deduced, class M,
            class E = detail::range_element_t<detail::key_value_mapper_result_t<M, K, V>>,
            class K1 = detail::given_or<KeyArg, detail::key_of_t<E>>,
            class V1 = detail::given_or<ValueArg, detail::value_of_t<E>>>
  KStream<K1, V1> flatMap(M mapper, const Named& named = Named::as("")) const {
    auto erased = [m = std::move(mapper)](const Datum& k, const Datum& v) {
      std::vector<detail::KeyValue> out;
      auto&& pairs = m(detail::as<K>(k), detail::as<V>(v));
      if constexpr (requires { std::size(pairs); }) out.reserve(std::size(pairs));
      for (auto&& kv : pairs)
        out.emplace_back(detail::to_datum(K1(detail::take_if_owned<decltype(pairs)>(kv.key))),
                         detail::to_datum(V1(detail::take_if_owned<decltype(pairs)>(kv.value))));
      return out;
    };
    return detail::shell<KStream<K1, V1>>(
        retyped<K1, V1>(detail::flat_map(node_, erased, named.name()), false, false));
  }
  // mapper(value) or mapper(key, value) -> a range of V1
  template <class ValueArg = detail::Deduced, class M,
            class V1 = detail::given_or<
                ValueArg, detail::range_element_t<detail::value_mapper_result_t<M, K, V>>>>
  KStream<K, V1> flatMapValues(M mapper, const Named& named = Named::as("")) const {
    auto erased = [m = std::move(mapper)](const Datum& k, const Datum& v) {
      std::vector<Datum> out;
      auto&& values = call_value_mapper(m, k, v);
      if constexpr (requires { std::size(values); }) out.reserve(std::size(values));
      for (auto&& value : values)
        out.push_back(detail::to_datum(V1(detail::take_if_owned<decltype(values)>(value))));
      return out;
    };
    return detail::shell<KStream<K, V1>>(
        retyped<K, V1>(detail::flat_map_values(node_, erased, named.name()), true, false));
  }
  template <class A>
  KStream peek(A action, const Named& named = Named::as("")) const {
    return KStream(detail::peek(node_, typed_action(std::move(action)), named.name()));
  }
  template <class A>
  void foreach(A action, const Named& named = Named::as("")) const {
    detail::foreach(node_, typed_action(std::move(action)), named.name());
  }
  KStream merge(const KStream& other, const Named& named = Named::as("")) const {
    return KStream(detail::merge(node_, other.node_, named.name()));
  }
  BranchedKStream<K, V> split(const Named& named = Named::as("")) const {
    return detail::shell<BranchedKStream<K, V>>(node_, named.name());
  }

  void to(std::string topic, const Produced<K, V>& produced = Produced<K, V>()) const {
    detail::to(node_, std::move(topic), produced_options(produced));
  }
  // extractor(key, value, record context) -> topic
  template <class E>
  void to(E extractor, const Produced<K, V>& produced = Produced<K, V>()) const requires
      std::is_invocable_r_v<std::string, E, const K&, const V&, const RecordContext&> {
    auto erased = [e = std::move(extractor)](const Datum& k, const Datum& v,
                                             const RecordContext& c) {
      return e(detail::as<K>(k), detail::as<V>(v), c);
    };
    detail::to(node_, detail::TopicNameExtractor(erased), produced_options(produced));
  }
  KStream repartition(const Repartitioned<K, V>& repartitioned = Repartitioned<K, V>()) const {
    auto options = detail::options_of(repartitioned);
    options = detail::fill_serdes<K, V>(std::move(options), node_.key_serde, node_.value_serde);
    return KStream(detail::repartition(node_, std::move(options)));
  }

  // The records as a table's updates, kept in a store (a null value deletes the key); through a
  // repartition topic first if the key changed.
  KTable<K, V> toTable(const Named& named = Named::as(""),
                       const Materialized<K, V>& materialized = Materialized<K, V>()) const {
    auto options = detail::options_of(materialized);
    options = detail::fill_serdes<K, V>(std::move(options), node_.key_serde, node_.value_serde);
    auto node = detail::stream_to_table(node_, named.name(), std::move(options));
    node = detail::with_serdes<K, V>(std::move(node), node_.key_serde, node_.value_serde);
    return detail::shell<KTable<K, V>>(std::move(node));
  }
  KTable<K, V> toTable(const Materialized<K, V>& materialized) const {
    return toTable(Named::as(""), materialized);
  }

  KGroupedStream<K, V> groupByKey(const Grouped<K, V>& grouped = Grouped<K, V>()) const {
    return detail::shell<KGroupedStream<K, V>>(
        detail::group_by_key(node_, grouped_options(grouped)));
  }
  template <class KeyArg = detail::Deduced, class M,
            class K1 = detail::given_or<KeyArg, detail::key_value_mapper_result_t<M, K, V>>>
  KGroupedStream<K1, V> groupBy(M selector,
                                const Grouped<K1, V>& grouped = Grouped<K1, V>()) const {
    auto erased = [m = std::move(selector)](const Datum& k, const Datum& v) {
      return detail::to_datum(K1(m(detail::as<K>(k), detail::as<V>(v))));
    };
    auto options = detail::options_of(grouped);
    options = detail::fill_serdes<K1, V>(std::move(options), {}, node_.value_serde);
    return detail::shell<KGroupedStream<K1, V>>(
        detail::group_by(node_, erased, std::move(options)));
  }

  // Each record with the table's current value for its key (inner: only keys the table has).
  // joiner(value, tableValue) or joiner(key, value, tableValue) -> VR.
  template <class VR, class VT, class J>
  KStream<K, VR> join(const KTable<K, VT>& table, J joiner,
                      const Joined<K, V, VT>& joined = Joined<K, V, VT>()) const {
    return table_join<VR, VT>(table, std::move(joiner), joined, false);
  }
  template <class VR, class VT, class J>
  KStream<K, VR> leftJoin(const KTable<K, VT>& table, J joiner,
                          const Joined<K, V, VT>& joined = Joined<K, V, VT>()) const {
    return table_join<VR, VT>(table, std::move(joiner), joined, true);
  }

  // Joins with a global table: selector(key, value) -> KG picks the table's key; joiner(value,
  // tableValue) or joiner(key, value, tableValue) -> VR. Inner: records whose pick the table has;
  // left: every record (a null pick or a missing row joins null).
  template <class VR, class KG, class VG, class M, class J>
  KStream<K, VR> join(const GlobalKTable<KG, VG>& table, M selector, J joiner,
                      const Named& named = Named::as("")) const {
    return global_join<VR, KG, VG>(table, std::move(selector), std::move(joiner), false, named);
  }
  template <class VR, class KG, class VG, class M, class J>
  KStream<K, VR> leftJoin(const GlobalKTable<KG, VG>& table, M selector, J joiner,
                          const Named& named = Named::as("")) const {
    return global_join<VR, KG, VG>(table, std::move(selector), std::move(joiner), true, named);
  }

  // Windowed joins with another stream: records with the same key and times within `windows`.
  // joiner(value, otherValue) or joiner(key, value, otherValue) -> VR. Left: records of this
  // stream that found nothing are joined with null once their window closed; outer: of either.
  template <class VR, class VO, class J>
  KStream<K, VR> join(const KStream<K, VO>& other, J joiner, const JoinWindows& windows,
                      const StreamJoined<K, V, VO>& joined = StreamJoined<K, V, VO>()) const {
    return stream_join<VR, VO>(other, std::move(joiner), windows, joined,
                               detail::StreamJoinKind::kInner);
  }
  template <class VR, class VO, class J>
  KStream<K, VR> leftJoin(const KStream<K, VO>& other, J joiner, const JoinWindows& windows,
                          const StreamJoined<K, V, VO>& joined = StreamJoined<K, V, VO>()) const {
    return stream_join<VR, VO>(other, std::move(joiner), windows, joined,
                               detail::StreamJoinKind::kLeft);
  }
  template <class VR, class VO, class J>
  KStream<K, VR> outerJoin(const KStream<K, VO>& other, J joiner, const JoinWindows& windows,
                           const StreamJoined<K, V, VO>& joined = StreamJoined<K, V, VO>()) const {
    return stream_join<VR, VO>(other, std::move(joiner), windows, joined,
                               detail::StreamJoinKind::kOuter);
  }

  // Runs a processor of the Processor API on each record (oxbow/streams/processor.h):
  // supplier() -> std::unique_ptr<P>, P an api::Processor<K, V, KOut, VOut>, connected to the
  // stores named (added with StreamsBuilder::addStateStore). The key may change: grouping or
  // joining afterwards repartitions.
  template <class S, class P = detail::SuppliedProcessor<S>>
  KStream<typename P::KeyOut, typename P::ValueOut> process(
      S supplier, std::vector<std::string> stores = {}, const Named& named = Named::as("")) const {
    using KOut = typename P::KeyOut;
    using VOut = typename P::ValueOut;
    auto node = detail::user_process(
        node_, detail::processor_factory<K, V, KOut, VOut>(std::move(supplier)), std::move(stores),
        named.name(), false);
    return detail::shell<KStream<KOut, VOut>>(retyped<KOut, VOut>(std::move(node), false, false));
  }
  // The same with an api::FixedKeyProcessor<K, V, VOut>, which cannot change the key.
  template <class S, class P = detail::SuppliedProcessor<S>>
  KStream<K, typename P::ValueOut> processValues(S supplier, std::vector<std::string> stores = {},
                                                 const Named& named = Named::as("")) const {
    using VOut = typename P::ValueOut;
    auto node =
        detail::user_process(node_, detail::fixed_key_factory<K, V, VOut>(std::move(supplier)),
                             std::move(stores), named.name(), true);
    return detail::shell<KStream<K, VOut>>(retyped<K, VOut>(std::move(node), true, false));
  }

 private:
  friend struct detail::Access;
  explicit KStream(detail::Node node) : node_(std::move(node)) {}

  const detail::Node& node() const { return node_; }

  template <class VR, class KG, class VG, class M, class J>
  KStream<K, VR> global_join(const GlobalKTable<KG, VG>& table, M selector, J joiner, bool left,
                             const Named& named) const {
    auto pick = [m = std::move(selector)](const Datum& k, const Datum& v) -> Datum {
      using Picked = std::decay_t<decltype(m(detail::as<K>(k), detail::as<V>(v)))>;
      if constexpr (detail::IsOptional<Picked>::value) {
        auto key = m(detail::as<K>(k), detail::as<V>(v));
        return key ? detail::to_datum(KG(*key)) : Datum();
      } else {
        return detail::to_datum(KG(m(detail::as<K>(k), detail::as<V>(v))));
      }
    };
    auto node = detail::stream_global_join(node_, detail::node_of(table), pick,
                                           detail::typed_joiner<K, V, VG, VR>(std::move(joiner)),
                                           left, named.name());
    node = detail::with_serdes<K, VR>(std::move(node), node_.key_serde, {});
    return detail::shell<KStream<K, VR>>(std::move(node));
  }
  template <class VR, class VO, class J>
  KStream<K, VR> stream_join(const KStream<K, VO>& other, J joiner, const JoinWindows& windows,
                             const StreamJoined<K, V, VO>& joined,
                             detail::StreamJoinKind kind) const {
    auto node = detail::stream_stream_join(node_, detail::node_of(other),
                                           detail::typed_joiner<K, V, VO, VR>(std::move(joiner)),
                                           kind, windows, detail::options_of(joined));
    node = detail::with_serdes<K, VR>(std::move(node), node_.key_serde, {});
    return detail::shell<KStream<K, VR>>(std::move(node));
  }
  template <class VR, class VT, class J>
  KStream<K, VR> table_join(const KTable<K, VT>& table, J joiner, const Joined<K, V, VT>& joined,
                            bool left) const {
    auto node = detail::stream_table_join(node_, detail::node_of(table),
                                          detail::typed_joiner<K, V, VT, VR>(std::move(joiner)),
                                          left, detail::options_of(joined));
    node = detail::with_serdes<K, VR>(std::move(node), node_.key_serde, {});
    return detail::shell<KStream<K, VR>>(std::move(node));
  }
  template <class K1, class V1>
  detail::Node retyped(detail::Node node, bool same_key, bool same_value) const {
    return detail::with_serdes<K1, V1>(std::move(node),
                                       same_key ? node_.key_serde : detail::ErasedSerde(),
                                       same_value ? node_.value_serde : detail::ErasedSerde());
  }
  template <class M>
  static decltype(auto) call_value_mapper(const M& m, const Datum& k, const Datum& v) {
    if constexpr (std::is_invocable_v<const M&, const K&, const V&>)
      return m(detail::as<K>(k), detail::as<V>(v));
    else
      return m(detail::as<V>(v));
  }
  template <class P>
  static detail::Predicate typed_predicate(P p) {
    return [p = std::move(p)](const Datum& k, const Datum& v) {
      return static_cast<bool>(p(detail::as<K>(k), detail::as<V>(v)));
    };
  }
  template <class A>
  static detail::ForeachAction typed_action(A a) {
    return [a = std::move(a)](const Datum& k, const Datum& v) {
      a(detail::as<K>(k), detail::as<V>(v));
    };
  }
  detail::ProducedOptions produced_options(const Produced<K, V>& produced) const {
    auto options = detail::options_of(produced);
    options = detail::fill_serdes<K, V>(std::move(options), node_.key_serde, node_.value_serde);
    return options;
  }
  detail::GroupedOptions grouped_options(const Grouped<K, V>& grouped) const {
    auto options = detail::options_of(grouped);
    options = detail::fill_serdes<K, V>(std::move(options), node_.key_serde, node_.value_serde);
    return options;
  }
  detail::Node node_;
};

// Kafka's Branched: a branch's name, appended to the split's name.
class Branched {
 public:
  static Branched as(std::string name) { return Branched(std::move(name)); }
  const std::string& name() const { return name_; }

 private:
  explicit Branched(std::string name) : name_(std::move(name)) {}
  std::string name_;
};

template <class K, class V>
class BranchedKStream {
 public:
  template <class P>
  BranchedKStream& branch(P predicate, const Branched& branched = Branched::as("")) {
    predicates_.push_back([p = std::move(predicate)](const Datum& k, const Datum& v) {
      return static_cast<bool>(p(detail::as<K>(k), detail::as<V>(v)));
    });
    names_.push_back(branched.name());
    return *this;
  }
  // The branches by name: the split's name (KSTREAM-BRANCH-NNNNNNNNNN when not given) then the
  // branch's, or its position from 1; the default branch's position is 0.
  std::map<std::string, KStream<K, V>> defaultBranch(const Branched& branched = Branched::as("")) {
    names_.push_back(branched.name());
    return finish(true);
  }
  std::map<std::string, KStream<K, V>> noDefaultBranch() { return finish(false); }

 private:
  friend struct detail::Access;
  BranchedKStream(detail::Node node, std::string prefix)
      : node_(std::move(node)), prefix_(std::move(prefix)) {}

  std::map<std::string, KStream<K, V>> finish(bool with_default) {
    auto nodes = detail::split(node_, predicates_, names_, with_default, prefix_);
    std::map<std::string, KStream<K, V>> out;
    for (auto node : nodes) {
      node = detail::with_serdes<K, V>(std::move(node), node_.key_serde, node_.value_serde);
      std::string key = node.name;
      out.emplace(std::move(key), detail::shell<KStream<K, V>>(std::move(node)));
    }
    return out;
  }
  detail::Node node_;
  std::string prefix_;
  std::vector<detail::Predicate> predicates_;
  std::vector<std::string> names_;
};

template <class K, class V>
class KTable {
 public:
  template <class P>
  KTable filter(P predicate, const Named& named = Named::as(""),
                const Materialized<K, V>& materialized = Materialized<K, V>()) const {
    return KTable(keep_serdes(detail::table_filter(node_, typed_predicate(std::move(predicate)),
                                                   false, named.name(), store(materialized))));
  }
  template <class P>
  KTable filterNot(P predicate, const Named& named = Named::as(""),
                   const Materialized<K, V>& materialized = Materialized<K, V>()) const {
    return KTable(keep_serdes(detail::table_filter(node_, typed_predicate(std::move(predicate)),
                                                   true, named.name(), store(materialized))));
  }
  template <class ValueArg = detail::Deduced, class M,
            class V1 = detail::given_or<ValueArg, detail::value_mapper_result_t<M, K, V>>>
  KTable<K, V1> mapValues(M mapper, const Named& named = Named::as(""),
                          const Materialized<K, V1>& materialized = Materialized<K, V1>()) const {
    auto erased = [m = std::move(mapper)](const Datum& k, const Datum& v) {
      if constexpr (std::is_invocable_v<const M&, const K&, const V&>)
        return detail::to_datum(V1(m(detail::as<K>(k), detail::as<V>(v))));
      else
        return detail::to_datum(V1(m(detail::as<V>(v))));
    };
    auto options = detail::options_of(materialized);
    options = detail::fill_serdes<K, V1>(std::move(options), node_.key_serde, {});
    auto node = detail::table_map_values(node_, erased, named.name(), std::move(options));
    node = detail::with_serdes<K, V1>(std::move(node), node_.key_serde, {});
    return detail::shell<KTable<K, V1>>(std::move(node));
  }
  // supplier() -> std::unique_ptr<api::ValueTransformerWithKey<K, V, VR>>: each row's value
  // through a transformer that sees the update's context (its timestamp, partition, offset).
  template <class S, class P = detail::SuppliedProcessor<S>, class VR = typename P::ValueOut>
  KTable<K, VR> transformValues(
      S supplier, const Named& named = Named::as(""),
      const Materialized<K, VR>& materialized = Materialized<K, VR>()) const {
    detail::ValueTransformerFactory factory = [supplier = std::move(supplier)] {
      std::unique_ptr<api::ValueTransformerWithKey<K, V, VR>> t = supplier();
      return std::unique_ptr<detail::ValueTransformerCore>(
          std::make_unique<detail::TypedValueTransformer<K, V, VR>>(std::move(t)));
    };
    auto options = detail::options_of(materialized);
    options = detail::fill_serdes<K, VR>(std::move(options), node_.key_serde, {});
    auto value_serde = options.value_serde;  // the result's, as Kafka takes it from Materialized
    auto node =
        detail::table_transform_values(node_, std::move(factory), named.name(), std::move(options));
    node = detail::with_serdes<K, VR>(std::move(node), node_.key_serde, value_serde);
    return detail::shell<KTable<K, VR>>(std::move(node));
  }
  KStream<K, V> toStream(const Named& named = Named::as("")) const {
    return detail::shell<KStream<K, V>>(keep_serdes(detail::to_stream(node_, named.name())));
  }
  // selector(key, value) -> KeyValue<K1, V1>: the row's key and value in the new grouping.
  template <class KeyArg = detail::Deduced, class ValueArg = detail::Deduced, class M,
            class R = detail::key_value_mapper_result_t<M, K, V>,
            class K1 = detail::given_or<KeyArg, detail::key_of_t<R>>,
            class V1 = detail::given_or<ValueArg, detail::value_of_t<R>>>
  KGroupedTable<K1, V1> groupBy(M selector,
                                const Grouped<K1, V1>& grouped = Grouped<K1, V1>()) const {
    auto erased = [m = std::move(selector)](const Datum& k, const Datum& v) {
      KeyValue<K1, V1> kv = m(detail::as<K>(k), detail::as<V>(v));
      return detail::KeyValue(detail::to_datum(std::move(kv.key)),
                              detail::to_datum(std::move(kv.value)));
    };
    auto options = detail::options_of(grouped);
    options = detail::fill_serdes<K1, V1>(std::move(options), {}, {});
    return detail::shell<KGroupedTable<K1, V1>>(
        detail::table_group_by(node_, erased, std::move(options)));
  }
  // Holds updates back (oxbow/streams/suppressed.h): final results per window, or at most one
  // update per key per time limit.
  KTable suppress(const Suppressed<K>& suppressed) const {
    return KTable(keep_serdes(detail::suppress(node_, detail::options_of(suppressed))));
  }
  // Joins with another table on the key: joiner(value, otherValue) or joiner(key, value,
  // otherValue) -> VR, a nullable side declared std::optional<T> (see typed_joiner). Inner: keys
  // both tables have; left: every key of this table; outer: every key of either.
  template <class VR, class VO, class J>
  KTable<K, VR> join(const KTable<K, VO>& other, J joiner, const Named& named = Named::as(""),
                     const Materialized<K, VR>& materialized = Materialized<K, VR>()) const {
    return table_join<VR, VO>(other, std::move(joiner), detail::TableJoinKind::kInner, named,
                              materialized);
  }
  template <class VR, class VO, class J>
  KTable<K, VR> leftJoin(const KTable<K, VO>& other, J joiner, const Named& named = Named::as(""),
                         const Materialized<K, VR>& materialized = Materialized<K, VR>()) const {
    return table_join<VR, VO>(other, std::move(joiner), detail::TableJoinKind::kLeft, named,
                              materialized);
  }
  template <class VR, class VO, class J>
  KTable<K, VR> outerJoin(const KTable<K, VO>& other, J joiner, const Named& named = Named::as(""),
                          const Materialized<K, VR>& materialized = Materialized<K, VR>()) const {
    return table_join<VR, VO>(other, std::move(joiner), detail::TableJoinKind::kOuter, named,
                              materialized);
  }
  // Foreign-key joins (KIP-213): extractor(value) or extractor(key, value) -> KO, or
  // std::optional<KO> with nullopt for none, picks the row of `other` a row joins; joiner(value,
  // otherValue) -> VR. Inner: rows whose foreign key `other` has; left: every row, the other side
  // null (std::optional in the joiner) when it has none. The tables need not be co-partitioned.
  template <class VR, class KO, class VO, detail::ForeignKeyExtractor<K, V> F, detail::NotNamed J>
  KTable<K, VR> join(const KTable<KO, VO>& other, F extractor, J joiner,
                     const TableJoined<K, KO>& joined = TableJoined<K, KO>(),
                     const Materialized<K, VR>& materialized = Materialized<K, VR>()) const {
    return fk_join<VR>(other, std::move(extractor), std::move(joiner), false, joined, materialized);
  }
  template <class VR, class KO, class VO, detail::ForeignKeyExtractor<K, V> F, detail::NotNamed J>
  KTable<K, VR> join(const KTable<KO, VO>& other, F extractor, J joiner,
                     const Materialized<K, VR>& materialized) const {
    return fk_join<VR>(other, std::move(extractor), std::move(joiner), false, TableJoined<K, KO>(),
                       materialized);
  }
  template <class VR, class KO, class VO, detail::ForeignKeyExtractor<K, V> F, detail::NotNamed J>
  KTable<K, VR> leftJoin(const KTable<KO, VO>& other, F extractor, J joiner,
                         const TableJoined<K, KO>& joined = TableJoined<K, KO>(),
                         const Materialized<K, VR>& materialized = Materialized<K, VR>()) const {
    return fk_join<VR>(other, std::move(extractor), std::move(joiner), true, joined, materialized);
  }
  template <class VR, class KO, class VO, detail::ForeignKeyExtractor<K, V> F, detail::NotNamed J>
  KTable<K, VR> leftJoin(const KTable<KO, VO>& other, F extractor, J joiner,
                         const Materialized<K, VR>& materialized) const {
    return fk_join<VR>(other, std::move(extractor), std::move(joiner), true, TableJoined<K, KO>(),
                       materialized);
  }
  // The name of the store holding this table, empty when it is not materialized.
  const std::string& queryableStoreName() const { return node_.store; }

 private:
  friend struct detail::Access;
  explicit KTable(detail::Node node) : node_(std::move(node)) {}

  const detail::Node& node() const { return node_; }

  template <class VR, class VO, class J>
  KTable<K, VR> table_join(const KTable<K, VO>& other, J joiner, detail::TableJoinKind kind,
                           const Named& named, const Materialized<K, VR>& materialized) const {
    auto options = detail::options_of(materialized);
    options = detail::fill_serdes<K, VR>(std::move(options), node_.key_serde, {});
    auto node = detail::table_table_join(node_, detail::node_of(other),
                                         detail::typed_joiner<K, V, VO, VR>(std::move(joiner)),
                                         kind, named.name(), std::move(options));
    node = detail::with_serdes<K, VR>(std::move(node), node_.key_serde, {});
    return detail::shell<KTable<K, VR>>(std::move(node));
  }
  template <class VR, class KO, class VO, class F, class J>
  KTable<K, VR> fk_join(const KTable<KO, VO>& other, F extractor, J joiner, bool left,
                        const TableJoined<K, KO>& joined,
                        const Materialized<K, VR>& materialized) const {
    auto options = detail::options_of(materialized);
    options = detail::fill_serdes<K, VR>(std::move(options), node_.key_serde, {});
    auto node = detail::foreign_key_join(node_, detail::node_of(other),
                                         detail::typed_foreign_key<K, V, KO>(std::move(extractor)),
                                         detail::typed_joiner<K, V, VO, VR>(std::move(joiner)),
                                         left, detail::options_of(joined), std::move(options));
    node = detail::with_serdes<K, VR>(std::move(node), node_.key_serde, {});
    return detail::shell<KTable<K, VR>>(std::move(node));
  }
  detail::Node keep_serdes(detail::Node node) const {
    node = detail::with_serdes<K, V>(std::move(node), node_.key_serde, node_.value_serde);
    return node;
  }
  detail::StoreOptions store(const Materialized<K, V>& materialized) const {
    auto options = detail::options_of(materialized);
    options = detail::fill_serdes<K, V>(std::move(options), node_.key_serde, node_.value_serde);
    return options;
  }
  template <class P>
  static detail::Predicate typed_predicate(P p) {
    return [p = std::move(p)](const Datum& k, const Datum& v) {
      return static_cast<bool>(p(detail::as<K>(k), detail::as<V>(v)));
    };
  }
  detail::Node node_;
};

namespace detail {
// count(): the aggregate starts at 0 and each record adds one; stored as Kafka's Long.
inline Datum count_init() {
  return Datum(int64_t{0});
}
inline Datum count_add(const Datum&, const Datum&, const Datum& count) {
  return Datum(as<int64_t>(count) + 1);
}
template <class K, class VA>
StoreOptions aggregate_store(const Materialized<K, VA>& materialized, const Grouping& grouping) {
  auto options = detail::options_of(materialized);
  options = fill_serdes<K, VA>(std::move(options), grouping.options.key_serde, {});
  return options;
}
template <class K, class VA>
KTable<K, VA> aggregated(Node node, const StoreOptions& store) {
  node = with_serdes<K, VA>(std::move(node), store.key_serde, store.value_serde);
  return detail::shell<KTable<K, VA>>(std::move(node));
}
}  // namespace detail

template <class K, class V>
class KGroupedStream {
 public:
  KTable<K, int64_t> count(
      const Materialized<K, int64_t>& materialized = Materialized<K, int64_t>(),
      const Named& named = Named::as("")) const {
    auto store = detail::aggregate_store(materialized, grouping_);
    if (!detail::options_of(materialized).value_serde)
      store.value_serde = detail::erase(serdes::Int64());
    auto node = detail::aggregate(grouping_, detail::count_init, detail::count_add, store,
                                  named.name(), "count");
    return detail::aggregated<K, int64_t>(std::move(node), store);
  }
  // reducer(aggregate, value) -> V
  template <class R>
  KTable<K, V> reduce(R reducer, const Materialized<K, V>& materialized = Materialized<K, V>(),
                      const Named& named = Named::as("")) const {
    auto store = detail::aggregate_store(materialized, grouping_);
    if (!detail::options_of(materialized).value_serde)
      store.value_serde = grouping_.options.value_serde;
    auto erased = [r = std::move(reducer)](const Datum& agg, const Datum& v) {
      return Datum(V(r(detail::as<V>(agg), detail::as<V>(v))));
    };
    return detail::aggregated<K, V>(detail::reduce(grouping_, erased, store, named.name()), store);
  }
  // initializer() -> VA; aggregator(key, value, aggregate) -> VA
  template <class VA, class I, class A>
  KTable<K, VA> aggregate(I initializer, A aggregator,
                          const Materialized<K, VA>& materialized = Materialized<K, VA>(),
                          const Named& named = Named::as("")) const {
    auto store = detail::aggregate_store(materialized, grouping_);
    auto node = detail::aggregate(
        grouping_, [i = std::move(initializer)] { return Datum(VA(i())); },
        [a = std::move(aggregator)](const Datum& k, const Datum& v, const Datum& agg) {
          return Datum(VA(a(detail::as<K>(k), detail::as<V>(v), detail::as<VA>(agg))));
        },
        store, named.name(), "aggregate");
    return detail::aggregated<K, VA>(std::move(node), store);
  }

  // Aggregations per key and time window (count, reduce, aggregate), as Kafka's windowedBy.
  TimeWindowedKStream<K, V> windowedBy(const TimeWindows& windows) const {
    return detail::shell<TimeWindowedKStream<K, V>>(grouping_, windows);
  }
  // Sliding windows give a TimeWindowedKStream too, as in Kafka.
  TimeWindowedKStream<K, V> windowedBy(const SlidingWindows& windows) const {
    return detail::shell<TimeWindowedKStream<K, V>>(grouping_, windows);
  }
  SessionWindowedKStream<K, V> windowedBy(const SessionWindows& windows) const {
    return detail::shell<SessionWindowedKStream<K, V>>(grouping_, windows);
  }
  // Starts a cogroup (KIP-150): aggregator(key, value, aggregate) -> VOut; more grouped streams
  // join with CogroupedKStream::cogroup, then aggregate() makes the one table.
  template <class VOut, class A>
  CogroupedKStream<K, VOut> cogroup(A aggregator) const {
    return detail::shell<CogroupedKStream<K, VOut>>(
               std::vector<std::pair<detail::Grouping, detail::Aggregator>>{})
        .template cogroup<V>(*this, std::move(aggregator));
  }

 private:
  friend struct detail::Access;
  explicit KGroupedStream(detail::Grouping grouping) : grouping_(std::move(grouping)) {}

  const detail::Grouping& grouping() const { return grouping_; }

  detail::Grouping grouping_;
};

template <class K, class V>
class KGroupedTable {
 public:
  KTable<K, int64_t> count(
      const Materialized<K, int64_t>& materialized = Materialized<K, int64_t>(),
      const Named& named = Named::as("")) const {
    auto store = detail::aggregate_store(materialized, grouping_);
    if (!detail::options_of(materialized).value_serde)
      store.value_serde = detail::erase(serdes::Int64());
    auto node = detail::table_aggregate(
        grouping_, [] { return Datum(int64_t{0}); },
        [](const Datum&, const Datum&, const Datum& agg) {
          return Datum(detail::as<int64_t>(agg) + 1);
        },
        [](const Datum&, const Datum&, const Datum& agg) {
          return Datum(detail::as<int64_t>(agg) - 1);
        },
        store, named.name(), "AGGREGATE");
    return detail::aggregated<K, int64_t>(std::move(node), store);
  }
  // adder(aggregate, value) -> V, subtractor(aggregate, value) -> V
  template <class A, class S>
  KTable<K, V> reduce(A adder, S subtractor,
                      const Materialized<K, V>& materialized = Materialized<K, V>(),
                      const Named& named = Named::as("")) const {
    auto store = detail::aggregate_store(materialized, grouping_);
    if (!detail::options_of(materialized).value_serde)
      store.value_serde = grouping_.options.value_serde;
    // A reduce starts from the first value: the initial aggregate is null.
    auto add = [a = std::move(adder)](const Datum&, const Datum& v, const Datum& agg) {
      if (!agg.has_value()) return v;
      return Datum(V(a(detail::as<V>(agg), detail::as<V>(v))));
    };
    auto subtract = [s = std::move(subtractor)](const Datum&, const Datum& v, const Datum& agg) {
      return Datum(V(s(detail::as<V>(agg), detail::as<V>(v))));
    };
    auto node = detail::table_aggregate(
        grouping_, [] { return Datum(); }, add, subtract, store, named.name(), "REDUCE");
    return detail::aggregated<K, V>(std::move(node), store);
  }
  // initializer() -> VA; adder/subtractor(key, value, aggregate) -> VA
  template <class VA, class I, class A, class S>
  KTable<K, VA> aggregate(I initializer, A adder, S subtractor,
                          const Materialized<K, VA>& materialized = Materialized<K, VA>(),
                          const Named& named = Named::as("")) const {
    auto store = detail::aggregate_store(materialized, grouping_);
    auto wrap = [](auto f) {
      return [f = std::move(f)](const Datum& k, const Datum& v, const Datum& agg) {
        return Datum(VA(f(detail::as<K>(k), detail::as<V>(v), detail::as<VA>(agg))));
      };
    };
    auto node = detail::table_aggregate(
        grouping_, [i = std::move(initializer)] { return Datum(VA(i())); }, wrap(std::move(adder)),
        wrap(std::move(subtractor)), store, named.name(), "AGGREGATE");
    return detail::aggregated<K, VA>(std::move(node), store);
  }

 private:
  friend struct detail::Access;
  explicit KGroupedTable(detail::Grouping grouping) : grouping_(std::move(grouping)) {}

  detail::Grouping grouping_;
};

}  // namespace oxbow::streams

#include "oxbow/streams/windowed_kstream.h"
