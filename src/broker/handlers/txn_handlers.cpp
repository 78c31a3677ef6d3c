// Transactions: AddPartitionsToTxn, AddOffsetsToTxn, EndTxn and TxnOffsetCommit, answered by the
// transaction coordinator (and the group coordinator for offsets); DescribeTransactions and
// ListTransactions for tools.
#include "broker/broker.h"
#include "broker/handlers/authorization.h"
#include "broker/handlers/handlers.h"
#include "broker/topics/internal_topic.h"
#include "common/clock.h"
#include "group/coordinator.h"
#include "group/offset_records.h"
#include "protocol/errors.h"
#include "protocol/messages/add_offsets_to_txn.h"
#include "protocol/messages/add_partitions_to_txn.h"
#include "protocol/messages/describe_transactions.h"
#include "protocol/messages/end_txn.h"
#include "protocol/messages/list_transactions.h"
#include "protocol/messages/txn_offset_commit.h"
#include "txn/transaction_coordinator.h"

namespace oxbow::broker {

namespace pr = oxbow::protocol;
using pr::ErrorCode;

namespace {

// PRODUCER_FENCED (KIP-588) is new in these versions; older clients know it as
// INVALID_PRODUCER_EPOCH.
ErrorCode fenced_for_version(ErrorCode error, int16_t version, int16_t first_version_with_fenced) {
  if (error == ErrorCode::kProducerFenced && version < first_version_with_fenced)
    return ErrorCode::kInvalidProducerEpoch;
  return error;
}

}  // namespace

void handle_add_partitions_to_txn(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::AddPartitionsToTxnRequest request;
  request.decode(body, v);
  std::vector<txn::TopicPartition> partitions;
  // Kafka's rule: unless every topic may be written, nothing is added; the writable topics get
  // OPERATION_NOT_ATTEMPTED.
  std::vector<ErrorCode> refusals;
  bool txn_allowed = authorized(ctx, AclOperation::kWrite, ResourceType::kTransactionalId,
                                request.transactional_id);
  bool any_refused = !txn_allowed;
  for (const auto& t : request.topics) {
    bool allowed =
        txn_allowed && authorized(ctx, AclOperation::kWrite, ResourceType::kTopic, t.name);
    refusals.push_back(!txn_allowed ? ErrorCode::kTransactionalIdAuthorizationFailed
                       : allowed    ? ErrorCode::kNone
                                    : ErrorCode::kTopicAuthorizationFailed);
    any_refused |= !allowed;
    for (int32_t p : t.partitions) partitions.emplace_back(t.name, p);
  }
  std::vector<ErrorCode> errors;
  if (!any_refused) {
    errors = ctx.broker.transactions().add_partitions(request.transactional_id, request.producer_id,
                                                      request.producer_epoch, partitions);
  }
  pr::AddPartitionsToTxnResponse response;
  size_t i = 0;
  for (size_t t = 0; t < request.topics.size(); ++t) {
    auto& topic = response.results.emplace_back();
    topic.name = request.topics[t].name;
    for (int32_t p : request.topics[t].partitions) {
      ErrorCode error = !any_refused                      ? fenced_for_version(errors[i++], v, 2)
                        : refusals[t] != ErrorCode::kNone ? refusals[t]
                                                          : ErrorCode::kOperationNotAttempted;
      topic.results.push_back({p, pr::code(error)});
    }
  }
  response.encode(out, v);
}

void handle_add_offsets_to_txn(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::AddOffsetsToTxnRequest request;
  request.decode(body, v);
  pr::AddOffsetsToTxnResponse response;
  if (!authorized(ctx, AclOperation::kWrite, ResourceType::kTransactionalId,
                  request.transactional_id)) {
    response.error_code = pr::code(ErrorCode::kTransactionalIdAuthorizationFailed);
  } else if (!authorized(ctx, AclOperation::kRead, ResourceType::kGroup, request.group_id)) {
    response.error_code = pr::code(ErrorCode::kGroupAuthorizationFailed);
  } else if (request.group_id.empty()) {
    response.error_code = pr::code(ErrorCode::kInvalidGroupId);
  } else {
    int32_t partitions = ctx.broker.offsets_topic().partitions();
    txn::TopicPartition offsets{kOffsetsTopic,
                                group::offsets_partition_for(request.group_id, partitions)};
    auto errors = ctx.broker.transactions().add_partitions(
        request.transactional_id, request.producer_id, request.producer_epoch, {offsets});
    response.error_code = pr::code(fenced_for_version(errors.front(), v, 2));
  }
  response.encode(out, v);
}

void handle_end_txn(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::EndTxnRequest request;
  request.decode(body, v);
  ErrorCode error =
      authorized(ctx, AclOperation::kWrite, ResourceType::kTransactionalId,
                 request.transactional_id)
          ? ctx.broker.transactions().end_transaction(request.transactional_id, request.producer_id,
                                                      request.producer_epoch, request.committed)
          : ErrorCode::kTransactionalIdAuthorizationFailed;
  pr::EndTxnResponse response;
  response.error_code = pr::code(fenced_for_version(error, v, 2));
  response.encode(out, v);
}

void handle_txn_offset_commit(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::TxnOffsetCommitRequest request;
  request.decode(body, v);
  ErrorCode refusal =
      !authorized(ctx, AclOperation::kWrite, ResourceType::kTransactionalId,
                  request.transactional_id)
          ? ErrorCode::kTransactionalIdAuthorizationFailed
      : !authorized(ctx, AclOperation::kRead, ResourceType::kGroup, request.group_id)
          ? ErrorCode::kGroupAuthorizationFailed
          : ErrorCode::kNone;
  std::vector<group::OffsetCommitEntry> entries;
  std::vector<bool> topic_allowed;
  for (const auto& t : request.topics) {
    topic_allowed.push_back(refusal == ErrorCode::kNone &&
                            authorized(ctx, AclOperation::kRead, ResourceType::kTopic, t.name));
    if (!topic_allowed.back()) continue;
    for (const auto& p : t.partitions) {
      entries.push_back({t.name, p.partition_index, p.committed_offset, p.committed_leader_epoch,
                         p.committed_metadata});
    }
  }
  std::vector<ErrorCode> errors;
  if (!entries.empty()) {
    errors = ctx.broker.groups().commit_transactional(
        request.group_id, request.producer_id, request.producer_epoch, request.member_id,
        request.group_instance_id, request.generation_id, entries);
  }
  pr::TxnOffsetCommitResponse response;
  size_t i = 0;
  for (size_t t = 0; t < request.topics.size(); ++t) {
    auto& topic = response.topics.emplace_back();
    topic.name = request.topics[t].name;
    for (const auto& p : request.topics[t].partitions) {
      ErrorCode error = refusal != ErrorCode::kNone ? refusal
                        : !topic_allowed[t]         ? ErrorCode::kTopicAuthorizationFailed
                                                    : errors[i++];
      topic.partitions.push_back({p.partition_index, pr::code(error)});
    }
  }
  response.encode(out, v);
}

void handle_describe_transactions(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::DescribeTransactionsRequest request;
  request.decode(body, v);
  pr::DescribeTransactionsResponse response;
  for (const auto& id : request.transactional_ids) {
    auto& state = response.transaction_states.emplace_back();
    state.transactional_id = id;
    auto found = ctx.broker.transactions().describe(id);
    if (!authorized(ctx, AclOperation::kDescribe, ResourceType::kTransactionalId, id)) {
      state.error_code = pr::code(ErrorCode::kTransactionalIdAuthorizationFailed);
      found.reset();
    }
    if (!found) {
      if (state.error_code == 0) state.error_code = pr::code(ErrorCode::kTransactionalIdNotFound);
      state.producer_id = -1;
      state.producer_epoch = -1;
      state.transaction_start_time_ms = -1;
      continue;
    }
    state.transaction_state = txn::state_name(found->state);
    state.transaction_timeout_ms = found->timeout_ms;
    state.transaction_start_time_ms = found->start_ms;
    state.producer_id = found->producer_id;
    state.producer_epoch = found->producer_epoch;
    for (const auto& [topic, partition] : found->partitions) {
      if (!authorized(ctx, AclOperation::kDescribe, ResourceType::kTopic, topic, Audit::kQuiet))
        continue;
      if (state.topics.empty() || state.topics.back().topic != topic)
        state.topics.emplace_back().topic = topic;
      state.topics.back().partitions.push_back(partition);
    }
  }
  response.encode(out, v);
}

void handle_list_transactions(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::ListTransactionsRequest request;
  request.decode(body, v);
  pr::ListTransactionsResponse response;
  std::vector<std::string> known_states;
  for (const auto& s : request.state_filters) {
    if (txn::state_from_name(s)) {
      known_states.push_back(s);
    } else {
      response.unknown_state_filters.push_back(s);
    }
  }
  // Only unknown states asked for: nothing can match.
  if (known_states.empty() && !request.state_filters.empty()) {
    response.encode(out, v);
    return;
  }
  int64_t now = now_ms();
  for (const auto& t : ctx.broker.transactions().list(known_states, request.producer_id_filters)) {
    if (!authorized(ctx, AclOperation::kDescribe, ResourceType::kTransactionalId,
                    t.transactional_id, Audit::kQuiet)) {
      continue;
    }
    // v1 (KIP-994): only transactions running longer than duration_filter ms, as Kafka counts
    // from the transaction's start (an idle id's start is -1, so it counts as long running).
    if (request.duration_filter >= 0 && now - t.start_ms <= request.duration_filter) continue;
    response.transaction_states.push_back(
        {t.transactional_id, t.producer_id, txn::state_name(t.state)});
  }
  response.encode(out, v);
}

}  // namespace oxbow::broker
