#pragma once
// A KIP-848 consumer group as `oxbow group describe` shows it. librdkafka 2.0's DescribeGroups
// sees such a group as Dead; ConsumerGroupDescribe, sent over a WireClient, describes it.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace oxbow::cli {

struct ClientOptions;

struct ConsumerGroupMemberView {
  std::string member_id;
  std::string client_id;
  std::string host;
  std::vector<std::pair<std::string, int32_t>> partitions;  // (topic, partition) assigned now
};

struct ConsumerGroupView {
  std::string state;
  std::string assignor;
  int32_t group_epoch = 0;
  std::vector<ConsumerGroupMemberView> members;
};

// nullopt when the group is not a consumer-protocol group (or does not exist).
std::optional<ConsumerGroupView> describe_consumer_group(const ClientOptions& client,
                                                         const std::string& group);

}  // namespace oxbow::cli
