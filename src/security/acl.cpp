#include "security/acl.h"

#include <array>
#include <cstddef>
#include <initializer_list>

namespace oxbow::security {

namespace {

// Indexed by wire code; the tables are the single source of names for both directions.
constexpr std::array<const char*, 8> kResourceTypeNames = {
    "UNKNOWN", "ANY", "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "DELEGATION_TOKEN", "USER"};
constexpr std::array<const char*, 5> kPatternTypeNames = {"UNKNOWN", "ANY", "MATCH", "LITERAL",
                                                          "PREFIXED"};
constexpr std::array<const char*, 15> kOperationNames = {"UNKNOWN",
                                                         "ANY",
                                                         "ALL",
                                                         "READ",
                                                         "WRITE",
                                                         "CREATE",
                                                         "DELETE",
                                                         "ALTER",
                                                         "DESCRIBE",
                                                         "CLUSTER_ACTION",
                                                         "DESCRIBE_CONFIGS",
                                                         "ALTER_CONFIGS",
                                                         "IDEMPOTENT_WRITE",
                                                         "CREATE_TOKENS",
                                                         "DESCRIBE_TOKENS"};
constexpr std::array<const char*, 4> kPermissionNames = {"UNKNOWN", "ANY", "DENY", "ALLOW"};

template <size_t N, typename E>
const char* lookup(const std::array<const char*, N>& names, E value) {
  auto code = static_cast<int>(value);
  return code >= 0 && static_cast<size_t>(code) < N ? names[static_cast<size_t>(code)] : "UNKNOWN";
}

// Codes from the wire may lie outside the enum; those count as UNKNOWN too.
template <size_t N, typename E>
bool known(const std::array<const char*, N>&, E value) {
  auto code = static_cast<int>(value);
  return code > 0 && static_cast<size_t>(code) < N;
}

bool same_name(std::string_view text, std::string_view canonical) {
  if (text.size() != canonical.size()) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (c == '-') c = '_';
    if (c != canonical[i]) return false;
  }
  return true;
}

template <typename E, size_t N>
E parse(const std::array<const char*, N>& names, std::string_view text) {
  for (size_t i = 0; i < N; ++i) {
    if (same_name(text, names[i])) return static_cast<E>(i);
  }
  return static_cast<E>(0);
}

bool is_concrete(ResourceType type) {
  return type >= ResourceType::kTopic && type <= ResourceType::kUser;
}

}  // namespace

const char* name(ResourceType type) {
  return lookup(kResourceTypeNames, type);
}
const char* name(PatternType type) {
  return lookup(kPatternTypeNames, type);
}
const char* name(AclOperation operation) {
  return lookup(kOperationNames, operation);
}
const char* name(AclPermission permission) {
  return lookup(kPermissionNames, permission);
}

ResourceType parse_resource_type(std::string_view text) {
  return parse<ResourceType>(kResourceTypeNames, text);
}
PatternType parse_pattern_type(std::string_view text) {
  return parse<PatternType>(kPatternTypeNames, text);
}
AclOperation parse_operation(std::string_view text) {
  return parse<AclOperation>(kOperationNames, text);
}
AclPermission parse_permission(std::string_view text) {
  return parse<AclPermission>(kPermissionNames, text);
}

int32_t supported_operation_bits(ResourceType type) {
  using enum AclOperation;
  auto bits = [](std::initializer_list<AclOperation> ops) {
    int32_t out = 0;
    for (auto op : ops) out |= int32_t{1} << static_cast<int>(op);
    return out;
  };
  switch (type) {
    case ResourceType::kTopic:
      return bits(
          {kRead, kWrite, kCreate, kDelete, kAlter, kDescribe, kDescribeConfigs, kAlterConfigs});
    case ResourceType::kGroup:
      return bits({kRead, kDelete, kDescribe});
    case ResourceType::kCluster:
      return bits({kCreate, kAlter, kDescribe, kClusterAction, kDescribeConfigs, kAlterConfigs,
                   kIdempotentWrite});
    case ResourceType::kTransactionalId:
      return bits({kWrite, kDescribe});
    case ResourceType::kDelegationToken:
      return bits({kDescribe});
    case ResourceType::kUser:
      return bits({kCreateTokens, kDescribeTokens});
    default:
      return 0;
  }
}

bool AclFilter::matches(const AclBinding& binding) const {
  if (resource_type != ResourceType::kAny && resource_type != binding.resource_type) return false;
  bool match_pattern = pattern_type == PatternType::kMatch;
  if (pattern_type != PatternType::kAny && !match_pattern && pattern_type != binding.pattern_type) {
    return false;
  }
  if (resource_name) {
    if (!match_pattern) {
      if (*resource_name != binding.resource_name) return false;
    } else if (binding.pattern_type == PatternType::kLiteral) {
      if (*resource_name != binding.resource_name && binding.resource_name != "*") return false;
    } else if (binding.pattern_type == PatternType::kPrefixed) {
      if (!resource_name->starts_with(binding.resource_name)) return false;
    } else {
      return false;
    }
  }
  if (principal && *principal != binding.principal) return false;
  if (host && *host != binding.host) return false;
  if (operation != AclOperation::kAny && operation != binding.operation) return false;
  return permission == AclPermission::kAny || permission == binding.permission;
}

std::optional<std::string> validate(const AclBinding& binding) {
  if (!is_concrete(binding.resource_type)) {
    return std::string("resource type ") + name(binding.resource_type) +
           " is not a resource an ACL can be bound to";
  }
  if (binding.pattern_type != PatternType::kLiteral &&
      binding.pattern_type != PatternType::kPrefixed) {
    return std::string("pattern type ") + name(binding.pattern_type) +
           " is not LITERAL or PREFIXED";
  }
  if (binding.resource_name.empty()) return "the resource name is empty";
  if (binding.resource_type == ResourceType::kCluster &&
      (binding.pattern_type != PatternType::kLiteral ||
       binding.resource_name != kClusterResourceName)) {
    return std::string("the only CLUSTER resource is the LITERAL ") + kClusterResourceName;
  }
  size_t colon = binding.principal.find(':');
  if (colon == std::string::npos || colon == 0) {
    return "principal '" + binding.principal + "' is not of the form <type>:<name>";
  }
  if (binding.host.empty()) return "the host is empty (\"*\" is every host)";
  if (binding.operation < AclOperation::kAll || binding.operation > AclOperation::kDescribeTokens) {
    return std::string("operation ") + name(binding.operation) + " cannot be bound";
  }
  if (binding.permission != AclPermission::kAllow && binding.permission != AclPermission::kDeny) {
    return std::string("permission ") + name(binding.permission) + " is not ALLOW or DENY";
  }
  return std::nullopt;
}

std::optional<std::string> validate(const AclFilter& filter) {
  if (!known(kResourceTypeNames, filter.resource_type)) return "unknown resource type";
  if (!known(kPatternTypeNames, filter.pattern_type)) return "unknown pattern type";
  if (!known(kOperationNames, filter.operation)) return "unknown operation";
  if (!known(kPermissionNames, filter.permission)) return "unknown permission";
  return std::nullopt;
}

}  // namespace oxbow::security
