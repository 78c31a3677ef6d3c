#pragma once
// Kafka's ACL model: resource patterns, access control entries, the bindings of the two that
// CreateAcls/DescribeAcls/DeleteAcls carry, and the filters that select them. The enum values are
// Kafka's wire codes, so requests convert with a cast.
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace oxbow::security {

enum class ResourceType : int8_t {
  kUnknown = 0,
  kAny = 1,
  kTopic = 2,
  kGroup = 3,
  kCluster = 4,
  kTransactionalId = 5,
  kDelegationToken = 6,
  kUser = 7,
};

enum class PatternType : int8_t { kUnknown = 0, kAny = 1, kMatch = 2, kLiteral = 3, kPrefixed = 4 };

enum class AclOperation : int8_t {
  kUnknown = 0,
  kAny = 1,
  kAll = 2,
  kRead = 3,
  kWrite = 4,
  kCreate = 5,
  kDelete = 6,
  kAlter = 7,
  kDescribe = 8,
  kClusterAction = 9,
  kDescribeConfigs = 10,
  kAlterConfigs = 11,
  kIdempotentWrite = 12,
  kCreateTokens = 13,
  kDescribeTokens = 14,
};

enum class AclPermission : int8_t { kUnknown = 0, kAny = 1, kDeny = 2, kAllow = 3 };

// Kafka's names ("TOPIC", "TRANSACTIONAL_ID", "PREFIXED", "DESCRIBE_CONFIGS", "ALLOW", ...);
// "UNKNOWN" for a value outside the enum.
const char* name(ResourceType type);
const char* name(PatternType type);
const char* name(AclOperation operation);
const char* name(AclPermission permission);

// Case-insensitive, and '-' stands for '_' as in the command-line tools ("transactional-id");
// kUnknown when the text names nothing.
ResourceType parse_resource_type(std::string_view text);
PatternType parse_pattern_type(std::string_view text);
AclOperation parse_operation(std::string_view text);
AclPermission parse_permission(std::string_view text);

// The one name a CLUSTER resource has.
inline constexpr const char* kClusterResourceName = "kafka-cluster";

struct AclBinding {
  ResourceType resource_type;
  std::string resource_name;
  PatternType pattern_type;
  std::string principal;  // "<type>:<name>", e.g. "User:alice"; "User:*" is every user
  std::string host;       // "*" is every host
  AclOperation operation;
  AclPermission permission;

  auto operator<=>(const AclBinding&) const = default;
};

// Kafka's AclBindingFilter. An empty optional and the kAny values match everything; kMatch
// selects the bindings that would apply to the named resource (literal, "*" and prefixes).
struct AclFilter {
  ResourceType resource_type = ResourceType::kAny;
  std::optional<std::string> resource_name = std::nullopt;
  PatternType pattern_type = PatternType::kAny;
  std::optional<std::string> principal = std::nullopt;
  std::optional<std::string> host = std::nullopt;
  AclOperation operation = AclOperation::kAny;
  AclPermission permission = AclPermission::kAny;

  bool matches(const AclBinding& binding) const;
};

// The authorized_operations bitfield (bit 1 << operation) of every operation Kafka defines for
// the resource type: what a broker without an authorizer reports. 0 for ANY/UNKNOWN.
int32_t supported_operation_bits(ResourceType type);

// nullopt when the binding may be stored, else a one-line reason (for INVALID_REQUEST).
std::optional<std::string> validate(const AclBinding& binding);
// nullopt when the filter may be used, else a one-line reason.
std::optional<std::string> validate(const AclFilter& filter);

}  // namespace oxbow::security
