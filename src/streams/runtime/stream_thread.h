#pragma once
// A stream thread: one consumer in the application's group and the parts Kafka Streams' own
// StreamThread is made of, each with one job: the producer that is the tasks' record collector
// (StreamsProducer), the restoration of stores from their changelogs (ChangelogReader), the
// thread's tasks and their commits (TaskManager), and its membership in the group
// (GroupMembership: Oxbow's own member and assignor, streams/assignment/, in Kafka Streams'
// protocol). The thread itself is the loop that drives them: it polls the consumer and hands the
// records to the task manager, gives restoration its turns, punctuates, commits every
// commit.interval.ms, and keeps the librdkafka 2.0.2 fetcher from stalling (fetch_restarter.h).
// Rebalances are cooperative: tasks a thread keeps process on through them. See
// src/streams/README.md.
#include <librdkafka/rdkafka.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "streams/runtime/changelog_reader.h"
#include "streams/runtime/fetch_restarter.h"
#include "streams/runtime/group_membership.h"
#include "streams/runtime/kafka_clients.h"
#include "streams/runtime/streams_producer.h"
#include "streams/runtime/task_manager.h"
#include "streams/runtime/thread_config.h"
#include "streams/runtime/thread_metrics.h"
#include "streams/runtime/topologies.h"

namespace oxbow::streams::detail {

class StreamThread {
 public:
  StreamThread(std::shared_ptr<const Topologies> topologies, ThreadConfig config);
  ~StreamThread();

  void start();
  void request_stop() { stop_ = true; }
  void join();
  bool running() const { return running_; }
  // Set when the thread ended on an error; its text.
  bool failed() const { return failed_; }
  const std::string& failure() const { return failure_; }
  // True from an assignment's start until its tasks are restored.
  bool rebalancing() const { return !tasks_ || tasks_->rebalancing(); }
  const std::string& name() const { return config_.client_id; }
  CacheBudget& cache_budget() { return *config_.task.cache_budget; }
  std::shared_ptr<ThreadMetrics> metrics() const { return metrics_; }
  // From another thread: the topologies to run from the loop's next turn on (named topologies
  // added or removed while running); the thread then rejoins the group.
  void set_topologies(std::shared_ptr<const Topologies> next);
  // Whether the loop has taken the last set_topologies() (or the thread has stopped).
  bool topologies_applied() const {
    return topologies_applied_ == topologies_requested_ || !running_;
  }
  // Interactive queries, from other threads: TaskManager::read_store.
  int read_store(const std::string& topology, const std::string& name,
                 std::optional<int32_t> partition, bool stale,
                 const std::function<bool(KeyValueStore&)>& read, int& restoring,
                 bool& stop) const {
    return tasks_->read_store(topology, name, partition, stale, read, restoring, stop);
  }

 private:
  void run();
  void loop();
  void turn(int& unserved);
  void publish_metrics();
  void apply_topologies();
  void prefetch_sink_metadata(const NamedGraph& topology);
  // Consumed::withOffsetResetPolicy: where a source topic starts without a committed offset.
  void set_offset_reset_policies();
  void set_offset_reset_policies(const GraphBuilder& graph);

  std::shared_ptr<const Topologies> topologies_;
  ThreadConfig config_;
  std::shared_ptr<ThreadMetrics> metrics_ = std::make_shared<ThreadMetrics>();
  // In this order, so that each part is destroyed before those it uses.
  RdKafkaHandle consumer_;
  std::unique_ptr<FetchRestarter> fetch_restarter_;
  TopicHandles consumer_topics_;  // sources with their own offset reset policy
  std::unique_ptr<StreamsProducer> producer_;
  std::unique_ptr<ChangelogReader> reader_;
  std::unique_ptr<GroupMembership> membership_;
  std::unique_ptr<TaskManager> tasks_;
  std::thread thread_;
  std::atomic<bool> stop_{false}, running_{false}, failed_{false};
  std::mutex pending_mutex_;
  std::shared_ptr<const Topologies> pending_topologies_;  // under pending_mutex_
  std::atomic<uint64_t> topologies_requested_{0}, topologies_applied_{0};
  std::string failure_;
  int64_t last_metrics_ms_ = 0;
  int64_t last_served_ms_ = 0;        // when the producer's callbacks were last served
  int64_t last_restore_step_ms_ = 0;  // when a slice of restoration last ended
  int64_t last_group_poll_ms_ = 0;
  int64_t last_wall_punctuation_ms_ = 0;
};

}  // namespace oxbow::streams::detail
