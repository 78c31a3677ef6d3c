#pragma once
// A stream thread's membership in the application's group, through Oxbow's own group member
// (streams/assignment/): its subscription (the tasks it runs, its instance's process id and
// application.server, the offset sums of the task state on disk), the leader's assignment of the
// whole group, and each assignment it receives, handed to the task manager: what Kafka Streams
// does in StreamsPartitionAssignor (subscriptionUserData, assign, onAssignment) and
// StreamsRebalanceListener, with the main consumer's commits and group metadata.
#include <librdkafka/rdkafka.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "streams/assignment/group_member.h"
#include "streams/assignment/streams_assignor.h"
#include "streams/runtime/task_manager.h"
#include "streams/runtime/thread_config.h"
#include "streams/runtime/topologies.h"

namespace oxbow::streams::detail {

class GroupMembership final : public GroupClient {
 public:
  // `metadata_client` answers the leader's questions (partition counts, changelogs' ends).
  GroupMembership(std::shared_ptr<const Topologies> topologies, const ThreadConfig& config,
                  rd_kafka_t* metadata_client);
  ~GroupMembership();
  GroupMembership(const GroupMembership&) = delete;
  GroupMembership& operator=(const GroupMembership&) = delete;

  // Joins the group.
  void start();
  // The topologies the thread runs from now on: the subscription and, as the leader, the
  // assignment follow them from the rebalance this asks for.
  void set_topologies(std::shared_ptr<const Topologies> next);
  // Leaves it (a static member stays until its session times out).
  void stop() { member_->stop(); }
  // Each round of the thread's loop: what the member brought since the last look (a lost
  // membership, an assignment) handed to `tasks`, and the rebalances standbys or the leader ask
  // for.
  void poll(TaskManager& tasks);

  // GroupClient.
  void commit_offsets(const rd_kafka_topic_partition_list_t* offsets) override;
  rd_kafka_consumer_group_metadata_t* group_metadata() const override;
  void publish_owned(PartitionList owned, std::map<TaskId, int64_t> offset_sums) override;

 private:
  void on_assignment(const ReceivedAssignment& received, TaskManager& tasks);
  // On the member's thread.
  std::string subscription_bytes();
  std::map<std::string, std::string> assign_members(
      const std::map<std::string, std::string>& subscriptions);
  std::map<TaskId, int64_t> local_state_offset_sums() const;

  std::shared_ptr<const Topologies> topologies_;
  const ThreadConfig& config_;
  rd_kafka_t* metadata_client_;
  // Under mutex_ once the member runs (it reads them on its thread).
  std::vector<SubtopologyTopics> group_topics_;  // what the leader assigns from
  std::vector<std::string> subscribed_topics_;
  std::unique_ptr<GroupMember> member_;
  Generation generation_;  // of the assignment the tasks came with
  int64_t next_rebalance_ms_ = AssignmentInfo::kNoRebalance;  // a probing rebalance, epoch ms
  // What the next subscription says (read on the member's thread), and the topics above.
  std::mutex mutex_;
  PartitionList owned_partitions_;
  std::map<TaskId, int64_t> offset_sums_;
  std::atomic<int> subscriptions_sent_{0};
};

}  // namespace oxbow::streams::detail
