// KTables: from a topic, filter, mapValues, toStream, and re-grouping with adder and subtractor.
// Table nodes pass Change values (new and old) so that a re-grouped aggregate can take a row's old
// value out of the group it leaves.
#include "streams/dsl/dsl_internal.h"
#include "streams/dsl/table_forwarder.h"

namespace oxbow::streams::detail {

namespace {

const Change& change_of(const Record& r) {
  if (const Change* c = std::any_cast<Change>(&r.value)) return *c;
  static const Change kEmpty;
  return kEmpty;
}

// A node that keeps its output in a store (a table source, or a materialized filter or mapValues):
// writes each update there and forwards through the store's cache, if any.
class MaterializingProcessor : public Processor {
 public:
  using Compute = std::function<std::optional<Change>(ProcessorContext&, const Record&,
                                                      KeyValueStore*, const StoreOptions&)>;
  MaterializingProcessor(std::string store, StoreOptions options, Compute compute)
      : store_name_(std::move(store)), options_(std::move(options)), compute_(std::move(compute)) {}
  void init(ProcessorContext& context) override {
    Processor::init(context);
    if (store_name_.empty()) return;
    store_ = &context.store(store_name_);
    forwarder_.init(context, store_name_, options_.key_serde, options_.value_serde);
  }
  void process(const Record& r) override {
    auto& ctx = context();
    auto change = compute_(ctx, r, store_, options_);
    if (!change) return;
    if (!store_) {
      ctx.forward(Record{r.key, Datum(std::move(*change)), r.timestamp, r.headers});
      return;
    }
    std::string key = options_.key_serde.serialize(store_name_, r.key);
    std::optional<std::string> bytes;
    if (change->new_value.has_value())
      bytes = options_.value_serde.serialize(store_name_, change->new_value);
    store_->put(key, bytes, context_at(ctx, r.timestamp));
    forwarder_.maybe_forward(ctx, Record{r.key, Datum(std::move(*change)), r.timestamp, r.headers});
  }

