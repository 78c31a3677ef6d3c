#include "broker/handlers/handlers.h"

#include <algorithm>
#include <array>

#include "protocol/errors.h"
#include "protocol/headers.h"
#include "protocol/messages/api_table.h"
#include "protocol/messages/api_versions.h"

namespace oxbow::broker {

namespace pr = oxbow::protocol;

namespace {

enum ApiKey : int16_t {
  kProduce = 0,
  kFetch = 1,
  kListOffsets = 2,
  kMetadata = 3,
  kOffsetCommit = 8,
  kOffsetFetch = 9,
  kFindCoordinator = 10,
  kJoinGroup = 11,
  kHeartbeat = 12,
  kLeaveGroup = 13,
  kSyncGroup = 14,
  kDescribeGroups = 15,
  kListGroups = 16,
  kSaslHandshake = 17,
  kApiVersions = 18,
  kCreateTopics = 19,
  kDeleteTopics = 20,
  kDeleteRecords = 21,
  kInitProducerId = 22,
  kOffsetForLeaderEpoch = 23,
  kAddPartitionsToTxn = 24,
  kAddOffsetsToTxn = 25,
  kEndTxn = 26,
  kTxnOffsetCommit = 28,
  kDescribeAcls = 29,
  kCreateAcls = 30,
  kDeleteAcls = 31,
  kDescribeConfigs = 32,
  kAlterConfigs = 33,
  kDescribeLogDirs = 35,
  kSaslAuthenticate = 36,
  kCreatePartitions = 37,
  kDeleteGroups = 42,
  kElectLeaders = 43,
  kIncrementalAlterConfigs = 44,
  kAlterPartitionReassignments = 45,
  kListPartitionReassignments = 46,
  kOffsetDelete = 47,
  kDescribeClientQuotas = 48,
  kAlterClientQuotas = 49,
  kDescribeUserScramCredentials = 50,
  kAlterUserScramCredentials = 51,
  kDescribeCluster = 60,
  kDescribeProducers = 61,
  kDescribeTransactions = 65,
  kListTransactions = 66,
  kConsumerGroupHeartbeat = 68,
  kConsumerGroupDescribe = 69,
};

// Ordered by API key.
constexpr auto kImplemented = std::to_array<int16_t>({
    kProduce,
    kFetch,
    kListOffsets,
    kMetadata,
    kOffsetCommit,
    kOffsetFetch,
    kFindCoordinator,
    kJoinGroup,
    kHeartbeat,
    kLeaveGroup,
    kSyncGroup,
    kDescribeGroups,
    kListGroups,
    kSaslHandshake,
    kApiVersions,
    kCreateTopics,
    kDeleteTopics,
    kDeleteRecords,
    kInitProducerId,
    kOffsetForLeaderEpoch,
    kAddPartitionsToTxn,
    kAddOffsetsToTxn,
    kEndTxn,
    kTxnOffsetCommit,
    kDescribeAcls,
    kCreateAcls,
    kDeleteAcls,
    kDescribeConfigs,
    kAlterConfigs,
    kDescribeLogDirs,
    kSaslAuthenticate,
    kCreatePartitions,
    kDeleteGroups,
    kElectLeaders,
    kIncrementalAlterConfigs,
    kAlterPartitionReassignments,
    kListPartitionReassignments,
    kOffsetDelete,
    kDescribeClientQuotas,
    kAlterClientQuotas,
    kDescribeUserScramCredentials,
    kAlterUserScramCredentials,
    kDescribeCluster,
    kDescribeProducers,
    kDescribeTransactions,
    kListTransactions,
    kConsumerGroupHeartbeat,
    kConsumerGroupDescribe,
});

pr::ApiVersionsResponse advertised_versions() {
  pr::ApiVersionsResponse response;
  for (int16_t key : kImplemented) {
    const auto* api = pr::find_api(key);
    response.api_keys.push_back({key, api->min_version, api->max_version});
  }
  std::sort(response.api_keys.begin(), response.api_keys.end(),
            [](const auto& a, const auto& b) { return a.api_key < b.api_key; });
  return response;
}

}  // namespace

std::span<const int16_t> implemented_api_keys() {
  return kImplemented;
}

bool is_implemented(int16_t api_key) {
  return std::find(kImplemented.begin(), kImplemented.end(), api_key) != kImplemented.end();
}

void write_api_versions_fallback(Writer& out) {
  auto response = advertised_versions();
  response.error_code = pr::code(pr::ErrorCode::kUnsupportedVersion);
  response.encode(out, 0);
}

void handle_api_versions(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t version = ctx.header.api_version;
  pr::ApiVersionsRequest request;
  request.decode(body, version);
  auto response = advertised_versions();
  response.encode(out, version);
}

asio::awaitable<void> dispatch(RequestContext& ctx, Reader& body, Writer& out) {
  switch (ctx.header.api_key) {
    case kProduce:
      co_await handle_produce(ctx, body, out);
      break;
    case kFetch:
      co_await handle_fetch(ctx, body, out);
      break;
    case kListOffsets:
      handle_list_offsets(ctx, body, out);
      break;
    case kMetadata:
      handle_metadata(ctx, body, out);
      break;
    case kApiVersions:
      handle_api_versions(ctx, body, out);
      break;
    case kSaslHandshake:
      handle_sasl_handshake(ctx, body, out);
      break;
    case kSaslAuthenticate:
      handle_sasl_authenticate(ctx, body, out);
      break;
    case kDescribeClientQuotas:
      handle_describe_client_quotas(ctx, body, out);
      break;
    case kAlterClientQuotas:
      handle_alter_client_quotas(ctx, body, out);
      break;
    case kDescribeUserScramCredentials:
      handle_describe_user_scram_credentials(ctx, body, out);
      break;
    case kAlterUserScramCredentials:
      handle_alter_user_scram_credentials(ctx, body, out);
      break;
    case kOffsetCommit:
      handle_offset_commit(ctx, body, out);
      break;
    case kInitProducerId:
      handle_init_producer_id(ctx, body, out);
      break;
    case kDescribeProducers:
      handle_describe_producers(ctx, body, out);
      break;
    case kAddPartitionsToTxn:
      handle_add_partitions_to_txn(ctx, body, out);
      break;
    case kAddOffsetsToTxn:
      handle_add_offsets_to_txn(ctx, body, out);
      break;
    case kEndTxn:
      handle_end_txn(ctx, body, out);
      break;
    case kTxnOffsetCommit:
      handle_txn_offset_commit(ctx, body, out);
      break;
    case kDescribeTransactions:
      handle_describe_transactions(ctx, body, out);
      break;
    case kListTransactions:
      handle_list_transactions(ctx, body, out);
      break;
    case kDeleteRecords:
      handle_delete_records(ctx, body, out);
      break;
    case kDescribeAcls:
      handle_describe_acls(ctx, body, out);
      break;
    case kCreateAcls:
      handle_create_acls(ctx, body, out);
      break;
    case kDeleteAcls:
      handle_delete_acls(ctx, body, out);
      break;
    case kAlterConfigs:
      handle_alter_configs(ctx, body, out);
      break;
    case kDescribeLogDirs:
      handle_describe_log_dirs(ctx, body, out);
      break;
    case kElectLeaders:
      handle_elect_leaders(ctx, body, out);
      break;
    case kIncrementalAlterConfigs:
      handle_incremental_alter_configs(ctx, body, out);
      break;
    case kOffsetFetch:
      handle_offset_fetch(ctx, body, out);
      break;
    case kFindCoordinator:
      handle_find_coordinator(ctx, body, out);
      break;
    case kJoinGroup:
      co_await handle_join_group(ctx, body, out);
      break;
    case kHeartbeat:
      handle_heartbeat(ctx, body, out);
      break;
    case kLeaveGroup:
      handle_leave_group(ctx, body, out);
      break;
    case kSyncGroup:
      co_await handle_sync_group(ctx, body, out);
      break;
    case kDescribeGroups:
      handle_describe_groups(ctx, body, out);
      break;
    case kListGroups:
      handle_list_groups(ctx, body, out);
      break;
    case kConsumerGroupHeartbeat:
      handle_consumer_group_heartbeat(ctx, body, out);
      break;
    case kConsumerGroupDescribe:
      handle_consumer_group_describe(ctx, body, out);
      break;
    case kDeleteGroups:
      handle_delete_groups(ctx, body, out);
      break;
    case kOffsetDelete:
      handle_offset_delete(ctx, body, out);
      break;
    case kCreateTopics:
      handle_create_topics(ctx, body, out);
      break;
    case kDeleteTopics:
      handle_delete_topics(ctx, body, out);
      break;
    case kOffsetForLeaderEpoch:
      handle_offset_for_leader_epoch(ctx, body, out);
      break;
    case kDescribeConfigs:
      handle_describe_configs(ctx, body, out);
      break;
    case kCreatePartitions:
      handle_create_partitions(ctx, body, out);
      break;
    case kAlterPartitionReassignments:
      handle_alter_partition_reassignments(ctx, body, out);
      break;
    case kListPartitionReassignments:
      handle_list_partition_reassignments(ctx, body, out);
      break;
    case kDescribeCluster:
      handle_describe_cluster(ctx, body, out);
      break;
    default:
      throw pr::DecodeError("no handler for API key " + std::to_string(ctx.header.api_key));
  }
}

}  // namespace oxbow::broker
