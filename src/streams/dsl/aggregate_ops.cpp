// Grouping a stream, and count/reduce/aggregate over the groups.
#include <algorithm>

#include "streams/dsl/dsl_internal.h"
#include "streams/dsl/table_forwarder.h"

namespace oxbow::streams::detail {

namespace {

using Step = AggregationProcessor::Step;

// KSTREAM-AGGREGATE / KSTREAM-REDUCE: the group's aggregate updated by each record; records with a
// null key or value are dropped, as Kafka does.
class StreamAggregateProcessor : public AggregationProcessor {
 public:
  StreamAggregateProcessor(std::string store, StoreOptions options, Step step)
      : AggregationProcessor(std::move(store), std::move(options)), step_(std::move(step)) {}
  void process(const Record& r) override {
    auto& ctx = context();
    if (!r.key.has_value() || !r.value.has_value()) {
      ctx.record_dropped("null key or value in an aggregation");
      return;
    }
    options_.key_serde.serialize_to(store_name_, r.key, key_bytes_);
    update(key_bytes_, Datum::lend(r.key), r, step_);
  }

 private:
  Step step_;
  std::string key_bytes_;  // the store key, through a buffer kept from record to record
};

}  // namespace

std::shared_ptr<const TableLookup> store_lookup(const std::string& store,
                                                const StoreOptions& options) {
  auto lookup = std::make_shared<TableLookup>();
  lookup->stores = {store};
  lookup->get = [store, options](ProcessorContext& context, const Datum& key) {
    // A lookup per event (a join's): its key and the row read through buffers each thread keeps,
    // the row deserialized from them.
    thread_local std::string key_bytes, stored;
    options.key_serde.serialize_to(store, key, key_bytes);
    if (!context.store(store).get_into(key_bytes, stored)) return TableValue{};
    auto [value, timestamp] = split_timestamp_view(stored);
    return TableValue{options.value_serde.deserialize(store, value), timestamp};
  };
  return lookup;
}

Node grouped_aggregation(const Grouping& g, const char* kind, StoreOptions store,
                         const std::string& name, const AggregationFactory& make) {
  auto& graph = *g.parent.graph;
  std::string prefix = std::string("KSTREAM-") + kind + "-";
  std::string store_name =
      store.name.empty() ? graph.new_name(prefix + "STATE-STORE-") : store.name;
  std::string node_name = graph.name_or_new(name, prefix);
  require_serde(store.key_serde, "key", "store " + store_name);
  require_serde(store.value_serde, "value", "store " + store_name);
  Node input = g.parent;
  if (input.repartition_required) {
    std::string base = g.options.name.empty() ? store_name : g.options.name;
    input =
        through_repartition_topic(input, base, g.options.key_serde, g.options.value_serde, 0, {});
  }
  store.name = store_name;
  store.timestamped = true;
  graph.add_store({store_name, store, ""});
  Node out =
      add_processor(input, "", node_name, make(store_name, store), {store_name}, kStreamToTable);
  out.store = store_name;
  out.window_grace_ms = -1;
  out.lookup = store_lookup(store_name, store);
  return out;
}

namespace {

Node stream_aggregate(const Grouping& g, const char* kind, StoreOptions store,
                      const std::string& name, Step step) {
  return grouped_aggregation(g, kind, std::move(store), name,
                             [step](const std::string& store_name, const StoreOptions& options) {
                               return ProcessorFactory([store_name, options, step] {
                                 return std::make_unique<StreamAggregateProcessor>(store_name,
                                                                                   options, step);
                               });
                             });
}

}  // namespace

Grouping group_by_key(const Node& in, GroupedOptions options) {
  return Grouping{in, std::move(options)};
}

Grouping group_by(const Node& in, KeyMapper selector, GroupedOptions options) {
  // As Kafka's KStreamImpl.groupBy, a Grouped name also names the key selector.
  auto node = add_processor(
      in, "KSTREAM-KEY-SELECT-", options.name,
      function_processor([selector](ProcessorContext& c, const Record& r) {
        c.forward(Record{selector(r.key, r.value), Datum::lend(r.value), r.timestamp, r.headers});
      }));
  node.repartition_required = true;
  node.key_serde = options.key_serde;
  return Grouping{node, std::move(options)};
}

Node aggregate(const Grouping& in, Initializer init, Aggregator adder, StoreOptions store,
               const std::string& name, const char*) {
  return stream_aggregate(in, "AGGREGATE", std::move(store), name,
                          [init, adder](const Datum& k, const Datum& v, const Datum& old) {
                            return adder(k, v, old.has_value() ? old : init());
                          });
}

Node reduce(const Grouping& in, Reducer reducer, StoreOptions store, const std::string& name) {
  return stream_aggregate(in, "REDUCE", std::move(store), name,
                          [reducer](const Datum&, const Datum& v, const Datum& old) {
                            return old.has_value() ? reducer(old, v) : v;
                          });
}

}  // namespace oxbow::streams::detail

