#pragma once
// The members of a classic consumer group, and their removal by an administrator (what Kafka's
// Admin.removeMembersFromConsumerGroup does; librdkafka has no API for it).
#include <librdkafka/rdkafka.h>

#include <optional>
#include <string>
#include <vector>

namespace oxbow::cli {

struct ClientOptions;

struct GroupMember {
  std::string member_id;
  std::optional<std::string> group_instance_id;  // static membership
  std::string client_id;
  std::string host;
};

struct GroupMembers {
  std::vector<GroupMember> members;  // empty for an empty or unknown group
  std::string coordinator;           // "host:port"; empty when the group has none yet
};

// The group's current members, from DescribeGroups. Fails the command on an error.
GroupMembers describe_group_members(rd_kafka_t* rk, const std::string& group);

// Removes `members` from `group` with one LeaveGroup (v3) sent to its coordinator, as the
// members themselves would leave. Fails the command when the coordinator refuses any of them.
void remove_group_members(const ClientOptions& client, const std::string& group,
                          const GroupMembers& members);

}  // namespace oxbow::cli
