#include "cli/streams_reset.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <regex>
#include <string_view>

#include "cli/group_members.h"
#include "cli/reset_times.h"
#include "rdkafka/offsets.h"

namespace oxbow::cli {
namespace {

struct PartitionListDestroyer {
  void operator()(rd_kafka_topic_partition_list_t* list) const {
    rd_kafka_topic_partition_list_destroy(list);
  }
};
using PartitionListHandle =
    std::unique_ptr<rd_kafka_topic_partition_list_t, PartitionListDestroyer>;

// Every topic of the cluster, with its partition ids.
using TopicPartitions = std::map<std::string, std::vector<int32_t>>;

// Where the input topics' offsets go.
struct Scenario {
  enum class Kind { kEarliest, kLatest, kOffset, kShift, kTime };
  Kind kind = Kind::kEarliest;
  int64_t value = 0;  // the offset (kOffset), the shift (kShift) or a timestamp in ms (kTime)
};
using Kind = Scenario::Kind;

struct Watermarks {
  int64_t low = 0;
  int64_t high = 0;
};

std::string plural(size_t count, std::string_view noun) {
  return fmt::format("{} {}{}", count, noun, count == 1 ? "" : "s");
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Each name once, in the order first given: a partition listed twice makes the whole offset
// commit fail.
std::vector<std::string> unique(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& name : names)
    if (!contains(out, name)) out.push_back(name);
  return out;
}

std::string partition_subject(std::string_view topic, int32_t partition) {
  return fmt::format("{} [{}]", topic, partition);
}

// A timestamp for ListOffsets: negative ones mean "latest" and "earliest" there, so a time
// before 1970 becomes 0, which finds the earliest record as well.
int64_t timestamp_before_now(int64_t duration_ms) {
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  int64_t at = 0;
  if (__builtin_sub_overflow(now, duration_ms, &at)) at = duration_ms > 0 ? 0 : INT64_MAX;
  return std::max<int64_t>(0, at);
}

Scenario time_scenario(const StreamsResetOptions& o) {
  if (o.to_datetime) {
    const auto ms = parse_reset_datetime(*o.to_datetime);
    if (!ms)
      fail(fmt::format("invalid --to-datetime '{}': expected {}", *o.to_datetime,
                       kResetDatetimeFormat));
    return {Kind::kTime, std::max<int64_t>(0, *ms)};
  }
  const auto ms = parse_reset_duration(*o.by_duration);
  if (!ms)
    fail(fmt::format("invalid --by-duration '{}': expected {}", *o.by_duration,
                     kResetDurationFormat));
  return {Kind::kTime, timestamp_before_now(*ms)};
}

Scenario scenario_of(const StreamsResetOptions& o) {
  if (o.to_latest) return {Kind::kLatest};
  if (o.to_offset) return {Kind::kOffset, *o.to_offset};
  if (o.shift_by) return {Kind::kShift, *o.shift_by};
  if (o.to_datetime || o.by_duration) return time_scenario(o);
  return {Kind::kEarliest};
}

// A consumer handle in the application's group that never joins it (it subscribes to nothing):
// rd_kafka_committed needs the group id, and the admin API works on any handle.
KafkaHandle make_client(const StreamsResetOptions& o) {
  return make_kafka_handle(
      RD_KAFKA_CONSUMER,
      make_kafka_conf(o.client,
                      {{"enable.auto.commit", "false"}, {"enable.auto.offset.store", "false"}},
                      {{"group.id", o.application_id}}));
}

std::string member_list(const GroupMembers& group) {
  std::vector<std::string> ids;
  for (const auto& m : group.members) ids.push_back(m.member_id);
  return fmt::format("[{}]", fmt::join(ids, ", "));
}

// Offsets can only be committed for a group without members, and a running instance would carry
// on from where it is, with the internal topics gone under it.
void handle_active_members(rd_kafka_t* rk, const StreamsResetOptions& o) {
  const GroupMembers group = describe_group_members(rk, o.application_id);
  const size_t count = group.members.size();
  if (count == 0) return;
  if (!o.force)
    fail(fmt::format(
        "Consumer group '{}' is still active and has {}: {}. Stop every instance of the "
        "application before resetting it (or remove the members with --force).",
        o.application_id, plural(count, "member"), member_list(group)));
  fmt::print("{} the {} of consumer group '{}': {}\n", o.dry_run ? "Would remove" : "Removing",
             plural(count, "active member"), o.application_id, member_list(group));
  if (!o.dry_run) remove_group_members(o.client, o.application_id, group);
}

TopicPartitions list_topics(rd_kafka_t* rk) {
  // Metadata of every topic: asking for the named ones could make the broker create them.
  const MetadataHandle md = fetch_metadata(rk);
  TopicPartitions out;
  for (int t = 0; t < md->topic_cnt; ++t) {
    const auto& topic = md->topics[t];
    if (topic.err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) continue;
    auto& ids = out[topic.topic];
    for (int p = 0; p < topic.partition_cnt; ++p) ids.push_back(topic.partitions[p].id);
    std::sort(ids.begin(), ids.end());
  }
  return out;
}

std::string missing_topics(const TopicPartitions& topics, const std::vector<std::string>& names,
                           std::string_view kind) {
  std::vector<std::string> missing;
  for (const auto& name : names)
    if (!topics.contains(name)) missing.push_back(name);
  if (missing.empty()) return {};
  return fmt::format("{} {} not found: {}", kind, missing.size() == 1 ? "topic" : "topics",
                     fmt::join(missing, ", "));
}

// Checked before anything changes, so that a mistyped name leaves the application as it was.
void check_user_topics(const TopicPartitions& topics, const StreamsResetOptions& o) {
  for (const auto& name : o.intermediate_topics)
    if (contains(o.input_topics, name))
      fail(fmt::format("topic {} is given both as an input and as an intermediate topic", name));
  std::vector<std::string> problems;
  for (auto problem : {missing_topics(topics, o.input_topics, "input"),
                       missing_topics(topics, o.intermediate_topics, "intermediate")})
    if (!problem.empty()) problems.push_back(std::move(problem));
  if (!problems.empty()) fail(fmt::format("{}", fmt::join(problems, "; ")));
}

// What Kafka Streams appends to "<application.id>-" for its internal topics: changelogs,
// repartition topics and the subscription topics of foreign-key joins.
bool internal_topic_name(const std::string& topic) {
  static const std::regex kForeignKeyJoinTopic{
      ".+-KTABLE-FK-JOIN-SUBSCRIPTION-(REGISTRATION|RESPONSE)-[0-9]+-topic"};
  return topic.ends_with("-changelog") || topic.ends_with("-repartition") ||
         topic.ends_with("-subscription-registration-topic") ||
         topic.ends_with("-subscription-response-topic") ||
         std::regex_match(topic, kForeignKeyJoinTopic);
}

std::vector<std::string> inferred_internal_topics(const TopicPartitions& topics,
                                                  const StreamsResetOptions& o) {
  const std::string prefix = o.application_id + "-";
  std::vector<std::string> out;
  for (const auto& [name, partitions] : topics) {
    // A user's topic that happens to be named like an internal one is still the user's.
    if (contains(o.input_topics, name) || contains(o.intermediate_topics, name)) continue;
    if (name.starts_with(prefix) && internal_topic_name(name)) out.push_back(name);
  }
  return out;
}

// --internal-topics may narrow the inferred set, never widen it: the tool deletes no topic that
// does not look like the application's own.
std::vector<std::string> internal_topics_to_delete(const TopicPartitions& topics,
                                                   const StreamsResetOptions& o) {
  const auto inferred = inferred_internal_topics(topics, o);
  if (o.internal_topics.empty()) return inferred;
  std::vector<std::string> foreign;
  for (const auto& name : o.internal_topics)
    if (!contains(inferred, name)) foreign.push_back(name);
  if (!foreign.empty())
    fail(fmt::format(
        "--internal-topics: not internal topics of application {}: {} (a --dry-run without "
        "--internal-topics lists them)",
        o.application_id, fmt::join(foreign, ", ")));
  return o.internal_topics;
}

PartitionListHandle partitions_of(const TopicPartitions& topics,
                                  const std::vector<std::string>& names) {
  PartitionListHandle list{rd_kafka_topic_partition_list_new(0)};
  for (const auto& name : names)
    for (const int32_t p : topics.at(name))
      rd_kafka_topic_partition_list_add(list.get(), name.c_str(), p);
  return list;
}

Watermarks watermarks(rd_kafka_t* rk, const std::string& topic, int32_t partition) {
  Watermarks w;
  const auto err =
      rdkafka::query_watermarks(rk, topic, partition, &w.low, &w.high, kRequestTimeoutMs);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
    fail(partition_subject(topic, partition), err, "could not get the partition's offsets");
  return w;
}

// Puts into each entry's offset what the scenario starts from: the group's committed offset
// (kShift; RD_KAFKA_OFFSET_INVALID where there is none) or the first offset at or after the
// time (kTime; -1 where there is none).
void look_up_starts(rd_kafka_t* rk, rd_kafka_topic_partition_list_t* list, const Scenario& s) {
  rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;
  if (s.kind == Kind::kShift) {
    err = rd_kafka_committed(rk, list, kRequestTimeoutMs);
  } else if (s.kind == Kind::kTime) {
    for (int i = 0; i < list->cnt; ++i) list->elems[i].offset = s.value;
    err = rd_kafka_offsets_for_times(rk, list, kRequestTimeoutMs);
  }
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) fail("input topics", err, "could not look up offsets");
  for (int i = 0; i < list->cnt; ++i)
    if (list->elems[i].err != RD_KAFKA_RESP_ERR_NO_ERROR)
      fail(partition_subject(list->elems[i].topic, list->elems[i].partition), list->elems[i].err);
}

// Kafka's tool, too, moves an offset outside the log to its nearer end, and says so.
int64_t clamp_to_log(int64_t offset, const Watermarks& w, const rd_kafka_topic_partition_t& p) {
  if (offset >= w.low && offset <= w.high) return offset;
  const bool below = offset < w.low;
  const int64_t bound = below ? w.low : w.high;
  fmt::print("New offset ({}) is {} the {} offset of {}; using {}\n", offset,
             below ? "below" : "above", below ? "earliest" : "latest",
             partition_subject(p.topic, p.partition), bound);
  return bound;
}

int64_t shifted(const rd_kafka_topic_partition_t& p, int64_t shift, const Watermarks& w) {
  // Without a committed offset a consumer starts where auto.offset.reset says; Kafka's tool
  // runs its consumer with the default, latest.
  const int64_t from = p.offset >= 0 ? p.offset : w.high;
  int64_t to = 0;
  if (__builtin_add_overflow(from, shift, &to)) to = shift < 0 ? w.low : w.high;
  return clamp_to_log(to, w, p);
}

int64_t at_time(const rd_kafka_topic_partition_t& p, const Watermarks& w) {
  if (p.offset >= 0) return p.offset;
  fmt::print(
      "Partition {} of topic {} has no record at or after that time; using its latest "
      "offset\n",
      p.partition, p.topic);
  return w.high;
}

int64_t target_offset(const rd_kafka_topic_partition_t& p, const Scenario& s, const Watermarks& w) {
  switch (s.kind) {
    case Kind::kEarliest:
      return w.low;
    case Kind::kLatest:
      return w.high;
    case Kind::kOffset:
      return clamp_to_log(s.value, w, p);
    case Kind::kShift:
      return shifted(p, s.value, w);
    case Kind::kTime:
      return at_time(p, w);
  }
  return w.low;
}

void print_targets(const rd_kafka_topic_partition_list_t* list) {
  for (int i = 0; i < list->cnt; ++i)
    fmt::print("Topic: {} Partition: {} Offset: {}\n", list->elems[i].topic,
               list->elems[i].partition, list->elems[i].offset);
}

PartitionListHandle input_targets(rd_kafka_t* rk, const TopicPartitions& topics,
                                  const StreamsResetOptions& o, const Scenario& s) {
  fmt::print("Resetting the offsets of input topics [{}] for consumer group {} to:\n",
             fmt::join(o.input_topics, ", "), o.application_id);
  PartitionListHandle list = partitions_of(topics, o.input_topics);
  look_up_starts(rk, list.get(), s);
  for (int i = 0; i < list->cnt; ++i) {
    auto& p = list->elems[i];
    p.offset = target_offset(p, s, watermarks(rk, p.topic, p.partition));
  }
  print_targets(list.get());
  return list;
}

PartitionListHandle intermediate_targets(rd_kafka_t* rk, const TopicPartitions& topics,
                                         const StreamsResetOptions& o) {
  fmt::print("Moving the offsets of intermediate topics [{}] for consumer group {} to their end:\n",
             fmt::join(o.intermediate_topics, ", "), o.application_id);
  PartitionListHandle list = partitions_of(topics, o.intermediate_topics);
  for (int i = 0; i < list->cnt; ++i) {
    auto& p = list->elems[i];
    p.offset = watermarks(rk, p.topic, p.partition).high;
  }
  print_targets(list.get());
  return list;
}

void check_commit_results(const rd_kafka_topic_partition_list_t* partitions,
                          const std::string& group) {
  bool any_failed = false;
  for (int i = 0; partitions != nullptr && i < partitions->cnt; ++i) {
    const auto& p = partitions->elems[i];
    if (p.err == RD_KAFKA_RESP_ERR_NO_ERROR) continue;
    std::string message = rd_kafka_err2str(p.err);
    if (p.err == RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID ||
        p.err == RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION ||
        p.err == RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS)
      message += fmt::format(" (has an instance of {} started meanwhile?)", group);
    print_error(partition_subject(p.topic, p.partition), p.err, message);
    any_failed = true;
  }
  if (any_failed) throw CLI::RuntimeError(1);
}

// AlterConsumerGroupOffsets rather than a consumer's commit: it has a request timeout.
void commit_offsets(rd_kafka_t* rk, const std::string& group,
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
  if (count != 1 || groups[0] == nullptr)
    fail(group, RD_KAFKA_RESP_ERR__BAD_MSG, fmt::format("expected 1 group result, got {}", count));
  if (const rd_kafka_error_t* error = rd_kafka_group_result_error(groups[0]))
    fail(group, rd_kafka_error_code(error), or_empty(rd_kafka_error_string(error)));
  check_commit_results(rd_kafka_group_result_partitions(groups[0]), group);
}

void move_offsets(rd_kafka_t* rk, const TopicPartitions& topics, const StreamsResetOptions& o,
                  const Scenario& s) {
  if (o.input_topics.empty() && o.intermediate_topics.empty()) {
    fmt::print("No input or intermediate topics given: no offsets to reset.\n");
    return;
  }
  const PartitionListHandle all{rd_kafka_topic_partition_list_new(0)};
  auto take = [&](const PartitionListHandle& list) {
    for (int i = 0; i < list->cnt; ++i)
      rd_kafka_topic_partition_list_add(all.get(), list->elems[i].topic, list->elems[i].partition)
          ->offset = list->elems[i].offset;
  };
  if (!o.input_topics.empty()) take(input_targets(rk, topics, o, s));
  if (!o.intermediate_topics.empty()) take(intermediate_targets(rk, topics, o));
  if (!o.dry_run && all->cnt > 0) commit_offsets(rk, o.application_id, all.get());
}

void delete_topics(rd_kafka_t* rk, const std::vector<std::string>& names) {
  std::vector<rd_kafka_DeleteTopic_t*> requests;
  for (const auto& name : names) requests.push_back(rd_kafka_DeleteTopic_new(name.c_str()));
  const auto admin_options = make_admin_options(rk, RD_KAFKA_ADMIN_OP_DELETETOPICS);
  const QueueHandle queue{rd_kafka_queue_new(rk)};
  rd_kafka_DeleteTopics(rk, requests.data(), requests.size(), admin_options.get(), queue.get());
  rd_kafka_DeleteTopic_destroy_array(requests.data(), requests.size());

  const EventHandle event = wait_for_admin_result(queue.get(), "deleting internal topics");
  const auto* result = rd_kafka_event_DeleteTopics_result(event.get());
  size_t count = 0;
  const auto** results = rd_kafka_DeleteTopics_result_topics(result, &count);
  bool any_failed = false;
  for (size_t i = 0; i < count; ++i) {
    const std::string_view name = or_empty(rd_kafka_topic_result_name(results[i]));
    const auto err = rd_kafka_topic_result_error(results[i]);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      fmt::print("Topic: {} deleted\n", name);
      continue;
    }
    print_error(name, err, or_empty(rd_kafka_topic_result_error_string(results[i])));
    any_failed = true;
  }
  if (any_failed) throw CLI::RuntimeError(1);
}

