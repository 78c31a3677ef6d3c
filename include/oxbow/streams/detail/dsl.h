#pragma once
// The untyped DSL core. KStream<K,V> and friends are typed shells over these handles and calls;
// everything here works on Datum, so a topology can also be composed at run time.
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "oxbow/streams/options.h"
#include "oxbow/streams/record.h"
#include "oxbow/streams/suppressed.h"

namespace oxbow::streams::detail {

class GraphBuilder;      // src/streams/topology/graph_builder.h
class ProcessorContext;  // src/streams/processor/processor.h

// A table's current value for a key, and the time of its update; no value when the key is absent.
struct TableValue {
  Datum value;
  int64_t timestamp = 0;
};

// How a processor reads a table's current value (Kafka's KTableValueGetter): from the table's
// store, or through the parent's lookup for a table that is not materialized. The reading processor
// must list `stores`, which puts it in the task that holds them.
struct TableLookup {
  std::vector<std::string> stores;
  std::function<TableValue(ProcessorContext& context, const Datum& key)> get;
};

using Predicate = std::function<bool(const Datum& key, const Datum& value)>;
using KeyValue = std::pair<Datum, Datum>;
using KeyValueMapper = std::function<KeyValue(const Datum& key, const Datum& value)>;
using KeyMapper = std::function<Datum(const Datum& key, const Datum& value)>;
using ValueMapper = std::function<Datum(const Datum& key, const Datum& value)>;
using FlatMapper = std::function<std::vector<KeyValue>(const Datum& key, const Datum& value)>;
using FlatValueMapper = std::function<std::vector<Datum>(const Datum& key, const Datum& value)>;
using ForeachAction = std::function<void(const Datum& key, const Datum& value)>;
using Initializer = std::function<Datum()>;
using Aggregator =
    std::function<Datum(const Datum& key, const Datum& value, const Datum& aggregate)>;
using Reducer = std::function<Datum(const Datum& aggregate, const Datum& value)>;
// Sessions merging: the aggregate of both.
using SessionMerger = std::function<Datum(const Datum& key, const Datum& one, const Datum& two)>;
// A join's result from the key and both sides' values (either side null in left/outer joins).
using ValueJoiner = std::function<Datum(const Datum& key, const Datum& left, const Datum& right)>;
using TopicNameExtractor =
    std::function<std::string(const Datum& key, const Datum& value, const RecordContext& context)>;

// A stream or table node of the graph, with what the core knows of its records.
struct Node {
  std::shared_ptr<GraphBuilder> graph;
  std::string name;
  ErasedSerde key_serde, value_serde;      // unset when unknown
  bool repartition_required = false;       // the key changed since the source
  std::string store;                       // tables: the store holding the table, if any
  std::vector<std::string> source_topics;  // for co-partitioning and partition counts
  // Tables: Kafka's KTableImpl.enableSendingOldValues(force), answering whether the table will
  // forward old values; a filter that gets them can leave out updates that never passed it, one
  // that does not must forward a tombstone for each. Unset: always (aggregations).
  std::function<bool(bool force)> send_old_values;
  // Tables of a windowed aggregation (and tables derived from them): its grace period, which
  // suppress(untilWindowCloses) waits for; -1 for others.
  int64_t window_grace_ms = -1;
  // Tables: how to read their current values (unset: a table that cannot be read, e.g. suppressed).
  std::shared_ptr<const TableLookup> lookup;
};

struct Grouping {
  Node parent;
  GroupedOptions options;
};

Node stream_source(const std::shared_ptr<GraphBuilder>& graph, std::vector<std::string> topics,
                   ConsumedOptions options);
Node table_source(const std::shared_ptr<GraphBuilder>& graph, std::string topic,
                  ConsumedOptions consumed, StoreOptions store);

Node filter(const Node& in, Predicate predicate, bool negate, const std::string& name);
Node map(const Node& in, KeyValueMapper mapper, const std::string& name);
Node select_key(const Node& in, KeyMapper mapper, const std::string& name);
Node map_values(const Node& in, ValueMapper mapper, const std::string& name);
Node flat_map(const Node& in, FlatMapper mapper, const std::string& name);
Node flat_map_values(const Node& in, FlatValueMapper mapper, const std::string& name);
Node peek(const Node& in, ForeachAction action, const std::string& name);
void foreach(const Node& in, ForeachAction action, const std::string& name);
Node merge(const Node& a, const Node& b, const std::string& name);
// split(): one branch per predicate, the first that matches takes the record; a default branch
// (no predicate) takes the rest. Returns the branch nodes in order.
std::vector<Node> split(const Node& in, const std::vector<Predicate>& predicates,
                        const std::vector<std::string>& branch_names, bool with_default,
                        const std::string& name);
void to(const Node& in, std::string topic, ProducedOptions options);
void to(const Node& in, TopicNameExtractor topics, ProducedOptions options);
Node repartition(const Node& in, RepartitionedOptions options);

Grouping group_by_key(const Node& in, GroupedOptions options);
Grouping group_by(const Node& in, KeyMapper selector, GroupedOptions options);
Node aggregate(const Grouping& in, Initializer init, Aggregator adder, StoreOptions store,
               const std::string& name, const char* kind);
Node reduce(const Grouping& in, Reducer reducer, StoreOptions store, const std::string& name);

// KGroupedStream.cogroup: one aggregate per key over several grouped streams, each updating it
// with its own aggregator (each repartitioned first if its key changed).
Node cogroup_aggregate(const std::vector<std::pair<Grouping, Aggregator>>& inputs, Initializer init,
                       StoreOptions store, const std::string& name);

// CogroupedKStream.windowedBy(TimeWindows | SlidingWindows | SessionWindows).aggregate: as
// cogroup_aggregate, one aggregate per key and window (session) in one store the inputs share.
Node cogroup_windowed_aggregate(const std::vector<std::pair<Grouping, Aggregator>>& inputs,
                                const TimeWindows& windows, Initializer init, StoreOptions store,
                                const std::string& name);
Node cogroup_sliding_aggregate(const std::vector<std::pair<Grouping, Aggregator>>& inputs,
                               const SlidingWindows& windows, Initializer init, StoreOptions store,
                               const std::string& name);
Node cogroup_session_aggregate(const std::vector<std::pair<Grouping, Aggregator>>& inputs,
                               const SessionWindows& windows, Initializer init,
                               SessionMerger merger, StoreOptions store, const std::string& name);

// KGroupedStream.windowedBy(TimeWindows) then aggregate/count or reduce: one aggregate per key and
// window, a table keyed by WindowedDatum. `store.key_serde` is the grouping's key serde.
// emit_on_close: emitStrategy(onWindowClose) (KIP-825), each window's result once, when it closes.
Node windowed_aggregate(const Grouping& in, const TimeWindows& windows, Initializer init,
                        Aggregator adder, StoreOptions store, const std::string& name,
                        bool emit_on_close = false);
Node windowed_reduce(const Grouping& in, const TimeWindows& windows, Reducer reducer,
                     StoreOptions store, const std::string& name, bool emit_on_close = false);
// KGroupedStream.windowedBy(SlidingWindows) then aggregate/count/reduce (Kafka's time-windowed
// key serde, windows of the time difference). kind: "AGGREGATE" or "REDUCE". emit_on_close: as
// for time windows, a window closing once its (inclusive) end is before stream time minus grace.
Node sliding_aggregate(const Grouping& in, const SlidingWindows& windows, Initializer init,
                       Aggregator adder, StoreOptions store, const std::string& name,
                       const char* kind, bool emit_on_close = false);

// KGroupedStream.windowedBy(SessionWindows) then aggregate/count/reduce: one aggregate per key
// and session, a table keyed by WindowedDatum with Kafka's session-windowed key serde. kind:
// "AGGREGATE" or "REDUCE".
Node session_aggregate(const Grouping& in, const SessionWindows& windows, Initializer init,
                       Aggregator adder, SessionMerger merger, StoreOptions store,
                       const std::string& name, const char* kind);
ErasedSerde session_windowed_serde(const ErasedSerde& inner);
// Kafka's time-windowed key serde (windows.h) over WindowedDatum, from the key's serde.
ErasedSerde time_windowed_serde(const ErasedSerde& inner, int64_t window_size);

// KStream.join / leftJoin(KTable): each stream record with the table's value for its key. The
// stream is repartitioned first if its key changed; stream and table must be co-partitioned.
Node stream_table_join(const Node& stream, const Node& table, ValueJoiner joiner, bool left,
                       JoinedOptions options);

// KStream.join / leftJoin / outerJoin(KStream, JoinWindows): records of both streams with the
// same key and times within the windows, joined; left and outer results for records that found
// nothing are emitted once their window has closed.
enum class StreamJoinKind { kInner, kLeft, kOuter };
Node stream_stream_join(const Node& left, const Node& right, ValueJoiner joiner,
                        StreamJoinKind kind, const JoinWindows& windows,
                        StreamJoinedOptions options);

// KTable.join / leftJoin / outerJoin(KTable): the joined table, updated from either side.
// `store.name` empty: not materialized.
enum class TableJoinKind { kInner, kLeft, kOuter };
Node table_table_join(const Node& left, const Node& right, ValueJoiner joiner, TableJoinKind kind,
                      const std::string& name, StoreOptions store);

// KTable.join / leftJoin(KTable, foreignKeyExtractor, joiner) (KIP-213): each row of `left` with
// the row of `right` whose key `extractor` picks from it (an empty Datum: none), kept right through
// updates of either side and changes of the foreign key. Subscriptions travel to the right table's
// partitions and responses back through two internal topics; a response that no longer matches
// the row's current value (by hash) is dropped. `store.name` empty: not queryable.
Node foreign_key_join(const Node& left, const Node& right, KeyMapper extractor, ValueJoiner joiner,
                      bool left_join, TableJoinedOptions joined, StoreOptions store);

// StreamsBuilder.globalTable: the whole topic on every instance, kept up to date apart from the
// tasks. The node only carries the table's lookup (and store name); it has no place in the graph.
Node global_table(const std::shared_ptr<GraphBuilder>& graph, std::string topic,
                  ConsumedOptions consumed, StoreOptions store);
// KStream.join / leftJoin(GlobalKTable, keySelector, joiner): each record with the global table's
// value for the key the selector picks (a null pick finds nothing; a left join keeps it).
Node stream_global_join(const Node& stream, const Node& global, KeyMapper selector,
                        ValueJoiner joiner, bool left, const std::string& name);

// KTable.suppress(): see oxbow/streams/suppressed.h.
Node suppress(const Node& table, SuppressOptions options);

Node table_filter(const Node& table, Predicate predicate, bool negate, const std::string& name,
                  StoreOptions store);
Node table_map_values(const Node& table, ValueMapper mapper, const std::string& name,
                      StoreOptions store);
Node to_stream(const Node& table, const std::string& name);
Grouping table_group_by(const Node& table, KeyValueMapper selector, GroupedOptions options);
// kind: "AGGREGATE" or "REDUCE", the node's generated name (KTABLE-<kind>-NNNNNNNNNN).
Node table_aggregate(const Grouping& in, Initializer init, Aggregator adder, Aggregator subtractor,
                     StoreOptions store, const std::string& name, const char* kind);

}  // namespace oxbow::streams::detail
