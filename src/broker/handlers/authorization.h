#pragma once
// ACL checks for request handlers, Kafka's way: each API names the operation and resource it needs
// (Fetch: READ on the topic, JoinGroup: READ on the group, CreateAcls: ALTER on the cluster, ...).
// Without an authorizer (authorizer.class.name unset) everything is allowed. A denial is an audit
// line naming the principal, host, operation, resource and API, unless the caller only filters a
// listing (Metadata of all topics, ListGroups), as Kafka does not log those either.
#include <cstdint>
#include <string>

#include "security/acl.h"

namespace oxbow::broker {

struct RequestContext;
using security::AclOperation;
using security::ResourceType;

enum class Audit { kDenial, kQuiet };

bool authorized(const RequestContext& ctx, AclOperation op, ResourceType type,
                const std::string& name, Audit audit = Audit::kDenial);
bool authorized_on_cluster(const RequestContext& ctx, AclOperation op,
                           Audit audit = Audit::kDenial);
// Idempotent producers need IDEMPOTENT_WRITE on the cluster or WRITE on some topic (Kafka 3.x).
bool may_produce_idempotently(const RequestContext& ctx);
// Kafka's authorized-operations bitfield (Metadata, DescribeGroups, DescribeCluster).
int32_t authorized_operations(const RequestContext& ctx, ResourceType type,
                              const std::string& name);
// True when no authorizer is configured: handlers can skip per-item work.
bool authorization_off(const RequestContext& ctx);

}  // namespace oxbow::broker