 private:
  std::string store_name_;
  StoreOptions options_;
  Compute compute_;
  KeyValueStore* store_ = nullptr;
  TableForwarder forwarder_;
};

Datum stored_value(KeyValueStore* store, const StoreOptions& options, const std::string& store_name,
                   const Datum& key) {
  if (!store) return {};
  auto bytes = store->get(options.key_serde.serialize(store_name, key));
  return bytes ? options.value_serde.deserialize(store_name, *bytes) : Datum();
}

Node materializing(const Node& in, const char* prefix, const std::string& name, StoreOptions store,
                   bool always_materialize, const std::string& generated_store_prefix,
                   MaterializingProcessor::Compute compute) {
  auto& graph = *in.graph;
  std::string store_name = store.name;
  if (store_name.empty() && always_materialize)
    store_name = graph.new_name(generated_store_prefix + "STATE-STORE-");
  std::string node_name = graph.name_or_new(name, prefix);
  std::vector<std::string> stores;
  if (!store_name.empty()) {
    require_serde(store.key_serde, "key", "store " + store_name);
    require_serde(store.value_serde, "value", "store " + store_name);
    store.name = store_name;
    stores.push_back(store_name);
  }
  ProcessorFactory factory = [store_name, store, compute] {
    return std::make_unique<MaterializingProcessor>(store_name, store, compute);
  };
  Node out = add_processor(in, "", node_name, std::move(factory), stores);
  out.store = store_name;
  return out;
}

}  // namespace

Node table_source(const std::shared_ptr<GraphBuilder>& graph, std::string topic,
                  ConsumedOptions consumed, StoreOptions store) {
  // Kafka's order: the store's name, then the source's, then the table source's.
  std::string store_name =
      store.name.empty() ? graph->new_name(topic + "-STATE-STORE-") : store.name;
  store.name = store_name;
  store.logging = false;  // the topic is the changelog
  Node source = stream_source(graph, {topic}, consumed);
  require_serde(store.key_serde, "key", "store " + store_name);
  require_serde(store.value_serde, "value", "store " + store_name);
  graph->add_store({store_name, store, topic});
  auto compute = [store_name](ProcessorContext& ctx, const Record& r, KeyValueStore* s,
                              const StoreOptions& options) -> std::optional<Change> {
    if (!r.key.has_value()) {
      ctx.record_dropped("null key in a table's topic");
      return std::nullopt;
    }
    return Change{r.value, stored_value(s, options, store_name, r.key)};
  };
  ProcessorFactory factory = [store_name, store, compute] {
    return std::make_unique<MaterializingProcessor>(store_name, store, compute);
  };
  Node out = add_processor(source, "KTABLE-SOURCE-", "", std::move(factory), {store_name});
  out.store = store_name;
  return out;
}

Node table_filter(const Node& table, Predicate predicate, bool negate, const std::string& name,
                  StoreOptions store) {
  return materializing(table, "KTABLE-FILTER-", name, std::move(store), false, "",
                       [predicate, negate](ProcessorContext&, const Record& r, KeyValueStore*,
                                           const StoreOptions&) -> std::optional<Change> {
                         const Change& c = change_of(r);
                         auto keep = [&](const Datum& v) {
                           return v.has_value() && predicate(r.key, v) != negate ? v : Datum();
                         };
                         Change out{keep(c.new_value), keep(c.old_value)};
                         if (!out.new_value.has_value() && !out.old_value.has_value())
                           return std::nullopt;
                         return out;
                       });
}

Node table_map_values(const Node& table, ValueMapper mapper, const std::string& name,
                      StoreOptions store) {
  return materializing(table, "KTABLE-MAPVALUES-", name, std::move(store), false, "",
                       [mapper](ProcessorContext&, const Record& r, KeyValueStore*,
                                const StoreOptions&) -> std::optional<Change> {
                         const Change& c = change_of(r);
                         auto map = [&](const Datum& v) {
                           return v.has_value() ? mapper(r.key, v) : Datum();
                         };
                         return Change{map(c.new_value), map(c.old_value)};
                       });
}

Node to_stream(const Node& table, const std::string& name) {
  Node out = add_processor(
      table, "KTABLE-TOSTREAM-", name, function_processor([](ProcessorContext& c, const Record& r) {
        c.forward(Record{r.key, change_of(r).new_value, r.timestamp, r.headers});
      }));
  out.store.clear();
  return out;
}

Grouping table_group_by(const Node& table, KeyValueMapper selector, GroupedOptions options) {
  // Old value first, then new: a row that moves leaves its old group before it joins the new one.
  auto node = add_processor(
      table, "KTABLE-SELECT-", "",
      function_processor([selector](ProcessorContext& c, const Record& r) {
        const Change& change = change_of(r);
        auto send = [&](const Datum& v, bool is_new) {
          if (!v.has_value()) return;
          auto [k, mapped] = selector(r.key, v);
          if (!k.has_value() || !mapped.has_value()) {
            c.record_dropped("null key or value from a table's groupBy selector");
            return;
          }
          Change out = is_new ? Change{std::move(mapped), {}} : Change{{}, std::move(mapped)};
          c.forward(Record{std::move(k), Datum(std::move(out)), r.timestamp, r.headers});
        };
        send(change.old_value, false);
        send(change.new_value, true);
      }));
  node.repartition_required = true;
  node.store.clear();
  return Grouping{node, std::move(options)};
}

namespace {

class TableAggregateProcessor : public Processor {
 public:
  TableAggregateProcessor(std::string store, StoreOptions options, Initializer init,
                          Aggregator adder, Aggregator subtractor)
      : store_name_(std::move(store)),
        options_(std::move(options)),
        init_(std::move(init)),
        adder_(std::move(adder)),
        subtractor_(std::move(subtractor)) {}
  void init(ProcessorContext& context) override {
    Processor::init(context);
    store_ = &context.store(store_name_);
    forwarder_.init(context, store_name_, options_.key_serde, options_.value_serde);
  }
  void process(const Record& r) override {
    auto& ctx = context();
    if (!r.key.has_value()) {
      ctx.record_dropped("null key in a table aggregation");
      return;
    }
    const Change& c = change_of(r);
    std::string key = options_.key_serde.serialize(store_name_, r.key);
    Datum old;
    if (auto bytes = store_->get(key)) old = options_.value_serde.deserialize(store_name_, *bytes);
    Datum agg = old;
    if (c.old_value.has_value() && agg.has_value()) agg = subtractor_(r.key, c.old_value, agg);
    if (c.new_value.has_value()) agg = adder_(r.key, c.new_value, agg.has_value() ? agg : init_());
    std::optional<std::string> bytes;
    if (agg.has_value()) bytes = options_.value_serde.serialize(store_name_, agg);
    store_->put(key, bytes, context_at(ctx, r.timestamp));
    forwarder_.maybe_forward(ctx, Record{r.key, Datum(Change{agg, old}), r.timestamp, r.headers});
  }

 private:
  std::string store_name_;
  StoreOptions options_;
  Initializer init_;
  Aggregator adder_, subtractor_;
  KeyValueStore* store_ = nullptr;
  TableForwarder forwarder_;
};

}  // namespace

Node table_aggregate(const Grouping& g, Initializer init, Aggregator adder, Aggregator subtractor,
                     StoreOptions store, const std::string& name) {
  auto& graph = *g.parent.graph;
  std::string store_name =
      store.name.empty() ? graph.new_name("KTABLE-AGGREGATE-STATE-STORE-") : store.name;
  require_serde(store.key_serde, "key", "store " + store_name);
  require_serde(store.value_serde, "value", "store " + store_name);
  std::string base = g.options.name.empty() ? store_name : g.options.name;
  Node input = through_repartition_topic(g.parent, base, g.options.key_serde, g.options.value_serde,
                                         0, {}, true);
  std::string node_name = graph.name_or_new(name, "KTABLE-AGGREGATE-");
  store.name = store_name;
  graph.add_store({store_name, store, ""});
  auto factory = [=] {
    return std::make_unique<TableAggregateProcessor>(store_name, store, init, adder, subtractor);
  };
  Node out = add_processor(input, "", node_name, factory, {store_name});
  out.store = store_name;
  return out;
}

}  // namespace oxbow::streams::detail
