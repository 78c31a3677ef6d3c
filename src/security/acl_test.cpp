#include "security/acl.h"

#include <gtest/gtest.h>

#include <string>

namespace oxbow::security {

namespace {

AclBinding topic_binding(std::string name, PatternType pattern = PatternType::kLiteral) {
  return {ResourceType::kTopic, std::move(name),      pattern, "User:alice", "*",
          AclOperation::kRead,  AclPermission::kAllow};
}

}  // namespace

TEST(AclNames, RoundTripEveryValue) {
  for (int code = 0; code <= 7; ++code) {
    auto type = static_cast<ResourceType>(code);
    EXPECT_EQ(parse_resource_type(name(type)), type) << name(type);
  }
  for (int code = 0; code <= 4; ++code) {
    auto type = static_cast<PatternType>(code);
    EXPECT_EQ(parse_pattern_type(name(type)), type) << name(type);
  }
  for (int code = 0; code <= 14; ++code) {
    auto op = static_cast<AclOperation>(code);
    EXPECT_EQ(parse_operation(name(op)), op) << name(op);
  }
  for (int code = 0; code <= 3; ++code) {
    auto permission = static_cast<AclPermission>(code);
    EXPECT_EQ(parse_permission(name(permission)), permission) << name(permission);
  }
}

TEST(AclNames, KafkaSpellings) {
  EXPECT_STREQ(name(ResourceType::kTransactionalId), "TRANSACTIONAL_ID");
  EXPECT_STREQ(name(ResourceType::kDelegationToken), "DELEGATION_TOKEN");
  EXPECT_STREQ(name(PatternType::kPrefixed), "PREFIXED");
  EXPECT_STREQ(name(AclOperation::kDescribeConfigs), "DESCRIBE_CONFIGS");
  EXPECT_STREQ(name(AclOperation::kIdempotentWrite), "IDEMPOTENT_WRITE");
  EXPECT_STREQ(name(AclOperation::kAll), "ALL");
  EXPECT_STREQ(name(AclPermission::kDeny), "DENY");
  EXPECT_STREQ(name(static_cast<AclOperation>(42)), "UNKNOWN");
  EXPECT_STREQ(name(static_cast<ResourceType>(-3)), "UNKNOWN");
}

TEST(AclNames, ParsingIgnoresCaseAndAcceptsDashes) {
  EXPECT_EQ(parse_resource_type("Topic"), ResourceType::kTopic);
  EXPECT_EQ(parse_resource_type("transactional-id"), ResourceType::kTransactionalId);
  EXPECT_EQ(parse_resource_type("Delegation_Token"), ResourceType::kDelegationToken);
  EXPECT_EQ(parse_pattern_type("prefixed"), PatternType::kPrefixed);
  EXPECT_EQ(parse_operation("describe-configs"), AclOperation::kDescribeConfigs);
  EXPECT_EQ(parse_operation("all"), AclOperation::kAll);
  EXPECT_EQ(parse_permission("Allow"), AclPermission::kAllow);
  EXPECT_EQ(parse_permission("deny"), AclPermission::kDeny);
}

TEST(AclNames, UnknownTextParsesAsUnknown) {
  EXPECT_EQ(parse_resource_type("topics"), ResourceType::kUnknown);
  EXPECT_EQ(parse_resource_type(""), ResourceType::kUnknown);
  EXPECT_EQ(parse_pattern_type("literally"), PatternType::kUnknown);
  EXPECT_EQ(parse_operation("REA"), AclOperation::kUnknown);
  EXPECT_EQ(parse_operation("read "), AclOperation::kUnknown);
  EXPECT_EQ(parse_permission("permit"), AclPermission::kUnknown);
}

TEST(AclValidate, AcceptsWellFormedBindings) {
  EXPECT_EQ(validate(topic_binding("orders")), std::nullopt);
  EXPECT_EQ(validate(topic_binding("*")), std::nullopt);
  EXPECT_EQ(validate(topic_binding("ord", PatternType::kPrefixed)), std::nullopt);
  AclBinding wildcard = topic_binding("orders");
  wildcard.principal = "User:*";
  EXPECT_EQ(validate(wildcard), std::nullopt);
  AclBinding cluster{ResourceType::kCluster, "kafka-cluster", PatternType::kLiteral,
                     "User:admin",           "10.0.0.1",      AclOperation::kAll,
                     AclPermission::kDeny};
  EXPECT_EQ(validate(cluster), std::nullopt);
  for (auto type : {ResourceType::kGroup, ResourceType::kTransactionalId,
                    ResourceType::kDelegationToken, ResourceType::kUser}) {
    AclBinding b = topic_binding("x");
    b.resource_type = type;
    EXPECT_EQ(validate(b), std::nullopt) << name(type);
  }
}

TEST(AclValidate, RejectsEachBadField) {
  auto rejected = [](auto change) {
    AclBinding b = topic_binding("orders");
    change(b);
    return validate(b).has_value();
  };
  EXPECT_TRUE(rejected([](AclBinding& b) { b.resource_type = ResourceType::kAny; }));
  EXPECT_TRUE(rejected([](AclBinding& b) { b.resource_type = ResourceType::kUnknown; }));
  EXPECT_TRUE(rejected([](AclBinding& b) { b.resource_type = static_cast<ResourceType>(9); }));
  EXPECT_TRUE(rejected([](AclBinding& b) { b.pattern_type = PatternType::kMatch; }));
  EXPECT_TRUE(rejected([](AclBinding& b) { b.pattern_type = PatternType::kAny; }));
  EXPECT_TRUE(rejected([](AclBinding& b) { b.pattern_type = PatternType::kUnknown; }));
  EXPECT_TRUE(rejected([](AclBinding& b) { b.resource_name.clear(); }));
  EXPECT_TRUE(rejected([](AclBinding& b) { b.principal = "alice"; }));
  EXPECT_TRUE(rejected([](AclBinding& b) { b.principal = ":alice"; }));
  EXPECT_TRUE(rejected([](AclBinding& b) { b.principal.clear(); }));
  EXPECT_TRUE(rejected([](AclBinding& b) { b.host.clear(); }));
  EXPECT_TRUE(rejected([](AclBinding& b) { b.operation = AclOperation::kAny; }));
  EXPECT_TRUE(rejected([](AclBinding& b) { b.operation = AclOperation::kUnknown; }));
  EXPECT_TRUE(rejected([](AclBinding& b) { b.operation = static_cast<AclOperation>(15); }));
  EXPECT_TRUE(rejected([](AclBinding& b) { b.permission = AclPermission::kAny; }));
  EXPECT_TRUE(rejected([](AclBinding& b) { b.permission = AclPermission::kUnknown; }));
}

TEST(AclValidate, ClusterMustBeTheLiteralKafkaCluster) {
  AclBinding b{
      ResourceType::kCluster, "kafka-cluster",      PatternType::kPrefixed, "User:admin", "*",
      AclOperation::kAlter,   AclPermission::kAllow};
  EXPECT_TRUE(validate(b).has_value());
  b.pattern_type = PatternType::kLiteral;
  b.resource_name = "my-cluster";
  auto why = validate(b);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("kafka-cluster"), std::string::npos) << *why;
  b.resource_name = kClusterResourceName;
  EXPECT_EQ(validate(b), std::nullopt);
}

