#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <ctime>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cli/client_config.h"
#include "cli/commands.h"
#include "cli/consumer_group_view.h"
#include "cli/reset_times.h"
#include "rdkafka/offsets.h"

namespace oxbow::cli {
namespace {

struct GroupOptions {
  ClientOptions client;
  std::string group;
  std::vector<std::string> groups;  // delete takes several
  std::vector<std::string> states;  // list --state filter
  // reset-offsets
  std::string topic;
  std::optional<int> partition;
  bool to_earliest = false;
  bool to_latest = false;
  std::optional<int64_t> to_offset;
  std::optional<std::string> to_datetime;
  bool dry_run = false;
};

struct PartitionListDestroyer {
  void operator()(rd_kafka_topic_partition_list_t* list) const {
    rd_kafka_topic_partition_list_destroy(list);
  }
};
struct ErrorDestroyer {
  void operator()(rd_kafka_error_t* error) const { rd_kafka_error_destroy(error); }
};
using PartitionListHandle =
    std::unique_ptr<rd_kafka_topic_partition_list_t, PartitionListDestroyer>;
using ErrorHandle = std::unique_ptr<rd_kafka_error_t, ErrorDestroyer>;

std::string or_dash(const char* text) {
  return text == nullptr || *text == '\0' ? std::string{"-"} : std::string{text};
}

std::string partition_subject(std::string_view topic, int32_t partition) {
  return fmt::format("{} [{}]", topic, partition);
}

// The admin API works on any handle; a consumer handle (without group.id,
// so it never joins anything) is also what rd_kafka_offsets_for_times wants.
KafkaHandle make_client(const ClientOptions& client) {
  return make_kafka_handle(RD_KAFKA_CONSUMER,
                           make_kafka_conf(client, {{"enable.auto.commit", "false"},
                                                    {"enable.auto.offset.store", "false"}}));
}

// Fails on a group-level error of `result`.
void check_group_result(const rd_kafka_group_result_t* result) {
  const rd_kafka_error_t* error = rd_kafka_group_result_error(result);
  if (error == nullptr) return;
  fail(or_empty(rd_kafka_group_result_name(result)), rd_kafka_error_code(error),
       or_empty(rd_kafka_error_string(error)));
}

const rd_kafka_group_result_t* single_group_result(const rd_kafka_group_result_t** results,
                                                   size_t count, std::string_view group) {
  if (count != 1 || results[0] == nullptr)
    fail(group, RD_KAFKA_RESP_ERR__BAD_MSG, fmt::format("expected 1 group result, got {}", count));
  check_group_result(results[0]);
  return results[0];
}

struct Watermarks {
  int64_t low = -1;
  int64_t high = -1;
};

std::optional<Watermarks> query_watermarks(rd_kafka_t* rk, const std::string& topic,
                                           int32_t partition, rd_kafka_resp_err_t* err_out) {
  Watermarks w;
  const auto err =
      rdkafka::query_watermarks(rk, topic, partition, &w.low, &w.high, kRequestTimeoutMs);
  if (err_out != nullptr) *err_out = err;
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return std::nullopt;
  return w;
}

// ---------------------------------------------------------------- list

void list_groups(const GroupOptions& options) {
  std::vector<rd_kafka_consumer_group_state_t> states;
  for (const auto& name : options.states) {
    const auto state = rd_kafka_consumer_group_state_code(name.c_str());
    if (state == RD_KAFKA_CONSUMER_GROUP_STATE_UNKNOWN && name != "Unknown") {
      std::string known;
      for (int s = 0; s < RD_KAFKA_CONSUMER_GROUP_STATE__CNT; ++s)
        known += fmt::format(
            "{}{}", s == 0 ? "" : ", ",
            rd_kafka_consumer_group_state_name(static_cast<rd_kafka_consumer_group_state_t>(s)));
      fail(fmt::format("invalid --state '{}' (known: {})", name, known));
    }
    if (std::find(states.begin(), states.end(), state) == states.end()) states.push_back(state);
  }

  const KafkaHandle rk = make_client(options.client);
  const auto admin_options = make_admin_options(rk.get(), RD_KAFKA_ADMIN_OP_LISTCONSUMERGROUPS);
  if (!states.empty()) {
    const ErrorHandle error{rd_kafka_AdminOptions_set_match_consumer_group_states(
        admin_options.get(), states.data(), states.size())};
    if (error)
      fail("--state", rd_kafka_error_code(error.get()), rd_kafka_error_string(error.get()));
  }
  const QueueHandle queue{rd_kafka_queue_new(rk.get())};
  rd_kafka_ListConsumerGroups(rk.get(), admin_options.get(), queue.get());

  const EventHandle event = wait_for_admin_result(queue.get(), "list groups");
  const auto* result = rd_kafka_event_ListConsumerGroups_result(event.get());
  size_t count = 0;
  const auto** listings = rd_kafka_ListConsumerGroups_result_valid(result, &count);
  std::vector<std::pair<std::string, std::string>> groups;
  for (size_t i = 0; i < count; ++i)
    groups.emplace_back(
        rd_kafka_ConsumerGroupListing_group_id(listings[i]),
        rd_kafka_consumer_group_state_name(rd_kafka_ConsumerGroupListing_state(listings[i])));
  std::sort(groups.begin(), groups.end());
  std::vector<std::vector<std::string>> rows;
  for (auto& [group, state] : groups) rows.push_back({std::move(group), std::move(state)});
  print_table(rows);

  // Errors come from brokers that could not be asked; what the others said
  // is still printed above.
  size_t error_count = 0;
  const auto** errors = rd_kafka_ListConsumerGroups_result_errors(result, &error_count);
  for (size_t i = 0; i < error_count; ++i)
    print_error("list groups", rd_kafka_error_code(errors[i]),
                or_empty(rd_kafka_error_string(errors[i])));
  if (error_count > 0) throw CLI::RuntimeError(1);
}

// ---------------------------------------------------------------- describe

struct PartitionRow {
  int64_t committed = -1;  // -1: none
  std::string consumer_id = "-";
  std::string host = "-";
  std::string client_id = "-";
};
using PartitionKey = std::pair<std::string, int32_t>;

// Committed offsets of every partition the group has committed for.
std::map<PartitionKey, int64_t> committed_offsets(rd_kafka_t* rk, const std::string& group) {
  rd_kafka_ListConsumerGroupOffsets_t* request =
      rd_kafka_ListConsumerGroupOffsets_new(group.c_str(), nullptr);  // null: all partitions
  const auto admin_options = make_admin_options(rk, RD_KAFKA_ADMIN_OP_LISTCONSUMERGROUPOFFSETS);
  const QueueHandle queue{rd_kafka_queue_new(rk)};
  rd_kafka_ListConsumerGroupOffsets(rk, &request, 1, admin_options.get(), queue.get());
  rd_kafka_ListConsumerGroupOffsets_destroy(request);

  const EventHandle event = wait_for_admin_result(queue.get(), group);
  const auto* result = rd_kafka_event_ListConsumerGroupOffsets_result(event.get());
  size_t count = 0;
  const auto** groups = rd_kafka_ListConsumerGroupOffsets_result_groups(result, &count);
  const auto* group_result = single_group_result(groups, count, group);

  std::map<PartitionKey, int64_t> offsets;
  const auto* partitions = rd_kafka_group_result_partitions(group_result);
  for (int i = 0; partitions != nullptr && i < partitions->cnt; ++i) {
    const auto& p = partitions->elems[i];
    if (p.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      print_error(partition_subject(p.topic, p.partition), p.err);
      continue;
    }
    if (p.offset >= 0) offsets[{p.topic, p.partition}] = p.offset;
  }
  return offsets;
}

std::string describe_coordinator(const rd_kafka_Node_t* node) {
  if (node == nullptr) return "-";
  return fmt::format("{} ({}:{})", rd_kafka_Node_id(node), or_empty(rd_kafka_Node_host(node)),
                     rd_kafka_Node_port(node));
}

void describe_group(const GroupOptions& options) {
  const KafkaHandle rk = make_client(options.client);
  const auto admin_options = make_admin_options(rk.get(), RD_KAFKA_ADMIN_OP_DESCRIBECONSUMERGROUPS);
  const QueueHandle queue{rd_kafka_queue_new(rk.get())};
  const char* group_name = options.group.c_str();
  rd_kafka_DescribeConsumerGroups(rk.get(), &group_name, 1, admin_options.get(), queue.get());

  const EventHandle event = wait_for_admin_result(queue.get(), options.group);
  const auto* result = rd_kafka_event_DescribeConsumerGroups_result(event.get());
  size_t count = 0;
  const auto** descriptions = rd_kafka_DescribeConsumerGroups_result_groups(result, &count);
  if (count != 1 || descriptions[0] == nullptr)
    fail(options.group, RD_KAFKA_RESP_ERR__BAD_MSG,
         fmt::format("expected 1 group description, got {}", count));
  const auto* description = descriptions[0];
  if (const auto* error = rd_kafka_ConsumerGroupDescription_error(description))
    fail(options.group, rd_kafka_error_code(error), or_empty(rd_kafka_error_string(error)));

  auto state =
      rd_kafka_consumer_group_state_name(rd_kafka_ConsumerGroupDescription_state(description));
  size_t member_count = rd_kafka_ConsumerGroupDescription_member_count(description);
  std::string assignor = or_dash(rd_kafka_ConsumerGroupDescription_partition_assignor(description));

  std::map<PartitionKey, PartitionRow> rows;
  for (const auto& [key, offset] : committed_offsets(rk.get(), options.group))
    rows[key].committed = offset;

  bool dead =
      rd_kafka_ConsumerGroupDescription_state(description) == RD_KAFKA_CONSUMER_GROUP_STATE_DEAD;
  std::optional<ConsumerGroupView> consumer_group;
  if (dead && member_count == 0)
    consumer_group = describe_consumer_group(options.client, options.group);
  // Kafka answers DescribeGroups for an unknown group with state Dead and
  // no error; there is nothing to show then.
  if (dead && member_count == 0 && rows.empty() && !consumer_group)
    fail(options.group, RD_KAFKA_RESP_ERR_GROUP_ID_NOT_FOUND, "consumer group does not exist");

  std::string protocol;
  if (consumer_group) {
    state = consumer_group->state.c_str();
    member_count = consumer_group->members.size();
    assignor = consumer_group->assignor;
    protocol = fmt::format(" (consumer protocol, group epoch {})", consumer_group->group_epoch);
    for (const auto& member : consumer_group->members) {
      for (const auto& key : member.partitions)
        rows[key] = {rows[key].committed, member.member_id, member.host, member.client_id};
    }
  }
  for (size_t m = 0; !consumer_group && m < member_count; ++m) {
    const auto* member = rd_kafka_ConsumerGroupDescription_member(description, m);
    const auto* assignment = rd_kafka_MemberDescription_assignment(member);
    const auto* partitions =
        assignment == nullptr ? nullptr : rd_kafka_MemberAssignment_partitions(assignment);
    for (int i = 0; partitions != nullptr && i < partitions->cnt; ++i) {
      auto& row = rows[{partitions->elems[i].topic, partitions->elems[i].partition}];
      row.consumer_id = or_dash(rd_kafka_MemberDescription_consumer_id(member));
      row.host = or_dash(rd_kafka_MemberDescription_host(member));
      row.client_id = or_dash(rd_kafka_MemberDescription_client_id(member));
    }
  }

  fmt::print("Group {}: state {}, {} member{}, assignor {}{}, coordinator {}\n", options.group,
             state, member_count, member_count == 1 ? "" : "s", assignor, protocol,
             describe_coordinator(rd_kafka_ConsumerGroupDescription_coordinator(description)));
  if (rows.empty()) return;

  std::vector<std::vector<std::string>> table{{"GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET",
                                               "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST",
                                               "CLIENT-ID"}};
  for (const auto& [key, row] : rows) {
    const auto& [topic, partition] = key;
    const auto watermarks = query_watermarks(rk.get(), topic, partition, nullptr);
    const int64_t end = watermarks ? watermarks->high : -1;
    std::string lag = "-";
    if (row.committed >= 0 && end >= 0)
      lag = std::to_string(std::max<int64_t>(0, end - row.committed));
    table.push_back({options.group, topic, std::to_string(partition),
                     row.committed >= 0 ? std::to_string(row.committed) : "-",
                     end >= 0 ? std::to_string(end) : "-", lag, row.consumer_id, row.host,
                     row.client_id});
  }
  fmt::print("\n");
  print_table(table);
}

// ---------------------------------------------------------------- reset-offsets

std::vector<int32_t> partitions_to_reset(rd_kafka_t* rk, const GroupOptions& options) {
  const int count = topic_partition_count(rk, options.topic);
  if (options.partition) {
    if (*options.partition < 0 || *options.partition >= count)
      fail(partition_subject(options.topic, *options.partition),
           RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION, fmt::format("topic has {} partitions", count));
    return {*options.partition};
  }
  std::vector<int32_t> partitions(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) partitions[static_cast<size_t>(i)] = i;
  return partitions;
}

// First offset with a timestamp >= `timestamp_ms` per partition; -1 where
// there is none.
std::vector<int64_t> offsets_for_time(rd_kafka_t* rk, const std::string& topic,
                                      const std::vector<int32_t>& partitions,
                                      int64_t timestamp_ms) {
  const PartitionListHandle list{
      rd_kafka_topic_partition_list_new(static_cast<int>(partitions.size()))};
  for (const int32_t p : partitions)
    rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), p)->offset = timestamp_ms;
  const auto err = rd_kafka_offsets_for_times(rk, list.get(), kRequestTimeoutMs);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
    fail(topic, err, "could not look up offsets for --to-datetime");
  std::vector<int64_t> offsets;
  for (const int32_t p : partitions) {
    const auto* entry = rd_kafka_topic_partition_list_find(list.get(), topic.c_str(), p);
    if (entry == nullptr)
      fail(partition_subject(topic, p), RD_KAFKA_RESP_ERR__BAD_MSG, "missing from the response");
    if (entry->err != RD_KAFKA_RESP_ERR_NO_ERROR) fail(partition_subject(topic, p), entry->err);
    offsets.push_back(entry->offset);
  }
  return offsets;
}

