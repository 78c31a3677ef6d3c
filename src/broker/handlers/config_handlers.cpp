// Changing configuration and data: AlterConfigs, IncrementalAlterConfigs, DeleteRecords, and the
// single-node answers of DescribeLogDirs and ElectLeaders.
#include <sys/statvfs.h>

#include "broker/broker.h"
#include "broker/config/config_defs.h"
#include "broker/config/dynamic_configs.h"
#include "broker/handlers/authorization.h"
#include "broker/handlers/handlers.h"
#include "broker/topics/topic_registry.h"
#include "common/properties.h"
#include "protocol/errors.h"
#include "protocol/messages/alter_configs.h"
#include "protocol/messages/delete_records.h"
#include "protocol/messages/describe_log_dirs.h"
#include "protocol/messages/elect_leaders.h"
#include "protocol/messages/incremental_alter_configs.h"
#include "storage/log_manager.h"
#include "storage/partition_log.h"

namespace oxbow::broker {

namespace pr = oxbow::protocol;
using pr::ErrorCode;

namespace {

enum class ConfigOp : int8_t { kSet = 0, kDelete = 1, kAppend = 2, kSubtract = 3 };

using ResourceResponse = pr::AlterConfigsResponse::AlterConfigsResourceResponse;

// Applies the change to a topic or the broker, or explains why not.
TopicRegistry::Result apply_to_resource(
    const RequestContext& ctx, int8_t type, const std::string& name,
    const std::function<TopicRegistry::Result(ConfigMap&)>& change, bool validate_only) {
  auto& broker = ctx.broker;
  if (type == kResourceBroker) {
    if (!authorized_on_cluster(ctx, AclOperation::kAlterConfigs)) {
      return {ErrorCode::kClusterAuthorizationFailed, "Authorization failed."};
    }
    return broker.alter_broker_configs(name, change, validate_only);
  }
  if (type == kResourceTopic &&
      !authorized(ctx, AclOperation::kAlterConfigs, ResourceType::kTopic, name)) {
    return {ErrorCode::kTopicAuthorizationFailed, "Authorization failed."};
  }
  if (type != kResourceTopic)
    return {ErrorCode::kInvalidRequest, "Unsupported resource type " + std::to_string(type)};
  auto topic = broker.topics().find(name);
  if (!topic) return {ErrorCode::kUnknownTopicOrPartition, "Topic " + name + " does not exist."};
  ConfigMap configs = topic->configs;
  if (auto result = change(configs); result.error != ErrorCode::kNone) return result;
  return broker.topics().alter_configs(name, configs, validate_only);
}

// APPEND and SUBTRACT work on list configs, item by item.
TopicRegistry::Result change_list(ConfigMap& configs, const std::string& key,
                                  const std::string& value, bool append) {
  const ConfigDef* def = find_topic_config(key);
  if (!def) def = find_broker_config(key);
  if (!def || def->type != ConfigType::kList) {
    return {ErrorCode::kInvalidConfig,
            "Config " + key + " is not a list: APPEND and SUBTRACT need one"};
  }
  std::string current =
      configs.count(key) ? configs[key] : (def->default_value ? def->default_value : "");
  std::vector<std::string> items;
  for (auto& item : split(current, ',')) {
    if (!item.empty()) items.push_back(item);
  }
  for (auto& item : split(value, ',')) {
    auto found = std::find(items.begin(), items.end(), item);
    if (append && found == items.end()) items.push_back(item);
    if (!append && found != items.end()) items.erase(found);
  }
  std::string joined;
  for (const auto& item : items) joined += (joined.empty() ? "" : ",") + item;
  configs[key] = joined;
  return {};
}

}  // namespace

void handle_alter_configs(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::AlterConfigsRequest request;
  request.decode(body, v);
  pr::AlterConfigsResponse response;
  for (const auto& resource : request.resources) {
    // Non-incremental: the given set replaces every override.
    auto result = apply_to_resource(
        ctx, resource.resource_type, resource.resource_name,
        [&](ConfigMap& configs) -> TopicRegistry::Result {
          configs.clear();
          for (const auto& c : resource.configs) {
            if (!c.value) return {ErrorCode::kInvalidConfig, "Null value for " + c.name};
            configs[c.name] = *c.value;
          }
          return {};
        },
        request.validate_only);
    ResourceResponse r;
    r.error_code = pr::code(result.error);
    if (result.error != ErrorCode::kNone) r.error_message = result.message;
    r.resource_type = resource.resource_type;
    r.resource_name = resource.resource_name;
    response.responses.push_back(std::move(r));
  }
  response.encode(out, v);
}

void handle_incremental_alter_configs(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::IncrementalAlterConfigsRequest request;
  request.decode(body, v);
  pr::IncrementalAlterConfigsResponse response;
  for (const auto& resource : request.resources) {
    auto result = apply_to_resource(
        ctx, resource.resource_type, resource.resource_name,
        [&](ConfigMap& configs) -> TopicRegistry::Result {
          for (const auto& c : resource.configs) {
            auto op = static_cast<ConfigOp>(c.config_operation);
            if (op == ConfigOp::kDelete) {
              configs.erase(c.name);
              continue;
            }
            if (!c.value) return {ErrorCode::kInvalidConfig, "Null value for " + c.name};
            if (op == ConfigOp::kSet) {
              configs[c.name] = *c.value;
            } else if (op == ConfigOp::kAppend || op == ConfigOp::kSubtract) {
              if (auto r = change_list(configs, c.name, *c.value, op == ConfigOp::kAppend);
                  r.error != ErrorCode::kNone) {
                return r;
              }
            } else {
              return {ErrorCode::kInvalidRequest,
                      "Unknown config operation " + std::to_string(c.config_operation)};
            }
          }
          return {};
        },
        request.validate_only);
    auto& r = response.responses.emplace_back();
    r.error_code = pr::code(result.error);
    if (result.error != ErrorCode::kNone) r.error_message = result.message;
    r.resource_type = resource.resource_type;
    r.resource_name = resource.resource_name;
  }
  response.encode(out, v);
}

void handle_delete_records(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::DeleteRecordsRequest request;
  request.decode(body, v);
  pr::DeleteRecordsResponse response;
  for (const auto& topic : request.topics) {
    auto& topic_out = response.topics.emplace_back();
    topic_out.name = topic.name;
    bool allowed = authorized(ctx, AclOperation::kDelete, ResourceType::kTopic, topic.name);
    for (const auto& p : topic.partitions) {
      auto& part = topic_out.partitions.emplace_back();
      part.partition_index = p.partition_index;
      part.low_watermark = -1;
      if (!allowed) {
        part.error_code = pr::code(ErrorCode::kTopicAuthorizationFailed);
        continue;
      }
      auto log = ctx.broker.topics().partition(topic.name, p.partition_index);
      if (!log) {
        part.error_code = pr::code(ErrorCode::kUnknownTopicOrPartition);
        continue;
      }
      int64_t low = -1;
      part.error_code = pr::code(log->delete_records_before(p.offset, low));
      part.low_watermark = low;
    }
  }
  response.encode(out, v);
}

void handle_describe_log_dirs(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::DescribeLogDirsRequest request;
  request.decode(body, v);
  if (!authorized_on_cluster(ctx, AclOperation::kDescribe)) {
    pr::DescribeLogDirsResponse denied;
    denied.error_code = pr::code(ErrorCode::kClusterAuthorizationFailed);
    denied.encode(out, v);
    return;
  }
  auto& topics = ctx.broker.topics();
  // Which partitions: all (null topics) or those asked for.
  std::vector<std::pair<std::string, std::vector<int32_t>>> wanted;
  if (!request.topics) {
    for (const auto& t : topics.list()) {
      std::vector<int32_t> all(static_cast<size_t>(t.partitions));
      for (int32_t p = 0; p < t.partitions; ++p) all[static_cast<size_t>(p)] = p;
      wanted.emplace_back(t.name, std::move(all));
    }
  } else {
    for (const auto& t : *request.topics) wanted.emplace_back(t.topic, t.partitions);
  }
  pr::DescribeLogDirsResponse response;
  for (const auto& dir : ctx.broker.logs().log_dirs()) {
    auto& result = response.results.emplace_back();
    result.log_dir = dir;
    struct statvfs fs;
    if (::statvfs(dir.c_str(), &fs) == 0) {
      result.total_bytes = static_cast<int64_t>(fs.f_blocks) * static_cast<int64_t>(fs.f_frsize);
      result.usable_bytes = static_cast<int64_t>(fs.f_bavail) * static_cast<int64_t>(fs.f_frsize);
    }
    for (const auto& [name, partitions] : wanted) {
      pr::DescribeLogDirsResponse::DescribeLogDirsTopic topic_out;
      topic_out.name = name;
      for (int32_t p : partitions) {
        auto log = topics.partition(name, p);
        if (!log || log->dir().rfind(dir, 0) != 0) continue;
        topic_out.partitions.push_back({p, static_cast<int64_t>(log->size_bytes()), 0, false});
      }
      if (!topic_out.partitions.empty()) result.topics.push_back(std::move(topic_out));
    }
  }
  response.encode(out, v);
}

void handle_elect_leaders(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::ElectLeadersRequest request;
  request.decode(body, v);
  auto& topics = ctx.broker.topics();
  pr::ElectLeadersResponse response;
  if (!authorized_on_cluster(ctx, AclOperation::kAlter)) {
    // v0 has no top-level error: each asked-for partition carries it, as in Kafka.
    response.error_code = pr::code(ErrorCode::kClusterAuthorizationFailed);
    for (const auto& t : request.topic_partitions.value_or(
             std::vector<pr::ElectLeadersRequest::TopicPartitions>{})) {
      auto& result = response.replica_election_results.emplace_back();
      result.topic = t.topic;
      for (int32_t p : t.partitions)
        result.partition_result.push_back({p, response.error_code, "Authorization failed."});
    }
    response.encode(out, v);
    return;
  }
  auto answer = [&](const std::string& topic, const std::vector<int32_t>& partitions) {
    auto& result = response.replica_election_results.emplace_back();
    result.topic = topic;
    for (int32_t p : partitions) {
      // One replica per partition: it already leads.
      bool exists = topics.partition(topic, p) != nullptr;
      result.partition_result.push_back(
          {p,
           pr::code(exists ? ErrorCode::kElectionNotNeeded : ErrorCode::kUnknownTopicOrPartition),
           exists ? std::optional<std::string>("Leader election not needed for topic partition")
                  : std::optional<std::string>("This server does not host this topic-partition.")});
    }
  };
  if (!request.topic_partitions) {
    for (const auto& t : topics.list()) {
      std::vector<int32_t> all;
      for (int32_t p = 0; p < t.partitions; ++p) all.push_back(p);
      answer(t.name, all);
    }
  } else {
    for (const auto& t : *request.topic_partitions) answer(t.topic, t.partitions);
  }
  response.encode(out, v);
}

}  // namespace oxbow::broker
