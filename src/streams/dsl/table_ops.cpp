// KTables: from a topic, filter, mapValues, toStream, and re-grouping with adder and subtractor.
// Table nodes pass changes (new and old value: ChangeRecord, Processor::process_change) so that a
// re-grouped aggregate can take a row's old value out of the group it leaves.
#include <algorithm>

#include "oxbow/streams/detail/user_processor.h"
#include "streams/dsl/dsl_internal.h"
#include "streams/dsl/table_forwarder.h"

namespace oxbow::streams::detail {

namespace {

class ChangeFunctionProcessor : public TableProcessor {
 public:
  explicit ChangeFunctionProcessor(std::shared_ptr<const ChangeFn> fn) : fn_(std::move(fn)) {}
  void process_change(const ChangeRecord& change) override { (*fn_)(context(), change); }

 private:
  std::shared_ptr<const ChangeFn> fn_;
};

}  // namespace

ProcessorFactory change_function_processor(ChangeFn fn) {
  auto shared = std::make_shared<const ChangeFn>(std::move(fn));
  return [shared] { return std::make_unique<ChangeFunctionProcessor>(shared); };
}

namespace {

// Kafka's sendOldValues bookkeeping for one table node (KTableImpl.enableSendingOldValues). Kafka
// forwards a table's old values only where something asks for them (a materialized node, a
// re-grouping); without them a filter cannot tell an update that never passed it from one that
// leaves it, so it forwards a tombstone for both. The flags settle while the topology is built and
// are only read once it runs.
struct OldValues {
  bool materialized = false;  // a user-named store; a source's turns on when old values are asked
  bool send = false;
  std::function<bool(bool)> parent;  // the parent table's; unset for a source
};

bool enable_old_values(const Node& table, bool force) {
  return table.send_old_values ? table.send_old_values(force) : true;
}

// KTableSource: materialized on demand (forced, or by a filter when the source is already).
std::function<bool(bool)> source_old_values(std::shared_ptr<OldValues> s) {
  return [s](bool force) {
    if (!s->send) {
      if (!force && !s->materialized) return false;
      s->materialized = true;
      s->send = true;
    }
    return true;
  };
}

// KTableFilter and KTableMapValues: send old values when materialized, or when the parent does.
std::function<bool(bool)> derived_old_values(std::shared_ptr<OldValues> s) {
  return [s](bool force) {
    if (s->materialized) s->send = true;
    if (!s->send && s->parent(force)) s->send = true;
    return s->send;
  };
}

// What a node that keeps its output in a store (a table source, or a materialized filter or
// mapValues) does with each update: writes it there and forwards it, through the store's cache if
// any. Without a store it forwards the update as it is.
class TableWriter {
 public:
  TableWriter(std::string store, StoreOptions options, std::shared_ptr<const OldValues> old_values)
      : store_name_(std::move(store)),
        options_(std::move(options)),
        old_values_(std::move(old_values)) {}
  void init(ProcessorContext& context) {
    if (store_name_.empty()) return;
    store_ = &context.store(store_name_);
    // A source table Kafka would not materialize has no cache in front of its updates: each one is
    // forwarded as it comes (tombstones for unknown keys too), whatever the store here does.
    if (old_values_->materialized)
      forwarder_.init(context, store_name_, options_.key_serde, options_.value_serde);
  }
  void write(ProcessorContext& ctx, const ChangeRecord& update) {
    if (!store_) return ctx.forward_change(update);
    std::string key = options_.key_serde.serialize(store_name_, update.key);
    std::optional<std::string> bytes;
    if (update.change.new_value.has_value())
      bytes = with_timestamp(update.timestamp,
                             options_.value_serde.serialize(store_name_, update.change.new_value));
    // Kafka's caching layer, there even with a zero cache budget (its ThreadCache then evicts each
    // write at once), forwards no delete of a key the store does not have.
    bool absent = false;
    if (!bytes && options_.caching && old_values_->materialized) absent = !store_->get(key);
    store_->put(key, bytes, context_at(ctx, update.timestamp));
    if (absent) return;
    forwarder_.maybe_forward(ctx, update);
  }
  const std::shared_ptr<const OldValues>& old_values() const { return old_values_; }
  // The key's value before this update (null without a store).
  Datum stored(const Datum& key) const;
  bool has_store() const { return !store_name_.empty(); }