void alter_offsets(rd_kafka_t* rk, const std::string& group,
                   const rd_kafka_topic_partition_list_t* offsets) {
  rd_kafka_AlterConsumerGroupOffsets_t* request =
      rd_kafka_AlterConsumerGroupOffsets_new(group.c_str(), offsets);
  const auto admin_options = make_admin_options(rk, RD_KAFKA_ADMIN_OP_ALTERCONSUMERGROUPOFFSETS);
  const QueueHandle queue{rd_kafka_queue_new(rk)};
  rd_kafka_AlterConsumerGroupOffsets(rk, &request, 1, admin_options.get(), queue.get());
  rd_kafka_AlterConsumerGroupOffsets_destroy(request);

  const EventHandle event = wait_for_admin_result(queue.get(), group);
  const auto* result = rd_kafka_event_AlterConsumerGroupOffsets_result(event.get());
  size_t count = 0;
  const auto** groups = rd_kafka_AlterConsumerGroupOffsets_result_groups(result, &count);
  const auto* group_result = single_group_result(groups, count, group);

  bool any_failed = false;
  const auto* partitions = rd_kafka_group_result_partitions(group_result);
  for (int i = 0; partitions != nullptr && i < partitions->cnt; ++i) {
    const auto& p = partitions->elems[i];
    if (p.err == RD_KAFKA_RESP_ERR_NO_ERROR) continue;
    std::string message = rd_kafka_err2str(p.err);
    if (p.err == RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID ||
        p.err == RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION ||
        p.err == RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS)
      message +=
          fmt::format(" (offsets can only be reset while group {} has no active members)", group);
    print_error(partition_subject(p.topic, p.partition), p.err, message);
    any_failed = true;
  }
  if (any_failed) throw CLI::RuntimeError(1);
}

