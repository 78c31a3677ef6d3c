// Metadata and DescribeCluster: what the broker tells clients about itself and its topics.
#include "broker/broker.h"
#include "broker/handlers/authorization.h"
#include "broker/handlers/handlers.h"
#include "broker/topics/topic_registry.h"
#include "protocol/errors.h"
#include "protocol/messages/describe_cluster.h"
#include "protocol/messages/metadata.h"

namespace oxbow::broker {

namespace pr = oxbow::protocol;
using pr::ErrorCode;

namespace {

constexpr int32_t kAuthorizedOperationsOmitted = INT32_MIN;

void describe_topic(const TopicInfo& topic, int32_t node,
                    pr::MetadataResponse::MetadataResponseTopic& out) {
  out.error_code = pr::code(ErrorCode::kNone);
  out.name = topic.name;
  out.topic_id = topic.id;
  out.is_internal = topic.name.starts_with("__");
  for (int32_t p = 0; p < topic.partitions; ++p) {
    pr::MetadataResponse::MetadataResponsePartition partition;
    partition.partition_index = p;
    partition.leader_id = node;
    partition.leader_epoch = 0;
    partition.replica_nodes = {node};
    partition.isr_nodes = {node};
    out.partitions.push_back(std::move(partition));
  }
}

// Finds the topic, creating it when the broker, the request and the ACLs (CREATE on the cluster
// or the topic) allow. A creation is charged to controller_mutation_rate as Kafka charges it:
// permissively, raising `throttle_ms`.
std::optional<TopicInfo> find_or_create(RequestContext& ctx, const std::string& name,
                                        bool may_create, ErrorCode& error, int32_t& throttle_ms) {
  auto& broker = ctx.broker;
  auto& topics = broker.topics();
  if (auto topic = topics.find(name)) return topic;
  if (!may_create || !broker.config().auto_create_topics) {
    error = ErrorCode::kUnknownTopicOrPartition;
    return std::nullopt;
  }
  if (!authorized_on_cluster(ctx, AclOperation::kCreate, Audit::kQuiet) &&
      !authorized(ctx, AclOperation::kCreate, ResourceType::kTopic, name)) {
    error = ErrorCode::kTopicAuthorizationFailed;
    return std::nullopt;
  }
  TopicInfo created;
  auto result = topics.create(name, -1, {}, false, &created);
  if (result.error == ErrorCode::kTopicAlreadyExists) return topics.find(name);
  if (result.error != ErrorCode::kNone) {
    error = result.error;
    return std::nullopt;
  }
  charge_partition_mutations(ctx, created.partitions, false, throttle_ms);
  return created;
}

}  // namespace

void handle_metadata(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::MetadataRequest request;
  request.decode(body, v);
  auto& broker = ctx.broker;
  int32_t node = broker.config().node_id;
  auto endpoint = broker.advertised_endpoint(ctx.listener_name);

  pr::MetadataResponse response;
  response.brokers.push_back({node, endpoint.host, endpoint.port, broker.config().rack});
  response.cluster_id = broker.cluster_id();
  response.controller_id = node;
  response.cluster_authorized_operations =
      request.include_cluster_authorized_operations
          ? authorized_operations(ctx, ResourceType::kCluster, security::kClusterResourceName)
          : kAuthorizedOperationsOmitted;

  bool all_topics = !request.topics.has_value() || (v == 0 && request.topics->empty());
  if (all_topics) {
    for (const auto& topic : broker.topics().list()) {
      if (!authorized(ctx, AclOperation::kDescribe, ResourceType::kTopic, topic.name,
                      Audit::kQuiet))
        continue;
      describe_topic(topic, node, response.topics.emplace_back());
    }
  } else {
    bool may_create = v < 4 || request.allow_auto_topic_creation;
    for (const auto& wanted : *request.topics) {
      auto& entry = response.topics.emplace_back();
      std::optional<TopicInfo> topic;
      ErrorCode error = ErrorCode::kNone;
      if (wanted.name) {
        if (authorized(ctx, AclOperation::kDescribe, ResourceType::kTopic, *wanted.name)) {
          topic = find_or_create(ctx, *wanted.name, may_create, error, response.throttle_time_ms);
        } else {
          error = ErrorCode::kTopicAuthorizationFailed;
        }
      } else {
        topic = broker.topics().find_by_id(wanted.topic_id);
        if (!topic) {
          error = ErrorCode::kUnknownTopicId;
        } else if (!authorized(ctx, AclOperation::kDescribe, ResourceType::kTopic, topic->name)) {
          topic.reset();
          error = ErrorCode::kTopicAuthorizationFailed;
        }
      }
      if (topic) {
        describe_topic(*topic, node, entry);
      } else {
        entry.error_code = pr::code(error);
        entry.name = wanted.name;
        entry.topic_id = wanted.topic_id;
      }
    }
  }
  for (auto& t : response.topics) {
    t.topic_authorized_operations =
        request.include_topic_authorized_operations && t.error_code == 0 && t.name
            ? authorized_operations(ctx, ResourceType::kTopic, *t.name)
            : kAuthorizedOperationsOmitted;
  }
  response.encode(out, v);
}

void handle_describe_cluster(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::DescribeClusterRequest request;
  request.decode(body, v);
  pr::DescribeClusterResponse response;
  // KIP-919: a broker describes brokers; controllers are asked at their own endpoints. v0 has no
  // field for these errors' codes, so it gets INVALID_REQUEST, as in Kafka.
  constexpr int8_t kBrokerEndpoint = 1, kControllerEndpoint = 2;
  if (request.endpoint_type != kBrokerEndpoint) {
    bool known = request.endpoint_type == kControllerEndpoint;
    response.error_code = pr::code(v == 0  ? ErrorCode::kInvalidRequest
                                   : known ? ErrorCode::kMismatchedEndpointType
                                           : ErrorCode::kUnsupportedEndpointType);
    response.error_message =
        known ? "The request was sent to an endpoint of type BROKER, but we wanted an endpoint of "
                "type CONTROLLER"
              : "Unsupported endpoint type " + std::to_string(request.endpoint_type);
    response.encode(out, v);
    return;
  }
  auto endpoint = ctx.broker.advertised_endpoint(ctx.listener_name);
  response.cluster_id = ctx.broker.cluster_id();
  response.controller_id = ctx.broker.config().node_id;
  response.brokers.push_back(
      {ctx.broker.config().node_id, endpoint.host, endpoint.port, ctx.broker.config().rack});
  response.cluster_authorized_operations =
      request.include_cluster_authorized_operations
          ? authorized_operations(ctx, ResourceType::kCluster, security::kClusterResourceName)
          : kAuthorizedOperationsOmitted;
  response.encode(out, v);
}

}  // namespace oxbow::broker