void delete_internal_topics(rd_kafka_t* rk, const std::vector<std::string>& doomed,
                            const StreamsResetOptions& o) {
  fmt::print("Deleting the internal topics of application {} ({}): [{}]\n", o.application_id,
             o.internal_topics.empty() ? "found by name" : "as given", fmt::join(doomed, ", "));
  if (!o.dry_run && !doomed.empty()) delete_topics(rk, doomed);
}

StreamsResetOptions normalized(const StreamsResetOptions& options) {
  StreamsResetOptions o = options;
  o.input_topics = unique(o.input_topics);
  o.intermediate_topics = unique(o.intermediate_topics);
  o.internal_topics = unique(o.internal_topics);
  return o;
}

}  // namespace

void reset_streams_application(const StreamsResetOptions& options) {
  const StreamsResetOptions o = normalized(options);
  const Scenario scenario = scenario_of(o);  // a malformed time fails before any request
  if (o.dry_run) fmt::print("Dry run: these are the actions a reset would take; none is taken.\n");
  const KafkaHandle rk = make_client(o);
  handle_active_members(rk.get(), o);
  const TopicPartitions topics = list_topics(rk.get());
  check_user_topics(topics, o);
  const auto doomed = internal_topics_to_delete(topics, o);
  move_offsets(rk.get(), topics, o, scenario);
  delete_internal_topics(rk.get(), doomed, o);
  // The stores and checkpoints on each instance's disk still hold the old results.
  fmt::print(
      "Local state is not reset: before an instance starts again, call KafkaStreams::cleanUp() "
      "in it or delete its state directory (<state.dir>/{}).\n",
      o.application_id);
  fmt::print("Done.\n");
}

}  // namespace oxbow::cli