void reset_offsets(const GroupOptions& options) {
  std::optional<int64_t> timestamp_ms;
  if (options.to_datetime) {
    timestamp_ms = parse_reset_datetime(*options.to_datetime);
    if (!timestamp_ms)
      fail(fmt::format("invalid --to-datetime '{}': expected {}", *options.to_datetime,
                       kResetDatetimeFormat));
  }

  const KafkaHandle rk = make_client(options.client);
  const auto partitions = partitions_to_reset(rk.get(), options);
  std::vector<int64_t> by_time;
  if (timestamp_ms) by_time = offsets_for_time(rk.get(), options.topic, partitions, *timestamp_ms);

  const PartitionListHandle targets{
      rd_kafka_topic_partition_list_new(static_cast<int>(partitions.size()))};
  std::vector<std::vector<std::string>> table{{"TOPIC", "PARTITION", "NEW-OFFSET"}};
  for (size_t i = 0; i < partitions.size(); ++i) {
    const int32_t p = partitions[i];
    rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;
    const auto watermarks = query_watermarks(rk.get(), options.topic, p, &err);
    if (!watermarks)
      fail(partition_subject(options.topic, p), err, "could not get the partition's offsets");
    int64_t target = watermarks->high;  // --to-latest
    if (options.to_earliest) {
      target = watermarks->low;
    } else if (options.to_offset) {
      target = std::clamp(*options.to_offset, watermarks->low, watermarks->high);
    } else if (timestamp_ms) {
      // No record at or after the time: the end of the log, like Kafka.
      target = by_time[i] < 0 ? watermarks->high
                              : std::clamp(by_time[i], watermarks->low, watermarks->high);
    }
    rd_kafka_topic_partition_list_add(targets.get(), options.topic.c_str(), p)->offset = target;
    table.push_back({options.topic, std::to_string(p), std::to_string(target)});
  }

  if (!options.dry_run) alter_offsets(rk.get(), options.group, targets.get());
  print_table(table);
}

