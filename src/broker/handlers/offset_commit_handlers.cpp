// Committed offsets: OffsetCommit, OffsetFetch (several groups per request from v8; a consumer
// group member's id and epoch from v9) and OffsetDelete.
#include "broker/broker.h"
#include "broker/handlers/authorization.h"
#include "broker/handlers/handlers.h"
#include "broker/topics/topic_registry.h"
#include "group/coordinator.h"
#include "protocol/errors.h"
#include "protocol/messages/offset_commit.h"
#include "protocol/messages/offset_delete.h"
#include "protocol/messages/offset_fetch.h"

namespace oxbow::broker {

namespace pr = oxbow::protocol;
using pr::ErrorCode;

void handle_offset_commit(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::OffsetCommitRequest request;
  request.decode(body, v);
  std::vector<group::OffsetCommitEntry> entries;
  std::vector<ErrorCode> unknown;
  bool group_allowed = authorized(ctx, AclOperation::kRead, ResourceType::kGroup, request.group_id);
  for (const auto& t : request.topics) {
    bool topic_allowed =
        group_allowed && authorized(ctx, AclOperation::kRead, ResourceType::kTopic, t.name);
    for (const auto& p : t.partitions) {
      entries.push_back({t.name, p.partition_index, p.committed_offset, p.committed_leader_epoch,
                         p.committed_metadata});
      bool exists = ctx.broker.topics().partition(t.name, p.partition_index) != nullptr;
      unknown.push_back(!group_allowed   ? ErrorCode::kGroupAuthorizationFailed
                        : !topic_allowed ? ErrorCode::kTopicAuthorizationFailed
                        : exists         ? ErrorCode::kNone
                                         : ErrorCode::kUnknownTopicOrPartition);
    }
  }
  // Offsets for partitions that do not exist or may not be read are refused; the rest are
  // committed together.
  std::vector<group::OffsetCommitEntry> known;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (unknown[i] == ErrorCode::kNone) known.push_back(entries[i]);
  }
  std::vector<ErrorCode> errors;
  if (group_allowed)
    errors =
        ctx.broker.groups().commit(request.group_id, request.member_id, request.group_instance_id,
                                   v >= 1 ? request.generation_id : -1, known, v);
  pr::OffsetCommitResponse response;
  size_t i = 0, k = 0;
  for (const auto& t : request.topics) {
    auto& topic = response.topics.emplace_back();
    topic.name = t.name;
    for (const auto& p : t.partitions) {
      ErrorCode error = unknown[i] != ErrorCode::kNone ? unknown[i] : errors[k++];
      topic.partitions.push_back({p.partition_index, pr::code(error)});
      ++i;
    }
  }
  response.encode(out, v);
}

namespace {

using Wanted = std::optional<std::vector<group::TopicPartition>>;

template <typename Partition>
Partition to_fetched(int32_t index, const group::CommittedOffset& c, bool require_stable) {
  Partition p;
  p.partition_index = index;
  p.committed_offset = c.offset;
  p.committed_leader_epoch = c.leader_epoch;
  p.metadata =
      c.offset < 0 ? std::optional<std::string>("") : std::optional<std::string>(c.metadata);
  p.error_code = 0;
  // KIP-447: a read_committed consumer waits for the open transaction to settle the offset.
  if (require_stable && c.pending_transaction) {
    p.committed_offset = -1;
    p.error_code = pr::code(ErrorCode::kUnstableOffsetCommit);
  }
  return p;
}

// Groups the fetched offsets by topic, in the response's shape.
template <typename Topic>
std::vector<Topic> to_topics(const std::map<group::TopicPartition, group::CommittedOffset>& offsets,
                             bool require_stable) {
  std::vector<Topic> topics;
  for (const auto& [tp, c] : offsets) {
    if (topics.empty() || topics.back().name != tp.first) topics.emplace_back().name = tp.first;
    topics.back().partitions.push_back(
        to_fetched<typename decltype(Topic::partitions)::value_type>(tp.second, c, require_stable));
  }
  return topics;
}

// Topics the principal may not describe: dropped from an "all offsets" answer, refused when asked
// for.
template <typename Topic>
void authorize_topics(const RequestContext& ctx, std::vector<Topic>& topics, bool asked_for) {
  if (authorization_off(ctx)) return;
  std::erase_if(topics, [&](Topic& topic) {
    if (authorized(ctx, AclOperation::kDescribe, ResourceType::kTopic, topic.name,
                   asked_for ? Audit::kDenial : Audit::kQuiet)) {
      return false;
    }
    for (auto& p : topic.partitions) {
      p.committed_offset = -1;
      p.metadata = "";
      p.error_code = pr::code(ErrorCode::kTopicAuthorizationFailed);
    }
    return !asked_for;
  });
}

template <typename RequestTopics>
Wanted wanted_partitions(const RequestTopics& topics) {
  if (!topics) return std::nullopt;
  std::vector<group::TopicPartition> wanted;
  for (const auto& t : *topics) {
    for (int32_t p : t.partition_indexes) wanted.emplace_back(t.name, p);
  }
  return wanted;
}

}  // namespace

