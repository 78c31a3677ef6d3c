#pragma once
// The untyped processor interface every DSL node is built on, and the context a task gives it.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "oxbow/streams/errors.h"
#include "oxbow/streams/record.h"
#include "streams/state/key_value_store.h"

namespace oxbow::streams::detail {

// A table's update as table nodes pass it to each other (Kafka's Record<K, Change<V>>): the change
// is a member, not a value boxed in a Datum, and it reaches Processor::process_change only, so a
// table's update is never taken for a stream record nor a stream record for an update.
struct ChangeRecord {
  Datum key;
  Change change;
  int64_t timestamp = 0;
  Headers headers;
};

// How the bytes of a table change read (a re-grouped table's repartition topic), into `out`'s
// values, which it may reuse.
using ChangeReader =
    std::function<void(std::string_view topic, std::string_view bytes, Change& out)>;

// What stops a task whatever the processing-exception handler would answer: the handler is asked
// about user code failing on a record, not about a deliberate stop (a suppression buffer full
// with shutDownWhenFull) or the thread's own failures below.
struct TaskFatalError : StreamsException {
  using StreamsException::StreamsException;
};

// A collector that could not write (the production-exception handler said fail, a transaction
// could only be aborted): the thread's business.
struct CollectorError : TaskFatalError {
  using TaskFatalError::TaskFatalError;
};

// Where a task sends what its sinks and changelogging stores write: the producer, or the test
// driver's topics. Keys and values are bytes; nullopt is null.
class RecordCollector {
 public:
  virtual ~RecordCollector() = default;
  // partition < 0: the default partitioner (murmur2 of the key bytes, as Kafka's producer).
  // `delivered`: a slot from delivery_slot(), raised to the record's offset once it is written.
  virtual void send(const std::string& topic, const std::optional<std::string>& key,
                    const std::optional<std::string>& value, int64_t timestamp,
                    const Headers& headers, int32_t partition, int64_t* delivered = nullptr) = 0;
  // Where the highest written offset of a partition is kept (-1 before any), for changelog
  // checkpoints; nullptr when the collector does not know offsets (the test driver).
  virtual int64_t* delivery_slot(const std::string& topic, int32_t partition) {
    (void)topic;
    (void)partition;
    return nullptr;
  }
  // The topic's partition count, for stream partitioners; 1 when unknown.
  virtual int32_t partitions_of(const std::string& topic) = 0;
};

class ProcessorContext {
 public:
  virtual ~ProcessorContext() = default;
  // To every child of the node being run.
  virtual void forward(const Record& record) = 0;
  // To the child named `child` only.
  virtual void forward(const Record& record, const std::string& child) = 0;
  // A table node's update, to every child (each a node that takes table changes).
  virtual void forward_change(const ChangeRecord& change) = 0;
  virtual KeyValueStore& store(const std::string& name) = 0;
  virtual const RecordContext& record_context() const = 0;
  virtual const std::string& application_id() const = 0;
  virtual int32_t task_partition() const = 0;
  virtual int64_t stream_time() const = 0;
  // The stream time before the record being processed advanced it.
  virtual int64_t previous_stream_time() const = 0;
  virtual RecordCollector& collector() = 0;
  // A record the node could not use (null key, ...): counted and logged at debug.
  virtual void record_dropped(const char* reason) = 0;
  // Has `listener` called, as the node now running, for each entry the store's cache flushes.
  // False when the store has no cache: the node then forwards its updates itself.
  virtual bool set_flush_listener(const std::string& store, FlushListener listener) = 0;

  // Punctuation (Kafka's ProcessorContext.schedule): `punctuator` runs as the node now running,
  // with the time it runs at, every `interval_ms` of stream time (aligned to 0, run once the
  // task's stream time reaches each multiple) or of wall-clock time (from now). Setting the
  // returned flag cancels it.
  using Punctuator = std::function<void(int64_t time)>;
  virtual std::shared_ptr<bool> schedule(int64_t interval_ms, bool wall_clock,
                                         Punctuator punctuator) = 0;
  // Asks for a commit as soon as the record being processed is done.
  virtual void request_commit() = 0;
  // Milliseconds since the epoch, as the task's clock says (the test driver's is its own).
  virtual int64_t wall_clock_ms() const = 0;
  // The sub-topology this task runs.
  virtual int task_subtopology() const = 0;
  // The named topology it is of; empty for an application's single topology.
  virtual const std::string& task_topology() const = 0;
};

// A node of a stream: takes records. A node after a table takes its changes instead
// (TableProcessor); the topology wires each node to parents that forward what it takes
// (topology/graph_builder.h, Flow), and a task checks each processor against its node.
class Processor {
 public:
  virtual ~Processor() = default;
  virtual void init(ProcessorContext& context) { context_ = &context; }
  virtual void process(const Record& record) = 0;
  virtual void process_change(const ChangeRecord& change);  // throws std::logic_error
  virtual bool takes_changes() const { return false; }
  virtual void close() {}

 protected:
  ProcessorContext& context() { return *context_; }

 private:
  ProcessorContext* context_ = nullptr;
};

// A node after a table (Kafka's KTableProcessorSupplier's processors): takes its changes.
class TableProcessor : public Processor {
 public:
  void process(const Record& record) final;  // throws std::logic_error
  void process_change(const ChangeRecord& change) override = 0;
  bool takes_changes() const final { return true; }
};

// Never reached through a topology that was built: its nodes' edges and processors agree.
inline void Processor::process_change(const ChangeRecord&) {
  throw std::logic_error("a table's change was given to a node that takes stream records");
}
inline void TableProcessor::process(const Record&) {
  throw std::logic_error("a stream record was given to a node that takes a table's changes");
}

using ProcessorFactory = std::function<std::unique_ptr<Processor>()>;

}  // namespace oxbow::streams::detail
