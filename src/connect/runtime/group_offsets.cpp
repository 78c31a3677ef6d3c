// Each request waits on its own queue for its result event.
#include "connect/runtime/group_offsets.h"

#include <memory>

#include "connect/runtime/task_runner.h"

namespace oxbow::connect::runtime {

namespace {

constexpr int kTimeoutMs = 30'000;

using Event = std::unique_ptr<rd_kafka_event_t, decltype(&rd_kafka_event_destroy)>;
using Queue = std::unique_ptr<rd_kafka_queue_t, decltype(&rd_kafka_queue_destroy)>;
using Options = std::unique_ptr<rd_kafka_AdminOptions_t, decltype(&rd_kafka_AdminOptions_destroy)>;
using PartitionList = std::unique_ptr<rd_kafka_topic_partition_list_t,
                                      decltype(&rd_kafka_topic_partition_list_destroy)>;

Properties adminOverrides(const WorkerConfig& worker) {
  Properties out;
  const std::string prefix = "admin.";
  for (const auto& [name, value] : worker.props) {
    if (name.starts_with(prefix)) out.emplace(name.substr(prefix.size()), value);
  }
  return out;
}

// Submits one request on its own queue and waits for its result.
template <typename Submit>
Event call(rd_kafka_t* client, rd_kafka_admin_op_t op, Submit submit) {
  Queue queue(rd_kafka_queue_new(client), &rd_kafka_queue_destroy);
  Options options(rd_kafka_AdminOptions_new(client, op), &rd_kafka_AdminOptions_destroy);
  char error[256];
  rd_kafka_AdminOptions_set_request_timeout(options.get(), kTimeoutMs, error, sizeof error);
  submit(options.get(), queue.get());
  Event event(rd_kafka_queue_poll(queue.get(), kTimeoutMs + 5'000), &rd_kafka_event_destroy);
  if (!event) throw GroupAdminException(RD_KAFKA_RESP_ERR__TIMED_OUT, "Timed out");
  if (rd_kafka_event_error(event.get()) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    throw GroupAdminException(rd_kafka_event_error(event.get()),
                              rd_kafka_event_error_string(event.get()));
  }
  return event;
}

// The group's own error, then the first partition's.
void checkGroup(const rd_kafka_group_result_t* const* groups, size_t count) {
  if (count == 0) throw GroupAdminException(RD_KAFKA_RESP_ERR__FAIL, "No result for the group");
  if (const rd_kafka_error_t* error = rd_kafka_group_result_error(groups[0])) {
    throw GroupAdminException(rd_kafka_error_code(error), rd_kafka_error_string(error));
  }
  const rd_kafka_topic_partition_list_t* partitions = rd_kafka_group_result_partitions(groups[0]);
  for (int i = 0; partitions != nullptr && i < partitions->cnt; ++i) {
    rd_kafka_resp_err_t err = partitions->elems[i].err;
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      throw GroupAdminException(err, std::string(partitions->elems[i].topic) + "-" +
                                         std::to_string(partitions->elems[i].partition) + ": " +
                                         rd_kafka_err2str(err));
    }
  }
}

PartitionList emptyList(size_t size) {
  return PartitionList(rd_kafka_topic_partition_list_new(static_cast<int>(size)),
                       &rd_kafka_topic_partition_list_destroy);
}

PartitionList partitionList(const std::set<TopicPartition>& partitions) {
  PartitionList list = emptyList(partitions.size());
  for (const TopicPartition& tp : partitions) {
    rd_kafka_topic_partition_list_add(list.get(), tp.topic.c_str(), tp.partition);
  }
  return list;
}

PartitionList partitionList(const std::map<TopicPartition, int64_t>& offsets) {
  PartitionList list = emptyList(offsets.size());
  for (const auto& [tp, offset] : offsets) {
    rd_kafka_topic_partition_list_add(list.get(), tp.topic.c_str(), tp.partition)->offset = offset;
  }
  return list;
}

}  // namespace

GroupAdmin::GroupAdmin(const WorkerConfig& worker) {
  rd_kafka_conf_t* conf =
      clientConfig({{"bootstrap.servers", worker.bootstrapServers}}, adminOverrides(worker));
  char error[512];
  client_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
  if (client_ == nullptr) {
    rd_kafka_conf_destroy(conf);
    throw ConnectException(std::string("Could not create the admin client: ") + error);
  }
}

GroupAdmin::~GroupAdmin() {
  rd_kafka_destroy(client_);
}

std::map<TopicPartition, int64_t> GroupAdmin::offsets(const std::string& group) {
  Event event = call(client_, RD_KAFKA_ADMIN_OP_LISTCONSUMERGROUPOFFSETS, [&](auto* opts, auto* q) {
    auto* request = rd_kafka_ListConsumerGroupOffsets_new(group.c_str(), nullptr);  // every one
    rd_kafka_ListConsumerGroupOffsets(client_, &request, 1, opts, q);
    rd_kafka_ListConsumerGroupOffsets_destroy(request);
  });
  size_t count = 0;
  const rd_kafka_group_result_t** groups = rd_kafka_ListConsumerGroupOffsets_result_groups(
      rd_kafka_event_ListConsumerGroupOffsets_result(event.get()), &count);
  checkGroup(groups, count);
  std::map<TopicPartition, int64_t> out;
  const rd_kafka_topic_partition_list_t* partitions = rd_kafka_group_result_partitions(groups[0]);
  for (int i = 0; partitions != nullptr && i < partitions->cnt; ++i) {
    const rd_kafka_topic_partition_t& p = partitions->elems[i];
    if (p.offset >= 0) out[TopicPartition{p.topic, p.partition}] = p.offset;
  }
  return out;
}

void GroupAdmin::alter(const std::string& group, const std::map<TopicPartition, int64_t>& offsets) {
  PartitionList list = partitionList(offsets);
  Event event =
      call(client_, RD_KAFKA_ADMIN_OP_ALTERCONSUMERGROUPOFFSETS, [&](auto* opts, auto* q) {
        auto* request = rd_kafka_AlterConsumerGroupOffsets_new(group.c_str(), list.get());
        rd_kafka_AlterConsumerGroupOffsets(client_, &request, 1, opts, q);
        rd_kafka_AlterConsumerGroupOffsets_destroy(request);
      });
  size_t count = 0;
  const rd_kafka_group_result_t** groups = rd_kafka_AlterConsumerGroupOffsets_result_groups(
      rd_kafka_event_AlterConsumerGroupOffsets_result(event.get()), &count);
  checkGroup(groups, count);
}

void GroupAdmin::deleteOffsets(const std::string& group,
                               const std::set<TopicPartition>& partitions) {
  PartitionList list = partitionList(partitions);
  Event event =
      call(client_, RD_KAFKA_ADMIN_OP_DELETECONSUMERGROUPOFFSETS, [&](auto* opts, auto* q) {
        auto* request = rd_kafka_DeleteConsumerGroupOffsets_new(group.c_str(), list.get());
        rd_kafka_DeleteConsumerGroupOffsets(client_, &request, 1, opts, q);
        rd_kafka_DeleteConsumerGroupOffsets_destroy(request);
      });
  size_t count = 0;
  const rd_kafka_group_result_t** groups = rd_kafka_DeleteConsumerGroupOffsets_result_groups(
      rd_kafka_event_DeleteConsumerGroupOffsets_result(event.get()), &count);
  checkGroup(groups, count);
}

void GroupAdmin::deleteGroup(const std::string& group) {
  Event event = call(client_, RD_KAFKA_ADMIN_OP_DELETEGROUPS, [&](auto* opts, auto* q) {
    rd_kafka_DeleteGroup_t* request = rd_kafka_DeleteGroup_new(group.c_str());
    rd_kafka_DeleteGroups(client_, &request, 1, opts, q);
    rd_kafka_DeleteGroup_destroy(request);
  });
  size_t count = 0;
  const rd_kafka_group_result_t** groups =
      rd_kafka_DeleteGroups_result_groups(rd_kafka_event_DeleteGroups_result(event.get()), &count);
  try {
    checkGroup(groups, count);
  } catch (const GroupAdminException& e) {
    if (e.code() != RD_KAFKA_RESP_ERR_GROUP_ID_NOT_FOUND) throw;
  }
}

}  // namespace oxbow::connect::runtime