 private:
  std::string store_name_;
  StoreOptions options_;
  std::shared_ptr<const OldValues> old_values_;
  KeyValueStore* store_ = nullptr;
  TableForwarder forwarder_;
};

// KTableSource: a topic's records (a null value deletes) as the table's changes.
class TableSourceProcessor : public Processor {
 public:
  explicit TableSourceProcessor(TableWriter writer) : writer_(std::move(writer)) {}
  void init(ProcessorContext& context) override {
    Processor::init(context);
    writer_.init(context);
  }
  void process(const Record& r) override {
    auto& ctx = context();
    if (!r.key.has_value()) return ctx.record_dropped("null key in a table's topic");
    Datum old = writer_.old_values()->send ? writer_.stored(r.key) : Datum();
    writer_.write(ctx,
                  ChangeRecord{Datum::lend(r.key), Change{Datum::lend(r.value), std::move(old)},
                               r.timestamp, r.headers});
  }

 private:
  TableWriter writer_;
};

// KTableFilter and KTableMapValues: each change through `compute`, which may leave it out.
class TableDerivingProcessor : public TableProcessor {
 public:
  using Compute = std::function<std::optional<Change>(const ChangeRecord&)>;
  TableDerivingProcessor(TableWriter writer, Compute compute)
      : writer_(std::move(writer)), compute_(std::move(compute)) {}
  void init(ProcessorContext& context) override {
    Processor::init(context);
    writer_.init(context);
  }
  void process_change(const ChangeRecord& r) override {
    auto change = compute_(r);
    if (!change) return;
    writer_.write(context(),
                  ChangeRecord{Datum::lend(r.key), std::move(*change), r.timestamp, r.headers});
  }

 private:
  TableWriter writer_;
  Compute compute_;
};

using Compute = TableDerivingProcessor::Compute;

std::function<std::unique_ptr<Processor>(TableWriter)> deriving(Compute compute) {
  return [compute = std::move(compute)](TableWriter writer) {
    return std::make_unique<TableDerivingProcessor>(std::move(writer), compute);
  };
}

Datum TableWriter::stored(const Datum& key) const {
  if (!store_) return {};
  auto bytes = split_timestamp(store_->get(options_.key_serde.serialize(store_name_, key)));
  return bytes ? options_.value_serde.deserialize(store_name_, bytes->value) : Datum();
}

// KTableTransformValues: each change through the task's transformer, which sees the update's
// context. A null value stays null (the typed transformer never sees one).
class TableTransformingProcessor : public TableProcessor {
 public:
  TableTransformingProcessor(TableWriter writer, std::unique_ptr<ValueTransformerCore> transformer,
                             std::shared_ptr<const GraphBuilder> graph)
      : writer_(std::move(writer)),
        transformer_(std::move(transformer)),
        graph_(std::move(graph)) {}
  void init(ProcessorContext& context) override {
    Processor::init(context);
    writer_.init(context);
    user_context_ = make_user_context(context, {}, graph_);
    transformer_->init(*user_context_);
  }
  void process_change(const ChangeRecord& r) override {
    auto transform = [&](const Datum& v) {
      return v.has_value() ? transformer_->transform(r.key, v) : Datum();
    };
    Datum old;
    if (writer_.old_values()->send)  // as Kafka: the stored value when there is a store
      old = writer_.has_store() ? writer_.stored(r.key) : transform(r.change.old_value);
    writer_.write(context(), ChangeRecord{Datum::lend(r.key),
                                          Change{transform(r.change.new_value), std::move(old)},
                                          r.timestamp, r.headers});
  }
  void close() override { transformer_->close(); }