void handle_offset_fetch(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::OffsetFetchRequest request;
  request.decode(body, v);
  auto& groups = ctx.broker.groups();
  pr::OffsetFetchResponse response;
  if (v < 8) {
    // v0 has no "all partitions" form; v1 stored offsets in ZooKeeper, so null topics start at v2.
    if (!authorized(ctx, AclOperation::kDescribe, ResourceType::kGroup, request.group_id)) {
      // v0 and v1 have no top-level error: each asked-for partition carries it, as in Kafka.
      response.error_code = pr::code(ErrorCode::kGroupAuthorizationFailed);
      for (const auto& t : request.topics.value_or(
               std::vector<pr::OffsetFetchRequest::OffsetFetchRequestTopic>{})) {
        auto& topic = response.topics.emplace_back();
        topic.name = t.name;
        for (int32_t p : t.partition_indexes) {
          auto& part = topic.partitions.emplace_back();
          part.partition_index = p;
          part.committed_offset = -1;
          part.metadata = "";
          part.error_code = response.error_code;
        }
      }
      response.encode(out, v);
      return;
    }
    auto offsets = groups.fetch(request.group_id, wanted_partitions(request.topics));
    response.topics = to_topics<pr::OffsetFetchResponse::OffsetFetchResponseTopic>(
        offsets, request.require_stable);
    authorize_topics(ctx, response.topics, request.topics.has_value());
    if (request.group_id.empty()) response.error_code = pr::code(ErrorCode::kInvalidGroupId);
  } else {
    for (const auto& g : request.groups) {
      auto& group_out = response.groups.emplace_back();
      group_out.group_id = g.group_id;
      if (!authorized(ctx, AclOperation::kDescribe, ResourceType::kGroup, g.group_id)) {
        group_out.error_code = pr::code(ErrorCode::kGroupAuthorizationFailed);
        continue;
      }
      // v9: a consumer group's member proves its membership (KIP-848).
      if (ErrorCode member_error = groups.check_fetch(g.group_id, g.member_id, g.member_epoch);
          member_error != ErrorCode::kNone) {
        group_out.error_code = pr::code(member_error);
        continue;
      }
      auto offsets = groups.fetch(g.group_id, wanted_partitions(g.topics));
      group_out.topics = to_topics<pr::OffsetFetchResponse::OffsetFetchResponseTopics>(
          offsets, request.require_stable);
      authorize_topics(ctx, group_out.topics, g.topics.has_value());
      if (g.group_id.empty()) group_out.error_code = pr::code(ErrorCode::kInvalidGroupId);
    }
  }
  response.encode(out, v);
}

void handle_offset_delete(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::OffsetDeleteRequest request;
  request.decode(body, v);
  pr::OffsetDeleteResponse response;
  if (!authorized(ctx, AclOperation::kDelete, ResourceType::kGroup, request.group_id)) {
    response.error_code = pr::code(ErrorCode::kGroupAuthorizationFailed);
    response.encode(out, v);
    return;
  }
  // Offsets of topics the principal may not read are left alone.
  std::vector<group::TopicPartition> partitions;
  std::vector<bool> topic_allowed;
  for (const auto& t : request.topics) {
    topic_allowed.push_back(authorized(ctx, AclOperation::kRead, ResourceType::kTopic, t.name));
    if (!topic_allowed.back()) continue;
    for (const auto& p : t.partitions) partitions.emplace_back(t.name, p.partition_index);
  }
  ErrorCode group_error;
  auto errors = ctx.broker.groups().delete_offsets(request.group_id, partitions, group_error);
  response.error_code = pr::code(group_error);
  size_t i = 0;
  for (size_t t = 0; t < request.topics.size(); ++t) {
    auto& topic = response.topics.emplace_back();
    topic.name = request.topics[t].name;
    for (const auto& p : request.topics[t].partitions) {
      ErrorCode error = !topic_allowed[t]                 ? ErrorCode::kTopicAuthorizationFailed
                        : group_error == ErrorCode::kNone ? errors[i++]
                                                          : ErrorCode::kNone;
      topic.partitions.push_back({p.partition_index, pr::code(error)});
    }
  }
  response.encode(out, v);
}

}  // namespace oxbow::broker
