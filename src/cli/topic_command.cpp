#include <CLI/CLI.hpp>
#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cli/client_config.h"
#include "cli/commands.h"
#include "cli/topic_offsets.h"
#include "rdkafka/offsets.h"

namespace oxbow::cli {
namespace {

struct TopicOptions {
  ClientOptions client;
  std::string topic;
  int partitions = -1;
  int replication_factor = -1;
  std::vector<std::string> configs;
  int total_partitions = 0;
  std::vector<std::string> sets;     // key=value overrides to add or change
  std::vector<std::string> deletes;  // keys whose override to remove
  int32_t partition = 0;
  int64_t before_offset = 0;
};

using TopicConfigs = std::map<std::string, std::string>;

struct ConfigResourceDestroyer {
  void operator()(rd_kafka_ConfigResource_t* resource) const {
    rd_kafka_ConfigResource_destroy(resource);
  }
};
using ConfigResourceHandle = std::unique_ptr<rd_kafka_ConfigResource_t, ConfigResourceDestroyer>;

struct PartitionListDestroyer {
  void operator()(rd_kafka_topic_partition_list_t* list) const {
    rd_kafka_topic_partition_list_destroy(list);
  }
};
using PartitionListHandle =
    std::unique_ptr<rd_kafka_topic_partition_list_t, PartitionListDestroyer>;

// A producer handle (librdkafka's admin client) that never has the broker create a topic it asks
// about: describing a topic deleted meanwhile must not bring it back.
KafkaHandle make_admin_client(const ClientOptions& client) {
  return make_kafka_handle(RD_KAFKA_PRODUCER,
                           make_kafka_conf(client, {{"allow.auto.create.topics", "false"}}));
}

void check_topic_results(const rd_kafka_topic_result_t** results, size_t count) {
  bool any_failed = false;
  for (size_t i = 0; i < count; ++i) {
    const auto err = rd_kafka_topic_result_error(results[i]);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) continue;
    print_error(rd_kafka_topic_result_name(results[i]), err,
                or_empty(rd_kafka_topic_result_error_string(results[i])));
    any_failed = true;
  }
  if (any_failed) throw CLI::RuntimeError(1);
}

rd_kafka_NewTopic_t* make_new_topic(const TopicOptions& options) {
  char errstr[512];
  rd_kafka_NewTopic_t* new_topic = rd_kafka_NewTopic_new(
      options.topic.c_str(), options.partitions, options.replication_factor, errstr, sizeof errstr);
  if (new_topic == nullptr) fail(options.topic, RD_KAFKA_RESP_ERR__INVALID_ARG, errstr);
  for (const auto& config : options.configs) {
    std::string key, value;
    if (!split_key_value(config, key, value)) {
      rd_kafka_NewTopic_destroy(new_topic);
      fail(fmt::format("invalid topic config '{}': expected key=value", config));
    }
    rd_kafka_NewTopic_set_config(new_topic, key.c_str(), value.c_str());
  }
  return new_topic;
}

void create_topic(const TopicOptions& options) {
  const KafkaHandle rk = make_admin_client(options.client);
  rd_kafka_NewTopic_t* new_topic = make_new_topic(options);
  const auto admin_options = make_admin_options(rk.get(), RD_KAFKA_ADMIN_OP_CREATETOPICS);
  const QueueHandle queue{rd_kafka_queue_new(rk.get())};
  rd_kafka_CreateTopics(rk.get(), &new_topic, 1, admin_options.get(), queue.get());
  rd_kafka_NewTopic_destroy(new_topic);

  const EventHandle event = wait_for_admin_result(queue.get(), options.topic);
  const auto* result = rd_kafka_event_CreateTopics_result(event.get());
  size_t count = 0;
  const auto** topics = rd_kafka_CreateTopics_result_topics(result, &count);
  check_topic_results(topics, count);
  fmt::print("created topic {}\n", options.topic);
}

void delete_topic(const TopicOptions& options) {
  const KafkaHandle rk = make_admin_client(options.client);
  rd_kafka_DeleteTopic_t* doomed = rd_kafka_DeleteTopic_new(options.topic.c_str());
  const auto admin_options = make_admin_options(rk.get(), RD_KAFKA_ADMIN_OP_DELETETOPICS);
  const QueueHandle queue{rd_kafka_queue_new(rk.get())};
  rd_kafka_DeleteTopics(rk.get(), &doomed, 1, admin_options.get(), queue.get());
  rd_kafka_DeleteTopic_destroy(doomed);

  const EventHandle event = wait_for_admin_result(queue.get(), options.topic);
  const auto* result = rd_kafka_event_DeleteTopics_result(event.get());
  size_t count = 0;
  const auto** topics = rd_kafka_DeleteTopics_result_topics(result, &count);
  check_topic_results(topics, count);
  fmt::print("deleted topic {}\n", options.topic);
}

void add_partitions(const TopicOptions& options) {
  const KafkaHandle rk = make_admin_client(options.client);
  char errstr[512];
  rd_kafka_NewPartitions_t* new_partitions = rd_kafka_NewPartitions_new(
      options.topic.c_str(), static_cast<size_t>(options.total_partitions), errstr, sizeof errstr);
  if (new_partitions == nullptr) fail(options.topic, RD_KAFKA_RESP_ERR__INVALID_ARG, errstr);
  const auto admin_options = make_admin_options(rk.get(), RD_KAFKA_ADMIN_OP_CREATEPARTITIONS);
  const QueueHandle queue{rd_kafka_queue_new(rk.get())};
  rd_kafka_CreatePartitions(rk.get(), &new_partitions, 1, admin_options.get(), queue.get());
  rd_kafka_NewPartitions_destroy(new_partitions);

  const EventHandle event = wait_for_admin_result(queue.get(), options.topic);
  const auto* result = rd_kafka_event_CreatePartitions_result(event.get());
  size_t count = 0;
  const auto** topics = rd_kafka_CreatePartitions_result_topics(result, &count);
  check_topic_results(topics, count);
  fmt::print("topic {} now has {} partitions\n", options.topic, options.total_partitions);
}

ConfigResourceHandle make_topic_resource(const std::string& topic) {
  return ConfigResourceHandle{rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, topic.c_str())};
}

