#pragma once
// Request handlers, one per Kafka API. Each decodes its request from `body` and encodes its
// response into `out` (after the response header, which the connection writes).
#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "broker/asio.h"
#include "broker/request_context.h"
#include "protocol/wire.h"

namespace oxbow::broker {

using protocol::Reader;
using protocol::Writer;

// API keys with a handler: what ApiVersions advertises (ranges from the schema tables).
std::span<const int16_t> implemented_api_keys();
bool is_implemented(int16_t api_key);

// Client quotas on the produce and fetch paths (client_quota_handlers.cpp): each records the
// request's or response's bytes against the client's quota and returns the throttle time in ms.
int32_t record_produce_bytes(RequestContext& ctx, size_t bytes);
int32_t record_fetch_bytes(RequestContext& ctx, size_t bytes);
void unrecord_fetch_bytes(RequestContext& ctx, size_t bytes);
// The most a fetch may return under the client's quota; INT32_MAX without one.
int32_t fetch_bytes_allowed(RequestContext& ctx);
bool quotas_active(const RequestContext& ctx);
// request_percentage: counts `busy` (the handler's own time) against the client's quota and
// returns the throttle time in ms; the caller puts it in the response.
int32_t record_request_time(RequestContext& ctx, std::chrono::nanoseconds busy);
// controller_mutation_rate: charges `partitions` created or deleted; false when a strict request
// (one whose version knows THROTTLING_QUOTA_EXCEEDED) must refuse the topic. `throttle_ms` is
// raised to the throttle this asks for (also in ctx.throttle_ms).
bool charge_partition_mutations(RequestContext& ctx, int32_t partitions, bool strict,
                                int32_t& throttle_ms);

// One SASL token of the connection's exchange (sasl_handlers.cpp), whether it came in a
// SaslAuthenticate request or bare after a SaslHandshake v0.
struct SaslStep {
  int16_t error_code = 0;
  std::string error_message;
  std::vector<uint8_t> server_token;  // the answer to send back
  int64_t session_lifetime_ms = 0;
};
SaslStep authenticate_sasl_token(RequestContext& ctx, std::span<const uint8_t> token);

// Runs the handler of ctx.header.api_key. Throws protocol::DecodeError on a malformed body.
asio::awaitable<void> dispatch(RequestContext& ctx, Reader& body, Writer& out);

// ApiVersions for a version we do not support: UNSUPPORTED_VERSION with our ranges, in v0 form.
void write_api_versions_fallback(Writer& out);

void handle_api_versions(RequestContext& ctx, Reader& body, Writer& out);
void handle_sasl_handshake(RequestContext& ctx, Reader& body, Writer& out);
void handle_sasl_authenticate(RequestContext& ctx, Reader& body, Writer& out);
void handle_describe_client_quotas(RequestContext& ctx, Reader& body, Writer& out);
void handle_alter_client_quotas(RequestContext& ctx, Reader& body, Writer& out);
void handle_describe_user_scram_credentials(RequestContext& ctx, Reader& body, Writer& out);
void handle_alter_user_scram_credentials(RequestContext& ctx, Reader& body, Writer& out);
void handle_metadata(RequestContext& ctx, Reader& body, Writer& out);
void handle_list_offsets(RequestContext& ctx, Reader& body, Writer& out);
void handle_create_topics(RequestContext& ctx, Reader& body, Writer& out);
void handle_delete_topics(RequestContext& ctx, Reader& body, Writer& out);
void handle_create_partitions(RequestContext& ctx, Reader& body, Writer& out);
void handle_alter_partition_reassignments(RequestContext& ctx, Reader& body, Writer& out);
void handle_list_partition_reassignments(RequestContext& ctx, Reader& body, Writer& out);
void handle_describe_cluster(RequestContext& ctx, Reader& body, Writer& out);
void handle_describe_configs(RequestContext& ctx, Reader& body, Writer& out);
void handle_offset_for_leader_epoch(RequestContext& ctx, Reader& body, Writer& out);
void handle_alter_configs(RequestContext& ctx, Reader& body, Writer& out);
void handle_incremental_alter_configs(RequestContext& ctx, Reader& body, Writer& out);
void handle_delete_records(RequestContext& ctx, Reader& body, Writer& out);
void handle_describe_log_dirs(RequestContext& ctx, Reader& body, Writer& out);
void handle_elect_leaders(RequestContext& ctx, Reader& body, Writer& out);
void handle_describe_producers(RequestContext& ctx, Reader& body, Writer& out);
void handle_init_producer_id(RequestContext& ctx, Reader& body, Writer& out);
void handle_add_partitions_to_txn(RequestContext& ctx, Reader& body, Writer& out);
void handle_add_offsets_to_txn(RequestContext& ctx, Reader& body, Writer& out);
void handle_end_txn(RequestContext& ctx, Reader& body, Writer& out);
void handle_txn_offset_commit(RequestContext& ctx, Reader& body, Writer& out);
void handle_describe_acls(RequestContext& ctx, Reader& body, Writer& out);
void handle_create_acls(RequestContext& ctx, Reader& body, Writer& out);
void handle_delete_acls(RequestContext& ctx, Reader& body, Writer& out);
void handle_describe_transactions(RequestContext& ctx, Reader& body, Writer& out);
void handle_list_transactions(RequestContext& ctx, Reader& body, Writer& out);
void handle_find_coordinator(RequestContext& ctx, Reader& body, Writer& out);
asio::awaitable<void> handle_join_group(RequestContext& ctx, Reader& body, Writer& out);
asio::awaitable<void> handle_sync_group(RequestContext& ctx, Reader& body, Writer& out);
void handle_heartbeat(RequestContext& ctx, Reader& body, Writer& out);
void handle_leave_group(RequestContext& ctx, Reader& body, Writer& out);
void handle_describe_groups(RequestContext& ctx, Reader& body, Writer& out);
void handle_list_groups(RequestContext& ctx, Reader& body, Writer& out);
void handle_consumer_group_heartbeat(RequestContext& ctx, Reader& body, Writer& out);
void handle_consumer_group_describe(RequestContext& ctx, Reader& body, Writer& out);
void handle_delete_groups(RequestContext& ctx, Reader& body, Writer& out);
void handle_offset_commit(RequestContext& ctx, Reader& body, Writer& out);
void handle_offset_fetch(RequestContext& ctx, Reader& body, Writer& out);
void handle_offset_delete(RequestContext& ctx, Reader& body, Writer& out);
asio::awaitable<void> handle_produce(RequestContext& ctx, Reader& body, Writer& out);
asio::awaitable<void> handle_fetch(RequestContext& ctx, Reader& body, Writer& out);

}  // namespace oxbow::broker
