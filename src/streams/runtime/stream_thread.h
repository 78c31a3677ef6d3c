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
#include "streams/runtime/changelog_reader.h"
#include "streams/runtime/fetch_restarter.h"
#include "streams/runtime/kafka_clients.h"
#include "streams/runtime/partition_group.h"
#include "streams/runtime/standby_tasks.h"
#include "streams/runtime/streams_producer.h"
#include "streams/runtime/task.h"
#include "streams/runtime/thread_config.h"
#include "streams/runtime/thread_metrics.h"

namespace oxbow::streams::detail {

class StreamThread {
 public:
  StreamThread(std::shared_ptr<const GraphBuilder> graph, ThreadConfig config);
  ~StreamThread();

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
  // All the task's stores caught up with their changelogs: its input is processed.
  void finish_task_restoration(Task* task);
  rd_kafka_topic_partition_list_t* input_partitions(Task* task) const;
  void commit();
  void commit_tasks();
  void restart_tasks_from_last_commit(const std::string& why);
  void punctuate_wall_clock(int64_t loop_now);
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
  void checkpoint_tasks();
  void purge_repartition_topics();
  void set_offset_reset_policies();
  // Also sets the inputs' starting offsets to their committed ones.
  void resume_stream_times(rd_kafka_topic_partition_list_t* inputs);
  void publish_metrics();

  std::shared_ptr<const GraphBuilder> graph_;
  std::vector<Subtopology> subtopologies_;
  ThreadConfig config_;
  RdKafkaHandle consumer_;
  std::unique_ptr<StreamsProducer> producer_;
  std::unique_ptr<ChangelogReader> reader_;
  std::unique_ptr<FetchRestarter> fetch_restarter_;
  std::set<std::string> repartition_topics_;  // as on the wire, <application.id>-<name>
  int64_t last_purge_ms_ = 0;
  TopicHandles consumer_topics_;  // sources with their own offset reset policy
  // Input records fetched for a paused task before the pause took: where to seek back to.
  std::map<std::pair<std::string, int32_t>, int64_t> seek_on_resume_;
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
  int64_t last_commit_ms_ = 0;
  int64_t last_metrics_ms_ = 0;
  int64_t last_served_ms_ = 0;        // when the producer's callbacks were last served
  int64_t last_restore_step_ms_ = 0;  // when a slice of restoration last ended
  uint64_t processed_ = 0;
  size_t grouped_tasks_ = 0;  // tasks with a partition group
  int64_t last_wall_punctuation_ms_ = 0;
  bool commit_requested_ = false;  // a processor asked (ProcessorContext.commit())
  std::shared_ptr<ThreadMetrics> metrics_ = std::make_shared<ThreadMetrics>();
};

}  // namespace oxbow::streams::detail
