#include "security/authorizer.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "storage/test_dir.h"

namespace oxbow::security {

namespace {

using enum AclOperation;
constexpr auto kAllow = AclPermission::kAllow;
constexpr auto kDeny = AclPermission::kDeny;
constexpr auto kLiteral = PatternType::kLiteral;
constexpr auto kPrefixed = PatternType::kPrefixed;
constexpr auto kMatch = PatternType::kMatch;

const std::string kAlice = "User:alice";
const std::string kBob = "User:bob";
const std::string kHost = "10.0.0.7";
const Resource kOrders{ResourceType::kTopic, "orders"};

AclBinding acl(ResourceType type, std::string name, PatternType pattern, std::string principal,
               AclOperation op, AclPermission permission, std::string host = "*") {
  return {type, std::move(name), pattern, std::move(principal), std::move(host), op, permission};
}

AclBinding topic(std::string name, PatternType pattern, std::string principal, AclOperation op,
                 AclPermission permission, std::string host = "*") {
  return acl(ResourceType::kTopic, std::move(name), pattern, std::move(principal), op, permission,
             std::move(host));
}

class AuthorizerTest : public ::testing::Test {
 protected:
  std::string path() const { return dir_.path() + "/acls.json"; }

  // A fresh authorizer over path(), loaded as the broker would at start-up; earlier ones stay alive
  // so a test can compare them.
  Authorizer& make(AuthorizerConfig config = {}) {
    auto& a = *authorizers_.emplace_back(std::make_unique<Authorizer>(path(), std::move(config)));
    std::string error;
    EXPECT_TRUE(a.load(error)) << error;
    return a;
  }

  void add(Authorizer& a, std::vector<AclBinding> bindings) {
    std::string error;
    ASSERT_TRUE(a.create(bindings, error)) << error;
  }