// ---------------------------------------------------------------------------------------------
// Cogrouping (KIP-150): several grouped streams, each with its own aggregator, into one aggregate

namespace oxbow::streams::detail {

namespace {

// The cogroup's nodes: one aggregating processor per input (each behind a repartition topic if its
// key changed), all on one store, and the merge node that is the table.
Node cogroup_node(const std::vector<std::pair<Grouping, Aggregator>>& inputs, StoreOptions store,
                  const std::string& name,
                  const std::function<AggregationFactory(const Aggregator&)>& processor_of) {
  if (inputs.empty()) throw TopologyException("a cogroup needs at least one grouped stream");
  auto& graph = *inputs.front().first.parent.graph;
  std::string store_name =
      store.name.empty() ? graph.new_name("COGROUPKSTREAM-AGGREGATE-STATE-STORE-") : store.name;
  require_serde(store.key_serde, "key", "store " + store_name);
  require_serde(store.value_serde, "value", "store " + store_name);
  store.name = store_name;
  store.timestamped = true;
  graph.add_store({store_name, store, ""});
  std::vector<std::string> aggregators, topics;
  Node first;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto& [g, adder] = inputs[i];
    Node input = g.parent;
    if (input.repartition_required) {
      std::string base =
          g.options.name.empty() ? store_name + "-" + std::to_string(i) : g.options.name;
      input =
          through_repartition_topic(input, base, g.options.key_serde, g.options.value_serde, 0, {});
    }
    topics.insert(topics.end(), input.source_topics.begin(), input.source_topics.end());
    Node node = add_processor(input, "COGROUPKSTREAM-AGGREGATE-", "",
                              processor_of(adder)(store_name, store), {store_name}, kStreamToTable);
    if (i == 0) first = node;
    aggregators.push_back(node.name);
  }
  if (inputs.size() > 1) graph.add_copartition_group(topics);
  NodeSpec spec;
  spec.name = graph.name_or_new(name, "COGROUPKSTREAM-MERGE-");
  spec.parents = aggregators;
  spec.factory = change_function_processor(
      [](ProcessorContext& c, const ChangeRecord& r) { c.forward_change(r); });
  spec.takes = spec.forwards = Flow::kChanges;
  Node out = first;
  out.name = graph.add_node(std::move(spec)).name;
  out.store = store_name;
  out.source_topics = topics;
  out.repartition_required = false;
  out.window_grace_ms = -1;
  out.send_old_values = nullptr;
  out.lookup = store_lookup(store_name, store);
  out.key_serde = store.key_serde;
  out.value_serde = store.value_serde;
  return out;
}

}  // namespace

Node cogroup_aggregate(const std::vector<std::pair<Grouping, Aggregator>>& inputs, Initializer init,
                       StoreOptions store, const std::string& name) {
  return cogroup_node(inputs, std::move(store), name, [init](const Aggregator& adder) {
    Step step = [init, adder](const Datum& k, const Datum& v, const Datum& old) {
      return adder(k, v, old.has_value() ? old : init());
    };
    return AggregationFactory([step](const std::string& store_name, const StoreOptions& options) {
      return ProcessorFactory([store_name, options, step] {
        return std::make_unique<StreamAggregateProcessor>(store_name, options, step);
      });
    });
  });
}

Node cogroup_windowed(const std::vector<std::pair<Grouping, Aggregator>>& inputs,
                      const WindowedPlan& plan, const std::string& name) {
  Node out = cogroup_node(inputs, plan.store, name, plan.processor);
  out.key_serde = plan.out_key_serde;
  out.window_grace_ms = plan.window_grace_ms;
  return out;
}

}  // namespace oxbow::streams::detail
