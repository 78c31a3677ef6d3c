// Metadata, DescribeCluster and DescribeConfigs: what the broker tells clients about itself.
#include <spdlog/spdlog.h>

#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/config_defs.h"
#include "broker/handlers.h"
#include "broker/topic_registry.h"
#include "protocol/errors.h"
#include "protocol/messages/describe_cluster.h"
#include "protocol/messages/describe_configs.h"
#include "protocol/messages/metadata.h"

namespace oxbow::broker {

namespace pr = oxbow::protocol;
using pr::ErrorCode;

namespace {

constexpr int32_t kAuthorizedOperationsOmitted = INT32_MIN;
constexpr int8_t kResourceTopic = 2;
constexpr int8_t kResourceBroker = 4;

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
// or the topic) allow.
std::optional<TopicInfo> find_or_create(const RequestContext& ctx, const std::string& name,
                                        bool may_create, ErrorCode& error) {
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
  response.brokers.push_back({node, endpoint.host, endpoint.port, std::nullopt});
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
          topic = find_or_create(ctx, *wanted.name, may_create, error);
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
  auto endpoint = ctx.broker.advertised_endpoint(ctx.listener_name);
  pr::DescribeClusterResponse response;
  response.cluster_id = ctx.broker.cluster_id();
  response.controller_id = ctx.broker.config().node_id;
  response.brokers.push_back(
      {ctx.broker.config().node_id, endpoint.host, endpoint.port, std::nullopt});
  response.cluster_authorized_operations =
      request.include_cluster_authorized_operations
          ? authorized_operations(ctx, ResourceType::kCluster, security::kClusterResourceName)
          : kAuthorizedOperationsOmitted;
  response.encode(out, v);
}

namespace {

using ConfigEntry = pr::DescribeConfigsResponse::DescribeConfigsResourceResult;

bool wanted_key(const std::optional<std::vector<std::string>>& keys, const char* name) {
  if (!keys || keys->empty()) return true;
  for (const auto& k : *keys) {
    if (k == name) return true;
  }
  return false;
}

ConfigEntry make_entry(const ConfigDef& def, std::optional<std::string> value, ConfigSource source,
                       bool include_doc) {
  ConfigEntry e;
  e.name = def.name;
  e.value = std::move(value);
  e.read_only = def.read_only;
  e.is_default = source == ConfigSource::kDefault;
  e.config_source = static_cast<int8_t>(source);
  e.is_sensitive = def.type == ConfigType::kPassword;
  e.config_type = static_cast<int8_t>(def.type);
  if (e.is_sensitive) e.value = std::nullopt;
  if (include_doc) e.documentation = def.doc;
  return e;
}

using Synonym = pr::DescribeConfigsResponse::DescribeConfigsSynonym;

// Where a broker key's value comes from, most specific first: this broker's dynamic value, the
// cluster-wide dynamic default, server.properties. The built-in default is not included.
std::vector<Synonym> broker_layers(const BrokerConfig& config, const DynamicLayers& dynamic,
                                   const std::string& key) {
  std::vector<Synonym> chain;
  if (auto it = dynamic.broker.find(key); it != dynamic.broker.end()) {
    chain.push_back({key, it->second, static_cast<int8_t>(ConfigSource::kDynamicBroker)});
  }
  if (auto it = dynamic.cluster_default.find(key); it != dynamic.cluster_default.end()) {
    chain.push_back({key, it->second, static_cast<int8_t>(ConfigSource::kDynamicDefaultBroker)});
  }
  if (auto it = config.given.find(key); it != config.given.end()) {
    chain.push_back({key, it->second, static_cast<int8_t>(ConfigSource::kStaticBroker)});
  }
  return chain;
}

void describe_topic_configs(const BrokerConfig& config, const DynamicLayers& dynamic,
                            const TopicInfo& topic,
                            const pr::DescribeConfigsRequest::DescribeConfigsResource& resource,
                            bool synonyms, bool docs,
                            pr::DescribeConfigsResponse::DescribeConfigsResult& result) {
  for (const auto& def : topic_config_defs()) {
    if (!wanted_key(resource.configuration_keys, def.name)) continue;
    std::vector<Synonym> chain;
    if (auto it = topic.configs.find(def.name); it != topic.configs.end()) {
      chain.push_back({def.name, it->second, static_cast<int8_t>(ConfigSource::kDynamicTopic)});
    }
    if (def.broker_synonym) {
      auto inherited = broker_layers(config, dynamic, def.broker_synonym);
      chain.insert(chain.end(), inherited.begin(), inherited.end());
    }
    std::optional<std::string> value =
        def.default_value ? std::optional<std::string>(def.default_value) : std::nullopt;
    ConfigSource source = ConfigSource::kDefault;
    if (!chain.empty()) {
      value = chain.front().value;
      source = static_cast<ConfigSource>(chain.front().source);
    }
    if (def.default_value) {
      chain.push_back({def.broker_synonym ? def.broker_synonym : def.name, def.default_value,
                       static_cast<int8_t>(ConfigSource::kDefault)});
    }
    auto entry = make_entry(def, value, source, docs);
    entry.read_only = false;
    if (synonyms) entry.synonyms = std::move(chain);
    result.configs.push_back(std::move(entry));
  }
}

// `cluster_default`: the resource with an empty name, which holds only the dynamic defaults.
void describe_broker_configs(const BrokerConfig& config, const DynamicLayers& dynamic,
                             bool cluster_default,
                             const pr::DescribeConfigsRequest::DescribeConfigsResource& resource,
                             bool synonyms, bool docs,
                             pr::DescribeConfigsResponse::DescribeConfigsResult& result) {
  for (const auto& def : broker_config_defs()) {
    if (!wanted_key(resource.configuration_keys, def.name)) continue;
    std::vector<Synonym> chain;
    if (cluster_default) {
      auto it = dynamic.cluster_default.find(def.name);
      if (it == dynamic.cluster_default.end()) continue;
      chain.push_back(
          {def.name, it->second, static_cast<int8_t>(ConfigSource::kDynamicDefaultBroker)});
    } else {
      chain = broker_layers(config, dynamic, def.name);
    }
    std::optional<std::string> value =
        def.default_value ? std::optional<std::string>(def.default_value) : std::nullopt;
    ConfigSource source = ConfigSource::kDefault;
    if (!chain.empty()) {
      value = chain.front().value;
      source = static_cast<ConfigSource>(chain.front().source);
    } else if (value) {
      chain.push_back({def.name, value, static_cast<int8_t>(ConfigSource::kDefault)});
    }
    auto entry = make_entry(def, value, source, docs);
    if (synonyms) entry.synonyms = std::move(chain);
    result.configs.push_back(std::move(entry));
  }
}

}  // namespace

void handle_describe_configs(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::DescribeConfigsRequest request;
  request.decode(body, v);
  const auto& config = ctx.broker.config();
  const auto dynamic = ctx.broker.dynamic_configs().snapshot();
  pr::DescribeConfigsResponse response;
  for (const auto& resource : request.resources) {
    auto& result = response.results.emplace_back();
    result.resource_type = resource.resource_type;
    result.resource_name = resource.resource_name;
    if (resource.resource_type == kResourceTopic) {
      if (!authorized(ctx, AclOperation::kDescribeConfigs, ResourceType::kTopic,
                      resource.resource_name)) {
        result.error_code = pr::code(ErrorCode::kTopicAuthorizationFailed);
        continue;
      }
      auto topic = ctx.broker.topics().find(resource.resource_name);
      if (!topic) {
        result.error_code = pr::code(ErrorCode::kUnknownTopicOrPartition);
        result.error_message = "Topic " + resource.resource_name + " does not exist.";
        continue;
      }
      describe_topic_configs(config, dynamic, *topic, resource, request.include_synonyms,
                             request.include_documentation, result);
    } else if (resource.resource_type == kResourceBroker) {
      if (!authorized_on_cluster(ctx, AclOperation::kDescribeConfigs)) {
        result.error_code = pr::code(ErrorCode::kClusterAuthorizationFailed);
        continue;
      }
      if (!resource.resource_name.empty() &&
          resource.resource_name != std::to_string(config.node_id)) {
        result.error_code = pr::code(ErrorCode::kInvalidRequest);
        result.error_message = "Unexpected broker id, expected " + std::to_string(config.node_id);
        continue;
      }
      describe_broker_configs(config, dynamic, resource.resource_name.empty(), resource,
                              request.include_synonyms, request.include_documentation, result);
    } else {
      result.error_code = pr::code(ErrorCode::kInvalidRequest);
      result.error_message = "Unsupported resource type " + std::to_string(resource.resource_type);
    }
  }
  response.encode(out, v);
}

}  // namespace oxbow::broker
