// Consumer-group APIs: FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
// DescribeGroups, ListGroups, DeleteGroups. This single broker coordinates every group.
#include <set>

#include "broker/async_waiter.h"
#include "broker/broker.h"
#include "broker/handlers/authorization.h"
#include "broker/handlers/handlers.h"
#include "common/properties.h"
#include "group/coordinator.h"
#include "protocol/errors.h"
#include "protocol/messages/delete_groups.h"
#include "protocol/messages/describe_groups.h"
#include "protocol/messages/find_coordinator.h"
#include "protocol/messages/heartbeat.h"
#include "protocol/messages/join_group.h"
#include "protocol/messages/leave_group.h"
#include "protocol/messages/list_groups.h"
#include "protocol/messages/sync_group.h"

namespace oxbow::broker {

namespace pr = oxbow::protocol;
using pr::ErrorCode;

namespace {

constexpr int8_t kGroupKey = 0;
constexpr int8_t kTransactionKey = 1;

// Waits, without blocking the I/O thread, for a coordinator callback to deliver a result.
template <typename Result>
struct Deferred {
  std::optional<Result> result;
  std::shared_ptr<AsyncWaiter> waiter;
};

// The wait is the rebalance's (other members joining, the leader's assignment): it counts as
// parked, not as slowness.
template <typename Result>
asio::awaitable<Result> await_result(RequestContext& ctx,
                                     std::shared_ptr<Deferred<Result>> deferred) {
  auto parked_from = std::chrono::steady_clock::now();
  while (!deferred->result) {
    co_await deferred->waiter->wait_until(std::chrono::steady_clock::now() + std::chrono::hours(1));
  }
  ctx.parked += std::chrono::steady_clock::now() - parked_from;
  co_return std::move(*deferred->result);
}

template <typename Result>
std::pair<std::shared_ptr<Deferred<Result>>, std::function<void(Result)>> make_deferred(
    asio::any_io_executor ex) {
  auto deferred = std::make_shared<Deferred<Result>>();
  deferred->waiter = std::make_shared<AsyncWaiter>(ex);
  // The waiter's wake posts to this connection's thread, where `result` is read: the result is
  // written before that post, so it is visible when the coroutine resumes.
  auto done = [deferred](Result r) {
    deferred->result = std::move(r);
    deferred->waiter->wake();
  };
  return {deferred, done};
}

}  // namespace

void handle_find_coordinator(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::FindCoordinatorRequest request;
  request.decode(body, v);
  auto endpoint = ctx.broker.advertised_endpoint(ctx.listener_name);
  int32_t node = ctx.broker.config().node_id;
  auto key_error = [&](const std::string& key) {
    if (request.key_type != kGroupKey && request.key_type != kTransactionKey)
      return ErrorCode::kInvalidRequest;
    if (key.empty()) return ErrorCode::kInvalidRequest;
    if (request.key_type == kGroupKey) {
      return authorized(ctx, AclOperation::kDescribe, ResourceType::kGroup, key)
                 ? ErrorCode::kNone
                 : ErrorCode::kGroupAuthorizationFailed;
    }
    return authorized(ctx, AclOperation::kDescribe, ResourceType::kTransactionalId, key)
               ? ErrorCode::kNone
               : ErrorCode::kTransactionalIdAuthorizationFailed;
  };
  pr::FindCoordinatorResponse response;
  if (v < 4) {
    ErrorCode error = key_error(request.key);
    response.error_code = pr::code(error);
    if (error == ErrorCode::kNone) {
      response.node_id = node;
      response.host = endpoint.host;
      response.port = endpoint.port;
    } else {
      response.node_id = -1;
      response.port = -1;
      response.error_message = pr::error_name(error);
    }
  } else {
    for (const auto& key : request.coordinator_keys) {
      auto& c = response.coordinators.emplace_back();
      c.key = key;
      ErrorCode error = key_error(key);
      c.error_code = pr::code(error);
      if (error == ErrorCode::kNone) {
        c.node_id = node;
        c.host = endpoint.host;
        c.port = endpoint.port;
      } else {
        c.node_id = -1;
        c.port = -1;
        c.error_message = pr::error_name(error);
      }
    }
  }
  response.encode(out, v);
}

asio::awaitable<void> handle_join_group(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::JoinGroupRequest request;
  request.decode(body, v);
  group::JoinRequest join;
  join.group_id = request.group_id;
  join.member_id = request.member_id;
  join.group_instance_id = request.group_instance_id;
  join.client_id = ctx.header.client_id.value_or("");
  join.client_host = "/" + ctx.client_host;
  join.session_timeout_ms = request.session_timeout_ms;
  join.rebalance_timeout_ms = v >= 1 ? request.rebalance_timeout_ms : request.session_timeout_ms;
  join.protocol_type = request.protocol_type;
  for (auto& p : request.protocols) join.protocols.emplace_back(p.name, std::move(p.metadata));
  join.require_known_member_id = v >= 4 && !request.group_instance_id;

  group::JoinResult result;
  if (authorized(ctx, AclOperation::kRead, ResourceType::kGroup, request.group_id)) {
    auto [deferred, done] = make_deferred<group::JoinResult>(co_await asio::this_coro::executor);
    ctx.broker.groups().join(std::move(join), done);
    result = co_await await_result(ctx, deferred);
  } else {
    result.error = ErrorCode::kGroupAuthorizationFailed;
    result.generation = -1;
    result.member_id = request.member_id;
  }

  pr::JoinGroupResponse response;
  response.error_code = pr::code(result.error);
  response.generation_id = result.generation;
  response.protocol_type = result.protocol_type;
  response.protocol_name =
      result.protocol_name ? *result.protocol_name : (v >= 7 ? std::optional<std::string>() : "");
  response.leader = result.leader;
  response.member_id = result.member_id;
  response.skip_assignment = result.skip_assignment;
  for (auto& m : result.members) {
    response.members.push_back({m.member_id, m.group_instance_id, std::move(m.metadata)});
  }
  response.encode(out, v);
}

asio::awaitable<void> handle_sync_group(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::SyncGroupRequest request;
  request.decode(body, v);
  group::SyncRequest sync;
  sync.group_id = request.group_id;
  sync.generation = request.generation_id;
  sync.member_id = request.member_id;
  sync.group_instance_id = request.group_instance_id;
  sync.protocol_type = request.protocol_type;
  sync.protocol_name = request.protocol_name;
  for (auto& a : request.assignments)
    sync.assignments.emplace_back(a.member_id, std::move(a.assignment));

  group::SyncResult result;
  if (authorized(ctx, AclOperation::kRead, ResourceType::kGroup, request.group_id)) {
    auto [deferred, done] = make_deferred<group::SyncResult>(co_await asio::this_coro::executor);
    ctx.broker.groups().sync(std::move(sync), done);
    result = co_await await_result(ctx, deferred);
  } else {
    result.error = ErrorCode::kGroupAuthorizationFailed;
  }

  pr::SyncGroupResponse response;
  response.error_code = pr::code(result.error);
  response.protocol_type = result.protocol_type;
  response.protocol_name = result.protocol_name;
  response.assignment = std::move(result.assignment);
  response.encode(out, v);
}

void handle_heartbeat(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::HeartbeatRequest request;
  request.decode(body, v);
  pr::HeartbeatResponse response;
  response.error_code = authorized(ctx, AclOperation::kRead, ResourceType::kGroup, request.group_id)
                            ? pr::code(ctx.broker.groups().heartbeat(
                                  request.group_id, request.member_id, request.group_instance_id,
                                  request.generation_id))
                            : pr::code(ErrorCode::kGroupAuthorizationFailed);
  response.encode(out, v);
}

void handle_leave_group(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::LeaveGroupRequest request;
  request.decode(body, v);
  pr::LeaveGroupResponse response;
  auto& groups = ctx.broker.groups();
  if (!authorized(ctx, AclOperation::kRead, ResourceType::kGroup, request.group_id)) {
    response.error_code = pr::code(ErrorCode::kGroupAuthorizationFailed);
  } else if (v < 3) {
    response.error_code = pr::code(groups.leave(request.group_id, request.member_id, std::nullopt));
  } else {
    for (const auto& m : request.members) {
      ErrorCode error = groups.leave(request.group_id, m.member_id, m.group_instance_id);
      response.members.push_back({m.member_id, m.group_instance_id, pr::code(error)});
    }
  }
  response.encode(out, v);
}

void handle_describe_groups(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::DescribeGroupsRequest request;
  request.decode(body, v);
  pr::DescribeGroupsResponse response;
  for (const auto& id : request.groups) {
    auto& g = response.groups.emplace_back();
    g.group_id = id;
    g.authorized_operations = INT32_MIN;
    if (!authorized(ctx, AclOperation::kDescribe, ResourceType::kGroup, id)) {
      g.error_code = pr::code(ErrorCode::kGroupAuthorizationFailed);
      continue;
    }
    if (request.include_authorized_operations) {
      g.authorized_operations = authorized_operations(ctx, ResourceType::kGroup, id);
    }
    auto d = ctx.broker.groups().describe(id);
    g.error_code = pr::code(id.empty() ? ErrorCode::kInvalidGroupId : d.error);
    g.group_state = d.state;
    g.protocol_type = d.protocol_type;
    g.protocol_data = d.protocol_name;
    for (auto& m : d.members) {
      g.members.push_back({m.member_id, m.group_instance_id, m.client_id, m.client_host,
                           std::move(m.metadata), std::move(m.assignment)});
    }
  }
  response.encode(out, v);
}

void handle_list_groups(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::ListGroupsRequest request;
  request.decode(body, v);
  pr::ListGroupsResponse response;
  // With DESCRIBE on the cluster every group is listed, else those the principal may describe.
  bool all = authorized_on_cluster(ctx, AclOperation::kDescribe, Audit::kQuiet);
  // The types filter ("classic", "consumer") matches case-insensitively.
  std::set<std::string> types;
  for (const auto& type : request.types_filter) types.insert(ascii_lower(type));
  for (auto& g : ctx.broker.groups().list(request.states_filter)) {
    if (!types.empty() && !types.contains(g.type)) continue;
    if (!all &&
        !authorized(ctx, AclOperation::kDescribe, ResourceType::kGroup, g.group_id, Audit::kQuiet))
      continue;
    response.groups.push_back({g.group_id, g.protocol_type, g.state, g.type});
  }
  response.encode(out, v);
}

void handle_delete_groups(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::DeleteGroupsRequest request;
  request.decode(body, v);
  pr::DeleteGroupsResponse response;
  for (const auto& id : request.groups_names) {
    ErrorCode error = authorized(ctx, AclOperation::kDelete, ResourceType::kGroup, id)
                          ? ctx.broker.groups().delete_group(id)
                          : ErrorCode::kGroupAuthorizationFailed;
    response.results.push_back({id, pr::code(error)});
  }
  response.encode(out, v);
}

}  // namespace oxbow::broker
