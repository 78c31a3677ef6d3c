#pragma once
// The group leader's side of a rebalance: from every member's subscription (Kafka Streams'
// format, protocol_data.h) to every member's assignment. Members are grouped into clients by
// their process id (an instance's threads share one); assign_tasks() places tasks on clients;
// each client's tasks are then shared among its threads, sticky to the thread that had them.
// Cooperatively: a task that another member still owns is not given in the same round (that
// member gives it up and rejoins, and the next round places it).
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "streams/assignment/protocol_data.h"
#include "streams/assignment/task_assignor.h"

namespace oxbow::streams::detail {

// A sub-topology of the application's topology, or of one of its named topologies (whose ids
// start at 0 each). The partitions a member owns name its tasks; where sub-topologies of several
// named topologies read one source topic alone, its partition names all their tasks, which go to
// one member together.
struct SubtopologyTopics {
  int32_t id = 0;
  std::vector<std::string> sources;     // as on the wire (internal ones prefixed)
  std::vector<std::string> changelogs;  // one partition per task
  std::string topology;                 // the named topology; empty for the only one
  TaskId task(int32_t partition) const { return {id, partition, topology}; }
  bool runs(const TaskId& task) const {
    return task.subtopology == id && task.topology == topology;
  }
};

struct GroupAssignorContext {
  std::vector<SubtopologyTopics> subtopologies;
  // A topic's partition count; 0 when the cluster does not know it.
  std::function<int32_t(const std::string& topic)> partitions_of;
  // The end offsets of changelog partitions; may throw (then every client counts as caught up,
  // and nothing warms up).
  std::function<std::map<std::pair<std::string, int32_t>, int64_t>(const PartitionList&)>
      end_offsets;
  AssignorConfig config;
  int64_t probing_rebalance_interval_ms = 600000;
  int64_t now_ms = 0;
};

// member id -> subscription bytes  =>  member id -> assignment bytes (ConsumerAssignment).
std::map<std::string, std::string> assign_group(
    const GroupAssignorContext& context, const std::map<std::string, std::string>& subscriptions);

// The source partitions of a task, given the subtopologies and partition counts.
PartitionList task_partitions(const GroupAssignorContext& context, const TaskId& task);

}  // namespace oxbow::streams::detail
