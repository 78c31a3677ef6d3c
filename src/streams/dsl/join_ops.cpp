// Joins of a stream with a table (Kafka's KStreamKTableJoin): each stream record looks up the
// table's current value for its key, in the same task, so the two must be co-partitioned.
#include "streams/dsl/dsl_internal.h"

namespace oxbow::streams::detail {

namespace {

class StreamTableJoinProcessor : public Processor {
 public:
  StreamTableJoinProcessor(std::shared_ptr<const TableLookup> table, ValueJoiner joiner, bool left)
      : table_(std::move(table)), joiner_(std::move(joiner)), left_(left) {}
  void process(const Record& r) override {
    auto& ctx = context();
    // Null values never join; a null key finds nothing, which only a left join keeps (KIP-962).
    if (!r.value.has_value() || (!r.key.has_value() && !left_)) {
      ctx.record_dropped("null key or value in a stream-table join");
      return;
    }
    TableValue other = r.key.has_value() ? table_->get(ctx, r.key) : TableValue{};
    if (!other.value.has_value() && !left_) return;
    ctx.forward(Record{r.key, joiner_(r.key, r.value, other.value), r.timestamp, r.headers});
  }

 private:
  std::shared_ptr<const TableLookup> table_;
  ValueJoiner joiner_;
  bool left_;
};

}  // namespace

Node stream_table_join(const Node& stream, const Node& table, ValueJoiner joiner, bool left,
                       JoinedOptions options) {
  auto& graph = *stream.graph;
  if (!table.lookup)
    throw TopologyException("the table " + table.name +
                            " cannot be joined: its values cannot be read (a suppressed table)");
  Node input = stream;
  if (stream.repartition_required) {
    // As Kafka: a stream whose key changed is repartitioned first, through "<name>-repartition",
    // the name being the Joined one or the stream node's.
    std::string base = options.name.empty() ? stream.name : options.name;
    input = through_repartition_topic(
        input, base, options.key_serde ? options.key_serde : stream.key_serde,
        options.value_serde ? options.value_serde : stream.value_serde, 0, {});
  }
  std::vector<std::string> topics = input.source_topics;
  topics.insert(topics.end(), table.source_topics.begin(), table.source_topics.end());
  graph.add_copartition_group(std::move(topics));
  Node out =
      add_processor(input, left ? "KSTREAM-LEFTJOIN-" : "KSTREAM-JOIN-", options.name,
                    ProcessorFactory([lookup = table.lookup, joiner, left] {
                      return std::make_unique<StreamTableJoinProcessor>(lookup, joiner, left);
                    }),
                    table.lookup->stores);
  out.value_serde = {};  // the joiner's result; the typed shell sets it
  return out;
}

}  // namespace oxbow::streams::detail

// ---------------------------------------------------------------------------------------------
// Global tables and the stream joins with them (Kafka's KStreamGlobalKTableJoin)

namespace oxbow::streams::detail {

namespace {

class StreamGlobalJoinProcessor : public Processor {
 public:
  StreamGlobalJoinProcessor(std::shared_ptr<const TableLookup> table, KeyMapper selector,
                            ValueJoiner joiner, bool left)
      : table_(std::move(table)),
        selector_(std::move(selector)),
        joiner_(std::move(joiner)),
        left_(left) {}
  void process(const Record& r) override {
    auto& ctx = context();
    if (!r.value.has_value()) {
      ctx.record_dropped("null value in a stream-global table join");
      return;
    }
    Datum table_key = selector_(r.key, r.value);
    TableValue other = table_key.has_value() ? table_->get(ctx, table_key) : TableValue{};
    if (!other.value.has_value() && !left_) {
      if (!table_key.has_value()) ctx.record_dropped("null key from a global join's key selector");
      return;
    }
    ctx.forward(Record{r.key, joiner_(r.key, r.value, other.value), r.timestamp, r.headers});
  }

 private:
  std::shared_ptr<const TableLookup> table_;
  KeyMapper selector_;
  ValueJoiner joiner_;
  bool left_;
};

}  // namespace

Node global_table(const std::shared_ptr<GraphBuilder>& graph, std::string topic,
                  ConsumedOptions consumed, StoreOptions store) {
  // Kafka draws the store's name, then the source's and the table source's.
  std::string store_name =
      store.name.empty() ? graph->new_name(topic + "-STATE-STORE-") : store.name;
  // As for table(): a Consumed name names the table source, and with "-source" the topic's.
  std::string source_name =
      consumed.name.empty() ? graph->new_name("KSTREAM-SOURCE-") : consumed.name + "-source";
  std::string processor_name = graph->name_or_new(consumed.name, "KTABLE-SOURCE-");
  require_serde(consumed.key_serde, "key", "global table " + topic);
  require_serde(consumed.value_serde, "value", "global table " + topic);
  if (graph->global_table_of(topic) || graph->store(store_name))
    throw TopologyException("topic " + topic + " or store " + store_name + " is already used");
  store.name = store_name;
  store.timestamped = true;
  store.key_serde = consumed.key_serde;
  store.value_serde = consumed.value_serde;
  graph->add_global_table({topic, store_name, consumed, {}, source_name, processor_name});
  graph->add_store({store_name, store, topic});
  Node out;
  out.graph = graph;
  out.name = store_name;
  out.store = store_name;
  out.key_serde = consumed.key_serde;
  out.value_serde = consumed.value_serde;
  // Read through the task, which finds global stores by name; listing none keeps the reading
  // node's sub-topology apart.
  auto lookup = std::make_shared<TableLookup>(*store_lookup(store_name, store));
  lookup->stores.clear();
  out.lookup = lookup;
  return out;
}

Node stream_global_join(const Node& stream, const Node& global, KeyMapper selector,
                        ValueJoiner joiner, bool left, const std::string& name) {
  Node out = add_processor(stream, left ? "KSTREAM-LEFTJOIN-" : "KSTREAM-JOIN-", name,
                           ProcessorFactory([lookup = global.lookup, selector, joiner, left] {
                             return std::make_unique<StreamGlobalJoinProcessor>(lookup, selector,
                                                                                joiner, left);
                           }));
  out.value_serde = {};
  return out;
}

}  // namespace oxbow::streams::detail
