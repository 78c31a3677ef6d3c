#pragma once
// A stream thread: one consumer in the application's group, one producer, and the tasks of the
// partitions the group gave it. It polls, processes, and every commit.interval.ms commits: caches
// flushed, the producer's writes acknowledged, then the input offsets committed (at least once),
// or all of them in one transaction with the group's metadata, which fences zombies (exactly once).
//
// Tasks are assigned through the group by Oxbow's own member and assignor (streams/assignment/,
// in Kafka Streams' protocol): the thread assigns its consumer the source partitions of its
// tasks. Rebalances are cooperative: tasks a thread keeps process on through them. See
// src/streams/README.md.
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/shared_mutex.h"
#include "oxbow/streams/errors.h"
#include "streams/assignment/group_member.h"
#include "streams/assignment/streams_assignor.h"
#include "streams/assignment/task_assignor.h"
#include "streams/runtime/fetch_restarter.h"
#include "streams/runtime/kafka_clients.h"
#include "streams/runtime/partition_group.h"
#include "streams/runtime/standby_tasks.h"
#include "streams/runtime/task.h"
#include "streams/runtime/thread_metrics.h"

namespace oxbow::streams::detail {

// A message's key or payload as bytes (nullopt: null), and seconds elapsed, for the thread's
// files (stream_thread.cpp, restoration.cpp, ...).
inline std::optional<std::string> bytes_of(const void* data, size_t size) {
  if (!data) return std::nullopt;
  return std::string(static_cast<const char*>(data), size);
}
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// What the threads of one instance share in the group.
struct GroupSettings {
  std::string process_id;  // the instance's, 32 hex digits
  std::string endpoint;    // application.server, empty when unset
  AssignorConfig assignor;
  int64_t probing_rebalance_interval_ms = 600000;
  // Called by a thread with each assignment it received (the group's hosts for queries).
  std::function<void(const AssignmentInfo& info, int thread_index)> on_hosts;
};

struct ThreadConfig {
  Config app;
  GroupSettings group;
  TaskConfig task;
  int64_t commit_interval_ms = 30000;
  // How often what was committed is deleted from the repartition topics the thread reads.
  int64_t repartition_purge_interval_ms = 30000;
  std::string client_id;
  int thread_index = 1;  // 1-based, for group.instance.id "<id>-<index>"
  // exactly_once_v2: one transactional producer; output, changelog writes and input offsets
  // committed in one transaction per commit, input read read_committed.
  bool exactly_once = false;
  std::string transactional_id;
  // Asked about an output or repartition record the producer could not write; none: the thread
  // fails. At least once only: changelog writes and transactions always fail.
  ProductionExceptionHandler production_handler;
};

class StreamThread : public RecordCollector {
 public:
  StreamThread(std::shared_ptr<const GraphBuilder> graph, ThreadConfig config);
  ~StreamThread() override;

  void start();
  void request_stop() { stop_ = true; }
  void join();
  bool running() const { return running_; }
  // Set when the thread ended on an error; its text.
  bool failed() const { return failed_; }
  const std::string& failure() const { return failure_; }
  // True from an assignment's start until its tasks are restored.
  bool rebalancing() const { return rebalancing_; }
  const std::string& name() const { return config_.client_id; }
  CacheBudget& cache_budget() { return *config_.task.cache_budget; }
  std::shared_ptr<ThreadMetrics> metrics() const { return metrics_; }
  // Interactive queries, from other threads: calls `read` with the store `name` of each active
  // task of this thread that has it (only the task of `partition`, when set), under the task's
  // lock taken shared, until `read` returns false (then `stop` is set). Tasks still restoring
  // are skipped and counted in `restoring`. Returns how many stores it read.
  // With `stale` (enableStaleStores), standby tasks' stores are read too.
  int read_store(const std::string& name, std::optional<int32_t> partition, bool stale,
                 const std::function<bool(KeyValueStore&)>& read, int& restoring, bool& stop) const;

 private:
  struct ActiveTask {
    std::unique_ptr<Task> task;
    std::map<std::string, int64_t> next_offsets;  // input topic -> next offset to commit
    // Tasks with several input partitions: their records in timestamp order.
    std::unique_ptr<PartitionGroup> group;
    std::map<std::string, int64_t> start_offsets;  // where an input began, once asked
    std::map<std::string, int64_t> fetched_next;   // grouped inputs: after the last buffered
    std::set<std::string> full;                    // grouped inputs paused while full
    std::map<std::string, int64_t> queried_ends;   // grouped inputs' ends, asked before a fetch
    // Interactive queries: the thread holds it exclusively while it changes the task's stores
    // (processing a record or a partition group's run of records, punctuating, flushing,
    // checkpointing), a query shared while it reads them.
    mutable WriterPreferringSharedMutex lock;
    bool queryable = false;  // under `lock`: restored, so its stores may be read
  };

