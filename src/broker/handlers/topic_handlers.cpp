// CreateTopics, DeleteTopics, CreatePartitions, and the single-node answers of the partition
// reassignment APIs.
#include "broker/broker.h"
#include "broker/config/config.h"
#include "broker/handlers/authorization.h"
#include "broker/handlers/handlers.h"
#include "broker/topics/topic_registry.h"
#include "group/coordinator.h"
#include "protocol/errors.h"
#include "protocol/messages/alter_partition_reassignments.h"
#include "protocol/messages/create_partitions.h"
#include "protocol/messages/create_topics.h"
#include "protocol/messages/delete_topics.h"
#include "protocol/messages/list_partition_reassignments.h"

namespace oxbow::broker {

namespace pr = oxbow::protocol;
using pr::ErrorCode;

namespace {

// One node: a replication factor other than 1 (or -1, the default) cannot be honoured.
std::optional<std::string> replication_problem(int16_t factor) {
  if (factor == -1 || factor == 1) return std::nullopt;
  return "Replication factor: " + std::to_string(factor) + " larger than available brokers: 1.";
}

// A manual replica list for one partition; on one node the only valid one is [node].
std::optional<std::string> replica_list_problem(const std::vector<int32_t>& brokers, int32_t node) {
  if (brokers.empty()) return "The manual partition assignment includes an empty replica list.";
  for (int32_t broker : brokers) {
    if (broker != node) {
      return "The manual partition assignment includes broker " + std::to_string(broker) +
             ", but no broker with that ID was found.";
    }
  }
  if (brokers.size() > 1) {
    return "The manual partition assignment includes broker " + std::to_string(node) +
           " more than once.";
  }
  return std::nullopt;
}

std::optional<std::string> assignment_problem(const pr::CreateTopicsRequest::CreatableTopic& topic,
                                              int32_t node) {
  for (const auto& a : topic.assignments) {
    if (auto problem = replica_list_problem(a.broker_ids, node)) return problem;
  }
  return std::nullopt;
}

// CreatePartitions' assignments: one replica list for each partition added (Kafka's checks).
std::optional<std::string> assignment_problem(
    const pr::CreatePartitionsRequest::CreatePartitionsTopic& topic, int32_t current,
    int32_t node) {
  if (!topic.assignments || topic.count <= current) return std::nullopt;
  if (static_cast<int64_t>(topic.assignments->size()) != int64_t{topic.count} - current) {
    return "Attempted to add " + std::to_string(topic.count - current) +
           " additional partition(s), but " + std::to_string(topic.assignments->size()) +
           " assignment(s) were specified.";
  }
  for (const auto& a : *topic.assignments) {
    if (auto problem = replica_list_problem(a.broker_ids, node)) return problem;
  }
  return std::nullopt;
}

}  // namespace

void handle_create_topics(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::CreateTopicsRequest request;
  request.decode(body, v);
  auto& broker = ctx.broker;
  int32_t node = broker.config().node_id;
  pr::CreateTopicsResponse response;
  bool cluster_create = authorized_on_cluster(ctx, AclOperation::kCreate, Audit::kQuiet);
  for (const auto& topic : request.topics) {
    auto& result = response.topics.emplace_back();
    result.name = topic.name;
    auto fail = [&](ErrorCode error, std::string message) {
      result.error_code = pr::code(error);
      result.error_message = std::move(message);
    };
    if (!cluster_create &&
        !authorized(ctx, AclOperation::kCreate, ResourceType::kTopic, topic.name)) {
      fail(ErrorCode::kTopicAuthorizationFailed, "Authorization failed.");
      continue;
    }
    if (!topic.assignments.empty() && topic.num_partitions != -1) {
      fail(ErrorCode::kInvalidRequest,
           "Both numPartitions or replicationFactor and replicasAssignments were set.");
      continue;
    }
    if (auto problem = replication_problem(topic.replication_factor)) {
      fail(ErrorCode::kInvalidReplicationFactor, *problem);
      continue;
    }
    if (auto problem = assignment_problem(topic, node)) {
      fail(ErrorCode::kInvalidReplicaAssignment, *problem);
      continue;
    }
    int32_t partitions = topic.assignments.empty() ? topic.num_partitions
                                                   : static_cast<int32_t>(topic.assignments.size());
    std::map<std::string, std::string> configs;
    bool null_value = false;
    for (const auto& c : topic.configs) {
      if (!c.value)
        null_value = true;
      else
        configs[c.name] = *c.value;
    }
    if (null_value) {
      fail(ErrorCode::kInvalidConfig, "Null value not supported for topic configs");
      continue;
    }
    // controller_mutation_rate is charged last, for a topic that would be created (Kafka's order).
    if (!request.validate_only && quotas_active(ctx)) {
      TopicInfo planned;
      auto check = broker.topics().create(topic.name, partitions, configs, true, &planned);
      if (check.error == ErrorCode::kNone &&
          !charge_partition_mutations(ctx, planned.partitions, v >= 6, response.throttle_time_ms)) {
        result.error_code = pr::code(ErrorCode::kThrottlingQuotaExceeded);
        continue;
      }
    }
    TopicInfo created;
    auto outcome =
        broker.topics().create(topic.name, partitions, configs, request.validate_only, &created);
    if (outcome.error != ErrorCode::kNone) {
      fail(outcome.error, outcome.message);
      continue;
    }
    result.topic_id = created.id;
    result.num_partitions = created.partitions;
    result.replication_factor = 1;
    // The new topic's configs only for those who may describe them (Kafka's rule; its tagged
    // topic_config_error_code is not sent: our codecs write no tagged fields).
    if (!authorized(ctx, AclOperation::kDescribeConfigs, ResourceType::kTopic, topic.name,
                    Audit::kQuiet))
      continue;
    result.configs.emplace();
    for (const auto& [key, value] : created.configs) {
      result.configs->push_back({key, value, false, 1 /* DYNAMIC_TOPIC_CONFIG */, false});
    }
  }
  response.encode(out, v);
}

void handle_delete_topics(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::DeleteTopicsRequest request;
  request.decode(body, v);
  auto& topics = ctx.broker.topics();
  std::vector<pr::DeleteTopicsRequest::DeleteTopicState> wanted = request.topics;
  for (const auto& name : request.topic_names) wanted.push_back({name, {}});
  pr::DeleteTopicsResponse response;
  for (const auto& w : wanted) {
    auto& result = response.responses.emplace_back();
    result.name = w.name;
    result.topic_id = w.topic_id;
    if (w.name && !authorized(ctx, AclOperation::kDelete, ResourceType::kTopic, *w.name)) {
      result.error_code = pr::code(ErrorCode::kTopicAuthorizationFailed);
      continue;
    }
    std::optional<TopicInfo> topic = w.name ? topics.find(*w.name) : topics.find_by_id(w.topic_id);
    if (topic && !w.name &&
        !authorized(ctx, AclOperation::kDelete, ResourceType::kTopic, topic->name)) {
      result.error_code = pr::code(ErrorCode::kTopicAuthorizationFailed);
      continue;
    }
    if (!topic) {
      result.error_code =
          pr::code(w.name ? ErrorCode::kUnknownTopicOrPartition : ErrorCode::kUnknownTopicId);
      continue;
    }
    result.name = topic->name;
    result.topic_id = topic->id;
    if (!charge_partition_mutations(ctx, topic->partitions, v >= 5, response.throttle_time_ms)) {
      result.error_code = pr::code(ErrorCode::kThrottlingQuotaExceeded);
      continue;
    }
    auto outcome = topics.remove(topic->name);
    if (outcome.error == ErrorCode::kNone) ctx.broker.groups().forget_topic(topic->name);
    result.error_code = pr::code(outcome.error);
    if (outcome.error != ErrorCode::kNone) result.error_message = outcome.message;
  }
  response.encode(out, v);
}

void handle_create_partitions(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::CreatePartitionsRequest request;
  request.decode(body, v);
  pr::CreatePartitionsResponse response;
  for (const auto& topic : request.topics) {
    auto& result = response.results.emplace_back();
    result.name = topic.name;
    if (!authorized(ctx, AclOperation::kAlter, ResourceType::kTopic, topic.name)) {
      result.error_code = pr::code(ErrorCode::kTopicAuthorizationFailed);
      result.error_message = "Authorization failed.";
      continue;
    }
    if (auto existing = ctx.broker.topics().find(topic.name)) {
      if (auto problem =
              assignment_problem(topic, existing->partitions, ctx.broker.config().node_id)) {
        result.error_code = pr::code(ErrorCode::kInvalidReplicaAssignment);
        result.error_message = std::move(*problem);
        continue;
      }
    }
    auto existing = ctx.broker.topics().find(topic.name);
    if (existing && !request.validate_only && quotas_active(ctx) &&
        ctx.broker.topics().add_partitions(topic.name, topic.count, true).error ==
            ErrorCode::kNone &&
        !charge_partition_mutations(ctx, topic.count - existing->partitions, v >= 3,
                                    response.throttle_time_ms)) {
      result.error_code = pr::code(ErrorCode::kThrottlingQuotaExceeded);
      continue;
    }
    auto outcome =
        ctx.broker.topics().add_partitions(topic.name, topic.count, request.validate_only);
    result.error_code = pr::code(outcome.error);
    if (outcome.error != ErrorCode::kNone) result.error_message = outcome.message;
  }
  response.encode(out, v);
}

// One node: a partition can only stay where it is, so a reassignment to [this broker] is done at
// once and nothing is ever in progress (Kafka's errors for everything else).
void handle_alter_partition_reassignments(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::AlterPartitionReassignmentsRequest request;
  request.decode(body, v);
  pr::AlterPartitionReassignmentsResponse response;
  if (!authorized_on_cluster(ctx, AclOperation::kAlter)) {
    response.error_code = pr::code(ErrorCode::kClusterAuthorizationFailed);
    response.error_message = "Authorization failed.";
    response.encode(out, v);
    return;
  }
  const int32_t node = ctx.broker.config().node_id;
  for (const auto& topic : request.topics) {
    auto& topic_out = response.responses.emplace_back();
    topic_out.name = topic.name;
    auto info = ctx.broker.topics().find(topic.name);
    for (const auto& partition : topic.partitions) {
      auto& result = topic_out.partitions.emplace_back();
      result.partition_index = partition.partition_index;
      auto fail = [&](ErrorCode error, std::string message) {
        result.error_code = pr::code(error);
        result.error_message = std::move(message);
      };
      if (!info || partition.partition_index < 0 || partition.partition_index >= info->partitions) {
        fail(ErrorCode::kUnknownTopicOrPartition, "Unable to find partition " + topic.name + "-" +
                                                      std::to_string(partition.partition_index) +
                                                      ".");
      } else if (!partition.replicas) {
        fail(ErrorCode::kNoReassignmentInProgress,
             "No ongoing reassignment for partition " + topic.name + "-" +
                 std::to_string(partition.partition_index) + ".");
      } else if (auto problem = replica_list_problem(*partition.replicas, node)) {
        fail(ErrorCode::kInvalidReplicaAssignment, std::move(*problem));
      }
    }
  }
  response.encode(out, v);
}

void handle_list_partition_reassignments(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::ListPartitionReassignmentsRequest request;
  request.decode(body, v);
  pr::ListPartitionReassignmentsResponse response;
  if (!authorized_on_cluster(ctx, AclOperation::kDescribe)) {
    response.error_code = pr::code(ErrorCode::kClusterAuthorizationFailed);
    response.error_message = "Authorization failed.";
  }
  response.encode(out, v);  // no reassignment is ever in progress
}

}  // namespace oxbow::broker
