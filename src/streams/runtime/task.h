#pragma once
// A task: one sub-topology instantiated for one partition of its inputs, with its own processors
// and stores. It takes records as read (bytes), deserializes them, runs them through its nodes and
// hands what the sinks and changelogs write to a RecordCollector. The test driver and the stream
// threads both run tasks; this is where their results agree.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "streams/processor/processor.h"
#include "streams/state/global_stores.h"
#include "streams/state/rocksdb_store.h"
#include "streams/state/state_directory.h"
#include "streams/state/stores.h"
#include "streams/topology/graph_builder.h"

namespace oxbow::streams::detail {

enum class DeserializationPolicy { kLogAndFail, kLogAndContinue };

struct TaskConfig {
  std::string application_id;
  int subtopology = 0;
  int32_t partition = 0;
  std::string topology;  // the named topology the task is of; empty: the application's only one
  // Persistent stores live under <state_root>/<task id>/ and share `rocksdb_memory`; without it
  // every store is kept in memory (the test driver).
  std::string state_root;
  std::shared_ptr<RocksDbMemory> rocksdb_memory;
  bool exactly_once = false;  // persistent stores buffer writes until their commit
  StoreType default_store = StoreType::kRocksDb;
  int64_t cache_max_bytes = 10 * 1024 * 1024;  // per instance; 0 turns caching off
  // Shared by the tasks of one stream thread (or of the test driver); a task without one gets
  // its own of `cache_max_bytes`.
  std::shared_ptr<CacheBudget> cache_budget;
  DeserializationPolicy on_deserialization_error = DeserializationPolicy::kLogAndFail;
  // Asked about what a processor or punctuator throws (processing.exception.handler); none:
  // LogAndFailProcessingExceptionHandler.
  ProcessingExceptionHandler on_processing_error;
  // Wall-clock time for punctuation, in ms since the epoch; unset: the system's.
  std::function<int64_t()> clock;
  // The instance's global tables' stores, which every task may read.
  std::shared_ptr<GlobalStores> globals;
};

// Counters a task keeps for its metrics.
struct TaskCounters {
  int64_t processed = 0;
  // records nodes could not use (null keys, ...) or dropped by the processing-exception handler
  int64_t dropped = 0;
  int64_t skipped_undecodable = 0;  // by the deserialization-exception handler
  int64_t skipped_timestamp = 0;    // negative or invalid timestamps
  int64_t restored = 0;             // changelog records restored into the stores
  // Processing time of the records the thread timed (one in sixteen), and how many it timed.
  double latency_sampled_seconds = 0;
  int64_t latency_samples = 0;
  double latency_max_seconds = 0;
};

struct StoreSnapshot {
  std::string name;
  bool persistent = false;
  int64_t entries = 0;
  int64_t memtable_bytes = 0;
  int64_t disk_bytes = 0;
};

// A record as fetched. Topic, key and value are views of bytes the caller keeps alive while the
// task processes the record (the consumer's message, the test driver's copy): no copy per record.
struct RawRecord {
  std::string_view topic;
  int32_t partition = 0;
  int64_t offset = -1;
  int64_t timestamp = 0;
  std::optional<std::string_view> key, value;
  Headers headers;
};

class Task : private ProcessorContext {
 public:
  Task(std::shared_ptr<const GraphBuilder> graph, const Subtopology& sub, TaskConfig config,
       RecordCollector& collector);
  ~Task() override;

  // The topics this task reads, as named on the wire (internal ones with the application id).
  const std::vector<std::string>& input_topics() const { return input_topics_; }
  bool reads(std::string_view topic) const { return sources_.count(topic) > 0; }
  // Throws StreamsException when the record fails and the handler says fail.
  void process(const RawRecord& record);
  void set_processing_exception_handler(ProcessingExceptionHandler handler) {
    config_.on_processing_error = std::move(handler);
  }
  // Commit: every cache flushed (forwarding downstream), in node order.
  void flush();

  // Punctuation. The stream-time punctuators due at the task's stream time, or the wall-clock
  // ones due at `now`, are run (each once, however many intervals passed, as Kafka).
  bool has_punctuators() const { return !punctuations_.empty(); }
  int64_t wall_clock_ms() const override;
  bool punctuation_due(bool wall_clock, int64_t now) const;
  void punctuate(bool wall_clock, int64_t now);
  // Whether a processor asked for a commit since the last call.
  bool take_commit_request() { return std::exchange(commit_requested_, false); }
  KeyValueStore* find_store(const std::string& name);
  // The task's own store (its top layer), not a global one; null when it has none of that name.
  KeyValueStore* own_store(const std::string& name) const {
    auto it = stores_.find(name);
    return it == stores_.end() ? nullptr : it->second.get();
  }
  const TaskCounters& counters() const { return counters_; }
  void record_latency(double seconds) {
    counters_.latency_sampled_seconds += seconds;
    ++counters_.latency_samples;
    if (seconds > counters_.latency_max_seconds) counters_.latency_max_seconds = seconds;
  }
  int32_t task_partition_id() const { return config_.partition; }
  int64_t stream_time() const override { return stream_time_; }
  int64_t previous_stream_time() const override { return previous_stream_time_; }
  // The stream time a previous owner committed (runtime/partition_time.h).
  void resume_stream_time(int64_t time) { stream_time_ = std::max(stream_time_, time); }
  std::string changelog_topic(const std::string& store) const;
  // Each store that restores from a topic, with that topic (its changelog, or a table's source).
  std::vector<std::pair<std::string, std::string>> changelogs() const;
  // "<sub-topology>_<partition>", as Kafka's task ids.
  std::string id() const;