TEST(AclValidate, FiltersRejectOnlyUnknownValues) {
  EXPECT_EQ(validate(AclFilter{}), std::nullopt);
  AclFilter match;
  match.pattern_type = PatternType::kMatch;
  match.resource_name = "orders";
  EXPECT_EQ(validate(match), std::nullopt);

  AclFilter f;
  f.resource_type = ResourceType::kUnknown;
  EXPECT_TRUE(validate(f).has_value());
  f = {};
  f.pattern_type = PatternType::kUnknown;
  EXPECT_TRUE(validate(f).has_value());
  f = {};
  f.operation = AclOperation::kUnknown;
  EXPECT_TRUE(validate(f).has_value());
  f = {};
  f.permission = AclPermission::kUnknown;
  EXPECT_TRUE(validate(f).has_value());
  f = {};
  f.operation = static_cast<AclOperation>(99);
  EXPECT_TRUE(validate(f).has_value());
}

TEST(AclFilter, DefaultMatchesEverything) {
  AclFilter any;
  EXPECT_TRUE(any.matches(topic_binding("orders")));
  EXPECT_TRUE(any.matches(topic_binding("ord", PatternType::kPrefixed)));
  AclBinding group = topic_binding("g");
  group.resource_type = ResourceType::kGroup;
  group.permission = AclPermission::kDeny;
  EXPECT_TRUE(any.matches(group));
}

TEST(AclFilter, ResourceTypeAndAnyPatternNeedExactName) {
  AclFilter f;
  f.resource_type = ResourceType::kTopic;
  f.resource_name = "orders";
  EXPECT_TRUE(f.matches(topic_binding("orders")));
  EXPECT_TRUE(f.matches(topic_binding("orders", PatternType::kPrefixed)));
  EXPECT_FALSE(f.matches(topic_binding("ord", PatternType::kPrefixed)));
  EXPECT_FALSE(f.matches(topic_binding("*")));
  AclBinding group = topic_binding("orders");
  group.resource_type = ResourceType::kGroup;
  EXPECT_FALSE(f.matches(group));
}