  void run();
  void loop();
  // Both take the anchor partitions the group gave or took and answer every input partition of
  // the tasks concerned, which the rebalance then adds to or removes from the consumer.
  rd_kafka_topic_partition_list_t* on_assigned(const rd_kafka_topic_partition_list_t* anchors);
  rd_kafka_topic_partition_list_t* on_revoked(const rd_kafka_topic_partition_list_t* anchors,
                                              bool lost);
  void close_task(std::pair<int, int32_t> id);
  // The restore consumer's assignment: every changelog partition still restoring, from where it
  // stands.
  void assign_restorer();
  // Restoration runs beside processing: a task's input stays paused until its stores caught up
  // with their changelogs, which the loop reads a slice at a time while ready tasks process.
  void start_restoration(const std::vector<Task*>& tasks);
  void restore_step();
  bool open_transaction_ahead(const std::pair<std::string, int32_t>& partition, int64_t end);
  void finish_task_restoration(Task* task);
  rd_kafka_topic_partition_list_t* input_partitions(Task* task) const;
  void commit();
  void commit_tasks();
  // The group moved on while a transaction was open (it is aborted): every task is made again
  // from its last commit, its stores restored and its inputs read again from the committed
  // offsets, as Kafka handles a TaskMigratedException.
  struct TasksMigrated : StreamsException {
    using StreamsException::StreamsException;
  };
  void restart_tasks_from_last_commit(const std::string& why);
  void punctuate_wall_clock(int64_t loop_now);
  void begin_transaction_if_needed();
  void throw_on_error(rd_kafka_error_t* error, const char* step);
  // A fetched record: processed now, or buffered in its task's partition group.
  void dispatch(PartitionGroup::Message message);
  // The task the record's partition belongs to (route_ set for it), or null.
  ActiveTask* route(const rd_kafka_message_t* message);
  void process(const rd_kafka_message_t* message);
  // Processes what a task's partition group can release.
  void drain(ActiveTask& task);
  void resume_drained(ActiveTask& task);
  // Whether an input partition of a task with nothing buffered has been read to its end.
  bool caught_up(ActiveTask& task, const std::string& topic);
  // A partition this thread paused (its task's buffer is full).
  bool paused_by_us(const char* topic, int32_t partition) const;
  // Group membership (membership.cpp).
  void start_membership();
  std::string subscription_bytes();
  std::map<std::string, std::string> assign_members(
      const std::map<std::string, std::string>& subscriptions);
  void publish_group_snapshot();
  std::map<TaskId, int64_t> local_state_offset_sums() const;
  void poll_group();
  void apply_assignment(const ReceivedAssignment& received);
  void commit_offsets(const rd_kafka_topic_partition_list_t* offsets);
  rd_kafka_consumer_group_metadata_t* group_metadata() const;
  static void delivered(rd_kafka_t*, const rd_kafka_message_t* message, void* opaque);

  void send(const std::string& topic, const std::optional<std::string>& key,
            const std::optional<std::string>& value, int64_t timestamp, const Headers& headers,
            int32_t partition, int64_t* delivered) override;
  int64_t* delivery_slot(const std::string& topic, int32_t partition) override;
  void checkpoint_tasks();
  void purge_repartition_topics();
  void set_offset_reset_policies();
  // Also sets the inputs' starting offsets to their committed ones.
  void resume_stream_times(rd_kafka_topic_partition_list_t* inputs);
  int64_t committed_offset(const std::string& topic, int32_t partition);
  // The changelog partition was read up to next_offset: its store is restored.
  void finish_store_restoration(const std::pair<std::string, int32_t>& partition,
                                int64_t next_offset);
  void serve_purge_results();
  // A write that failed: skipped when the handler says continue, else the thread fails.
  // `refused`: the producer refused it before sending (too large, ...), so no transaction holds
  // it and the handler may let it go under exactly-once too.
  void write_failed(const ProductionError& failure, bool changelog, bool refused);
  bool production_handler_continues(const ProductionError& failure);
  void publish_metrics();
  int32_t partitions_of(const std::string& topic) override;