  storage::testing::TempDir dir_;
  std::vector<std::unique_ptr<Authorizer>> authorizers_;
};

}  // namespace

TEST_F(AuthorizerTest, SuperUserIsAllowedDespiteDeny) {
  auto& a = make({.super_users = {"User:admin"}});
  add(a, {topic("*", kLiteral, "User:*", kAll, kDeny)});
  EXPECT_TRUE(a.is_super_user("User:admin"));
  EXPECT_FALSE(a.is_super_user("User:Admin"));
  EXPECT_TRUE(a.authorize("User:admin", kHost, kWrite, kOrders));
  EXPECT_FALSE(a.authorize(kAlice, kHost, kWrite, kOrders));
}

TEST_F(AuthorizerTest, EmptyStoreFollowsAllowEveryone) {
  auto& closed = make();
  EXPECT_EQ(closed.size(), 0u);
  EXPECT_FALSE(closed.authorize(kAlice, kHost, kRead, kOrders));
  auto& open = make({.allow_everyone_if_no_acl_found = true});
  EXPECT_TRUE(open.authorize(kAlice, kHost, kRead, kOrders));
}

TEST_F(AuthorizerTest, NoAclOnThisResourceFollowsAllowEveryone) {
  auto& a = make({.allow_everyone_if_no_acl_found = true});
  add(a, {topic("payments", kLiteral, kBob, kRead, kAllow),
          acl(ResourceType::kGroup, "orders", kLiteral, kBob, kRead, kAllow)});
  EXPECT_TRUE(a.authorize(kAlice, kHost, kRead, kOrders));
  EXPECT_FALSE(a.authorize(kAlice, kHost, kRead, {ResourceType::kTopic, "payments"}));

  auto& closed = make();
  EXPECT_FALSE(closed.authorize(kAlice, kHost, kRead, kOrders));
}

TEST_F(AuthorizerTest, AclForAnotherPrincipalDeniesUsEvenWithAllowEveryone) {
  auto& a = make({.allow_everyone_if_no_acl_found = true});
  add(a, {topic("orders", kLiteral, kBob, kRead, kAllow)});
  EXPECT_TRUE(a.authorize(kBob, kHost, kRead, kOrders));
  EXPECT_FALSE(a.authorize(kAlice, kHost, kRead, kOrders));
}

TEST_F(AuthorizerTest, LiteralNameMustBeEqual) {
  auto& a = make();
  add(a, {topic("orders", kLiteral, kAlice, kRead, kAllow)});
  EXPECT_TRUE(a.authorize(kAlice, kHost, kRead, kOrders));
  EXPECT_FALSE(a.authorize(kAlice, kHost, kRead, {ResourceType::kTopic, "orders2"}));
  EXPECT_FALSE(a.authorize(kAlice, kHost, kRead, {ResourceType::kTopic, "order"}));
  EXPECT_FALSE(a.authorize(kAlice, kHost, kWrite, kOrders));
  EXPECT_FALSE(a.authorize(kAlice, kHost, kRead, {ResourceType::kGroup, "orders"}));
}

TEST_F(AuthorizerTest, WildcardResourceName) {
  auto& a = make();
  add(a, {topic("*", kLiteral, kAlice, kRead, kAllow)});
  EXPECT_TRUE(a.authorize(kAlice, kHost, kRead, kOrders));
  EXPECT_TRUE(a.authorize(kAlice, kHost, kRead, {ResourceType::kTopic, "anything"}));
  EXPECT_FALSE(a.authorize(kAlice, kHost, kRead, {ResourceType::kGroup, "anything"}));
}

TEST_F(AuthorizerTest, PrefixedPatterns) {
  auto& a = make();
  add(a, {topic("ord", kPrefixed, kAlice, kRead, kAllow),
          topic("pay", kPrefixed, kAlice, kWrite, kAllow),
          topic("orc", kPrefixed, kAlice, kWrite, kAllow),
          topic("orders-eu-", kPrefixed, kAlice, kDelete, kAllow),
          topic("ordera", kPrefixed, kBob, kRead, kAllow)});
  EXPECT_TRUE(a.authorize(kAlice, kHost, kRead, kOrders));
  EXPECT_TRUE(a.authorize(kAlice, kHost, kRead, {ResourceType::kTopic, "ord"}));
  EXPECT_FALSE(a.authorize(kAlice, kHost, kRead, {ResourceType::kTopic, "or"}));
  EXPECT_FALSE(a.authorize(kAlice, kHost, kRead, {ResourceType::kTopic, "xorders"}));
  // Keys sorting next to the name ("ordera" just below, "orders-eu-" above) must not hide "ord".
  EXPECT_FALSE(a.authorize(kAlice, kHost, kWrite, kOrders));
  EXPECT_TRUE(a.authorize(kAlice, kHost, kRead, {ResourceType::kTopic, "orders-eu-1"}));
  EXPECT_TRUE(a.authorize(kAlice, kHost, kDelete, {ResourceType::kTopic, "orders-eu-1"}));
  EXPECT_FALSE(a.authorize(kAlice, kHost, kDelete, {ResourceType::kTopic, "orders-eu"}));
  EXPECT_TRUE(a.authorize(kAlice, kHost, kWrite, {ResourceType::kTopic, "orca"}));
}

TEST_F(AuthorizerTest, PrefixedPatternsAtEveryLength) {
  auto& a = make();
  add(a, {topic("a", kPrefixed, kAlice, kRead, kAllow),
          topic("abc", kPrefixed, kAlice, kWrite, kAllow),
          topic("abcd", kPrefixed, kAlice, kDelete, kAllow),
          topic("abce", kPrefixed, kBob, kAlter, kAllow),
          topic("ab", kPrefixed, kAlice, kCreate, kAllow),
          topic("abcda", kPrefixed, kBob, kRead, kAllow),
          topic("abb", kPrefixed, kBob, kWrite, kAllow)});
  Resource r{ResourceType::kTopic, "abcdef"};
  for (auto op : {kRead, kWrite, kDelete, kCreate}) {
    EXPECT_TRUE(a.authorize(kAlice, kHost, op, r)) << name(op);
  }
  EXPECT_FALSE(a.authorize(kAlice, kHost, kAlter, r));
  EXPECT_FALSE(a.authorize(kBob, kHost, kAlter, r));
  EXPECT_TRUE(a.authorize(kBob, kHost, kAlter, {ResourceType::kTopic, "abcez"}));
}

TEST_F(AuthorizerTest, PrincipalWildcardOnlyForItsType) {
  auto& a = make();
  add(a, {topic("orders", kLiteral, "User:*", kRead, kAllow)});
  EXPECT_TRUE(a.authorize(kAlice, kHost, kRead, kOrders));
  EXPECT_TRUE(a.authorize(kBob, kHost, kRead, kOrders));
  EXPECT_FALSE(a.authorize("Group:ops", kHost, kRead, kOrders));
  EXPECT_FALSE(a.authorize("Users:x", kHost, kRead, kOrders));
}

TEST_F(AuthorizerTest, HostMustMatchUnlessWildcard) {
  auto& a = make();
  add(a, {topic("orders", kLiteral, kAlice, kRead, kAllow, kHost),
          topic("orders", kLiteral, kAlice, kWrite, kAllow, "*")});
  EXPECT_TRUE(a.authorize(kAlice, kHost, kRead, kOrders));
  EXPECT_FALSE(a.authorize(kAlice, "10.0.0.8", kRead, kOrders));
  EXPECT_TRUE(a.authorize(kAlice, "10.0.0.8", kWrite, kOrders));
}

TEST_F(AuthorizerTest, DenyBeatsAllow) {
  auto& a = make();
  add(a, {topic("orders", kLiteral, kAlice, kRead, kAllow),
          topic("orders", kLiteral, kAlice, kRead, kDeny, kHost)});
  EXPECT_FALSE(a.authorize(kAlice, kHost, kRead, kOrders));
  EXPECT_TRUE(a.authorize(kAlice, "10.0.0.8", kRead, kOrders));
}

TEST_F(AuthorizerTest, PrefixedDenyBeatsLiteralAllow) {
  auto& a = make();
  add(a, {topic("orders", kLiteral, kAlice, kWrite, kAllow),
          topic("ord", kPrefixed, "User:*", kWrite, kDeny),
          topic("*", kLiteral, kBob, kWrite, kAllow)});
  EXPECT_FALSE(a.authorize(kAlice, kHost, kWrite, kOrders));
  EXPECT_FALSE(a.authorize(kBob, kHost, kWrite, kOrders));
  EXPECT_TRUE(a.authorize(kBob, kHost, kWrite, {ResourceType::kTopic, "payments"}));
}

TEST_F(AuthorizerTest, WildcardDenyBeatsPrefixedAllow) {
  auto& a = make();
  add(a,
      {topic("ord", kPrefixed, kAlice, kRead, kAllow), topic("*", kLiteral, kAlice, kRead, kDeny)});
  EXPECT_FALSE(a.authorize(kAlice, kHost, kRead, kOrders));
}

TEST_F(AuthorizerTest, AllOperationAllowsAndDeniesEverything) {
  auto& a = make();
  add(a, {topic("orders", kLiteral, kAlice, kAll, kAllow),
          topic("payments", kLiteral, kAlice, kWrite, kAllow),
          topic("payments", kLiteral, kAlice, kAll, kDeny)});
  for (auto op : {kRead, kWrite, kCreate, kDelete, kAlter, kDescribe, kAlterConfigs}) {
    EXPECT_TRUE(a.authorize(kAlice, kHost, op, kOrders)) << name(op);
    EXPECT_FALSE(a.authorize(kAlice, kHost, op, {ResourceType::kTopic, "payments"})) << name(op);
  }
}

TEST_F(AuthorizerTest, AllowImpliesDescribe) {
  auto& a = make();
  for (auto op : {kRead, kWrite, kDelete, kAlter}) {
    std::string topic_name = std::string("t-") + name(op);
    add(a, {topic(topic_name, kLiteral, kAlice, op, kAllow)});
    EXPECT_TRUE(a.authorize(kAlice, kHost, kDescribe, {ResourceType::kTopic, topic_name}))
        << name(op);
    EXPECT_FALSE(a.authorize(kAlice, kHost, kDescribeConfigs, {ResourceType::kTopic, topic_name}))
        << name(op);
  }
  add(a, {topic("created", kLiteral, kAlice, kCreate, kAllow)});
  EXPECT_FALSE(a.authorize(kAlice, kHost, kDescribe, {ResourceType::kTopic, "created"}));

  add(a, {topic("configured", kLiteral, kAlice, kAlterConfigs, kAllow)});
  EXPECT_TRUE(a.authorize(kAlice, kHost, kDescribeConfigs, {ResourceType::kTopic, "configured"}));
  EXPECT_FALSE(a.authorize(kAlice, kHost, kDescribe, {ResourceType::kTopic, "configured"}));
  // Implication runs one way only.
  add(a, {topic("described", kLiteral, kAlice, kDescribe, kAllow)});
  EXPECT_FALSE(a.authorize(kAlice, kHost, kRead, {ResourceType::kTopic, "described"}));
}

TEST_F(AuthorizerTest, DenyDoesNotImply) {
  auto& a = make();
  add(a, {topic("orders", kLiteral, kAlice, kAll, kAllow),
          topic("orders", kLiteral, kAlice, kRead, kDeny),
          topic("orders", kLiteral, kAlice, kAlterConfigs, kDeny)});
  EXPECT_FALSE(a.authorize(kAlice, kHost, kRead, kOrders));
  EXPECT_TRUE(a.authorize(kAlice, kHost, kDescribe, kOrders));
  EXPECT_FALSE(a.authorize(kAlice, kHost, kAlterConfigs, kOrders));
  EXPECT_TRUE(a.authorize(kAlice, kHost, kDescribeConfigs, kOrders));
}

TEST_F(AuthorizerTest, ClusterResource) {
  auto& a = make();
  Resource cluster{ResourceType::kCluster, kClusterResourceName};
  add(a, {acl(ResourceType::kCluster, kClusterResourceName, kLiteral, kAlice, kIdempotentWrite,
              kAllow)});
  EXPECT_TRUE(a.authorize(kAlice, kHost, kIdempotentWrite, cluster));
  EXPECT_FALSE(a.authorize(kBob, kHost, kIdempotentWrite, cluster));
  EXPECT_FALSE(a.authorize(kAlice, kHost, kClusterAction, cluster));
}

TEST_F(AuthorizerTest, AuthorizeAny) {
  auto& a = make({.super_users = {"User:admin"}});
  EXPECT_TRUE(a.authorize_any("User:admin", kHost, kWrite, ResourceType::kTopic));
  EXPECT_FALSE(a.authorize_any(kAlice, kHost, kWrite, ResourceType::kTopic));

  add(a, {topic("orders", kLiteral, kAlice, kWrite, kAllow),
          topic("payments", kLiteral, kBob, kWrite, kAllow),
          topic("payments", kLiteral, kBob, kWrite, kDeny)});
  EXPECT_TRUE(a.authorize_any(kAlice, kHost, kWrite, ResourceType::kTopic));
  EXPECT_FALSE(a.authorize_any(kAlice, kHost, kRead, ResourceType::kTopic));
  EXPECT_FALSE(a.authorize_any(kAlice, kHost, kWrite, ResourceType::kGroup));
  EXPECT_FALSE(a.authorize_any(kBob, kHost, kWrite, ResourceType::kTopic));
  EXPECT_FALSE(a.authorize_any("User:carol", kHost, kWrite, ResourceType::kTopic));
}

TEST_F(AuthorizerTest, AuthorizeAnyWithPrefixes) {
  auto& a = make();
  // A DENY prefix covering the allowed literal name or a shorter prefix takes it away.
  add(a, {topic("orders", kLiteral, kAlice, kWrite, kAllow),
          topic("ord", kPrefixed, kAlice, kWrite, kDeny)});
  EXPECT_FALSE(a.authorize_any(kAlice, kHost, kWrite, ResourceType::kTopic));

  add(a, {topic("logs-", kPrefixed, kAlice, kAll, kAllow),
          topic("logs-secret-", kPrefixed, kAlice, kWrite, kDeny)});
  EXPECT_TRUE(a.authorize_any(kAlice, kHost, kWrite, ResourceType::kTopic));

  add(a, {topic("logs", kPrefixed, "User:*", kWrite, kDeny)});
  EXPECT_FALSE(a.authorize_any(kAlice, kHost, kWrite, ResourceType::kTopic));
}

TEST_F(AuthorizerTest, AuthorizeAnyWildcards) {
  auto& a = make({.allow_everyone_if_no_acl_found = true});
  add(a, {topic("orders", kLiteral, kBob, kWrite, kAllow)});
  // Some other topic has no ACL at all, so allow_everyone lets alice write there.
  EXPECT_TRUE(a.authorize_any(kAlice, kHost, kWrite, ResourceType::kTopic));

  add(a, {topic("*", kLiteral, kBob, kRead, kAllow)});
  EXPECT_FALSE(a.authorize_any(kAlice, kHost, kWrite, ResourceType::kTopic));

  add(a, {topic("*", kLiteral, "User:*", kWrite, kAllow)});
  EXPECT_TRUE(a.authorize_any(kAlice, kHost, kWrite, ResourceType::kTopic));

  add(a, {topic("*", kLiteral, kAlice, kWrite, kDeny, kHost)});
  EXPECT_FALSE(a.authorize_any(kAlice, kHost, kWrite, ResourceType::kTopic));
  EXPECT_TRUE(a.authorize_any(kAlice, "10.0.0.8", kWrite, ResourceType::kTopic));
}

TEST_F(AuthorizerTest, AuthorizedOperations) {
  auto bit = [](AclOperation op) { return int32_t{1} << static_cast<int>(op); };
  auto& a = make({.super_users = {"User:admin"}});
  EXPECT_EQ(a.authorized_operations(kAlice, kHost, kOrders), 0);
  int32_t all_topic_ops = bit(kRead) | bit(kWrite) | bit(kCreate) | bit(kDelete) | bit(kAlter) |
                          bit(kDescribe) | bit(kDescribeConfigs) | bit(kAlterConfigs);
  EXPECT_EQ(a.authorized_operations("User:admin", kHost, kOrders), all_topic_ops);
  EXPECT_EQ(a.authorized_operations("User:admin", kHost, {ResourceType::kGroup, "g"}),
            bit(kRead) | bit(kDescribe) | bit(kDelete));

  add(a, {topic("orders", kLiteral, kAlice, kRead, kAllow),
          topic("orders", kLiteral, kAlice, kAlterConfigs, kAllow)});
  EXPECT_EQ(a.authorized_operations(kAlice, kHost, kOrders),
            bit(kRead) | bit(kDescribe) | bit(kAlterConfigs) | bit(kDescribeConfigs));

  add(a, {topic("orders", kLiteral, kAlice, kAll, kAllow),
          topic("orders", kLiteral, kAlice, kDelete, kDeny)});
  EXPECT_EQ(a.authorized_operations(kAlice, kHost, kOrders), all_topic_ops & ~bit(kDelete));

  auto& open = make({.allow_everyone_if_no_acl_found = true});
  EXPECT_EQ(open.authorized_operations(kAlice, kHost, {ResourceType::kTransactionalId, "tx"}),
            bit(kWrite) | bit(kDescribe));
}

TEST_F(AuthorizerTest, CreateDescribeAndDuplicates) {
  auto& a = make();
  auto read = topic("orders", kLiteral, kAlice, kRead, kAllow);
  auto write = topic("ord", kPrefixed, kBob, kWrite, kAllow);
  auto group = acl(ResourceType::kGroup, "g", kLiteral, kAlice, kRead, kAllow);
  add(a, {write, read, group, read});
  EXPECT_EQ(a.size(), 3u);
  add(a, {read});
  EXPECT_EQ(a.size(), 3u);

  EXPECT_EQ(a.describe({}), (std::vector<AclBinding>{write, read, group}));
  AclFilter topics{.resource_type = ResourceType::kTopic};
  EXPECT_EQ(a.describe(topics), (std::vector<AclBinding>{write, read}));
  AclFilter match{.resource_name = "orders", .pattern_type = kMatch};
  EXPECT_EQ(a.describe(match), (std::vector<AclBinding>{write, read}));
  AclFilter alice{.principal = kAlice};
  EXPECT_EQ(a.describe(alice), (std::vector<AclBinding>{read, group}));
}

TEST_F(AuthorizerTest, CreateRejectsInvalidBindingsWithoutChanges) {
  auto& a = make();
  std::string error;
  auto bad = topic("orders", kMatch, kAlice, kRead, kAllow);
  EXPECT_FALSE(a.create({topic("orders", kLiteral, kAlice, kRead, kAllow), bad}, error));
  EXPECT_FALSE(error.empty());
  EXPECT_EQ(a.size(), 0u);
}

TEST_F(AuthorizerTest, RemoveWithSeveralFilters) {
  auto& a = make();
  auto read = topic("orders", kLiteral, kAlice, kRead, kAllow);
  auto write = topic("orders", kLiteral, kBob, kWrite, kAllow);
  auto prefixed = topic("ord", kPrefixed, kBob, kWrite, kDeny);
  auto group = acl(ResourceType::kGroup, "g", kLiteral, kAlice, kRead, kAllow);
  add(a, {read, write, prefixed, group});

  std::vector<std::vector<AclBinding>> removed;
  std::string error;
  AclFilter bob{.principal = kBob};
  AclFilter orders{.resource_type = ResourceType::kTopic, .resource_name = "orders"};
  AclFilter nothing{.resource_type = ResourceType::kUser};
  ASSERT_TRUE(a.remove({bob, orders, nothing}, removed, error)) << error;
  ASSERT_EQ(removed.size(), 3u);
  EXPECT_EQ(removed[0], (std::vector<AclBinding>{prefixed, write}));
  EXPECT_EQ(removed[1], (std::vector<AclBinding>{read}));
  EXPECT_TRUE(removed[2].empty());
  EXPECT_EQ(a.describe({}), (std::vector<AclBinding>{group}));
  EXPECT_FALSE(a.authorize(kAlice, kHost, kRead, kOrders));

  ASSERT_TRUE(a.remove({bob}, removed, error));
  ASSERT_EQ(removed.size(), 1u);
  EXPECT_TRUE(removed[0].empty());
  EXPECT_EQ(a.size(), 1u);
}

TEST_F(AuthorizerTest, PersistsAcrossRestarts) {
  auto& a = make();
  auto read = topic("orders", kLiteral, kAlice, kRead, kAllow, kHost);
  auto deny = topic("ord", kPrefixed, "User:*", kWrite, kDeny);
  auto cluster = acl(ResourceType::kCluster, kClusterResourceName, kLiteral, kBob, kAlter, kAllow);
  add(a, {read, deny, cluster});
  auto before = a.describe({});

  auto& reloaded = make();
  EXPECT_EQ(reloaded.describe({}), before);
  EXPECT_TRUE(reloaded.authorize(kAlice, kHost, kRead, kOrders));
  EXPECT_FALSE(reloaded.authorize(kAlice, kHost, kWrite, kOrders));

  std::vector<std::vector<AclBinding>> removed;
  std::string error;
  ASSERT_TRUE(reloaded.remove({AclFilter{.pattern_type = kPrefixed}}, removed, error)) << error;
  EXPECT_EQ(removed[0], (std::vector<AclBinding>{deny}));

  auto& again = make();
  EXPECT_EQ(again.describe({}), (std::vector<AclBinding>{read, cluster}));
}

TEST_F(AuthorizerTest, LoadRejectsInvalidJson) {
  std::ofstream(path()) << "{\"version\": 1, \"acls\": [";
  Authorizer a(path(), {});
  std::string error;
  EXPECT_FALSE(a.load(error));
  EXPECT_NE(error.find(path()), std::string::npos) << error;
}

TEST_F(AuthorizerTest, LoadRejectsInvalidBinding) {
  std::ofstream(path()) << R"({"version": 1, "acls": [{"resource_type": "TOPIC",
      "resource_name": "orders", "pattern_type": "MATCH", "principal": "User:alice",
      "host": "*", "operation": "READ", "permission": "DENY"}]})";
  Authorizer a(path(), {});
  std::string error;
  EXPECT_FALSE(a.load(error));
  EXPECT_NE(error.find(path()), std::string::npos) << error;
  EXPECT_NE(error.find("acls[0]"), std::string::npos) << error;
}