TEST(AclFilter, LiteralAndPrefixedSelectTheirPatternType) {
  AclFilter literal;
  literal.pattern_type = PatternType::kLiteral;
  EXPECT_TRUE(literal.matches(topic_binding("orders")));
  EXPECT_FALSE(literal.matches(topic_binding("orders", PatternType::kPrefixed)));

  AclFilter prefixed;
  prefixed.pattern_type = PatternType::kPrefixed;
  prefixed.resource_name = "ord";
  EXPECT_TRUE(prefixed.matches(topic_binding("ord", PatternType::kPrefixed)));
  EXPECT_FALSE(prefixed.matches(topic_binding("or", PatternType::kPrefixed)));
  EXPECT_FALSE(prefixed.matches(topic_binding("ord")));
}

TEST(AclFilter, MatchSelectsWhatAppliesToTheName) {
  AclFilter f;
  f.pattern_type = PatternType::kMatch;
  f.resource_name = "orders";
  EXPECT_TRUE(f.matches(topic_binding("orders")));
  EXPECT_TRUE(f.matches(topic_binding("*")));
  EXPECT_TRUE(f.matches(topic_binding("ord", PatternType::kPrefixed)));
  EXPECT_TRUE(f.matches(topic_binding("orders", PatternType::kPrefixed)));
  EXPECT_FALSE(f.matches(topic_binding("orders-eu")));
  EXPECT_FALSE(f.matches(topic_binding("ord")));
  EXPECT_FALSE(f.matches(topic_binding("orders-", PatternType::kPrefixed)));
  EXPECT_FALSE(f.matches(topic_binding("x", PatternType::kPrefixed)));
  // A literal "*" in a prefixed binding is just a character, not a wildcard.
  EXPECT_FALSE(f.matches(topic_binding("*", PatternType::kPrefixed)));

  AclFilter no_name;
  no_name.pattern_type = PatternType::kMatch;
  EXPECT_TRUE(no_name.matches(topic_binding("anything")));
  EXPECT_TRUE(no_name.matches(topic_binding("a", PatternType::kPrefixed)));
}

TEST(AclFilter, EntryFieldsMatchExactly) {
  AclBinding b = topic_binding("orders");
  AclFilter f;
  f.principal = "User:alice";
  f.host = "*";
  f.operation = AclOperation::kRead;
  f.permission = AclPermission::kAllow;
  EXPECT_TRUE(f.matches(b));

  AclFilter other = f;
  other.principal = "User:*";
  EXPECT_FALSE(other.matches(b));
  other = f;
  other.host = "10.0.0.1";
  EXPECT_FALSE(other.matches(b));
  other = f;
  other.operation = AclOperation::kAll;
  EXPECT_FALSE(other.matches(b));
  other = f;
  other.permission = AclPermission::kDeny;
  EXPECT_FALSE(other.matches(b));
}

TEST(AclSupportedOperations, KafkasOperationsPerResourceType) {
  auto bit = [](AclOperation op) { return int32_t{1} << static_cast<int>(op); };
  EXPECT_EQ(supported_operation_bits(ResourceType::kGroup),
            bit(AclOperation::kRead) | bit(AclOperation::kDelete) | bit(AclOperation::kDescribe));
  EXPECT_EQ(supported_operation_bits(ResourceType::kTransactionalId),
            bit(AclOperation::kWrite) | bit(AclOperation::kDescribe));
  EXPECT_EQ(supported_operation_bits(ResourceType::kUser),
            bit(AclOperation::kCreateTokens) | bit(AclOperation::kDescribeTokens));
  int32_t cluster = supported_operation_bits(ResourceType::kCluster);
  EXPECT_NE(cluster & bit(AclOperation::kIdempotentWrite), 0);
  EXPECT_NE(cluster & bit(AclOperation::kClusterAction), 0);
  EXPECT_EQ(cluster & bit(AclOperation::kRead), 0);
  int32_t topic = supported_operation_bits(ResourceType::kTopic);
  EXPECT_NE(topic & bit(AclOperation::kAlterConfigs), 0);
  EXPECT_EQ(topic & bit(AclOperation::kIdempotentWrite), 0);
  EXPECT_EQ(topic & (bit(AclOperation::kAll) | bit(AclOperation::kAny)), 0);
  EXPECT_EQ(supported_operation_bits(ResourceType::kAny), 0);
}

TEST(AclBinding, OrdersByResourceFirst) {
  AclBinding a = topic_binding("a");
  AclBinding b = topic_binding("b");
  b.operation = AclOperation::kAll;
  EXPECT_LT(a, b);
  AclBinding group = topic_binding("a");
  group.resource_type = ResourceType::kGroup;
  EXPECT_LT(b, group);
  EXPECT_EQ(a, topic_binding("a"));
}

}  // namespace oxbow::security