  std::shared_ptr<const GraphBuilder> graph_;
  std::vector<Subtopology> subtopologies_;
  ThreadConfig config_;
  // Highest delivered offset per changelog partition; declared before the producer, whose
  // delivery callbacks write here until it is gone.
  std::map<std::pair<std::string, int32_t>, int64_t> delivered_offsets_;
  RdKafkaHandle consumer_, producer_, restorer_;
  std::unique_ptr<FetchRestarter> fetch_restarter_, restore_restarter_;
  // Answers to the DeleteRecords requests that purge repartition topics; destroyed before
  // producer_, which sends them.
  struct QueueDeleter {
    void operator()(rd_kafka_queue_t* q) const { rd_kafka_queue_destroy(q); }
  };
  std::unique_ptr<rd_kafka_queue_t, QueueDeleter> purge_results_;
  std::set<std::string> repartition_topics_;  // as on the wire, <application.id>-<name>
  int64_t last_purge_ms_ = 0;
  TopicHandles producer_topics_;  // after producer_: destroyed before it
  TopicHandles consumer_topics_;  // sources with their own offset reset policy
  struct RestoreTarget {
    Task* task;
    std::string store;
    int64_t position;  // next changelog offset to read; RD_KAFKA_OFFSET_BEGINNING at first
    int64_t end = -1;  // where restoration stops; -1: the end of the log
  };
  std::map<std::pair<std::string, int32_t>, RestoreTarget> restoring_;  // changelog partition
  std::map<Task*, int> pending_stores_;                                 // tasks still restoring
  // Input records fetched for a paused task before the pause took: where to seek back to.
  std::map<std::pair<std::string, int32_t>, int64_t> seek_on_resume_;
  std::set<std::pair<std::string, int32_t>> waiting_on_transaction_;  // logged once each
  std::chrono::steady_clock::time_point restore_started_;
  int64_t restored_ = 0, to_restore_ = 0;
  size_t restore_stores_ = 0;
  std::map<std::pair<int, int32_t>, ActiveTask> tasks_;  // (sub-topology, partition)
  // Held exclusively while the thread adds or removes a task (and destroys it), shared by
  // queries while they read a task's stores; the thread itself reads tasks_ without it.
  mutable WriterPreferringSharedMutex tasks_mutex_;
  // A task's input is processed only once it is restored; then it is also queryable.
  void set_queryable(Task* task);
  std::map<std::pair<std::string, int32_t>, ActiveTask*> by_input_;
  // The partition of the last record processed and where its records go; cleared whenever
  // by_input_ changes.
  struct Route {
    const rd_kafka_topic_t* rkt = nullptr;
    int32_t partition = -1;
    ActiveTask* task = nullptr;
    std::string topic;
    int64_t* next_offset = nullptr;  // in task->next_offsets, once a record was processed
  } route_;
  std::map<std::string, int32_t> partition_counts_;
  std::map<std::string, int> subtopology_of_;  // every source topic (resolved) -> sub-topology
  std::map<int, std::string> anchor_of_;       // sub-topology -> the topic the group assigns
  std::unique_ptr<GroupMember> member_;
  std::unique_ptr<StandbyTasks> standbys_;
  std::vector<SubtopologyTopics> group_topics_;  // what the leader assigns from
  std::vector<std::string> subscribed_topics_;
  Generation generation_;  // of the assignment the tasks came with
  int64_t next_rebalance_ms_ = AssignmentInfo::kNoRebalance;  // a probing rebalance, epoch ms
  int64_t last_group_poll_ms_ = 0;
  // What the next subscription says (read on the member's thread).
  std::mutex group_mutex_;
  PartitionList owned_partitions_;
  std::map<TaskId, int64_t> offset_sums_;
  std::atomic<int> subscriptions_sent_{0};
  std::thread thread_;
  std::atomic<bool> stop_{false}, running_{false}, failed_{false};
  std::atomic<bool> rebalancing_{true};  // until the first assignment
  std::string failure_;
  std::string send_error_;
  int64_t last_commit_ms_ = 0;
  int64_t last_metrics_ms_ = 0;
  int64_t last_served_ms_ = 0;                   // when the producer's callbacks were last served
  static constexpr int64_t kRestoreTurnMs = 50;  // see loop()
  int64_t last_restore_step_ms_ = 0;             // when a slice of restoration last ended
  uint64_t processed_ = 0;
  size_t grouped_tasks_ = 0;  // tasks with a partition group
  int64_t last_wall_punctuation_ms_ = 0;
  bool commit_requested_ = false;  // a processor asked (ProcessorContext.commit())
  std::shared_ptr<ThreadMetrics> metrics_ = std::make_shared<ThreadMetrics>();
  bool in_transaction_ = false;
};

}  // namespace oxbow::streams::detail
