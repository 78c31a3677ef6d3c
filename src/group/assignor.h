#pragma once
// Server-side assignors of KIP-848 consumer groups: the coordinator, not a leader client, decides
// which member owns which partition. "uniform" (Kafka's default) spreads every member's subscribed
// partitions evenly and moves as few as it can; "range" gives each member of a topic a contiguous
// range of its partitions, as the classic client-side range assignor does.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "protocol/wire.h"

namespace oxbow::group {

using protocol::Uuid;
// Partitions by topic id.
using Assignment = std::map<Uuid, std::set<int32_t>>;

struct TopicShape {
  Uuid id{};
  std::string name;
  int32_t partitions = 0;
  bool operator==(const TopicShape&) const = default;
};

struct AssignorMember {
  std::string id;
  std::set<std::string> topics;  // subscribed topics that exist
  Assignment previous_target;
};

// The names the coordinator accepts in ConsumerGroupHeartbeat's ServerAssignor.
const std::vector<std::string>& assignor_names();
bool is_assignor(const std::string& name);

// The target assignment of every member (by member id), for the topics in `topics` (by name).
std::map<std::string, Assignment> assign(const std::string& assignor,
                                         const std::vector<AssignorMember>& members,
                                         const std::map<std::string, TopicShape>& topics);

}  // namespace oxbow::group
