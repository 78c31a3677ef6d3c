#pragma once
// A stream thread's tasks, as Kafka Streams' TaskManager keeps them: the active tasks an
// assignment creates and a revocation commits and closes, each with its input partitions on the
// thread's consumer (paused while its stores restore, ChangelogReader); the standby tasks
// (StandbyTasks); records handed to the task of their partition, at once or through its
// partition group (active_task.h); wall-clock punctuation; and the commit: caches flushed, the
// producer's writes acknowledged, then the input offsets committed (at least once) or all of it
// in one transaction with the group's metadata (exactly once), then checkpoints and the purge of
// what was committed from repartition topics. Named topologies keep their own positions
// (topology_positions.h), and a source partition that several of them read feeds each one's task,
// from its own position. Queries read the tasks' stores from other threads.
#include <librdkafka/rdkafka.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "common/shared_mutex.h"
#include "streams/assignment/protocol_data.h"
#include "streams/runtime/active_task.h"
#include "streams/runtime/changelog_reader.h"
#include "streams/runtime/standby_tasks.h"
#include "streams/runtime/streams_producer.h"
#include "streams/runtime/thread_config.h"
#include "streams/runtime/thread_metrics.h"
#include "streams/runtime/topologies.h"

namespace oxbow::streams::detail {

// The group as the task manager uses it, which the thread's membership provides (Kafka's
// TaskManager reaches the same through the main consumer).
class GroupClient {
 public:
  // At least once: the input offsets, with the generation the member is in.
  virtual void commit_offsets(const rd_kafka_topic_partition_list_t* offsets) = 0;
  // Exactly once: what fences a zombie's transaction (the caller takes it).
  virtual rd_kafka_consumer_group_metadata_t* group_metadata() const = 0;
  // What the next subscription reports: the input partitions owned and each task's offset sum.
  virtual void publish_owned(PartitionList owned, std::map<TaskId, int64_t> offset_sums) = 0;

 protected:
  ~GroupClient() = default;
};

class TaskManager {
 public:
  using TaskKey = TaskId;

  TaskManager(std::shared_ptr<const Topologies> topologies, const ThreadConfig& config,
              rd_kafka_t* consumer, StreamsProducer& producer, ChangelogReader& reader,
              GroupClient& group, ThreadMetrics& metrics);
  ~TaskManager();
  TaskManager(const TaskManager&) = delete;
  TaskManager& operator=(const TaskManager&) = delete;

  // Rebalances. Keeps exactly these tasks, active and standby: tasks given up are committed
  // and closed, new ones created (restoring first); their input partitions leave or join the
  // consumer. Whether tasks were given up (then the member rejoins, so that the next round can
  // place them).
  bool handle_assignment(const std::set<TaskKey>& active, const std::set<TaskKey>& standby);
  // Runs these topologies from now on (named topologies added or removed while running): the
  // tasks and standbys of a removed one are committed and closed (their state stays on disk);
  // returns them. The caller rejoins the group, whose next assignment brings an added one's tasks.
  std::vector<TaskKey> set_topologies(std::shared_ptr<const Topologies> next);
  // The group moved on without this member: every task dropped without a commit (an open
  // transaction is aborted), to be processed again from the last commit wherever it lands.
  void handle_lost_all();
  // Standby tasks apply what their changelogs have. True when warm-ups have caught up while a
  // probing rebalance is planned: then the rebalance that hands their tasks over is due now.
  bool update_standbys(bool rebalance_planned, int64_t acceptable_lag);
  // True from an assignment's start until its tasks are restored.
  bool rebalancing() const { return rebalancing_; }
  // The changelog reader restored its last store.
  void all_restored() { rebalancing_ = false; }
  // Called by the changelog reader: all the task's stores caught up, so its input is processed.
  void on_restored(Task* task);

  // Processing. A fetched record: processed now, or buffered in its task's partition group.
  void add_record(PartitionGroup::Message message);
  // Processes what the partition groups can release; whether records remain buffered.
  bool process_buffered();
  // A partition this thread paused (its task's buffer is full).
  bool paused_by_us(const char* topic, int32_t partition) const;
  // Wall-clock punctuators due now, by each task's clock.
  void punctuate();

  // Commits every commit.interval.ms, and sooner when a processor asked (ProcessorContext's
  // commit()).
  bool commit_needed(int64_t now) const {
    return commit_requested_ || now - last_commit_ms_ >= config_.commit_interval_ms;
  }
  void commit();

  // Per-task figures into the thread's metrics.
  void publish_metrics();
  // Interactive queries, from other threads: calls `read` with the store `name` of each active
  // task that has it (only the task of `partition`, when set), under the task's lock taken
  // shared, until `read` returns false (then `stop` is set). Tasks still restoring are skipped
  // and counted in `restoring`. With `stale`, standby tasks' stores are read too. Returns how
  // many stores it read.
  // Only `topology`'s tasks (store names are unique per topology).
  int read_store(const std::string& topology, const std::string& name,
                 std::optional<int32_t> partition, bool stale,
                 const std::function<bool(KeyValueStore&)>& read, int& restoring, bool& stop) const;

  // On the way out, standbys (made durable) first, then the active tasks, once the consumers
  // are closed.
  void close_standbys() { standbys_->assign({}); }
  void close_active();

  // Under exactly-once, after the open transaction was aborted: every task is made again from
  // its last commit (stores restored, inputs read again from the committed offsets).
  void restart_tasks_from_last_commit(const std::string& why);

