#include "streams/runtime/topology_positions.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <memory>
#include <set>

#include "oxbow/streams/errors.h"
#include "streams/runtime/kafka_clients.h"
#include "streams/runtime/partition_time.h"

namespace oxbow::streams::detail {

namespace {

using PartitionsPtr = std::unique_ptr<rd_kafka_topic_partition_list_t,
                                      decltype(&rd_kafka_topic_partition_list_destroy)>;
using QueuePtr = std::unique_ptr<rd_kafka_queue_t, decltype(&rd_kafka_queue_destroy)>;
using EventPtr = std::unique_ptr<rd_kafka_event_t, decltype(&rd_kafka_event_destroy)>;

bool retriable(rd_kafka_resp_err_t err) {
  return err == RD_KAFKA_RESP_ERR__TIMED_OUT || err == RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT ||
         err == RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS ||
         err == RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE ||
         err == RD_KAFKA_RESP_ERR_NOT_COORDINATOR || err == RD_KAFKA_RESP_ERR__TRANSPORT;
}

// A group's answer: its partitions (owned by the event) or the error that failed it.
struct GroupAnswer {
  std::string group;
  const rd_kafka_topic_partition_list_t* partitions = nullptr;
  rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;
  std::string message;
};

GroupAnswer answer_of(const rd_kafka_group_result_t* result) {
  GroupAnswer a;
  a.group = rd_kafka_group_result_name(result);
  if (const rd_kafka_error_t* error = rd_kafka_group_result_error(result)) {
    a.err = rd_kafka_error_code(error);
    a.message = rd_kafka_error_string(error);
    return a;
  }
  a.partitions = rd_kafka_group_result_partitions(result);
  for (int i = 0; a.partitions && i < a.partitions->cnt; ++i)
    if (auto err = a.partitions->elems[i].err) {
      a.err = err;
      a.message = std::string(a.partitions->elems[i].topic) + "-" +
                  std::to_string(a.partitions->elems[i].partition) + ": " + rd_kafka_err2str(err);
      break;
    }
  return a;
}

std::vector<GroupAnswer> answers_of(const rd_kafka_group_result_t** results, size_t n) {
  std::vector<GroupAnswer> answers;
  for (size_t i = 0; i < n; ++i) answers.push_back(answer_of(results[i]));
  return answers;
}

// Sends one request per group (`send` puts the group's on `queue`), reads every answer through
// `read`, and sends the groups that failed with a retriable error, or got no answer, again until
// kRetryTimedOutFor. Each request waits 10 s at most for its broker: a coordinator that does not
// answer costs the thread a retry, not the minute of librdkafka's default.
template <typename Send, typename Read>
void for_each_group(rd_kafka_t* client, std::vector<std::string> groups, const char* what,
                    Send send, Read read) {
  constexpr int kRequestTimeoutMs = 10000;
  auto deadline = std::chrono::steady_clock::now() + kRetryTimedOutFor;
  std::unique_ptr<rd_kafka_AdminOptions_t, decltype(&rd_kafka_AdminOptions_destroy)> options(
      rd_kafka_AdminOptions_new(client, RD_KAFKA_ADMIN_OP_ANY), &rd_kafka_AdminOptions_destroy);
  char error[256];
  rd_kafka_AdminOptions_set_request_timeout(options.get(), kRequestTimeoutMs, error, sizeof error);
  while (!groups.empty()) {
    QueuePtr queue(rd_kafka_queue_new(client), &rd_kafka_queue_destroy);
    for (const auto& g : groups) send(g, options.get(), queue.get());
    std::set<std::string> again, answered;
    std::string why;
    for (size_t events = 0; events < groups.size(); ++events) {
      EventPtr event(rd_kafka_queue_poll(queue.get(), 2 * kRequestTimeoutMs),
                     &rd_kafka_event_destroy);
      bool retry_time = std::chrono::steady_clock::now() < deadline;
      if (!event || rd_kafka_event_error(event.get())) {
        why = event ? rd_kafka_event_error_string(event.get()) : "no answer";
        if ((event && !retriable(rd_kafka_event_error(event.get()))) || !retry_time)
          throw StreamsException(std::string(what) + ": " + why);
        // A failed event does not name its group: every group not answered yet goes again.
        for (const auto& g : groups)
          if (!answered.count(g)) again.insert(g);
        if (!event) break;
        continue;
      }
      for (const auto& a : read(event.get())) {
        answered.insert(a.group);
        if (a.err && retriable(a.err) && retry_time) {
          again.insert(a.group);
          why = a.message;
        } else if (a.err) {
          throw StreamsException(std::string(what) + " of group " + a.group + ": " + a.message);
        }
      }
    }
    if (!again.empty())
      spdlog::warn("{}: {} group(s) asked again ({}: {})", what, again.size(), *again.begin(), why);
    groups.assign(again.begin(), again.end());
  }
}

}  // namespace

std::map<std::string, GroupPositions> fetch_positions(
    rd_kafka_t* client, const std::map<std::string, std::vector<TopicPartitionKey>>& asks) {
  std::map<std::string, GroupPositions> out;
  std::vector<std::string> groups;
  for (const auto& [group, partitions] : asks)
    if (!partitions.empty()) groups.push_back(group);
  auto send = [&](const std::string& group, rd_kafka_AdminOptions_t* options,
                  rd_kafka_queue_t* queue) {
    PartitionsPtr list(rd_kafka_topic_partition_list_new(0),
                       &rd_kafka_topic_partition_list_destroy);
    for (const auto& [topic, partition] : asks.at(group))
      rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), partition);
    auto* request = rd_kafka_ListConsumerGroupOffsets_new(group.c_str(), list.get());
    rd_kafka_ListConsumerGroupOffsets(client, &request, 1, options, queue);
    rd_kafka_ListConsumerGroupOffsets_destroy(request);
  };
  auto read = [&](rd_kafka_event_t* event) {
    std::vector<GroupAnswer> answers;
    size_t n = 0;
    const auto* result = rd_kafka_event_ListConsumerGroupOffsets_result(event);
    const auto** results = rd_kafka_ListConsumerGroupOffsets_result_groups(result, &n);
    for (size_t i = 0; i < n; ++i) {
      GroupAnswer a = answer_of(results[i]);
      if (!a.err && a.partitions) {
        auto& positions = out[a.group];
        for (int j = 0; j < a.partitions->cnt; ++j) {
          const auto& p = a.partitions->elems[j];
          CommittedPosition position{p.offset >= 0 ? p.offset : -1, std::nullopt};
          if (p.metadata)
            position.stream_time = decode_partition_time(
                std::string_view(static_cast<const char*>(p.metadata), p.metadata_size));
          positions[{p.topic, p.partition}] = position;
        }
      }
      answers.push_back(std::move(a));
    }
    return answers;
  };
  for_each_group(client, groups, "the named topologies' committed positions", send, read);
  return out;
}