// ---------------------------------------------------------------- delete

void delete_groups(const GroupOptions& options) {
  const KafkaHandle rk = make_client(options.client);
  std::vector<rd_kafka_DeleteGroup_t*> doomed;
  for (const auto& group : options.groups)
    doomed.push_back(rd_kafka_DeleteGroup_new(group.c_str()));
  const auto admin_options = make_admin_options(rk.get(), RD_KAFKA_ADMIN_OP_DELETEGROUPS);
  const QueueHandle queue{rd_kafka_queue_new(rk.get())};
  rd_kafka_DeleteGroups(rk.get(), doomed.data(), doomed.size(), admin_options.get(), queue.get());
  rd_kafka_DeleteGroup_destroy_array(doomed.data(), doomed.size());

  const EventHandle event = wait_for_admin_result(
      queue.get(), options.groups.size() == 1 ? options.groups.front() : "delete groups");
  const auto* result = rd_kafka_event_DeleteGroups_result(event.get());
  size_t count = 0;
  const auto** groups = rd_kafka_DeleteGroups_result_groups(result, &count);
  bool any_failed = false;
  for (size_t i = 0; i < count; ++i) {
    const std::string_view name = or_empty(rd_kafka_group_result_name(groups[i]));
    if (const rd_kafka_error_t* error = rd_kafka_group_result_error(groups[i])) {
      print_error(name, rd_kafka_error_code(error), or_empty(rd_kafka_error_string(error)));
      any_failed = true;
    } else {
      fmt::print("deleted group {}\n", name);
    }
  }
  if (any_failed) throw CLI::RuntimeError(1);
}

