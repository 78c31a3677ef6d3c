#include "broker/handlers/authorization.h"

#include <spdlog/spdlog.h>

#include "broker/broker.h"
#include "broker/probe.h"
#include "broker/request_context.h"
#include "broker/sasl/authenticator.h"
#include "protocol/messages/api_table.h"
#include "security/authorizer.h"

namespace oxbow::broker {

namespace {

const std::string kAnonymous = "User:ANONYMOUS";

const std::string& principal_of(const RequestContext& ctx) {
  return ctx.security ? ctx.security->principal : kAnonymous;
}

void audit_denial(const RequestContext& ctx, AclOperation op, ResourceType type,
                  const std::string& name) {
  if (auto* counters = probe().api(ctx.header.api_key)) counters->authorization_denials.add();
  const auto* api = protocol::find_api(ctx.header.api_key);
  spdlog::warn("authorization denied: {} from {} on listener {}: {} on {} '{}' ({} v{})",
               principal_of(ctx), ctx.client_host, ctx.listener_name, security::name(op),
               security::name(type), name, api ? api->name : "API", ctx.header.api_version);
}

}  // namespace

bool authorization_off(const RequestContext& ctx) {
  return ctx.broker.authorizer() == nullptr;
}

bool authorized(const RequestContext& ctx, AclOperation op, ResourceType type,
                const std::string& name, Audit audit) {
  const auto* authorizer = ctx.broker.authorizer();
  if (!authorizer) return true;
  if (authorizer->authorize(principal_of(ctx), ctx.client_host, op, {type, name})) return true;
  if (audit == Audit::kDenial) audit_denial(ctx, op, type, name);
  return false;
}

bool authorized_on_cluster(const RequestContext& ctx, AclOperation op, Audit audit) {
  return authorized(ctx, op, ResourceType::kCluster, security::kClusterResourceName, audit);
}

bool may_produce_idempotently(const RequestContext& ctx) {
  const auto* authorizer = ctx.broker.authorizer();
  if (!authorizer) return true;
  const auto& principal = principal_of(ctx);
  if (authorizer->authorize(principal, ctx.client_host, AclOperation::kIdempotentWrite,
                            {ResourceType::kCluster, security::kClusterResourceName}) ||
      authorizer->authorize_any(principal, ctx.client_host, AclOperation::kWrite,
                                ResourceType::kTopic)) {
    return true;
  }
  audit_denial(ctx, AclOperation::kIdempotentWrite, ResourceType::kCluster,
               security::kClusterResourceName);
  return false;
}

int32_t authorized_operations(const RequestContext& ctx, ResourceType type,
                              const std::string& name) {
  const auto* authorizer = ctx.broker.authorizer();
  // Without an authorizer every operation the resource type has is allowed, and Kafka says so.
  if (!authorizer) return security::supported_operation_bits(type);
  return authorizer->authorized_operations(principal_of(ctx), ctx.client_host, {type, name});
}

}  // namespace oxbow::broker
