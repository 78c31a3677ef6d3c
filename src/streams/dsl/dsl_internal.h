#pragma once
// Helpers the DSL operations share: adding a processor node after another, the processor that runs
// a plain function, checks for serdes, repartition topics.
#include <memory>
#include <string>

#include "streams/processor/processor.h"
#include "streams/topology/graph_builder.h"

namespace oxbow::streams::detail {

using ProcessFn = std::function<void(ProcessorContext& context, const Record& record)>;
using ChangeFn = std::function<void(ProcessorContext& context, const ChangeRecord& change)>;

ProcessorFactory function_processor(ProcessFn fn);
// A node after a table: its changes to `fn`.
ProcessorFactory change_function_processor(ChangeFn fn);

// What a node takes and forwards: a stream's records, or a table's changes.
struct Flows {
  Flow takes = Flow::kRecords;
  Flow forwards = Flow::kRecords;
};
inline constexpr Flows kStreamToTable{Flow::kRecords, Flow::kChanges};
inline constexpr Flows kTableToTable{Flow::kChanges, Flow::kChanges};
inline constexpr Flows kTableToStream{Flow::kChanges, Flow::kRecords};

// A processor node named `name` (or PREFIX-NNNNNNNNNN) after `in`; the returned node keeps `in`'s
// serdes and flags.
Node add_processor(const Node& in, const std::string& prefix, const std::string& name,
                   ProcessorFactory factory, std::vector<std::string> stores = {},
                   Flows flows = {});

void require_serde(const ErasedSerde& serde, const std::string& what, const std::string& where);

// Writes `in` through the repartition topic `<base>-repartition` and reads it back: a sink in one
// sub-topology, a source starting another. Records with a null key are dropped first (they have no
// partition). Nodes are named as Kafka names them: `<base>-repartition-filter`, `-sink` and
// `-source` when the user chose the base, generated ones otherwise (drawn either way, in Kafka's
// order: sink, filter, source).
Node through_repartition_topic(const Node& in, const std::string& base, ErasedSerde key,
                               ErasedSerde value, int32_t partitions,
                               StreamPartitioner partitioner);

// The same for a re-grouped table's changes, through `topic`: no null-key filter (the grouping's
// mapper leaves those out) and the sink and source named by the caller, as Kafka's KGroupedTable
// names them after the aggregation rather than the topic.
Node through_changes_topic(const Node& in, const std::string& topic, const std::string& sink,
                           const std::string& source, ErasedSerde key, ErasedSerde value);

class UserContext;
// What a user's processor or transformer sees of the task, over the node's context: `stores` are
// the ones it was connected to.
std::unique_ptr<UserContext> make_user_context(ProcessorContext& context,
                                               std::vector<std::string> stores,
                                               std::shared_ptr<const GraphBuilder> graph);

// Window-store keys (state/window_key.h) read as WindowedDatum, windows of `window_size`.
ErasedSerde window_store_key_serde(ErasedSerde inner, int64_t window_size);

// A window or session store's retention: `minimum` unless Materialized set one, which may not be
// less (std::invalid_argument, in Kafka's words: "... must be no smaller than <rule>. Got <got>,
// retention=[...]").
void set_retention(StoreOptions& store, int64_t minimum, const std::string& what,
                   const std::string& rule, const std::string& got);

// Reads a timestamped store of the DSL.
std::shared_ptr<const TableLookup> store_lookup(const std::string& store,
                                                const StoreOptions& options);

// Kafka's KTableSource after `in`, whose records carry plain values (a null one deletes): keeps
// them in `store` (the caller adds it to the graph) and forwards them as changes. `queryable`: a
// store the user named, which Kafka would materialize: updates then go through its cache.
Node ktable_source(const Node& in, const char* prefix, const std::string& name,
                   const StoreOptions& store, bool queryable);

// A sink writing to the application's internal topic `topic` (named without the application id).
void add_internal_sink(const Node& in, const std::string& name, const std::string& topic,
                       ProducedOptions options);
// A source reading the internal topic `topic`; the node keeps `like`'s flags. With `read_change`
// its values are a table's changes, which it forwards as such.
Node add_internal_source(const Node& like, const std::string& name, const std::string& topic,
                         ErasedSerde key, ErasedSerde value, ChangeReader read_change = {});

// What an aggregation of a grouped stream makes of its input records, given its store.
using AggregationFactory =
    std::function<ProcessorFactory(const std::string& store_name, const StoreOptions& store)>;

// The aggregation node of a grouped stream (KSTREAM-<kind>-NNNNNNNNNN, its store
// KSTREAM-<kind>-STATE-STORE-NNNNNNNNNN unless named), behind a repartition topic when the
// grouping changed the key. The store is timestamped.
Node grouped_aggregation(const Grouping& g, const char* kind, StoreOptions store,
                         const std::string& name, const AggregationFactory& make);

// A windowed aggregation's store and processors, for one grouped stream or for each input of a
// cogroup (whose processors share the store).
struct WindowedPlan {
  StoreOptions store;  // the window or session store, its retention and key layout set
  std::function<AggregationFactory(const Aggregator& adder)> processor;
  ErasedSerde out_key_serde;  // Windowed<K>'s serde
  int64_t window_grace_ms = -1;
};
WindowedPlan time_window_plan(const TimeWindows& windows, Initializer init, StoreOptions store,
                              bool emit_on_close);
WindowedPlan sliding_window_plan(const SlidingWindows& windows, Initializer init,
                                 StoreOptions store, bool emit_on_close);
WindowedPlan session_window_plan(const SessionWindows& windows, Initializer init,
                                 SessionMerger merger, StoreOptions store);
Node windowed_grouped_aggregation(const Grouping& g, const char* kind, const std::string& name,
                                  const WindowedPlan& plan, const Aggregator& adder);
Node cogroup_windowed(const std::vector<std::pair<Grouping, Aggregator>>& inputs,
                      const WindowedPlan& plan, const std::string& name);
// A reduce as an aggregation whose initial aggregate is null.
Aggregator reducing(Reducer reducer);

}  // namespace oxbow::streams::detail