 private:
  using Partitions = std::unique_ptr<rd_kafka_topic_partition_list_t,
                                     decltype(&rd_kafka_topic_partition_list_destroy)>;
  // Both take tasks the group gave or took and answer the input partitions the consumer gains
  // (each with its starting offset) or loses: a partition another task still reads stays.
  rd_kafka_topic_partition_list_t* on_assigned(const std::vector<TaskKey>& ids);
  rd_kafka_topic_partition_list_t* on_revoked(const std::set<TaskKey>& ids, bool lost);
  // subtopologies_, latest_start_ and repartition_topics_ from topologies_.
  void index_topologies();
  bool runs(const TaskKey& id) const;
  // Null when the graph has no such sub-topology.
  std::unique_ptr<Task> make_task(TaskKey key);
  void close_task(TaskKey id);
  // Also sets the inputs' starting offsets to their committed ones (the instance's group's).
  void resume_stream_times(rd_kafka_topic_partition_list_t* inputs);
  // Named topologies' new tasks: each from its own group's position (else where its reset policy
  // says), with its stream time. A partition the consumer gains starts at its readers' lowest;
  // one it holds already is sought back when a new reader starts before where it is.
  void resume_named_tasks(const std::vector<std::pair<TaskKey, ActiveTask*>>& created,
                          rd_kafka_topic_partition_list_t* inputs);
  const NamedGraph& topology_named(const std::string& name) const;
  // The offsets where reset policies start partitions (earliest or latest), asked all at once.
  class ResetStarts {
   public:
    void want(bool latest, const std::string& topic, int32_t partition);
    void ask(rd_kafka_t* client);  // throws StreamsException
    int64_t of(bool latest, const std::string& topic, int32_t partition) const;

   private:
    Partitions earliest_{rd_kafka_topic_partition_list_new(0),
                         &rd_kafka_topic_partition_list_destroy};
    Partitions latest_{rd_kafka_topic_partition_list_new(0),
                       &rd_kafka_topic_partition_list_destroy};
  };
  void pause_restoring_tasks();
  rd_kafka_topic_partition_list_t* input_partitions(Task* task) const;
  void set_queryable(Task* task);
  void publish_group_snapshot();

  // The task the record's partition belongs to (route_ set for it), or null.
  ActiveTask* route(const rd_kafka_message_t* message);
  void process(const rd_kafka_message_t* message);
  void process_in(ActiveTask& active, const rd_kafka_message_t* message, int64_t* next_offset);
  // A record of a partition several tasks read, to each whose position it is at or past.
  void add_shared_record(const rd_kafka_message_t* message);
  void skip_redelivered(const rd_kafka_message_t* message, int64_t expected);
  // Processes what a task's partition group can release.
  void drain(ActiveTask& task);

  void commit_tasks();
  // Named topologies' positions by group, what moved since their last commit.
  std::map<std::string, rd_kafka_topic_partition_list_t*> own_group_offsets();
  void checkpoint_tasks();
  void purge_repartition_topics();

  std::shared_ptr<const Topologies> topologies_;
  struct TopologySub {
    const NamedGraph* topology;
    Subtopology sub;
  };
  std::vector<TopologySub> subtopologies_;
  const ThreadConfig& config_;
  rd_kafka_t* consumer_;
  StreamsProducer& producer_;
  ChangelogReader& reader_;
  GroupClient& group_;
  ThreadMetrics& metrics_;
  // (topology, source topic) whose reset policy is latest.
  std::set<std::pair<std::string, std::string>> latest_start_;
  std::set<std::string> repartition_topics_;  // as on the wire, <prefix>-<name>
  // A named topology's positions last committed to its group: (group, topic, partition) -> offset.
  std::map<std::tuple<std::string, std::string, int32_t>, int64_t> own_committed_;
  std::map<TaskKey, ActiveTask> tasks_;
  // Held exclusively while the thread adds or removes a task (and destroys it), shared by
  // queries while they read a task's stores; the thread itself reads tasks_ without it.
  mutable WriterPreferringSharedMutex tasks_mutex_;
  std::unique_ptr<StandbyTasks> standbys_;
  // An input partition -> the tasks reading it (several where named topologies share a topic).
  std::map<std::pair<std::string, int32_t>, std::vector<ActiveTask*>> by_input_;
  // The partition of the last record processed and where its records go; cleared whenever
  // by_input_ changes.
  struct Route {
    const rd_kafka_topic_t* rkt = nullptr;
    int32_t partition = -1;
    ActiveTask* task = nullptr;
    const std::vector<ActiveTask*>* readers = nullptr;  // when several tasks read the partition
    std::string topic;
    int64_t* next_offset = nullptr;   // in task->next_offsets, once a record was processed
    int64_t* fetched_next = nullptr;  // in task->fetched_next, once a record was handed out
  } route_;
  // Input records fetched for a paused task before the pause took: where to seek back to.
  std::map<std::pair<std::string, int32_t>, int64_t> seek_on_resume_;
  size_t grouped_tasks_ = 0;  // tasks with a partition group
  uint64_t processed_ = 0;
  int64_t last_commit_ms_ = 0;
  bool commit_requested_ = false;  // a processor asked (ProcessorContext.commit())
  int64_t last_purge_ms_ = 0;
  int64_t last_redelivery_log_ms_ = 0;
  std::atomic<bool> rebalancing_{true};  // until the first assignment
};

}  // namespace oxbow::streams::detail
