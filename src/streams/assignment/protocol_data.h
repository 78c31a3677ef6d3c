#pragma once
// What Streams instances tell each other through the group, in Kafka Streams' own formats, so
// that an instance's view of the group is the one a Java instance would have:
//
// - The consumer protocol's envelope (Kafka's ConsumerProtocolSubscription v1 and
//   ConsumerProtocolAssignment v1, big-endian, classic lengths):
//     subscription: int16 version=1, [string topic], bytes user_data, [string topic, [int32]] owned
//     assignment:   int16 version=1, [string topic, [int32 partition]], bytes user_data
// - Streams' user data inside them, version 11 (Kafka Streams 3.0 to 3.9):
//     SubscriptionInfo: int32 version, int32 latest supported version, 16 bytes process id,
//       string endpoint ("host:port", int32 length), [int32 sub-topology, int32 partition,
//       int64 offset sum, nullable int16-length string named topology (null: none)] task offset
//       sums,
//       int8 unique field, int32 error code, [string key, string value] client tags (int32
//       lengths); no separate version prefix.
//     AssignmentInfo: int32 used version, int32 commonly supported version, [task id] active
//       tasks (one per assigned partition, paired with the partitions sorted by topic and
//       number), [task id, [utf topic, int32 partition]] standby tasks, [int32 index, utf topic]
//       topic dictionary, [utf host, int32 port, [int32 topic index, int32 partition]] active
//       partitions by host, the same for standby partitions, int32 error code, int64 next
//       rebalance (epoch ms; INT64_MAX none, 0 now). A task id is int32 sub-topology, int32
//       partition, int32 named-topology length (0: none) then its characters, two bytes each
//       (Java's writeChars). "utf" is an uint16 length then the bytes
//       (Java's writeUTF: the same as UTF-8 for the ASCII that topic and host names are).
// Arrays have an int32 count.
#include <array>
#include <compare>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "oxbow/streams/detail/user_processor.h"  // TaskId

namespace oxbow::streams::detail {

using PartitionList = std::vector<std::pair<std::string, int32_t>>;  // topic, partition

// Offset sums in a subscription: a running active task reports this instead of a sum.
inline constexpr int64_t kLatestOffsetSum = -2;

struct SubscriptionInfo {
  static constexpr int32_t kVersion = 11;
  int32_t version = kVersion;
  int32_t latest_supported_version = kVersion;
  std::array<uint8_t, 16> process_id{};
  std::string endpoint;  // application.server, empty when unset
  std::map<TaskId, int64_t> task_offset_sums;
  int8_t unique_field = 0;
  int32_t error_code = 0;  // 4: SHUTDOWN_REQUESTED
  std::map<std::string, std::string> client_tags;

  std::string encode() const;
  // Throws std::runtime_error for bytes that are not a version 11 (or later) subscription.
  static SubscriptionInfo decode(std::string_view bytes);
};

struct Endpoint {
  std::string host;
  int32_t port = -1;
  auto operator<=>(const Endpoint&) const = default;
};

struct AssignmentInfo {
  static constexpr int32_t kVersion = 11;
  static constexpr int64_t kNoRebalance = std::numeric_limits<int64_t>::max();
  int32_t used_version = kVersion;
  int32_t common_version = kVersion;
  std::vector<TaskId> active_tasks;
  std::map<TaskId, PartitionList> standby_tasks;
  std::map<Endpoint, PartitionList> active_by_host, standby_by_host;
  int32_t error_code = 0;
  int64_t next_rebalance_ms = kNoRebalance;

  std::string encode() const;
  static AssignmentInfo decode(std::string_view bytes);
};

struct ConsumerSubscription {
  std::vector<std::string> topics;
  std::string user_data;
  PartitionList owned;

  std::string encode() const;
  static ConsumerSubscription decode(std::string_view bytes);
};

struct ConsumerAssignment {
  PartitionList partitions;
  std::string user_data;

  std::string encode() const;
  static ConsumerAssignment decode(std::string_view bytes);
};

// "8-4-4-4-12" hex text of a process id and back (throws std::invalid_argument when malformed).
std::string uuid_text(const std::array<uint8_t, 16>& id);
std::array<uint8_t, 16> uuid_bytes(std::string_view text);

}  // namespace oxbow::streams::detail
