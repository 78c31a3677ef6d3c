// KIP-848 consumer groups: ConsumerGroupHeartbeat and ConsumerGroupDescribe. The assignment is
// the coordinator's (group/consumer_group.h); these handlers check requests as Kafka does and
// translate between topic ids on the wire and the group's view of the topics.
#include <fmt/format.h>

#include "broker/broker.h"
#include "broker/handlers/authorization.h"
#include "broker/handlers/handlers.h"
#include "broker/topics/consumer_topics.h"
#include "broker/topics/topic_registry.h"
#include "common/properties.h"
#include "group/coordinator.h"
#include "protocol/errors.h"
#include "protocol/messages/consumer_group_describe.h"
#include "protocol/messages/consumer_group_heartbeat.h"

namespace oxbow::broker {

namespace pr = oxbow::protocol;
using pr::ErrorCode;

namespace {

constexpr int8_t kConsumerMemberType = 1;  // ConsumerGroupDescribe v1 (KIP-1099): 0 classic

bool blank(const std::optional<std::string>& s) {
  return s && trim(*s).empty();
}

// Kafka's checks of a heartbeat, in its order and with its messages; empty when valid.
std::string invalid_heartbeat(const pr::ConsumerGroupHeartbeatRequest& r, int16_t v) {
  // From v1 the member generates its own id (KIP-1082).
  if ((v >= 1 || r.member_epoch > 0 || r.member_epoch == group::kLeaveGroupEpoch) &&
      blank(r.member_id))
    return "MemberId can't be empty.";
  if (blank(r.group_id)) return "GroupId can't be empty.";
  if (blank(r.instance_id)) return "InstanceId can't be empty.";
  if (blank(r.rack_id)) return "RackId can't be empty.";
  if (r.member_epoch == 0) {
    if (r.rebalance_timeout_ms == -1)
      return "RebalanceTimeoutMs must be provided in first request.";
    if (!r.topic_partitions || !r.topic_partitions->empty())
      return "TopicPartitions must be empty when (re-)joining.";
    bool names = r.subscribed_topic_names && !r.subscribed_topic_names->empty();
    bool regex = r.subscribed_topic_regex && !r.subscribed_topic_regex->empty();
    if (!names && !regex)
      return "SubscribedTopicNames or SubscribedTopicRegex must be set in first request.";
  } else if (r.member_epoch == group::kLeaveGroupStaticEpoch) {
    if (!r.instance_id) return "InstanceId can't be null.";
  } else if (r.member_epoch < group::kLeaveGroupStaticEpoch) {
    return "MemberEpoch is invalid.";
  }
  return "";
}

using WirePartitions = pr::ConsumerGroupHeartbeatResponse::AssignedTopicPartitions;

std::vector<WirePartitions> to_wire(const group::Assignment& assignment) {
  std::vector<WirePartitions> out;
  for (const auto& [topic, partitions] : assignment) {
    auto& t = out.emplace_back();
    t.topic_id = topic;
    t.partitions.assign(partitions.begin(), partitions.end());
  }
  return out;
}

struct Refusal {
  ErrorCode error = ErrorCode::kNone;
  std::string message;
};

// Everything that refuses a heartbeat before the coordinator sees it, in Kafka's order.
Refusal refusal(const RequestContext& ctx, const pr::ConsumerGroupHeartbeatRequest& r,
                const group::ConsumerGroupOptions& options) {
  if (!authorized(ctx, AclOperation::kRead, ResourceType::kGroup, r.group_id))
    return {ErrorCode::kGroupAuthorizationFailed, ""};
  if (auto invalid = invalid_heartbeat(r, ctx.header.api_version); !invalid.empty())
    return {ErrorCode::kInvalidRequest, invalid};
  const auto& names = options.assignors;
  if (r.server_assignor &&
      std::find(names.begin(), names.end(), *r.server_assignor) == names.end()) {
    return {ErrorCode::kUnsupportedAssignor,
            fmt::format("ServerAssignor {} is not supported. Supported assignors: {}.",
                        *r.server_assignor, fmt::join(names, ", "))};
  }
  if (r.subscribed_topic_regex && !r.subscribed_topic_regex->empty()) {
    if (auto error = topic_regex_error(*r.subscribed_topic_regex); !error.empty()) {
      return {ErrorCode::kInvalidRegularExpression,
              fmt::format("SubscribedTopicRegex `{}` is not a valid regular expression: {}.",
                          *r.subscribed_topic_regex, error)};
    }
  }
  for (const auto& topic : r.subscribed_topic_names.value_or(std::vector<std::string>{})) {
    if (!authorized(ctx, AclOperation::kDescribe, ResourceType::kTopic, topic))
      return {ErrorCode::kTopicAuthorizationFailed, ""};
  }
  return {};
}

group::ConsumerHeartbeat to_heartbeat(const RequestContext& ctx,
                                      const pr::ConsumerGroupHeartbeatRequest& r) {
  group::ConsumerHeartbeat h;
  h.member_id = r.member_id;
  h.member_epoch = r.member_epoch;
  h.instance_id = r.instance_id;
  h.rack_id = r.rack_id;
  h.rebalance_timeout_ms = r.rebalance_timeout_ms;
  h.subscribed_topic_names = r.subscribed_topic_names;
  h.subscribed_topic_regex = r.subscribed_topic_regex;
  h.server_assignor = r.server_assignor;
  if (r.topic_partitions) {
    h.owned.emplace();
    for (const auto& t : *r.topic_partitions) h.owned->emplace_back(t.topic_id, t.partitions);
  }
  h.client_id = ctx.header.client_id.value_or("");
  h.client_host = "/" + ctx.client_host;
  return h;
}

}  // namespace

void handle_consumer_group_heartbeat(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::ConsumerGroupHeartbeatRequest request;
  request.decode(body, v);
  pr::ConsumerGroupHeartbeatResponse response;
  auto& groups = ctx.broker.groups();
  Refusal refused = refusal(ctx, request, groups.consumer_options());
  group::ConsumerHeartbeatResult result;
  if (refused.error == ErrorCode::kNone) {
    result = groups.consumer_heartbeat(request.group_id, to_heartbeat(ctx, request));
    refused = {result.error, std::move(result.message)};
  }
  if (refused.error != ErrorCode::kNone) {
    response.error_code = pr::code(refused.error);
    if (!refused.message.empty()) response.error_message = std::move(refused.message);
  } else {
    response.member_id = result.member_id;
    response.member_epoch = result.member_epoch;
    response.heartbeat_interval_ms = result.heartbeat_interval_ms;
    if (result.assignment) {
      response.assignment.emplace().topic_partitions = to_wire(*result.assignment);
    }
  }
  response.encode(out, v);
}

namespace {

using Described = pr::ConsumerGroupDescribeResponse::DescribedGroup;

void describe_members(const group::ConsumerGroup& g, const TopicRegistry& topics, Described& out) {
  auto named = [&](const group::Assignment& assignment) {
    pr::ConsumerGroupDescribeResponse::Assignment wire;
    for (const auto& [id, partitions] : assignment) {
      auto& t = wire.topic_partitions.emplace_back();
      t.topic_id = id;
      auto name = g.topic_name(id);
      if (!name) {
        if (auto info = topics.find_by_id(id)) name = info->name;
      }
      t.topic_name = name.value_or("");
      t.partitions.assign(partitions.begin(), partitions.end());
    }
    return wire;
  };
  for (const auto& [id, m] : g.members()) {
    auto& member = out.members.emplace_back();
    member.member_id = id;
    member.instance_id = m.instance_id;
    member.rack_id = m.rack_id;
    member.member_epoch = m.epoch;
    member.client_id = m.client_id;
    member.client_host = m.client_host;
    member.subscribed_topic_names = m.subscribed_topics;
    member.subscribed_topic_regex = m.subscribed_regex;
    member.assignment = named(m.assigned);
    member.target_assignment = named(g.target_of(id));
    member.member_type = kConsumerMemberType;
  }
}

}  // namespace

void handle_consumer_group_describe(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::ConsumerGroupDescribeRequest request;
  request.decode(body, v);
  pr::ConsumerGroupDescribeResponse response;
  auto& groups = ctx.broker.groups();
  for (const auto& id : request.group_ids) {
    auto& g = response.groups.emplace_back();
    g.group_id = id;
    if (!authorized(ctx, AclOperation::kDescribe, ResourceType::kGroup, id)) {
      g.error_code = pr::code(ErrorCode::kGroupAuthorizationFailed);
      continue;
    }
    if (id.empty()) {
      g.error_code = pr::code(ErrorCode::kInvalidGroupId);
      continue;
    }
    groups.describe_consumer_group(id, [&](const group::ConsumerGroup* group) {
      if (!group) return;
      g.group_state = group->state_name();
      g.group_epoch = group->group_epoch();
      g.assignment_epoch = group->assignment_epoch();
      g.assignor_name = group->assignor(groups.consumer_options());
      describe_members(*group, ctx.broker.topics(), g);
    });
    if (g.group_state.empty()) {
      bool classic = groups.describe(id).state != "Dead";
      g.error_code = pr::code(ErrorCode::kGroupIdNotFound);
      g.error_message = classic ? fmt::format("Group {} is not a consumer group.", id)
                                : fmt::format("Group {} not found.", id);
      continue;
    }
    if (request.include_authorized_operations)
      g.authorized_operations = authorized_operations(ctx, ResourceType::kGroup, id);
  }
  response.encode(out, v);
}

}  // namespace oxbow::broker