// The single resource of a DescribeConfigs/AlterConfigs result; fails the
// command when the broker rejected it.
const rd_kafka_ConfigResource_t* single_resource(const rd_kafka_ConfigResource_t** resources,
                                                 size_t count, const std::string& topic) {
  if (count != 1) fail(topic, RD_KAFKA_RESP_ERR__BAD_MSG, "unexpected number of results");
  const auto err = rd_kafka_ConfigResource_error(resources[0]);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
    fail(topic, err, or_empty(rd_kafka_ConfigResource_error_string(resources[0])));
  return resources[0];
}

TopicConfigs dynamic_overrides(const rd_kafka_ConfigResource_t* resource) {
  TopicConfigs overrides;
  size_t count = 0;
  const auto** entries = rd_kafka_ConfigResource_configs(resource, &count);
  for (size_t i = 0; i < count; ++i) {
    if (rd_kafka_ConfigEntry_source(entries[i]) != RD_KAFKA_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG)
      continue;
    overrides.emplace(rd_kafka_ConfigEntry_name(entries[i]),
                      or_empty(rd_kafka_ConfigEntry_value(entries[i])));
  }
  return overrides;
}

TopicConfigs describe_overrides(rd_kafka_t* rk, const std::string& topic) {
  const ConfigResourceHandle resource = make_topic_resource(topic);
  rd_kafka_ConfigResource_t* request = resource.get();
  const auto admin_options = make_admin_options(rk, RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS);
  const QueueHandle queue{rd_kafka_queue_new(rk)};
  rd_kafka_DescribeConfigs(rk, &request, 1, admin_options.get(), queue.get());

  const EventHandle event = wait_for_admin_result(queue.get(), topic);
  size_t count = 0;
  const auto** resources = rd_kafka_DescribeConfigs_result_resources(
      rd_kafka_event_DescribeConfigs_result(event.get()), &count);
  return dynamic_overrides(single_resource(resources, count, topic));
}

std::string join_configs(const TopicConfigs& configs, std::string_view separator) {
  std::string joined;
  for (const auto& [key, value] : configs)
    joined += fmt::format("{}{}={}", joined.empty() ? "" : separator, key, value);
  return joined;
}

void list_topics(const TopicOptions& options) {
  const KafkaHandle rk = make_admin_client(options.client);
  const MetadataHandle md = fetch_metadata(rk.get());
  std::vector<std::string_view> names;
  for (int i = 0; i < md->topic_cnt; ++i) names.emplace_back(md->topics[i].topic);
  std::sort(names.begin(), names.end());
  for (const auto name : names) fmt::print("{}\n", name);
}