using GroupAction = void (*)(const GroupOptions&);

CLI::App* add_group_subcommand(CLI::App& group_cmd, const std::string& name,
                               const std::string& description, GroupAction action,
                               const std::shared_ptr<GroupOptions>& options,
                               bool takes_group_name = true) {
  CLI::App* sub = group_cmd.add_subcommand(name, description);
  add_client_options(*sub, options->client);
  if (takes_group_name) sub->add_option("group", options->group, "Consumer group id")->required();
  sub->callback([action, options] { action(*options); });
  return sub;
}

}  // namespace

void add_group_command(CLI::App& app) {
  auto options = std::make_shared<GroupOptions>();
  CLI::App* group =
      app.add_subcommand("group", "List, describe, reset offsets of and delete consumer groups");
  group->require_subcommand(1);

  CLI::App* list = add_group_subcommand(*group, "list", "List consumer groups and their states",
                                        list_groups, options, false);
  list->add_option("--state", options->states,
                   "Only groups in these states (Stable, Empty, PreparingRebalance, "
                   "CompletingRebalance, Dead; repeatable or comma-separated)")
      ->delimiter(',');

  add_group_subcommand(*group, "describe",
                       "Show a group's state, members, committed offsets and lag", describe_group,
                       options);

  CLI::App* reset = add_group_subcommand(
      *group, "reset-offsets",
      "Set a group's committed offsets for a topic (the group must have no active members)",
      reset_offsets, options);
  reset->add_option("--topic", options->topic, "Topic whose offsets to reset")->required();
  reset->add_option("--partition", options->partition, "Only this partition (default: all)");
  CLI::Option_group* target = reset->add_option_group("target", "Where to move the offsets");
  target->add_flag("--to-earliest", options->to_earliest, "The earliest offset still in the log");
  target->add_flag("--to-latest", options->to_latest, "The end of the log");
  target->add_option("--to-offset", options->to_offset,
                     "This offset, moved into the log's [earliest, end] range");
  target->add_option("--to-datetime", options->to_datetime,
                     fmt::format("The first record with a timestamp at or after this time, {} "
                                 "(local time without a zone)",
                                 kResetDatetimeFormat));
  target->require_option(1);
  reset->add_flag("--dry-run", options->dry_run, "Show the new offsets without committing them");

  CLI::App* del = add_group_subcommand(*group, "delete", "Delete consumer groups", delete_groups,
                                       options, false);
  del->add_option("groups", options->groups, "Consumer group ids")->required();
}

}  // namespace oxbow::cli
