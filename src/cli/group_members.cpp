#include "cli/group_members.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "cli/client_config.h"
#include "cli/wire_client.h"
#include "protocol/messages/leave_group.h"

namespace oxbow::cli {
namespace {

namespace pr = oxbow::protocol;

// Version 3 (KIP-345) takes a list of members by id, so an administrator can name others than
// itself; every broker since Kafka 2.4 accepts it.
constexpr int16_t kLeaveGroupVersion = 3;

const rd_kafka_ConsumerGroupDescription_t* single_description(rd_kafka_event_t* event,
                                                              const std::string& group) {
  const auto* result = rd_kafka_event_DescribeConsumerGroups_result(event);
  size_t count = 0;
  const auto** descriptions = rd_kafka_DescribeConsumerGroups_result_groups(result, &count);
  if (count != 1 || descriptions[0] == nullptr)
    fail(group, RD_KAFKA_RESP_ERR__BAD_MSG,
         fmt::format("expected 1 group description, got {}", count));
  return descriptions[0];
}

std::string node_address(const rd_kafka_Node_t* node) {
  if (node == nullptr || rd_kafka_Node_host(node) == nullptr) return {};
  return fmt::format("{}:{}", rd_kafka_Node_host(node), rd_kafka_Node_port(node));
}

GroupMember member_of(const rd_kafka_MemberDescription_t* m) {
  GroupMember member{std::string{or_empty(rd_kafka_MemberDescription_consumer_id(m))}, std::nullopt,
                     std::string{or_empty(rd_kafka_MemberDescription_client_id(m))},
                     std::string{or_empty(rd_kafka_MemberDescription_host(m))}};
  if (const char* instance = rd_kafka_MemberDescription_group_instance_id(m))
    if (*instance != '\0') member.group_instance_id = instance;
  return member;
}

pr::LeaveGroupRequest leave_request(const std::string& group, const GroupMembers& members) {
  pr::LeaveGroupRequest request;
  request.group_id = group;
  for (const auto& m : members.members)
    request.members.push_back({m.member_id, m.group_instance_id, std::nullopt});
  return request;
}

}  // namespace

GroupMembers describe_group_members(rd_kafka_t* rk, const std::string& group) {
  const auto admin_options = make_admin_options(rk, RD_KAFKA_ADMIN_OP_DESCRIBECONSUMERGROUPS);
  const QueueHandle queue{rd_kafka_queue_new(rk)};
  const char* name = group.c_str();
  rd_kafka_DescribeConsumerGroups(rk, &name, 1, admin_options.get(), queue.get());
  const EventHandle event = wait_for_admin_result(queue.get(), group);
  const auto* description = single_description(event.get(), group);
  if (const auto* error = rd_kafka_ConsumerGroupDescription_error(description)) {
    // A group nobody has joined yet has no members, which is all a caller asks about.
    if (rd_kafka_error_code(error) == RD_KAFKA_RESP_ERR_GROUP_ID_NOT_FOUND) return {};
    fail(group, rd_kafka_error_code(error), or_empty(rd_kafka_error_string(error)));
  }
  GroupMembers out{{}, node_address(rd_kafka_ConsumerGroupDescription_coordinator(description))};
  const size_t count = rd_kafka_ConsumerGroupDescription_member_count(description);
  for (size_t i = 0; i < count; ++i)
    out.members.push_back(member_of(rd_kafka_ConsumerGroupDescription_member(description, i)));
  return out;
}

void remove_group_members(const ClientOptions& client, const std::string& group,
                          const GroupMembers& members) {
  if (members.members.empty()) return;
  if (members.coordinator.empty()) fail(fmt::format("group {} has no coordinator", group));
  // LeaveGroup is only answered by the group's coordinator, which need not be a bootstrap server.
  ClientOptions at_coordinator = client;
  at_coordinator.bootstrap_servers = members.coordinator;
  WireClient wire(at_coordinator);
  const auto response = wire.call<pr::LeaveGroupResponse>(
      pr::LeaveGroupRequest::kApiKey, kLeaveGroupVersion, leave_request(group, members));
  if (response.error_code != 0)
    fail(fmt::format("removing the members of group {}: {}", group,
                     error_text(response.error_code)));
  bool any_failed = false;
  for (const auto& m : response.members) {
    if (m.error_code == 0) continue;
    fmt::print(stderr, "oxbow: error: removing member {} of group {}: {}\n", m.member_id, group,
               error_text(m.error_code));
    any_failed = true;
  }
  if (any_failed) throw CLI::RuntimeError(1);
}

}  // namespace oxbow::cli
