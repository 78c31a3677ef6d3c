#pragma once
// The untyped core of the Processor API (oxbow/streams/processor.h is its typed shell): what a
// user's processor reaches of its task, and the calls that add user processors, stores, sources
// and sinks to a graph.
#include <compare>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "oxbow/streams/detail/dsl.h"
#include "oxbow/streams/detail/store_calls.h"

namespace oxbow::streams {

enum class PunctuationType { STREAM_TIME, WALL_CLOCK_TIME };

// Where the record being processed came from; none while punctuating.
struct RecordMetadata {
  std::string topic;
  int32_t partition = -1;
  int64_t offset = -1;
};

// A task's id, as Kafka prints it: "<sub-topology>_<partition>", or, for a task of a named
// topology (several topologies hosted by one KafkaStreams),
// "<topology>__<sub-topology>_<partition>".
struct TaskId {
  TaskId() = default;
  TaskId(int sub, int32_t part, std::string named = {})
      : subtopology(sub), partition(part), topology(std::move(named)) {}
  int subtopology = 0;
  int32_t partition = 0;
  std::string topology;  // the named topology; empty for an application's single topology
  // A named topology's tasks sort together, as Kafka's do.
  auto operator<=>(const TaskId& o) const {
    return std::tie(topology, subtopology, partition) <=>
           std::tie(o.topology, o.subtopology, o.partition);
  }
  bool operator==(const TaskId&) const = default;
  std::string toString() const {
    std::string plain = std::to_string(subtopology) + "_" + std::to_string(partition);
    return topology.empty() ? plain : topology + "__" + plain;
  }
};

// The handle of a scheduled punctuation.
class Cancellable {
 public:
  Cancellable() = default;
  explicit Cancellable(std::shared_ptr<bool> cancelled) : cancelled_(std::move(cancelled)) {}
  void cancel() {
    if (cancelled_) *cancelled_ = true;
  }

 private:
  std::shared_ptr<bool> cancelled_;
};

namespace detail {

class UserContext {
 public:
  virtual ~UserContext() = default;
  virtual void forward(const Record& record) = 0;
  // Throws StreamsException when the node has no such child.
  virtual void forward(const Record& record, const std::string& child) = 0;
  virtual Cancellable schedule(int64_t interval_ms, PunctuationType type,
                               std::function<void(int64_t)> punctuator) = 0;
  virtual void commit() = 0;
  virtual std::optional<RecordMetadata> recordMetadata() const = 0;
  // The headers of the record being processed (empty while punctuating).
  virtual Headers headers() const = 0;
  // The timestamp of the input record being processed (the punctuation's time while punctuating).
  virtual int64_t timestamp() const = 0;
  virtual int64_t currentStreamTimeMs() const = 0;
  virtual int64_t currentSystemTimeMs() const = 0;
  virtual const std::string& applicationId() const = 0;
  virtual TaskId taskId() const = 0;
  // Throws TopologyException unless the processor was connected to the store.
  virtual KeyValueStore& store(const std::string& name) = 0;
  virtual const StoreOptions& store_options(const std::string& name) const = 0;
};

class UserProcessor {
 public:
  virtual ~UserProcessor() = default;
  virtual void init(UserContext& context) = 0;
  virtual void process(const Record& record) = 0;
  virtual void close() = 0;
};

using UserProcessorFactory = std::function<std::unique_ptr<UserProcessor>()>;

// KStream.process / processValues: a node running the user's processor, connected to `stores`
// (added before with add_state_store). fixed_key: processValues, which keeps the key.
Node user_process(const Node& in, UserProcessorFactory factory, std::vector<std::string> stores,
                  const std::string& name, bool fixed_key);

// KTable.transformValues: the untyped transformer a task makes for itself; `transform` sees the
// context of the update being processed (or, reading the table through a join, the record
// looking it up, as in Kafka).
class ValueTransformerCore {
 public:
  virtual ~ValueTransformerCore() = default;
  virtual void init(UserContext& context) = 0;
  virtual Datum transform(const Datum& key, const Datum& value) = 0;
  virtual void close() = 0;
};
using ValueTransformerFactory = std::function<std::unique_ptr<ValueTransformerCore>()>;
Node table_transform_values(const Node& table, ValueTransformerFactory factory,
                            const std::string& name, StoreOptions store);

// KStream.toTable: the stream's records as a table's updates (a null value deletes), kept in
// `store` (its name generated when empty), repartitioned first if the key changed.
Node stream_to_table(const Node& stream, const std::string& name, StoreOptions store);

// A key-value store for processors (StreamsBuilder.addStateStore, Topology.addStateStore).
void add_state_store(const std::shared_ptr<GraphBuilder>& graph, StoreOptions store);
// Topology.connectProcessorAndStateStores / addStateStore(builder, processors...).
void connect_store(const std::shared_ptr<GraphBuilder>& graph, const std::string& processor,
                   const std::string& store);

// A topology built by hand.
void add_source(const std::shared_ptr<GraphBuilder>& graph, const std::string& name,
                std::vector<std::string> topics, ErasedSerde key, ErasedSerde value);
void add_user_processor(const std::shared_ptr<GraphBuilder>& graph, const std::string& name,
                        UserProcessorFactory factory, const std::vector<std::string>& parents);
void add_sink(const std::shared_ptr<GraphBuilder>& graph, const std::string& name,
              const std::string& topic, ErasedSerde key, ErasedSerde value,
              const std::vector<std::string>& parents);
// Topology.addGlobalStore: `store` (logging disabled: the topic is its changelog) filled from
// every partition of `topic` on every instance by the processor `factory` makes.
void add_global_store(const std::shared_ptr<GraphBuilder>& graph, StoreOptions store,
                      const std::string& source_name, const std::string& topic, ErasedSerde key,
                      ErasedSerde value, const std::string& processor_name,
                      UserProcessorFactory factory);
std::shared_ptr<GraphBuilder> new_graph();

}  // namespace detail
}  // namespace oxbow::streams