 private:
  TableWriter writer_;
  std::unique_ptr<ValueTransformerCore> transformer_;
  std::shared_ptr<const GraphBuilder> graph_;
  std::unique_ptr<UserContext> user_context_;
};

// `derive`: the value of a key from the parent's, for reading the table when it has no store.
using Derive =
    std::function<Datum(ProcessorContext& context, const Datum& key, const Datum& parent_value)>;
// The node's processor, around the writer of its updates.
using WritingProcessorFactory = std::function<std::unique_ptr<Processor>(TableWriter writer)>;

Node materializing(const Node& in, const char* prefix, const std::string& name, StoreOptions store,
                   std::shared_ptr<OldValues> old_values, WritingProcessorFactory make,
                   Derive derive) {
  auto& graph = *in.graph;
  std::string store_name = store.name;
  old_values->materialized = !store_name.empty();
  std::string node_name = graph.name_or_new(name, prefix);
  std::vector<std::string> stores;
  if (!store_name.empty()) {
    require_serde(store.key_serde, "key", "store " + store_name);
    require_serde(store.value_serde, "value", "store " + store_name);
    store.name = store_name;
    store.timestamped = true;
    stores.push_back(store_name);
    graph.add_store({store_name, store, ""});
  }
  ProcessorFactory factory = [store_name, store, make, old_values] {
    return make(TableWriter(store_name, store, old_values));
  };
  Node out = add_processor(in, "", node_name, std::move(factory), stores, kTableToTable);
  out.store = store_name;
  out.send_old_values = derived_old_values(old_values);
  if (!store_name.empty()) {
    out.lookup = store_lookup(store_name, store);
  } else if (in.lookup) {
    auto lookup = std::make_shared<TableLookup>(*in.lookup);
    lookup->get = [parent = in.lookup, derive](ProcessorContext& context, const Datum& key) {
      TableValue v = parent->get(context, key);
      if (v.value.has_value()) v.value = derive(context, key, v.value);
      return v;
    };
    out.lookup = lookup;
  }
  return out;
}

}  // namespace

Node ktable_source(const Node& in, const char* prefix, const std::string& name,
                   const StoreOptions& store, bool queryable) {
  auto old_values = std::make_shared<OldValues>();
  old_values->materialized = queryable;
  std::string store_name = store.name;
  ProcessorFactory factory = [store_name, store, old_values] {
    return std::make_unique<TableSourceProcessor>(TableWriter(store_name, store, old_values));
  };
  Node out = add_processor(in, prefix, name, std::move(factory), {store_name}, kStreamToTable);
  out.store = store_name;
  out.send_old_values = source_old_values(old_values);
  out.lookup = store_lookup(store_name, store);
  return out;
}

Node table_source(const std::shared_ptr<GraphBuilder>& graph, std::string topic,
                  ConsumedOptions consumed, StoreOptions store) {
  bool queryable = !store.name.empty();
  // Kafka's order: the store's name, then the source's, then the table source's. A Consumed name
  // names the table source, and with "-source" the topic's source node.
  std::string store_name =
      store.name.empty() ? graph->new_name(topic + "-STATE-STORE-") : store.name;
  store.name = store_name;
  store.logging = false;  // the topic is the changelog
  store.timestamped = true;
  std::string table_name = consumed.name;
  if (!table_name.empty()) consumed.name = table_name + "-source";
  Node source = stream_source(graph, {topic}, consumed);
  require_serde(store.key_serde, "key", "store " + store_name);
  require_serde(store.value_serde, "value", "store " + store_name);
  graph->add_store({store_name, store, topic});
  return ktable_source(source, "KTABLE-SOURCE-", table_name, store, queryable);
}

Node table_filter(const Node& table, Predicate predicate, bool negate, const std::string& name,
                  StoreOptions store) {
  auto old_values = std::make_shared<OldValues>();
  old_values->parent = table.send_old_values;
  if (!old_values->parent) old_values->parent = [](bool) { return true; };
  // As KTableFilter: old values when the parent already sends them, or when asked later.
  old_values->send = old_values->parent(false);
  auto compute = [predicate, negate, old_values](const ChangeRecord& r) -> std::optional<Change> {
    const Change& c = r.change;
    auto keep = [&](const Datum& v) {
      return v.has_value() && predicate(r.key, v) != negate ? Datum::lend(v) : Datum();
    };
    Change out{keep(c.new_value), old_values->send ? keep(c.old_value) : Datum()};
    if (old_values->send && !out.new_value.has_value() && !out.old_value.has_value())
      return std::nullopt;  // it did not pass before either
    return out;
  };
  auto derive = [predicate, negate](ProcessorContext&, const Datum& key, const Datum& value) {
    return predicate(key, value) != negate ? value : Datum();
  };
  return materializing(table, "KTABLE-FILTER-", name, std::move(store), old_values,
                       deriving(std::move(compute)), derive);
}

Node table_map_values(const Node& table, ValueMapper mapper, const std::string& name,
                      StoreOptions store) {
  auto old_values = std::make_shared<OldValues>();
  old_values->parent = table.send_old_values;
  if (!old_values->parent) old_values->parent = [](bool) { return true; };
  auto compute = [mapper, old_values](const ChangeRecord& r) -> std::optional<Change> {
    const Change& c = r.change;
    auto map = [&](const Datum& v) { return v.has_value() ? mapper(r.key, v) : Datum(); };
    return Change{map(c.new_value), old_values->send ? map(c.old_value) : Datum()};
  };
  auto derive = [mapper](ProcessorContext&, const Datum& key, const Datum& value) {
    return mapper(key, value);
  };
  return materializing(table, "KTABLE-MAPVALUES-", name, std::move(store), old_values,
                       deriving(std::move(compute)), derive);
}

Node table_transform_values(const Node& table, ValueTransformerFactory factory,
                            const std::string& name, StoreOptions store) {
  auto old_values = std::make_shared<OldValues>();
  old_values->parent = table.send_old_values;
  if (!old_values->parent) old_values->parent = [](bool) { return true; };
  std::weak_ptr<GraphBuilder> graph = table.graph;
  WritingProcessorFactory make = [factory, graph](TableWriter writer) {
    return std::make_unique<TableTransformingProcessor>(std::move(writer), factory(), graph.lock());
  };
  // Read through a join without a store of its own: a transformer for the lookup, in the context
  // of the record looking it up (Kafka's KTableTransformValuesGetter).
  auto derive = [factory, graph](ProcessorContext& context, const Datum& key, const Datum& value) {
    auto transformer = factory();
    auto user_context = make_user_context(context, {}, graph.lock());
    transformer->init(*user_context);
    Datum out = transformer->transform(key, value);
    transformer->close();
    return out;
  };
  return materializing(table, "KTABLE-TRANSFORMVALUES-", name, std::move(store), old_values,
                       std::move(make), derive);
}

Node stream_to_table(const Node& stream, const std::string& name, StoreOptions store) {
  auto& graph = *stream.graph;
  // Kafka's order: the node's name, then its store's, then the repartition topic's nodes.
  std::string table_name = graph.name_or_new(name, "KSTREAM-TOTABLE-");
  bool queryable = !store.name.empty();
  if (store.name.empty()) store.name = graph.new_name("KSTREAM-TOTABLE-STATE-STORE-");
  store.timestamped = true;
  require_serde(store.key_serde, "key", "store " + store.name);
  require_serde(store.value_serde, "value", "store " + store.name);
  Node in = stream;
  if (stream.repartition_required)
    in = through_repartition_topic(stream, table_name, store.key_serde, store.value_serde, 0, {});
  graph.add_store({store.name, store, ""});
  return ktable_source(in, "", table_name, store, queryable);
}

Node to_stream(const Node& table, const std::string& name) {
  Node out =
      add_processor(table, "KTABLE-TOSTREAM-", name,
                    change_function_processor([](ProcessorContext& c, const ChangeRecord& r) {
                      c.forward(Record{Datum::lend(r.key), Datum::lend(r.change.new_value),
                                       r.timestamp, r.headers});
                    }),
                    {}, kTableToStream);
  out.store.clear();
  out.window_grace_ms = -1;
  out.lookup = nullptr;
  out.send_old_values = nullptr;
  return out;
}

Grouping table_group_by(const Node& table, KeyValueMapper selector, GroupedOptions options) {
  // A row's old value must come along, to leave the group it was in.
  enable_old_values(table, true);
  ErasedSerde key_serde = options.key_serde;
  auto node = add_processor(
      table, "KTABLE-SELECT-", options.name,
      change_function_processor([selector, key_serde](ProcessorContext& c, const ChangeRecord& r) {
        const Change& change = r.change;
        auto select = [&](const Datum& v) -> std::optional<KeyValue> {
          if (!v.has_value()) return std::nullopt;
          auto kv = selector(r.key, v);
          if (!kv.first.has_value() || !kv.second.has_value()) {
            c.record_dropped("null key or value from a table's groupBy selector");
            return std::nullopt;
          }
          return kv;
        };
        auto old_pair = select(change.old_value);
        auto new_pair = select(change.new_value);
        auto send = [&](Datum key, Change out) {
          c.forward_change(ChangeRecord{std::move(key), std::move(out), r.timestamp, r.headers});
        };
        // A row that stays in its group is one change (Kafka 3.5+, KIP-904): the aggregate then
        // subtracts and adds in one step and forwards once, never the state in between.
        if (old_pair && new_pair && key_serde &&
            key_serde.serialize("", old_pair->first) == key_serde.serialize("", new_pair->first)) {
          send(std::move(new_pair->first),
               Change{std::move(new_pair->second), std::move(old_pair->second)});
          return;
        }
        // Old value first: a row that moves leaves its old group before it joins the new one.
        if (old_pair) send(std::move(old_pair->first), Change{{}, std::move(old_pair->second)});
        if (new_pair) send(std::move(new_pair->first), Change{std::move(new_pair->second), {}});
      }),
      {}, kTableToTable);
  node.repartition_required = true;
  node.store.clear();
  node.send_old_values = nullptr;
  return Grouping{node, std::move(options)};
}

namespace {

// KTABLE-AGGREGATE / KTABLE-REDUCE: a re-grouped table's changes, each row's old value subtracted
// from its group and its new one added.
class TableAggregateProcessor : public TableProcessor {
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
  void process_change(const ChangeRecord& r) override {
    auto& ctx = context();
    if (!r.key.has_value()) {
      ctx.record_dropped("null key in a table aggregation");
      return;
    }
    const Change& c = r.change;
    std::string key = options_.key_serde.serialize(store_name_, r.key);
    Datum old;
    int64_t old_timestamp = r.timestamp;
    if (auto stored = split_timestamp(store_->get(key))) {
      old = options_.value_serde.deserialize(store_name_, stored->value);
      old_timestamp = stored->timestamp;
    }
    Datum agg = old;
    bool changed = false;
    if (c.old_value.has_value() && agg.has_value()) {
      agg = subtractor_(r.key, c.old_value, agg);
      changed = true;
    }
    if (c.new_value.has_value()) {
      agg = adder_(r.key, c.new_value, agg.has_value() ? agg : init_());
      changed = true;
    }
    // As Kafka: an aggregate that changed takes the later of the record's and its own time.
    int64_t timestamp =
        old.has_value() && changed ? std::max(r.timestamp, old_timestamp) : r.timestamp;
    std::optional<std::string> bytes;
    if (agg.has_value())
      bytes = with_timestamp(timestamp, options_.value_serde.serialize(store_name_, agg));
    store_->put(key, bytes, context_at(ctx, timestamp));
    forwarder_.maybe_forward(
        ctx, ChangeRecord{Datum::lend(r.key), Change{std::move(agg), std::move(old)}, timestamp,
                          r.headers});
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

// ---------------------------------------------------------------------------------------------
// The repartition topic of a re-grouped table's changes. A value is a change's new and old value,
// each serialized with the grouping's value serde: one flags byte (1: new present, 2: old present),
// the new value's length as 4 bytes big-endian, the new value's bytes, then the old value's bytes.

namespace {

class ChangeSinkProcessor : public TableProcessor {
 public:
  ChangeSinkProcessor(std::string topic, ErasedSerde key_serde, ErasedSerde value_serde)
      : topic_(std::move(topic)),
        key_serde_(std::move(key_serde)),
        value_serde_(std::move(value_serde)) {}
  void init(ProcessorContext& context) override {
    Processor::init(context);
    topic_ = context.application_id() + "-" + topic_;
  }
  void process_change(const ChangeRecord& r) override {
    if (r.key.has_value()) {
      if (!key_) key_.emplace();
      key_serde_.serialize_to(topic_, r.key, *key_);
    } else {
      key_.reset();
    }
    const Change& c = r.change;
    bool has_new = c.new_value.has_value(), has_old = c.old_value.has_value();
    if (has_new) value_serde_.serialize_to(topic_, c.new_value, new_bytes_);
    if (has_old) value_serde_.serialize_to(topic_, c.old_value, old_bytes_);
    uint32_t length = has_new ? static_cast<uint32_t>(new_bytes_.size()) : 0;
    std::string& out = value_.emplace();
    out.push_back(static_cast<char>((has_new ? 1 : 0) | (has_old ? 2 : 0)));
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(length >> shift));
    if (has_new) out += new_bytes_;
    if (has_old) out += old_bytes_;
    context().collector().send(topic_, key_, value_, r.timestamp, r.headers, -1);
  }

 private:
  std::string topic_;
  ErasedSerde key_serde_, value_serde_;
  std::optional<std::string> key_, value_;
  std::string new_bytes_, old_bytes_;
};

ChangeReader change_reader(ErasedSerde inner) {
  return [inner](std::string_view topic, std::string_view bytes, Change& out) {
    if (bytes.size() < 5) throw SerializationException("a table change shorter than 5 bytes");
    uint32_t length = 0;
    for (int i = 0; i < 4; ++i) length = length << 8 | static_cast<uint8_t>(bytes[1 + i]);
    if (length > bytes.size() - 5)
      throw SerializationException("a table change's length is past its end");
    if (bytes[0] & 1)
      inner.deserialize_to(topic, bytes.substr(5, length), out.new_value);
    else
      out.new_value.reset();
    if (bytes[0] & 2)
      inner.deserialize_to(topic, bytes.substr(5 + length), out.old_value);
    else
      out.old_value.reset();
  };
}

}  // namespace

Node through_changes_topic(const Node& in, const std::string& topic, const std::string& sink,
                           const std::string& source, ErasedSerde key, ErasedSerde value) {
  auto& graph = *in.graph;
  require_serde(key, "key", "repartition topic " + topic);
  require_serde(value, "value", "repartition topic " + topic);
  graph.add_internal_topic({topic, 0, in.source_topics});
  NodeSpec spec;
  spec.name = sink;
  spec.kind = NodeDescription::Kind::kSink;
  spec.internal = true;
  spec.topics = {topic};
  spec.parents = {in.name};
  spec.takes = Flow::kChanges;
  spec.factory = [topic, key, value] {
    return std::make_unique<ChangeSinkProcessor>(topic, key, value);
  };
  graph.add_node(std::move(spec));
  return add_internal_source(in, source, topic, key, value, change_reader(value));
}

Node table_aggregate(const Grouping& g, Initializer init, Aggregator adder, Aggregator subtractor,
                     StoreOptions store, const std::string& name, const char* kind) {
  auto& graph = *g.parent.graph;
  std::string store_name =
      store.name.empty() ? graph.new_name("KTABLE-AGGREGATE-STATE-STORE-") : store.name;
  require_serde(store.key_serde, "key", "store " + store_name);
  require_serde(store.value_serde, "value", "store " + store_name);
  // Kafka's KGroupedTableImpl names the repartition sink and source after the aggregation's Named
  // (not the Grouped name, which names the topic), drawn before the aggregation's own name.
  std::string sink = name.empty() ? graph.new_name("KSTREAM-SINK-") : name + "-sink";
  std::string source = name.empty() ? graph.new_name("KSTREAM-SOURCE-") : name + "-source";
  std::string node_name = graph.name_or_new(name, std::string("KTABLE-") + kind + "-");
  std::string topic = (g.options.name.empty() ? store_name : g.options.name) + "-repartition";
  Node input = through_changes_topic(g.parent, topic, sink, source, g.options.key_serde,
                                     g.options.value_serde);
  store.name = store_name;
  store.timestamped = true;
  graph.add_store({store_name, store, ""});
  auto factory = [=] {
    return std::make_unique<TableAggregateProcessor>(store_name, store, init, adder, subtractor);
  };
  Node out = add_processor(input, "", node_name, factory, {store_name}, kTableToTable);
  out.store = store_name;
  out.send_old_values = nullptr;
  out.lookup = store_lookup(store_name, store);
  return out;
}

}  // namespace oxbow::streams::detail
