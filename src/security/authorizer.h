#pragma once
// Kafka's ACL authorizer (AclAuthorizer/StandardAuthorizer semantics): super users, then DENY
// before ALLOW among the bindings that apply to a resource, with READ/WRITE/DELETE/ALTER implying
// DESCRIBE and ALTER_CONFIGS implying DESCRIBE_CONFIGS for ALLOW only.
//
// ACLs persist in the JSON file named at construction, rewritten atomically on every change:
//   {"version": 1,
//    "acls": [{"resource_type": "TOPIC", "resource_name": "orders", "pattern_type": "LITERAL",
//              "principal": "User:alice", "host": "*", "operation": "READ",
//              "permission": "ALLOW"}]}
// Names are Kafka's (see acl.h); entries are sorted and each is a valid binding.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "security/acl.h"

namespace oxbow::security {

struct AuthorizerConfig {
  std::vector<std::string> super_users = {};  // principals, e.g. "User:admin"
  bool allow_everyone_if_no_acl_found = false;
};

struct Resource {
  ResourceType type;
  std::string name;
};

class Authorizer {
 public:
  Authorizer(std::string path, AuthorizerConfig config);
  ~Authorizer();
  Authorizer(const Authorizer&) = delete;
  Authorizer& operator=(const Authorizer&) = delete;

  // Replaces the ACLs with the file's. A missing file means no ACLs; an unreadable or invalid one
  // gives false and an `error` naming the file.
  bool load(std::string& error);

  bool authorize(const std::string& principal, const std::string& host, AclOperation op,
                 const Resource& resource) const;
  // Whether some resource of `type` allows `op` without a DENY covering it (Kafka's
  // authorizeByResourceType; idempotent InitProducerId asks for WRITE on any topic).
  bool authorize_any(const std::string& principal, const std::string& host, AclOperation op,
                     ResourceType type) const;
  // Bit (1 << op) for each operation the resource type supports that authorize() allows, as
  // Metadata and DescribeGroups report them.
  int32_t authorized_operations(const std::string& principal, const std::string& host,
                                const Resource& resource) const;

  // Adds bindings and persists once; existing ones are not an error. False with `error` (and
  // nothing changed) when one is invalid or the file cannot be written.
  bool create(const std::vector<AclBinding>& bindings, std::string& error);
  std::vector<AclBinding> describe(const AclFilter& filter) const;  // sorted
  // Removes every binding matching any filter and persists once. `removed[i]` lists what filter i
  // removed; a binding matching several filters is listed under the first.
  bool remove(const std::vector<AclFilter>& filters, std::vector<std::vector<AclBinding>>& removed,
              std::string& error);

  bool is_super_user(const std::string& principal) const;
  size_t size() const { return size_.load(std::memory_order_acquire); }

 private:
  struct State;

  bool authorize_locked(const State& state, const std::string& principal, const std::string& host,
                        AclOperation op, const Resource& resource) const;
  // Both are called with update_mutex_ held.
  bool persist_and_publish(std::unique_ptr<const State> next, std::string& error);
  void publish(std::unique_ptr<const State> next);

  const std::string path_;
  const AuthorizerConfig config_;
  // Serializes writers so they can build the next state and write the file without blocking
  // authorize(); state_mutex_ is held exclusively only for the pointer swap.
  std::mutex update_mutex_;
  mutable std::shared_mutex state_mutex_;
  std::unique_ptr<const State> state_;
  // Lets authorize() skip the lock while there are no ACLs at all.
  std::atomic<size_t> size_{0};
};

}  // namespace oxbow::security