void commit_positions(rd_kafka_t* client,
                      const std::map<std::string, rd_kafka_topic_partition_list_t*>& offsets) {
  std::vector<std::string> groups;
  for (const auto& [group, list] : offsets)
    if (list->cnt > 0) groups.push_back(group);
  auto send = [&](const std::string& group, rd_kafka_AdminOptions_t* options,
                  rd_kafka_queue_t* queue) {
    auto* request = rd_kafka_AlterConsumerGroupOffsets_new(group.c_str(), offsets.at(group));
    rd_kafka_AlterConsumerGroupOffsets(client, &request, 1, options, queue);
    rd_kafka_AlterConsumerGroupOffsets_destroy(request);
  };
  auto read = [](rd_kafka_event_t* event) {
    size_t n = 0;
    const auto* result = rd_kafka_event_AlterConsumerGroupOffsets_result(event);
    return answers_of(rd_kafka_AlterConsumerGroupOffsets_result_groups(result, &n), n);
  };
  for_each_group(client, groups, "the named topologies' commits", send, read);
}

void delete_position_groups(rd_kafka_t* client, const std::vector<std::string>& groups) {
  auto send = [&](const std::string& group, rd_kafka_AdminOptions_t* options,
                  rd_kafka_queue_t* queue) {
    auto* request = rd_kafka_DeleteGroup_new(group.c_str());
    rd_kafka_DeleteGroups(client, &request, 1, options, queue);
    rd_kafka_DeleteGroup_destroy(request);
  };
  auto read = [](rd_kafka_event_t* event) {
    size_t n = 0;
    const auto* result = rd_kafka_event_DeleteGroups_result(event);
    auto answers = answers_of(rd_kafka_DeleteGroups_result_groups(result, &n), n);
    for (auto& a : answers)
      if (a.err == RD_KAFKA_RESP_ERR_GROUP_ID_NOT_FOUND) a.err = RD_KAFKA_RESP_ERR_NO_ERROR;
    return answers;
  };
  for_each_group(client, groups, "deleting the named topologies' groups", send, read);
}

}  // namespace oxbow::streams::detail
