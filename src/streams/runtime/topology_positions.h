#pragma once
// Where a named topology's tasks are in their input partitions. Topologies of one instance may
// read one source topic (each in a sub-topology of its own), and each needs its own position
// there: a query added later reads the topic from its start while the others are at its end. The
// instance's group holds one committed offset per partition, so each named topology commits its
// positions to a group of its own, named by its prefix (for the SQL server's queries, the
// per-query application id that ksqlDB's own consumer group of the query has, so that lag tools
// show a query's progress under the name they know). Those groups have no members: commits
// without generation (OffsetCommit for at least once, TxnOffsetCommit in the thread's transaction
// for exactly once, which the instance's group's commit in the same transaction fences). The
// metadata of each committed offset is the task's stream time (partition_time.h), as in the
// instance's group. Callers pass the thread's producer handle: on its consumer's handle
// librdkafka 2.0.2 answered these requests in seconds, and once not for a minute.
#include <librdkafka/rdkafka.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace oxbow::streams::detail {

using TopicPartitionKey = std::pair<std::string, int32_t>;

struct CommittedPosition {
  int64_t offset = -1;  // -1: nothing committed
  std::optional<int64_t> stream_time;
};
using GroupPositions = std::map<TopicPartitionKey, CommittedPosition>;

// Each group's committed offsets of its partitions: one OffsetFetch per group, all in flight
// together, each asked again while it times out (kRetryTimedOutFor). Throws StreamsException when
// a group cannot answer.
std::map<std::string, GroupPositions> fetch_positions(
    rd_kafka_t* client, const std::map<std::string, std::vector<TopicPartitionKey>>& asks);

// Commits each group's offsets (OffsetCommit without generation, all in flight together); throws
// StreamsException naming a group whose commit failed.
void commit_positions(rd_kafka_t* client,
                      const std::map<std::string, rd_kafka_topic_partition_list_t*>& offsets);

// Deletes the groups (a named topology removed with its offsets reset); a group that does not
// exist is no failure. Throws StreamsException naming one that could not be deleted.
void delete_position_groups(rd_kafka_t* client, const std::vector<std::string>& groups);

}  // namespace oxbow::streams::detail