TEST_F(AuthorizerTest, LoadRejectsUnreadableFile) {
  Authorizer a(dir_.path(), {});
  std::string error;
  EXPECT_FALSE(a.load(error));
  EXPECT_NE(error.find(dir_.path()), std::string::npos) << error;
}

TEST_F(AuthorizerTest, LoadReadsKafkaNames) {
  std::ofstream(path()) << R"({"version": 1, "acls": [{"resource_type": "TRANSACTIONAL_ID",
      "resource_name": "tx", "pattern_type": "LITERAL", "principal": "User:alice",
      "host": "*", "operation": "WRITE", "permission": "ALLOW"}]})";
  Authorizer a(path(), {});
  std::string error;
  ASSERT_TRUE(a.load(error)) << error;
  EXPECT_TRUE(a.authorize(kAlice, kHost, kWrite, {ResourceType::kTransactionalId, "tx"}));
}

TEST_F(AuthorizerTest, FailedWriteChangesNothing) {
  std::string sub = dir_.path() + "/sub";
  ASSERT_EQ(::mkdir(sub.c_str(), 0755), 0);
  Authorizer a(sub + "/acls.json", {});
  auto read = topic("orders", kLiteral, kAlice, kRead, kAllow);
  add(a, {read});
  // With a file where the directory was, no write can succeed.
  std::filesystem::remove_all(sub);
  std::ofstream(sub) << "x";

  std::string error;
  EXPECT_FALSE(a.create({topic("orders", kLiteral, kBob, kRead, kAllow)}, error));
  EXPECT_FALSE(error.empty());
  EXPECT_FALSE(a.authorize(kBob, kHost, kRead, kOrders));

  std::vector<std::vector<AclBinding>> removed;
  error.clear();
  EXPECT_FALSE(a.remove({AclFilter{}}, removed, error));
  EXPECT_FALSE(error.empty());
  EXPECT_EQ(a.describe({}), (std::vector<AclBinding>{read}));
  EXPECT_TRUE(a.authorize(kAlice, kHost, kRead, kOrders));
}

TEST_F(AuthorizerTest, ReadersSeeEveryUpdateWhole) {
  auto& a = make();
  add(a, {topic("orders", kLiteral, kAlice, kRead, kAllow)});
  std::atomic<bool> done = false;
  std::atomic<int> wrong = 0;
  std::vector<std::thread> readers;
  for (int i = 0; i < 2; ++i) {
    readers.emplace_back([&] {
      while (!done) {
        if (!a.authorize(kAlice, kHost, kRead, kOrders)) ++wrong;
        if (a.authorize(kBob, kHost, kWrite, kOrders)) ++wrong;
      }
    });
  }
  std::string error;
  std::vector<std::vector<AclBinding>> removed;
  for (int i = 0; i < 50; ++i) {
    auto other = topic("t" + std::to_string(i), kPrefixed, kBob, kAll, kAllow);
    EXPECT_TRUE(a.create({other}, error)) << error;
    EXPECT_TRUE(a.remove({AclFilter{.principal = kBob}}, removed, error)) << error;
  }
  done = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(a.size(), 1u);
}

}  // namespace oxbow::security
