// ListOffsets and OffsetForLeaderEpoch: where a partition's offsets stand.
#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/handlers.h"
#include "broker/topic_registry.h"
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

}  // namespace

void handle_list_offsets(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::ListOffsetsRequest request;
  request.decode(body, v);
  pr::ListOffsetsResponse response;
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
      auto log = ctx.broker.topics().partition(topic.name, p.partition_index);
      if (!log) {
        part.error_code = pr::code(ErrorCode::kUnknownTopicOrPartition);
        continue;
      }
      part.leader_epoch = log->leader_epoch();
      part.timestamp = -1;
      if (p.timestamp == kLatest) {
        // read_committed consumers may not see past the first open transaction.
        part.offset =
            request.isolation_level == 1 ? log->last_stable_offset() : log->high_watermark();
      } else if (p.timestamp == kEarliest) {
        part.offset = log->log_start_offset();
      } else if (p.timestamp == kMaxTimestamp || p.timestamp >= 0) {
        auto found = p.timestamp == kMaxTimestamp ? log->largest_timestamp_record()
                                                  : log->offset_for_timestamp(p.timestamp);
        // As Kafka: a record at or past the last stable offset is not there for read_committed.
        if (found && request.isolation_level == 1 && found->offset >= log->last_stable_offset())
          found.reset();
        part.offset = found ? found->offset : -1;
        if (found) part.timestamp = found->timestamp;
      } else {
        part.error_code = pr::code(ErrorCode::kInvalidRequest);
        continue;
      }
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
      if (p.current_leader_epoch > log->leader_epoch()) {
        part.error_code = pr::code(ErrorCode::kUnknownLeaderEpoch);
        continue;
      }
      if (p.current_leader_epoch >= 0 && p.current_leader_epoch < log->leader_epoch()) {
        part.error_code = pr::code(ErrorCode::kFencedLeaderEpoch);
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