std::string join_ids(const int32_t* ids, int count) {
  std::string joined;
  for (int i = 0; i < count; ++i) joined += fmt::format("{}{}", i == 0 ? "" : ",", ids[i]);
  return joined;
}

std::string describe_watermarks(rd_kafka_t* rk, const char* topic, int32_t partition) {
  int64_t low = 0;
  int64_t high = 0;
  const auto err = rdkafka::query_watermarks(rk, topic, partition, &low, &high, kRequestTimeoutMs);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
    return fmt::format("LowWatermark: ?\tHighWatermark: ?\t({})", rd_kafka_err2name(err));
  return fmt::format("LowWatermark: {}\tHighWatermark: {}", low, high);
}

void describe_topic(const TopicOptions& options) {
  const KafkaHandle rk = make_admin_client(options.client);
  // All topics rather than just this one, so that describing a missing
  // topic cannot auto-create it.
  const MetadataHandle md = fetch_metadata(rk.get());
  const auto* topic = find_topic(*md, options.topic);
  if (topic == nullptr) fail(options.topic, RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART);
  if (topic->err != RD_KAFKA_RESP_ERR_NO_ERROR) fail(options.topic, topic->err);

  std::vector<const rd_kafka_metadata_partition_t*> partitions;
  for (int i = 0; i < topic->partition_cnt; ++i) partitions.push_back(&topic->partitions[i]);
  std::sort(partitions.begin(), partitions.end(), [](auto* a, auto* b) { return a->id < b->id; });

  const int replication_factor = partitions.empty() ? 0 : partitions.front()->replica_cnt;
  fmt::print("Topic: {}\tPartitionCount: {}\tReplicationFactor: {}\n", topic->topic,
             topic->partition_cnt, replication_factor);
  fmt::print("Configs: {}\n", join_configs(describe_overrides(rk.get(), options.topic), ","));
  for (const auto* p : partitions) {
    fmt::print("\tPartition: {}\tLeader: {}\tReplicas: {}\tIsr: {}\t{}", p->id, p->leader,
               join_ids(p->replicas, p->replica_cnt), join_ids(p->isrs, p->isr_cnt),
               describe_watermarks(rk.get(), topic->topic, p->id));
    if (p->err != RD_KAFKA_RESP_ERR_NO_ERROR) fmt::print("\tError: {}", rd_kafka_err2name(p->err));
    fmt::print("\n");
  }
}

TopicConfigs apply_changes(TopicConfigs configs, const TopicOptions& options) {
  for (const auto& key : options.deletes) {
    if (configs.erase(key) == 0) fail(fmt::format("{}: {} is not overridden", options.topic, key));
  }
  for (const auto& setting : options.sets) {
    std::string key, value;
    if (!split_key_value(setting, key, value))
      fail(fmt::format("invalid topic config '{}': expected key=value", setting));
    configs[key] = value;
  }
  return configs;
}

void replace_overrides(rd_kafka_t* rk, const std::string& topic, const TopicConfigs& configs) {
  const ConfigResourceHandle resource = make_topic_resource(topic);
  for (const auto& [key, value] : configs)
    rd_kafka_ConfigResource_set_config(resource.get(), key.c_str(), value.c_str());
  rd_kafka_ConfigResource_t* request = resource.get();
  const auto admin_options = make_admin_options(rk, RD_KAFKA_ADMIN_OP_ALTERCONFIGS);
  const QueueHandle queue{rd_kafka_queue_new(rk)};
  rd_kafka_AlterConfigs(rk, &request, 1, admin_options.get(), queue.get());

  const EventHandle event = wait_for_admin_result(queue.get(), topic);
  size_t count = 0;
  const auto** resources = rd_kafka_AlterConfigs_result_resources(
      rd_kafka_event_AlterConfigs_result(event.get()), &count);
  single_resource(resources, count, topic);
}

void alter_topic_config(const TopicOptions& options) {
  if (options.sets.empty() && options.deletes.empty())
    fail("nothing to alter: give --set key=value or --delete key");
  const KafkaHandle rk = make_admin_client(options.client);
  // AlterConfigs (librdkafka 2.0.2 has no incremental variant) replaces all of
  // the topic's overrides, so the untouched ones must be sent back as they are.
  const TopicConfigs configs = apply_changes(describe_overrides(rk.get(), options.topic), options);
  replace_overrides(rk.get(), options.topic, configs);
  fmt::print("altered {}: {}\n", options.topic, join_configs(configs, ", "));
}

