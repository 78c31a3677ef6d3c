// ListOffsets and OffsetForLeaderEpoch: where a partition's offsets stand.
#include <optional>
#include <set>
#include <utility>

#include "broker/broker.h"
#include "broker/handlers/authorization.h"
#include "broker/handlers/handlers.h"
#include "broker/topics/topic_registry.h"
#include "protocol/errors.h"
#include "protocol/messages/list_offsets.h"
#include "protocol/messages/offset_for_leader_epoch.h"
#include "storage/partition_log.h"

namespace oxbow::broker {

namespace pr = oxbow::protocol;
using pr::ErrorCode;

namespace {

constexpr int64_t kLatest = -1;
constexpr int64_t kEarliest = -2;
constexpr int64_t kMaxTimestamp = -3;
constexpr int64_t kEarliestLocal = -4;  // KIP-405: every record is local here
constexpr int64_t kLatestTiered = -5;   // KIP-1005: nothing is tiered here

// As Kafka: a marker timestamp older versions do not know, or one no version knows, is answered
// UNSUPPORTED_VERSION.
bool timestamp_supported(int64_t timestamp, int16_t version) {
  if (timestamp >= 0 || timestamp == kLatest || timestamp == kEarliest) return true;
  if (timestamp == kMaxTimestamp) return version >= 7;
  if (timestamp == kEarliestLocal) return version >= 8;
  if (timestamp == kLatestTiered) return version >= 9;
  return false;
}

// The partitions named more than once in the request, which Kafka answers INVALID_REQUEST.
std::set<std::pair<std::string, int32_t>> duplicated_partitions(
    const pr::ListOffsetsRequest& request) {
  std::set<std::pair<std::string, int32_t>> seen, duplicated;
  for (const auto& topic : request.topics) {
    for (const auto& p : topic.partitions) {
      if (!seen.emplace(topic.name, p.partition_index).second) {
        duplicated.emplace(topic.name, p.partition_index);
      }
    }
  }
  return duplicated;
}

// The client's view of the leadership (its current leader epoch, -1 for none) against the log's,
// as Kafka checks it.
std::optional<ErrorCode> leader_epoch_error(int32_t current_leader_epoch,
                                            const storage::PartitionLog& log) {
  if (current_leader_epoch > log.leader_epoch()) return ErrorCode::kUnknownLeaderEpoch;
  if (current_leader_epoch >= 0 && current_leader_epoch < log.leader_epoch())
    return ErrorCode::kFencedLeaderEpoch;
  return std::nullopt;
}

// The partition's offset for `timestamp` (a supported one) into `part`.
void look_up_offset(storage::PartitionLog& log, int64_t timestamp, int8_t isolation_level,
                    pr::ListOffsetsResponse::ListOffsetsPartitionResponse& part) {
  part.timestamp = -1;
  if (timestamp == kLatest) {
    // read_committed consumers may not see past the first open transaction.
    part.offset = isolation_level == 1 ? log.last_stable_offset() : log.high_watermark();
  } else if (timestamp == kEarliest || timestamp == kEarliestLocal) {
    part.offset = log.log_start_offset();
  } else if (timestamp == kLatestTiered) {
    part.offset = -1;
    part.leader_epoch = -1;
  } else {
    auto found = timestamp == kMaxTimestamp ? log.largest_timestamp_record()
                                            : log.offset_for_timestamp(timestamp);
    // As Kafka: a record at or past the last stable offset is not there for read_committed.
    if (found && isolation_level == 1 && found->offset >= log.last_stable_offset()) found.reset();
    part.offset = found ? found->offset : -1;
    if (found) part.timestamp = found->timestamp;
  }
}

}  // namespace

void handle_list_offsets(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::ListOffsetsRequest request;
  request.decode(body, v);
  pr::ListOffsetsResponse response;
  auto duplicated = duplicated_partitions(request);
  for (const auto& topic : request.topics) {
    auto& topic_out = response.topics.emplace_back();
    topic_out.name = topic.name;
    bool allowed = authorized(ctx, AclOperation::kDescribe, ResourceType::kTopic, topic.name);
    for (const auto& p : topic.partitions) {
      auto& part = topic_out.partitions.emplace_back();
      part.partition_index = p.partition_index;
      if (!allowed) {
        part.error_code = pr::code(ErrorCode::kTopicAuthorizationFailed);
        continue;
      }
      if (duplicated.contains({topic.name, p.partition_index})) {
        part.error_code = pr::code(ErrorCode::kInvalidRequest);
        continue;
      }
      if (!timestamp_supported(p.timestamp, v)) {
        part.error_code = pr::code(ErrorCode::kUnsupportedVersion);
        continue;
      }
      auto log = ctx.broker.topics().partition(topic.name, p.partition_index);
      if (!log) {
        part.error_code = pr::code(ErrorCode::kUnknownTopicOrPartition);
        continue;
      }
      if (auto error = leader_epoch_error(p.current_leader_epoch, *log)) {
        part.error_code = pr::code(*error);
        continue;
      }
      part.leader_epoch = log->leader_epoch();
      look_up_offset(*log, p.timestamp, request.isolation_level, part);
      if (v == 0 && part.offset >= 0) part.old_style_offsets = {part.offset};
    }
  }
  response.encode(out, v);
}

void handle_offset_for_leader_epoch(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::OffsetForLeaderEpochRequest request;
  request.decode(body, v);
  pr::OffsetForLeaderEpochResponse response;
  for (const auto& topic : request.topics) {
    auto& topic_out = response.topics.emplace_back();
    topic_out.topic = topic.topic;
    // Kafka lets brokers (CLUSTER_ACTION on the cluster) ask about any topic.
    bool allowed = authorized_on_cluster(ctx, AclOperation::kClusterAction, Audit::kQuiet) ||
                   authorized(ctx, AclOperation::kDescribe, ResourceType::kTopic, topic.topic);
    for (const auto& p : topic.partitions) {
      auto& part = topic_out.partitions.emplace_back();
      part.partition = p.partition;
      if (!allowed) {
        part.error_code = pr::code(ErrorCode::kTopicAuthorizationFailed);
        continue;
      }
      auto log = ctx.broker.topics().partition(topic.topic, p.partition);
      if (!log) {
        part.error_code = pr::code(ErrorCode::kUnknownTopicOrPartition);
        continue;
      }
      if (auto error = leader_epoch_error(p.current_leader_epoch, *log)) {
        part.error_code = pr::code(*error);
        continue;
      }
      auto [epoch, end] = log->end_offset_for_epoch(p.leader_epoch);
      part.leader_epoch = epoch;
      part.end_offset = end;
    }
  }
  response.encode(out, v);
}

}  // namespace oxbow::broker
