// DescribeClientQuotas and AlterClientQuotas: the byte-rate quotas of users and client-ids
// (what `kafka-configs --entity-type users|clients` and `oxbow quota` edit).
#include <algorithm>
#include <chrono>
#include <set>

#include "broker/broker.h"
#include "broker/handlers/authorization.h"
#include "broker/handlers/handlers.h"
#include "broker/quotas/client_quotas.h"
#include "broker/sasl/authenticator.h"
#include "common/clock.h"
#include "protocol/errors.h"
#include "protocol/messages/alter_client_quotas.h"
#include "protocol/messages/describe_client_quotas.h"

namespace oxbow::broker {

namespace pr = oxbow::protocol;
using pr::ErrorCode;

namespace {

enum MatchType : int8_t { kMatchExact = 0, kMatchDefault = 1, kMatchSpecified = 2 };

using Components = std::vector<pr::DescribeClientQuotasRequest::ComponentData>;

// Kafka's filter checks and messages (all INVALID_REQUEST but an unknown entity type).
std::pair<ErrorCode, std::string> filter_problem(const Components& components) {
  std::set<std::string> types;
  auto invalid = [](std::string message) {
    return std::pair{ErrorCode::kInvalidRequest, std::move(message)};
  };
  for (const auto& c : components) {
    if (c.entity_type.empty()) return invalid("Invalid empty entity type.");
    if (!types.insert(c.entity_type).second) {
      return invalid("Entity type " + c.entity_type +
                     " cannot appear more than once in the filter.");
    }
    if (c.entity_type != kQuotaUser && c.entity_type != kQuotaClientId && c.entity_type != "ip") {
      return {ErrorCode::kUnsupportedVersion, "Unsupported entity type " + c.entity_type};
    }
    if (c.match_type == kMatchExact && !c.match) {
      return invalid("Request specified MATCH_TYPE_EXACT, but set match string to null.");
    }
    if (c.match_type == kMatchDefault && c.match) {
      return invalid("Request specified MATCH_TYPE_DEFAULT, but also specified a match string.");
    }
    if (c.match_type == kMatchSpecified && c.match) {
      return invalid("Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.");
    }
    if (c.match_type < kMatchExact || c.match_type > kMatchSpecified) {
      return invalid("Unknown match type " + std::to_string(c.match_type));
    }
  }
  if (types.contains("ip") && types.size() > 1) {
    return invalid(
        "Invalid entity filter component combination. IP filter component should not be used "
        "with user or clientId filter component.");
  }
  return {ErrorCode::kNone, ""};
}

bool matches(const QuotaEntity& entity, const Components& components, bool strict) {
  if (strict && entity.size() != components.size()) return false;
  for (const auto& c : components) {
    auto it = entity.find(c.entity_type);
    if (it == entity.end()) return false;
    const auto& name = it->second;
    if (c.match_type == kMatchExact && name != c.match) return false;
    if (c.match_type == kMatchDefault && name) return false;
    // MATCH_TYPE_SPECIFIED only asks for the entity type, so it takes defaults too (as Kafka).
  }
  return true;
}

using Entry = pr::AlterClientQuotasRequest::EntryData;

std::optional<QuotaEntity> entity_of(const Entry& entry, std::string& problem) {
  QuotaEntity entity;
  for (const auto& part : entry.entity) {
    if (!entity.emplace(part.entity_type, part.entity_name).second) {
      problem = "Invalid client quota entity, duplicate entity entry " + part.entity_type;
      return std::nullopt;
    }
  }
  problem = quota_entity_problem(entity);
  if (!problem.empty()) return std::nullopt;
  return entity;
}

std::string ops_problem(const Entry& entry, const QuotaEntity& entity) {
  std::set<std::string> keys;
  for (const auto& op : entry.ops) {
    if (!keys.insert(op.key).second) return "Duplicate quota key " + op.key + " for one entity";
    // A removal's value means nothing, but its key must still be one of the quota keys.
    auto problem = op.remove ? quota_key_problem(entity, op.key)
                             : quota_value_problem(entity, op.key, op.value);
    if (!problem.empty()) return problem;
  }
  return "";
}

// The client's quota identity: its principal's name (User:alice is alice; ANONYMOUS without
// authentication) and its client id.
std::pair<std::string, std::string> quota_identity(const RequestContext& ctx) {
  std::string principal = ctx.security ? ctx.security->principal : "User:ANONYMOUS";
  if (auto colon = principal.find(':'); colon != std::string::npos) principal.erase(0, colon + 1);
  return {principal, ctx.header.client_id.value_or("")};
}

int32_t record_bytes(RequestContext& ctx, QuotaType type, size_t bytes) {
  auto& quotas = ctx.broker.client_quotas();
  if (!quotas.active()) return 0;
  auto [user, client_id] = quota_identity(ctx);
  int64_t throttle =
      quotas.record(type, user, client_id, static_cast<double>(bytes), steady_now_ms());
  auto throttle_ms = static_cast<int32_t>(std::clamp<int64_t>(throttle, 0, INT32_MAX));
  ctx.throttle_ms = std::max(ctx.throttle_ms, throttle_ms);
  return throttle_ms;
}

}  // namespace

bool quotas_active(const RequestContext& ctx) {
  return ctx.broker.client_quotas().active();
}

bool charge_partition_mutations(RequestContext& ctx, int32_t partitions, bool strict,
                                int32_t& throttle_ms) {
  auto& quotas = ctx.broker.client_quotas();
  if (!quotas.active() || partitions <= 0) return true;
  auto [user, client_id] = quota_identity(ctx);
  auto charge = quotas.charge_mutations(user, client_id, partitions, strict, steady_now_ms());
  auto throttle = static_cast<int32_t>(std::clamp<int64_t>(charge.throttle_ms, 0, INT32_MAX));
  throttle_ms = std::max(throttle_ms, throttle);
  ctx.throttle_ms = std::max(ctx.throttle_ms, throttle);
  return charge.accepted;
}

int32_t record_request_time(RequestContext& ctx, std::chrono::nanoseconds busy) {
  auto& quotas = ctx.broker.client_quotas();
  if (!quotas.active()) return 0;
  auto [user, client_id] = quota_identity(ctx);
  // Percent of one thread for a second: the unit request_percentage is given in.
  double percent_seconds = std::max<double>(static_cast<double>(busy.count()), 0) * 100 / 1e9;
  int64_t throttle =
      quotas.record(QuotaType::kRequest, user, client_id, percent_seconds, steady_now_ms());
  return static_cast<int32_t>(std::clamp<int64_t>(throttle, 0, INT32_MAX));
}

int32_t record_produce_bytes(RequestContext& ctx, size_t bytes) {
  return record_bytes(ctx, QuotaType::kProduce, bytes);
}

int32_t record_fetch_bytes(RequestContext& ctx, size_t bytes) {
  return record_bytes(ctx, QuotaType::kFetch, bytes);
}

void unrecord_fetch_bytes(RequestContext& ctx, size_t bytes) {
  auto [user, client_id] = quota_identity(ctx);
  ctx.broker.client_quotas().unrecord(QuotaType::kFetch, user, client_id,
                                      static_cast<double>(bytes), steady_now_ms());
}

int32_t fetch_bytes_allowed(RequestContext& ctx) {
  auto& quotas = ctx.broker.client_quotas();
  if (!quotas.active()) return INT32_MAX;
  auto [user, client_id] = quota_identity(ctx);
  auto most = quotas.max_bytes_per_span(QuotaType::kFetch, user, client_id);
  return most ? static_cast<int32_t>(std::clamp<int64_t>(*most, 1, INT32_MAX)) : INT32_MAX;
}

void handle_describe_client_quotas(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::DescribeClientQuotasRequest request;
  request.decode(body, v);
  pr::DescribeClientQuotasResponse response;
  auto refuse = [&](ErrorCode error, std::string message) {
    response.error_code = pr::code(error);
    response.error_message = std::move(message);
    response.entries = std::nullopt;
    response.encode(out, v);
  };
  if (!authorized_on_cluster(ctx, AclOperation::kDescribeConfigs))
    return refuse(ErrorCode::kClusterAuthorizationFailed, "Authorization failed.");
  if (auto [error, problem] = filter_problem(request.components); error != ErrorCode::kNone)
    return refuse(error, problem);
  auto& entries = response.entries.emplace();
  for (const auto& [entity, values] : ctx.broker.client_quotas().all()) {
    if (!matches(entity, request.components, request.strict)) continue;
    auto& entry = entries.emplace_back();
    for (const auto& [type, name] : entity) entry.entity.push_back({type, name});
    for (const auto& [key, value] : values) entry.values.push_back({key, value});
  }
  response.encode(out, v);
}

void handle_alter_client_quotas(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::AlterClientQuotasRequest request;
  request.decode(body, v);
  bool allowed = authorized_on_cluster(ctx, AclOperation::kAlterConfigs);
  std::vector<std::pair<ErrorCode, std::string>> outcomes(request.entries.size());
  ClientQuotas::Changes changes;
  std::set<QuotaEntity> seen;
  for (size_t i = 0; i < request.entries.size(); ++i) {
    const auto& entry = request.entries[i];
    if (!allowed) {
      outcomes[i] = {ErrorCode::kClusterAuthorizationFailed, "Authorization failed."};
      continue;
    }
    std::string problem;
    auto entity = entity_of(entry, problem);
    if (entity && !seen.insert(*entity).second)
      problem = "Ignoring duplicate entity: it is altered once in this request already";
    if (problem.empty()) problem = ops_problem(entry, *entity);
    if (!problem.empty()) {
      outcomes[i] = {ErrorCode::kInvalidRequest, problem};
      continue;
    }
    auto& [target, ops] = changes.emplace_back();
    target = *entity;
    for (const auto& op : entry.ops) {
      ops[op.key] = op.remove ? std::nullopt : std::optional<double>(op.value);
    }
  }
  std::string error;
  if (!request.validate_only && !changes.empty() &&
      !ctx.broker.client_quotas().alter(changes, error)) {
    for (auto& outcome : outcomes) {
      if (outcome.first == ErrorCode::kNone) outcome = {ErrorCode::kKafkaStorageError, error};
    }
  }
  pr::AlterClientQuotasResponse response;
  for (size_t i = 0; i < request.entries.size(); ++i) {
    auto& result = response.entries.emplace_back();
    result.error_code = pr::code(outcomes[i].first);
    if (outcomes[i].first != ErrorCode::kNone) result.error_message = outcomes[i].second;
    for (const auto& part : request.entries[i].entity)
      result.entity.push_back({part.entity_type, part.entity_name});
  }
  response.encode(out, v);
}

}  // namespace oxbow::broker