PartitionListHandle make_before_offsets(const TopicOptions& options) {
  PartitionListHandle offsets{rd_kafka_topic_partition_list_new(1)};
  rd_kafka_topic_partition_list_add(offsets.get(), options.topic.c_str(), options.partition)
      ->offset = options.before_offset;  // -1 is RD_KAFKA_OFFSET_END: the high watermark
  return offsets;
}

void delete_records(const TopicOptions& options) {
  const KafkaHandle rk = make_admin_client(options.client);
  rd_kafka_DeleteRecords_t* doomed = rd_kafka_DeleteRecords_new(make_before_offsets(options).get());
  const auto admin_options = make_admin_options(rk.get(), RD_KAFKA_ADMIN_OP_DELETERECORDS);
  const QueueHandle queue{rd_kafka_queue_new(rk.get())};
  rd_kafka_DeleteRecords(rk.get(), &doomed, 1, admin_options.get(), queue.get());
  rd_kafka_DeleteRecords_destroy(doomed);

  const EventHandle event = wait_for_admin_result(queue.get(), options.topic);
  const auto* results =
      rd_kafka_DeleteRecords_result_offsets(rd_kafka_event_DeleteRecords_result(event.get()));
  bool any_failed = false;
  for (int i = 0; i < results->cnt; ++i) {
    const auto& result = results->elems[i];
    const std::string subject = fmt::format("{} [{}]", result.topic, result.partition);
    if (result.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      print_error(subject, result.err);
      any_failed = true;
    } else {
      fmt::print("{}: low watermark now {}\n", subject, result.offset);
    }
  }
  if (any_failed) throw CLI::RuntimeError(1);
}

using TopicAction = void (*)(const TopicOptions&);

CLI::App* add_topic_subcommand(CLI::App& topic_cmd, const std::string& name,
                               const std::string& description, TopicAction action,
                               const std::shared_ptr<TopicOptions>& options,
                               bool takes_topic_name = true) {
  CLI::App* sub = topic_cmd.add_subcommand(name, description);
  add_client_options(*sub, options->client);
  if (takes_topic_name) sub->add_option("name", options->topic, "Topic name")->required();
  sub->callback([action, options] { action(*options); });
  return sub;
}

}  // namespace

void add_topic_command(CLI::App& app) {
  auto options = std::make_shared<TopicOptions>();
  CLI::App* topic =
      app.add_subcommand("topic", "Create, list, describe, configure and delete topics");
  topic->require_subcommand(1);

  CLI::App* create =
      add_topic_subcommand(*topic, "create", "Create a topic", create_topic, options);
  create
      ->add_option("--partitions", options->partitions, "Number of partitions (-1: broker default)")
      ->capture_default_str();
  create
      ->add_option("--replication-factor", options->replication_factor,
                   "Replication factor (-1: broker default)")
      ->capture_default_str();
  create->add_option("--config", options->configs, "Topic configuration key=value (repeatable)")
      ->allow_extra_args(false);

  add_topic_subcommand(*topic, "list", "List topic names", list_topics, options, false);
  add_topic_subcommand(*topic, "describe", "Show partitions, leaders, replicas and watermarks",
                       describe_topic, options);
  add_topic_subcommand(*topic, "delete", "Delete a topic", delete_topic, options);

  CLI::App* grow = add_topic_subcommand(
      *topic, "add-partitions", "Increase a topic's partition count", add_partitions, options);
  grow->add_option("--total", options->total_partitions, "New total number of partitions")
      ->required()
      ->check(CLI::PositiveNumber);

  CLI::App* alter = add_topic_subcommand(*topic, "alter-config", "Set or remove topic overrides",
                                         alter_topic_config, options);
  alter->add_option("--set", options->sets, "Override key=value (repeatable)")
      ->allow_extra_args(false);
  alter->add_option("--delete", options->deletes, "Remove the override of key (repeatable)")
      ->allow_extra_args(false);

  CLI::App* truncate = add_topic_subcommand(*topic, "delete-records",
                                            "Delete a partition's records before an offset",
                                            delete_records, options);
  truncate->add_option("--partition", options->partition, "Partition number")
      ->required()
      ->check(CLI::NonNegativeNumber);
  truncate
      ->add_option("--before", options->before_offset,
                   "Delete records below this offset (-1: the high watermark)")
      ->required()
      ->check(CLI::Range(int64_t{-1}, std::numeric_limits<int64_t>::max()));

  add_get_offsets_subcommand(*topic);
}

}  // namespace oxbow::cli
