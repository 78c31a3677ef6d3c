// CreateAcls, DescribeAcls and DeleteAcls: managing the ACL authorizer's bindings. Creating and
// deleting need ALTER on the cluster, describing needs DESCRIBE; without an authorizer each answers
// SECURITY_DISABLED, as Kafka does.
#include <map>
#include <tuple>

#include "broker/broker.h"
#include "broker/handlers/authorization.h"
#include "broker/handlers/handlers.h"
#include "protocol/errors.h"
#include "protocol/messages/create_acls.h"
#include "protocol/messages/delete_acls.h"
#include "protocol/messages/describe_acls.h"
#include "security/authorizer.h"

namespace oxbow::broker {

namespace pr = oxbow::protocol;
namespace sec = oxbow::security;
using pr::ErrorCode;

namespace {

constexpr const char* kNoAuthorizer = "No Authorizer is configured on the broker";

template <typename Filter>
sec::AclFilter to_filter(const Filter& f) {
  sec::AclFilter filter;
  filter.resource_type = static_cast<sec::ResourceType>(f.resource_type_filter);
  filter.resource_name = f.resource_name_filter;
  filter.pattern_type = static_cast<sec::PatternType>(f.pattern_type_filter);
  filter.principal = f.principal_filter;
  filter.host = f.host_filter;
  filter.operation = static_cast<sec::AclOperation>(f.operation);
  filter.permission = static_cast<sec::AclPermission>(f.permission_type);
  return filter;
}

// Why the request may not change ACLs, if it may not.
std::optional<std::pair<ErrorCode, std::string>> refusal_to_alter(const RequestContext& ctx) {
  if (!ctx.broker.authorizer())
    return std::pair{ErrorCode::kSecurityDisabled, std::string(kNoAuthorizer)};
  if (!authorized_on_cluster(ctx, AclOperation::kAlter)) {
    return std::pair{ErrorCode::kClusterAuthorizationFailed, std::string("Authorization failed.")};
  }
  return std::nullopt;
}

}  // namespace

void handle_create_acls(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::CreateAclsRequest request;
  request.decode(body, v);
  pr::CreateAclsResponse response;
  auto* authorizer = ctx.broker.authorizer();
  auto refusal = refusal_to_alter(ctx);
  std::vector<sec::AclBinding> valid;
  std::vector<size_t> valid_index;
  response.results.resize(request.creations.size());
  for (size_t i = 0; i < request.creations.size(); ++i) {
    const auto& c = request.creations[i];
    auto& result = response.results[i];
    if (refusal) {
      result.error_code = pr::code(refusal->first);
      result.error_message = refusal->second;
      continue;
    }
    sec::AclBinding binding{static_cast<sec::ResourceType>(c.resource_type),
                            c.resource_name,
                            static_cast<sec::PatternType>(c.resource_pattern_type),
                            c.principal,
                            c.host,
                            static_cast<sec::AclOperation>(c.operation),
                            static_cast<sec::AclPermission>(c.permission_type)};
    if (auto problem = sec::validate(binding)) {
      result.error_code = pr::code(ErrorCode::kInvalidRequest);
      result.error_message = *problem;
      continue;
    }
    valid.push_back(std::move(binding));
    valid_index.push_back(i);
  }
  std::string error;
  if (!valid.empty() && !authorizer->create(valid, error)) {
    for (size_t i : valid_index) {
      response.results[i].error_code = pr::code(ErrorCode::kKafkaStorageError);
      response.results[i].error_message = error;
    }
  }
  response.encode(out, v);
}

void handle_describe_acls(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::DescribeAclsRequest request;
  request.decode(body, v);
  pr::DescribeAclsResponse response;
  auto* authorizer = ctx.broker.authorizer();
  auto filter = to_filter(request);
  if (!authorizer) {
    response.error_code = pr::code(ErrorCode::kSecurityDisabled);
    response.error_message = kNoAuthorizer;
  } else if (!authorized_on_cluster(ctx, AclOperation::kDescribe)) {
    response.error_code = pr::code(ErrorCode::kClusterAuthorizationFailed);
    response.error_message = "Authorization failed.";
  } else if (auto problem = sec::validate(filter)) {
    response.error_code = pr::code(ErrorCode::kInvalidRequest);
    response.error_message = *problem;
  } else {
    // One entry per resource pattern, its ACLs beneath; describe() returns them sorted.
    for (auto& b : authorizer->describe(filter)) {
      auto type = static_cast<int8_t>(b.resource_type);
      auto pattern = static_cast<int8_t>(b.pattern_type);
      if (response.resources.empty() || response.resources.back().resource_type != type ||
          response.resources.back().resource_name != b.resource_name ||
          response.resources.back().pattern_type != pattern) {
        response.resources.push_back({type, b.resource_name, pattern, {}});
      }
      response.resources.back().acls.push_back({std::move(b.principal), std::move(b.host),
                                                static_cast<int8_t>(b.operation),
                                                static_cast<int8_t>(b.permission)});
    }
  }
  response.encode(out, v);
}

void handle_delete_acls(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::DeleteAclsRequest request;
  request.decode(body, v);
  pr::DeleteAclsResponse response;
  auto* authorizer = ctx.broker.authorizer();
  auto refusal = refusal_to_alter(ctx);
  response.filter_results.resize(request.filters.size());
  std::vector<sec::AclFilter> filters;
  std::vector<size_t> filter_index;
  for (size_t i = 0; i < request.filters.size(); ++i) {
    auto& result = response.filter_results[i];
    if (refusal) {
      result.error_code = pr::code(refusal->first);
      result.error_message = refusal->second;
      continue;
    }
    auto filter = to_filter(request.filters[i]);
    if (auto problem = sec::validate(filter)) {
      result.error_code = pr::code(ErrorCode::kInvalidRequest);
      result.error_message = *problem;
      continue;
    }
    filters.push_back(std::move(filter));
    filter_index.push_back(i);
  }
  if (!filters.empty()) {
    std::vector<std::vector<sec::AclBinding>> removed;
    std::string error;
    bool stored = authorizer->remove(filters, removed, error);
    for (size_t f = 0; f < filters.size(); ++f) {
      auto& result = response.filter_results[filter_index[f]];
      if (!stored) {
        result.error_code = pr::code(ErrorCode::kKafkaStorageError);
        result.error_message = error;
        continue;
      }
      for (auto& b : removed[f]) {
        auto& m = result.matching_acls.emplace_back();
        m.resource_type = static_cast<int8_t>(b.resource_type);
        m.resource_name = std::move(b.resource_name);
        m.pattern_type = static_cast<int8_t>(b.pattern_type);
        m.principal = std::move(b.principal);
        m.host = std::move(b.host);
        m.operation = static_cast<int8_t>(b.operation);
        m.permission_type = static_cast<int8_t>(b.permission);
      }
    }
  }
  response.encode(out, v);
}

}  // namespace oxbow::broker