  // Restoration. The offset to restore `store` from: what its local data reflects, or nullopt
  // for the beginning (an in-memory store, a new or wiped one).
  std::optional<int64_t> restore_from(const std::string& store) const;
  // Local data that does not match the changelog (offset out of its range) is dropped.
  void wipe(const std::string& store);
  // Writes a restored record into the store's bottom layer: no changelog, no cache, no forwarding.
  // `timestamp`, the changelog record's, is kept with the value in a timestamped store.
  void restore(const std::string& store, std::string_view key,
               std::optional<std::string_view> value, int64_t timestamp);
  // The changelog was read up to `next_offset`: the restored data is made durable with it.
  void finish_restore(const std::string& store, int64_t next_offset);

  // After a commit succeeded: persistent stores made durable with the offsets their changelogs
  // (or, for source tables, the inputs: `next_input_offsets`) reached, and .checkpoint written.
  void checkpoint(const std::map<std::string, int64_t>& next_input_offsets);
  // Exactly-once, after an aborted transaction: uncommitted writes dropped.
  void discard_uncommitted();
  // Each store's size, memory and disk, for metrics.
  std::vector<StoreSnapshot> store_snapshots() const;

 private:
  struct NodeRuntime {
    const NodeSpec* spec = nullptr;
    std::unique_ptr<Processor> processor;
    std::vector<size_t> children;
  };

  void forward(const Record& record) override;
  void forward(const Record& record, const std::string& child) override;
  void forward_change(const ChangeRecord& change) override;
  KeyValueStore& store(const std::string& name) override;
  const RecordContext& record_context() const override { return record_context_; }
  const std::string& application_id() const override { return config_.application_id; }
  int32_t task_partition() const override { return config_.partition; }
  RecordCollector& collector() override { return collector_; }
  void record_dropped(const char* reason) override;
  bool set_flush_listener(const std::string& store, FlushListener listener) override;
  std::shared_ptr<bool> schedule(int64_t interval_ms, bool wall_clock,
                                 Punctuator punctuator) override;
  void request_commit() override { commit_requested_ = true; }
  int task_subtopology() const override { return config_.subtopology; }
  const std::string& task_topology() const override { return config_.topology; }

  struct Punctuation {
    size_t node;
    int64_t interval;
    int64_t next;
    bool wall_clock;
    Punctuator run;
    std::shared_ptr<bool> cancelled;
  };

  // What each source node deserializes into, reused from record to record: the records it
  // forwards borrow them (Datum::lend).
  struct SourceBuffers {
    Datum key, value;
    Change change;  // a source of table changes
  };

  void run(size_t node, const Record& record);
  void run_change(size_t node, const ChangeRecord& change);
  // In a catch block: what node `node` threw while processing `record` (null: punctuating) goes
  // to the processing-exception handler, and is rethrown as ProcessingFailed unless it answers
  // CONTINUE. A TaskFatalError (a collector's failure, a deliberate stop), or a failure already
  // decided downstream, is rethrown as is.
  void on_processing_exception(size_t node, const Record* record);
  void decide(size_t node, const Record* record, const std::exception& error);
  void create_stores(const Subtopology& sub);
  std::unique_ptr<KeyValueStore> make_bottom_store(const StoreSpec& spec);
  void lock_directory();
  bool decode(const NodeSpec& source, const RawRecord& raw, SourceBuffers& into);

  std::shared_ptr<const GraphBuilder> graph_;
  TaskConfig config_;
  RecordCollector& collector_;
  std::vector<NodeRuntime> nodes_;
  std::map<std::string, size_t, std::less<>> sources_;  // wire topic -> node
  std::vector<SourceBuffers> source_buffers_;           // by node
  std::vector<std::string> input_topics_;
  std::unique_ptr<TaskDirectory> directory_;  // outlives the stores in it
  std::map<std::string, std::unique_ptr<KeyValueStore>> stores_;
  std::map<std::string, RocksDbStore*> persistent_;
  std::map<std::string, int64_t*> delivered_;     // store -> its changelog's delivery slot
  std::map<std::string, KeyValueStore*> bottom_;  // the store under its layers
  std::map<std::string, size_t> cache_owner_;     // cached store -> node that forwards its flushes
  std::vector<std::string> flush_order_;
  WindowExpiry expiry_;  // the window and session stores' segments
  size_t current_ = 0;
  RecordContext record_context_;
  int64_t stream_time_ = -1;
  int64_t previous_stream_time_ = -1;
  TaskCounters counters_;
  std::string restore_buffer_;  // a restored value with its timestamp
  std::vector<Punctuation> punctuations_;
  bool commit_requested_ = false;
};

}  // namespace oxbow::streams::detail
