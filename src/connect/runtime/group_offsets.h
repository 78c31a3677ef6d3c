#pragma once
// A sink connector's consumer group offsets through librdkafka's admin API, as Connect's Worker
// reads, alters and resets them for KIP-875 (ListConsumerGroupOffsets, AlterConsumerGroupOffsets,
// DeleteConsumerGroupOffsets, DeleteGroups).
#include <librdkafka/rdkafka.h>

#include <map>
#include <set>
#include <string>

#include "connect/runtime/worker_config.h"
#include "oxbow/connect/errors.h"
#include "oxbow/connect/sink.h"

namespace oxbow::connect::runtime {

// A failed admin request, with the broker's (or librdkafka's) error code.
class GroupAdminException : public ConnectException {
 public:
  GroupAdminException(rd_kafka_resp_err_t code, const std::string& message)
      : ConnectException(message), code_(code) {}
  rd_kafka_resp_err_t code() const { return code_; }

 private:
  rd_kafka_resp_err_t code_;
};

class GroupAdmin {
 public:
  // The worker's bootstrap.servers with its admin.* overrides, as Connect's admin clients.
  explicit GroupAdmin(const WorkerConfig& worker);
  ~GroupAdmin();
  GroupAdmin(const GroupAdmin&) = delete;
  GroupAdmin& operator=(const GroupAdmin&) = delete;

  // The group's committed offsets; empty for a group that does not exist.
  std::map<TopicPartition, int64_t> offsets(const std::string& group);
  // GroupAdminException on the first failure (a group with members answers UNKNOWN_MEMBER_ID).
  void alter(const std::string& group, const std::map<TopicPartition, int64_t>& offsets);
  // GroupAdminException (GROUP_SUBSCRIBED_TO_TOPIC while members consume a topic).
  void deleteOffsets(const std::string& group, const std::set<TopicPartition>& partitions);
  // A group that does not exist is not an error (resetting twice is); NON_EMPTY_GROUP is.
  void deleteGroup(const std::string& group);

 private:
  rd_kafka_t* client_ = nullptr;
};

}  // namespace oxbow::connect::runtime
